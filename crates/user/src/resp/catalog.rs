//! What Redis 7.0 says about each of its commands beyond arity, flags and
//! the legacy key range: the ACL categories, the tips and the key
//! specifications `COMMAND INFO` reports, and the category names
//! `COMMAND LIST FILTERBY ACLCAT` accepts.
//!
//! The table is data about Redis's command set (as `COMMAND INFO` on a
//! Redis 7.0 server reports it), sorted by full name, covering every
//! command and subcommand Redis has, so a command added to this store
//! reports Redis's categories without touching this file. A command Redis
//! does not have gets no category.

/// The ACL categories, in Redis's order (the order `COMMAND INFO` lists
/// them in); a command's categories are a bit set over this list.
pub(crate) const CATEGORY_NAMES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

const KEYSPACE: u32 = 1;
const READ: u32 = 1 << 1;
const WRITE: u32 = 1 << 2;
const SET: u32 = 1 << 3;
const SORTEDSET: u32 = 1 << 4;
const LIST: u32 = 1 << 5;
const HASH: u32 = 1 << 6;
const STRING: u32 = 1 << 7;
const BITMAP: u32 = 1 << 8;
const HYPERLOGLOG: u32 = 1 << 9;
const GEO: u32 = 1 << 10;
const STREAM: u32 = 1 << 11;
const PUBSUB: u32 = 1 << 12;
const ADMIN: u32 = 1 << 13;
const FAST: u32 = 1 << 14;
const SLOW: u32 = 1 << 15;
const BLOCKING: u32 = 1 << 16;
const DANGEROUS: u32 = 1 << 17;
const CONNECTION: u32 = 1 << 18;
const TRANSACTION: u32 = 1 << 19;
const SCRIPTING: u32 = 1 << 20;

/// Where the search for a command's keys begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Begin {
    /// At this argument.
    Index(i64),
    /// After this keyword, searched from this argument (negative: from the
    /// end).
    Keyword(&'static str, i64),
    /// Nowhere a table can say.
    Unknown,
}

/// How a command's keys are found from where the search begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Find {
    /// Last key (relative; negative from the end), step, limit.
    Range(i64, i64, i64),
    /// The argument holding the key count, the first key, the step (all
    /// relative to the beginning).
    Keynum(i64, i64, i64),
    /// Nothing a table can say.
    Unknown,
}

/// One key specification, as Redis 7.0 describes a command's keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeySpec {
    /// Redis's remark, if any.
    pub(crate) notes: Option<&'static str>,
    /// Access flags (`RO`, `RW`, `OW`, `RM`, `access`, `update`, …).
    pub(crate) flags: &'static [&'static str],
    /// Where the search begins.
    pub(crate) begin: Begin,
    /// How keys are found.
    pub(crate) find: Find,
}

/// What the catalog knows of one command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Its ACL categories (bits over [`CATEGORY_NAMES`]).
    pub(crate) categories: u32,
    /// Its tips (`nondeterministic_output`, `request_policy:…`).
    pub(crate) tips: &'static [&'static str],
    /// Its key specifications.
    pub(crate) key_specs: &'static [KeySpec],
}

impl Entry {
    /// The names of its categories, in Redis's order.
    pub(crate) fn category_names(self) -> impl Iterator<Item = &'static str> {
        CATEGORY_NAMES.iter().enumerate().filter(move |(bit, _)| self.categories & (1 << bit) != 0).map(|(_, n)| *n)
    }
}

/// The bit of the category called `name` (any case), if there is one.
pub(crate) fn category(name: &[u8]) -> Option<u32> {
    CATEGORY_NAMES.iter().position(|c| name.eq_ignore_ascii_case(c.as_bytes())).map(|bit| 1 << bit)
}

/// What Redis 7.0 says of the command whose full name is `name`
/// (lower-case); an empty entry for a command it does not have.
pub(crate) fn entry(name: &str) -> Entry {
    match CATALOG.binary_search_by(|(known, _, _, _)| (*known).cmp(name)) {
        Ok(at) => Entry { categories: CATALOG[at].1, tips: CATALOG[at].2, key_specs: CATALOG[at].3 },
        Err(_) => Entry { categories: 0, tips: &[], key_specs: &[] },
    }
}

/// Full name, categories, tips, key specifications; sorted by name.
#[rustfmt::skip]
const CATALOG: &[(&str, u32, &[&str], &[KeySpec])] = &[
    ("acl", SLOW, &[], &[]),
    ("acl|cat", SLOW, &[], &[]),
    ("acl|deluser", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("acl|dryrun", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("acl|genpass", SLOW, &[], &[]),
    ("acl|getuser", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("acl|help", SLOW, &[], &[]),
    ("acl|list", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("acl|load", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("acl|log", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("acl|save", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("acl|setuser", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("acl|users", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("acl|whoami", SLOW, &[], &[]),
    ("append", WRITE | STRING | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("asking", FAST | CONNECTION, &[], &[]),
    ("auth", FAST | CONNECTION, &[], &[]),
    ("bgrewriteaof", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("bgsave", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("bitcount", READ | BITMAP | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("bitfield", WRITE | BITMAP | SLOW, &[], &[KeySpec { notes: Some("This command allows both access and modification of the key"), flags: &["RW", "access", "update", "variable_flags"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("bitfield_ro", READ | BITMAP | FAST, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("bitop", WRITE | BITMAP | SLOW, &[], &[KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(3), find: Find::Range(-1, 1, 0) }]),
    ("bitpos", READ | BITMAP | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("blmove", WRITE | LIST | SLOW | BLOCKING, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["RW", "insert"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("blmpop", WRITE | LIST | SLOW | BLOCKING, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(2), find: Find::Keynum(0, 1, 1) }]),
    ("blpop", WRITE | LIST | SLOW | BLOCKING, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(-2, 1, 0) }]),
    ("brpop", WRITE | LIST | SLOW | BLOCKING, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(-2, 1, 0) }]),
    ("brpoplpush", WRITE | LIST | SLOW | BLOCKING, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["RW", "insert"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("bzmpop", WRITE | SORTEDSET | SLOW | BLOCKING, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(2), find: Find::Keynum(0, 1, 1) }]),
    ("bzpopmax", WRITE | SORTEDSET | FAST | BLOCKING, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(-2, 1, 0) }]),
    ("bzpopmin", WRITE | SORTEDSET | FAST | BLOCKING, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(-2, 1, 0) }]),
    ("client", SLOW, &[], &[]),
    ("client|caching", SLOW | CONNECTION, &[], &[]),
    ("client|getname", SLOW | CONNECTION, &[], &[]),
    ("client|getredir", SLOW | CONNECTION, &[], &[]),
    ("client|help", SLOW | CONNECTION, &[], &[]),
    ("client|id", SLOW | CONNECTION, &[], &[]),
    ("client|info", SLOW | CONNECTION, &["nondeterministic_output"], &[]),
    ("client|kill", ADMIN | SLOW | DANGEROUS | CONNECTION, &[], &[]),
    ("client|list", ADMIN | SLOW | DANGEROUS | CONNECTION, &["nondeterministic_output"], &[]),
    ("client|no-evict", ADMIN | SLOW | DANGEROUS | CONNECTION, &[], &[]),
    ("client|pause", ADMIN | SLOW | DANGEROUS | CONNECTION, &[], &[]),
    ("client|reply", SLOW | CONNECTION, &[], &[]),
    ("client|setname", SLOW | CONNECTION, &[], &[]),
    ("client|tracking", SLOW | CONNECTION, &[], &[]),
    ("client|trackinginfo", SLOW | CONNECTION, &[], &[]),
    ("client|unblock", ADMIN | SLOW | DANGEROUS | CONNECTION, &[], &[]),
    ("client|unpause", ADMIN | SLOW | DANGEROUS | CONNECTION, &[], &[]),
    ("cluster", SLOW, &[], &[]),
    ("cluster|addslots", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("cluster|addslotsrange", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("cluster|bumpepoch", ADMIN | SLOW | DANGEROUS, &["nondeterministic_output"], &[]),
    ("cluster|count-failure-reports", ADMIN | SLOW | DANGEROUS, &["nondeterministic_output"], &[]),
    ("cluster|countkeysinslot", SLOW, &[], &[]),
    ("cluster|delslots", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("cluster|delslotsrange", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("cluster|failover", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("cluster|flushslots", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("cluster|forget", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("cluster|getkeysinslot", SLOW, &["nondeterministic_output"], &[]),
    ("cluster|help", SLOW, &[], &[]),
    ("cluster|info", SLOW, &["nondeterministic_output"], &[]),
    ("cluster|keyslot", SLOW, &[], &[]),
    ("cluster|links", SLOW, &["nondeterministic_output"], &[]),
    ("cluster|meet", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("cluster|myid", SLOW, &[], &[]),
    ("cluster|nodes", SLOW, &["nondeterministic_output"], &[]),
    ("cluster|replicas", ADMIN | SLOW | DANGEROUS, &["nondeterministic_output"], &[]),
    ("cluster|replicate", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("cluster|reset", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("cluster|saveconfig", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("cluster|set-config-epoch", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("cluster|setslot", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("cluster|shards", SLOW, &["nondeterministic_output"], &[]),
    ("cluster|slaves", ADMIN | SLOW | DANGEROUS, &["nondeterministic_output"], &[]),
    ("cluster|slots", SLOW, &["nondeterministic_output"], &[]),
    ("command", SLOW | CONNECTION, &["nondeterministic_output_order"], &[]),
    ("command|count", SLOW | CONNECTION, &[], &[]),
    ("command|docs", SLOW | CONNECTION, &["nondeterministic_output_order"], &[]),
    ("command|getkeys", SLOW | CONNECTION, &[], &[]),
    ("command|getkeysandflags", SLOW | CONNECTION, &[], &[]),
    ("command|help", SLOW | CONNECTION, &[], &[]),
    ("command|info", SLOW | CONNECTION, &["nondeterministic_output_order"], &[]),
    ("command|list", SLOW | CONNECTION, &["nondeterministic_output_order"], &[]),
    ("config", SLOW, &[], &[]),
    ("config|get", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("config|help", SLOW, &[], &[]),
    ("config|resetstat", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("config|rewrite", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("config|set", ADMIN | SLOW | DANGEROUS, &["request_policy:all_nodes", "response_policy:all_succeeded"], &[]),
    ("copy", KEYSPACE | WRITE | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("dbsize", KEYSPACE | READ | FAST, &["request_policy:all_shards", "response_policy:agg_sum"], &[]),
    ("debug", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("decr", WRITE | STRING | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("decrby", WRITE | STRING | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("del", KEYSPACE | WRITE | SLOW, &["request_policy:multi_shard", "response_policy:agg_sum"], &[KeySpec { notes: None, flags: &["RM", "delete"], begin: Begin::Index(1), find: Find::Range(-1, 1, 0) }]),
    ("discard", FAST | TRANSACTION, &[], &[]),
    ("dump", KEYSPACE | READ | SLOW, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("echo", FAST | CONNECTION, &[], &[]),
    ("eval", SLOW | SCRIPTING, &[], &[KeySpec { notes: Some("We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"), flags: &["RW", "access", "update"], begin: Begin::Index(2), find: Find::Keynum(0, 1, 1) }]),
    ("eval_ro", SLOW | SCRIPTING, &[], &[KeySpec { notes: Some("We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"), flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Keynum(0, 1, 1) }]),
    ("evalsha", SLOW | SCRIPTING, &[], &[KeySpec { notes: None, flags: &["RW", "access", "update"], begin: Begin::Index(2), find: Find::Keynum(0, 1, 1) }]),
    ("evalsha_ro", SLOW | SCRIPTING, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Keynum(0, 1, 1) }]),
    ("exec", SLOW | TRANSACTION, &[], &[]),
    ("exists", KEYSPACE | READ | FAST, &["request_policy:multi_shard", "response_policy:agg_sum"], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(1), find: Find::Range(-1, 1, 0) }]),
    ("expire", KEYSPACE | WRITE | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("expireat", KEYSPACE | WRITE | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("expiretime", KEYSPACE | READ | FAST, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("failover", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("fcall", SLOW | SCRIPTING, &[], &[KeySpec { notes: Some("We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"), flags: &["RW", "access", "update"], begin: Begin::Index(2), find: Find::Keynum(0, 1, 1) }]),
    ("fcall_ro", SLOW | SCRIPTING, &[], &[KeySpec { notes: Some("We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"), flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Keynum(0, 1, 1) }]),
    ("flushall", KEYSPACE | WRITE | SLOW | DANGEROUS, &["request_policy:all_shards", "response_policy:all_succeeded"], &[]),
    ("flushdb", KEYSPACE | WRITE | SLOW | DANGEROUS, &["request_policy:all_shards", "response_policy:all_succeeded"], &[]),
    ("function", SLOW, &[], &[]),
    ("function|delete", WRITE | SLOW | SCRIPTING, &["request_policy:all_shards", "response_policy:all_succeeded"], &[]),
    ("function|dump", SLOW | SCRIPTING, &[], &[]),
    ("function|flush", WRITE | SLOW | SCRIPTING, &["request_policy:all_shards", "response_policy:all_succeeded"], &[]),
    ("function|help", SLOW | SCRIPTING, &[], &[]),
    ("function|kill", SLOW | SCRIPTING, &["request_policy:all_shards", "response_policy:one_succeeded"], &[]),
    ("function|list", SLOW | SCRIPTING, &["nondeterministic_output_order"], &[]),
    ("function|load", WRITE | SLOW | SCRIPTING, &["request_policy:all_shards", "response_policy:all_succeeded"], &[]),
    ("function|restore", WRITE | SLOW | SCRIPTING, &["request_policy:all_shards", "response_policy:all_succeeded"], &[]),
    ("function|stats", SLOW | SCRIPTING, &["nondeterministic_output", "request_policy:all_shards", "response_policy:special"], &[]),
    ("geoadd", WRITE | GEO | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("geodist", READ | GEO | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("geohash", READ | GEO | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("geopos", READ | GEO | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("georadius", WRITE | GEO | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Keyword("STORE", 6), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Keyword("STOREDIST", 6), find: Find::Range(0, 1, 0) }]),
    ("georadius_ro", READ | GEO | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("georadiusbymember", WRITE | GEO | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Keyword("STORE", 5), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Keyword("STOREDIST", 5), find: Find::Range(0, 1, 0) }]),
    ("georadiusbymember_ro", READ | GEO | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("geosearch", READ | GEO | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("geosearchstore", WRITE | GEO | SLOW, &[], &[KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("get", READ | STRING | FAST, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("getbit", READ | BITMAP | FAST, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("getdel", WRITE | STRING | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("getex", WRITE | STRING | FAST, &[], &[KeySpec { notes: Some("RW and UPDATE because it changes the TTL"), flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("getrange", READ | STRING | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("getset", WRITE | STRING | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("hdel", WRITE | HASH | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("hello", FAST | CONNECTION, &[], &[]),
    ("hexists", READ | HASH | FAST, &[], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("hget", READ | HASH | FAST, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("hgetall", READ | HASH | SLOW, &["nondeterministic_output_order"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("hincrby", WRITE | HASH | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("hincrbyfloat", WRITE | HASH | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("hkeys", READ | HASH | SLOW, &["nondeterministic_output_order"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("hlen", READ | HASH | FAST, &[], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("hmget", READ | HASH | FAST, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("hmset", WRITE | HASH | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("hrandfield", READ | HASH | SLOW, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("hscan", READ | HASH | SLOW, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("hset", WRITE | HASH | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("hsetnx", WRITE | HASH | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("hstrlen", READ | HASH | FAST, &[], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("hvals", READ | HASH | SLOW, &["nondeterministic_output_order"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("incr", WRITE | STRING | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("incrby", WRITE | STRING | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("incrbyfloat", WRITE | STRING | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("info", SLOW | DANGEROUS, &["nondeterministic_output", "request_policy:all_shards", "response_policy:special"], &[]),
    ("keys", KEYSPACE | READ | SLOW | DANGEROUS, &["request_policy:all_shards", "nondeterministic_output_order"], &[]),
    ("lastsave", ADMIN | FAST | DANGEROUS, &["nondeterministic_output"], &[]),
    ("latency", SLOW, &[], &[]),
    ("latency|doctor", ADMIN | SLOW | DANGEROUS, &["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"], &[]),
    ("latency|graph", ADMIN | SLOW | DANGEROUS, &["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"], &[]),
    ("latency|help", SLOW, &[], &[]),
    ("latency|histogram", ADMIN | SLOW | DANGEROUS, &["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"], &[]),
    ("latency|history", ADMIN | SLOW | DANGEROUS, &["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"], &[]),
    ("latency|latest", ADMIN | SLOW | DANGEROUS, &["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"], &[]),
    ("latency|reset", ADMIN | SLOW | DANGEROUS, &["request_policy:all_nodes", "response_policy:all_succeeded"], &[]),
    ("lcs", READ | STRING | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(1, 1, 0) }]),
    ("lindex", READ | LIST | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("linsert", WRITE | LIST | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("llen", READ | LIST | FAST, &[], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("lmove", WRITE | LIST | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["RW", "insert"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("lmpop", WRITE | LIST | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Keynum(0, 1, 1) }]),
    ("lolwut", READ | FAST, &[], &[]),
    ("lpop", WRITE | LIST | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("lpos", READ | LIST | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("lpush", WRITE | LIST | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("lpushx", WRITE | LIST | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("lrange", READ | LIST | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("lrem", WRITE | LIST | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("lset", WRITE | LIST | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("ltrim", WRITE | LIST | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("memory", SLOW, &[], &[]),
    ("memory|doctor", SLOW, &["nondeterministic_output", "request_policy:all_shards", "response_policy:special"], &[]),
    ("memory|help", SLOW, &[], &[]),
    ("memory|malloc-stats", SLOW, &["nondeterministic_output", "request_policy:all_shards", "response_policy:special"], &[]),
    ("memory|purge", SLOW, &["request_policy:all_shards", "response_policy:all_succeeded"], &[]),
    ("memory|stats", SLOW, &["nondeterministic_output", "request_policy:all_shards", "response_policy:special"], &[]),
    ("memory|usage", READ | SLOW, &[], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("mget", READ | STRING | FAST, &["request_policy:multi_shard"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(-1, 1, 0) }]),
    ("migrate", KEYSPACE | WRITE | SLOW | DANGEROUS, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(3), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["RW", "access", "delete", "incomplete"], begin: Begin::Keyword("KEYS", -2), find: Find::Range(-1, 1, 0) }]),
    ("module", SLOW, &[], &[]),
    ("module|help", SLOW, &[], &[]),
    ("module|list", ADMIN | SLOW | DANGEROUS, &["nondeterministic_output_order"], &[]),
    ("module|load", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("module|loadex", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("module|unload", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("monitor", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("move", KEYSPACE | WRITE | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("mset", WRITE | STRING | SLOW, &["request_policy:multi_shard", "response_policy:all_succeeded"], &[KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range(-1, 2, 0) }]),
    ("msetnx", WRITE | STRING | SLOW, &["request_policy:multi_shard", "response_policy:agg_min"], &[KeySpec { notes: None, flags: &["OW", "insert"], begin: Begin::Index(1), find: Find::Range(-1, 2, 0) }]),
    ("multi", FAST | TRANSACTION, &[], &[]),
    ("object", SLOW, &[], &[]),
    ("object|encoding", KEYSPACE | READ | SLOW, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("object|freq", KEYSPACE | READ | SLOW, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("object|help", KEYSPACE | SLOW, &[], &[]),
    ("object|idletime", KEYSPACE | READ | SLOW, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("object|refcount", KEYSPACE | READ | SLOW, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("persist", KEYSPACE | WRITE | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("pexpire", KEYSPACE | WRITE | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("pexpireat", KEYSPACE | WRITE | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("pexpiretime", KEYSPACE | READ | FAST, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("pfadd", WRITE | HYPERLOGLOG | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("pfcount", READ | HYPERLOGLOG | SLOW, &[], &[KeySpec { notes: Some("RW because it may change the internal representation of the key, and propagate to replicas"), flags: &["RW", "access"], begin: Begin::Index(1), find: Find::Range(-1, 1, 0) }]),
    ("pfdebug", WRITE | HYPERLOGLOG | ADMIN | SLOW | DANGEROUS, &[], &[KeySpec { notes: None, flags: &["RW", "access"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("pfmerge", WRITE | HYPERLOGLOG | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "access", "insert"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range(-1, 1, 0) }]),
    ("pfselftest", HYPERLOGLOG | ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("ping", FAST | CONNECTION, &["request_policy:all_shards", "response_policy:all_succeeded"], &[]),
    ("psetex", WRITE | STRING | SLOW, &[], &[KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("psubscribe", PUBSUB | SLOW, &[], &[]),
    ("psync", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("pttl", KEYSPACE | READ | FAST, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("publish", PUBSUB | FAST, &[], &[]),
    ("pubsub", SLOW, &[], &[]),
    ("pubsub|channels", PUBSUB | SLOW, &[], &[]),
    ("pubsub|help", SLOW, &[], &[]),
    ("pubsub|numpat", PUBSUB | SLOW, &[], &[]),
    ("pubsub|numsub", PUBSUB | SLOW, &[], &[]),
    ("pubsub|shardchannels", PUBSUB | SLOW, &[], &[]),
    ("pubsub|shardnumsub", PUBSUB | SLOW, &[], &[]),
    ("punsubscribe", PUBSUB | SLOW, &[], &[]),
    ("quit", FAST | CONNECTION, &[], &[]),
    ("randomkey", KEYSPACE | READ | SLOW, &["request_policy:all_shards", "nondeterministic_output"], &[]),
    ("readonly", FAST | CONNECTION, &[], &[]),
    ("readwrite", FAST | CONNECTION, &[], &[]),
    ("rename", KEYSPACE | WRITE | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("renamenx", KEYSPACE | WRITE | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["OW", "insert"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("replconf", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("replicaof", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("reset", FAST | CONNECTION, &[], &[]),
    ("restore", KEYSPACE | WRITE | SLOW | DANGEROUS, &[], &[KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("restore-asking", KEYSPACE | WRITE | SLOW | DANGEROUS, &[], &[KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("role", ADMIN | FAST | DANGEROUS, &[], &[]),
    ("rpop", WRITE | LIST | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("rpoplpush", WRITE | LIST | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["RW", "insert"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("rpush", WRITE | LIST | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("rpushx", WRITE | LIST | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("sadd", WRITE | SET | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "insert"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("save", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("scan", KEYSPACE | READ | SLOW, &["nondeterministic_output", "request_policy:special"], &[]),
    ("scard", READ | SET | FAST, &[], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("script", SLOW, &[], &[]),
    ("script|debug", SLOW | SCRIPTING, &[], &[]),
    ("script|exists", SLOW | SCRIPTING, &["request_policy:all_shards", "response_policy:agg_logical_and"], &[]),
    ("script|flush", SLOW | SCRIPTING, &["request_policy:all_nodes", "response_policy:all_succeeded"], &[]),
    ("script|help", SLOW | SCRIPTING, &[], &[]),
    ("script|kill", SLOW | SCRIPTING, &["request_policy:all_shards", "response_policy:one_succeeded"], &[]),
    ("script|load", SLOW | SCRIPTING, &["request_policy:all_nodes", "response_policy:all_succeeded"], &[]),
    ("sdiff", READ | SET | SLOW, &["nondeterministic_output_order"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(-1, 1, 0) }]),
    ("sdiffstore", WRITE | SET | SLOW, &[], &[KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range(-1, 1, 0) }]),
    ("select", FAST | CONNECTION, &[], &[]),
    ("set", WRITE | STRING | SLOW, &[], &[KeySpec { notes: Some("RW and ACCESS due to the optional `GET` argument"), flags: &["RW", "access", "update", "variable_flags"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("setbit", WRITE | BITMAP | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("setex", WRITE | STRING | SLOW, &[], &[KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("setnx", WRITE | STRING | FAST, &[], &[KeySpec { notes: None, flags: &["OW", "insert"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("setrange", WRITE | STRING | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("shutdown", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("sinter", READ | SET | SLOW, &["nondeterministic_output_order"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(-1, 1, 0) }]),
    ("sintercard", READ | SET | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Keynum(0, 1, 1) }]),
    ("sinterstore", WRITE | SET | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range(-1, 1, 0) }]),
    ("sismember", READ | SET | FAST, &[], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("slaveof", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("slowlog", SLOW, &[], &[]),
    ("slowlog|get", ADMIN | SLOW | DANGEROUS, &["request_policy:all_nodes", "nondeterministic_output"], &[]),
    ("slowlog|help", SLOW, &[], &[]),
    ("slowlog|len", ADMIN | SLOW | DANGEROUS, &["request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"], &[]),
    ("slowlog|reset", ADMIN | SLOW | DANGEROUS, &["request_policy:all_nodes", "response_policy:all_succeeded"], &[]),
    ("smembers", READ | SET | SLOW, &["nondeterministic_output_order"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("smismember", READ | SET | FAST, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("smove", WRITE | SET | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["RW", "insert"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("sort", WRITE | SET | SORTEDSET | LIST | SLOW | DANGEROUS, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: Some("For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"), flags: &["RO", "access"], begin: Begin::Unknown, find: Find::Unknown }, KeySpec { notes: Some("For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array"), flags: &["OW", "update"], begin: Begin::Unknown, find: Find::Unknown }]),
    ("sort_ro", READ | SET | SORTEDSET | LIST | SLOW | DANGEROUS, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: Some("For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"), flags: &["RO", "access"], begin: Begin::Unknown, find: Find::Unknown }]),
    ("spop", WRITE | SET | FAST, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("spublish", PUBSUB | FAST, &[], &[KeySpec { notes: None, flags: &["not_key"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("srandmember", READ | SET | SLOW, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("srem", WRITE | SET | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("sscan", READ | SET | SLOW, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("ssubscribe", PUBSUB | SLOW, &[], &[KeySpec { notes: None, flags: &["not_key"], begin: Begin::Index(1), find: Find::Range(-1, 1, 0) }]),
    ("strlen", READ | STRING | FAST, &[], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("subscribe", PUBSUB | SLOW, &[], &[]),
    ("substr", READ | STRING | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("sunion", READ | SET | SLOW, &["nondeterministic_output_order"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(-1, 1, 0) }]),
    ("sunionstore", WRITE | SET | SLOW, &[], &[KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range(-1, 1, 0) }]),
    ("sunsubscribe", PUBSUB | SLOW, &[], &[KeySpec { notes: None, flags: &["not_key"], begin: Begin::Index(1), find: Find::Range(-1, 1, 0) }]),
    ("swapdb", KEYSPACE | WRITE | FAST | DANGEROUS, &[], &[]),
    ("sync", ADMIN | SLOW | DANGEROUS, &[], &[]),
    ("time", FAST, &["nondeterministic_output"], &[]),
    ("touch", KEYSPACE | READ | FAST, &["request_policy:multi_shard", "response_policy:agg_sum"], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(1), find: Find::Range(-1, 1, 0) }]),
    ("ttl", KEYSPACE | READ | FAST, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("type", KEYSPACE | READ | FAST, &[], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("unlink", KEYSPACE | WRITE | FAST, &["request_policy:multi_shard", "response_policy:agg_sum"], &[KeySpec { notes: None, flags: &["RM", "delete"], begin: Begin::Index(1), find: Find::Range(-1, 1, 0) }]),
    ("unsubscribe", PUBSUB | SLOW, &[], &[]),
    ("unwatch", FAST | TRANSACTION, &[], &[]),
    ("wait", SLOW | CONNECTION, &["request_policy:all_shards", "response_policy:agg_min"], &[]),
    ("watch", FAST | TRANSACTION, &[], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(1), find: Find::Range(-1, 1, 0) }]),
    ("xack", WRITE | STREAM | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("xadd", WRITE | STREAM | FAST, &["nondeterministic_output"], &[KeySpec { notes: Some("UPDATE instead of INSERT because of the optional trimming feature"), flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("xautoclaim", WRITE | STREAM | FAST, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("xclaim", WRITE | STREAM | FAST, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("xdel", WRITE | STREAM | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("xgroup", SLOW, &[], &[]),
    ("xgroup|create", WRITE | STREAM | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "insert"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("xgroup|createconsumer", WRITE | STREAM | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "insert"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("xgroup|delconsumer", WRITE | STREAM | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "delete"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("xgroup|destroy", WRITE | STREAM | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "delete"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("xgroup|help", STREAM | SLOW, &[], &[]),
    ("xgroup|setid", WRITE | STREAM | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "update"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("xinfo", SLOW, &[], &[]),
    ("xinfo|consumers", READ | STREAM | SLOW, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("xinfo|groups", READ | STREAM | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("xinfo|help", STREAM | SLOW, &[], &[]),
    ("xinfo|stream", READ | STREAM | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("xlen", READ | STREAM | FAST, &[], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("xpending", READ | STREAM | SLOW, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("xrange", READ | STREAM | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("xread", READ | STREAM | SLOW | BLOCKING, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Keyword("STREAMS", 1), find: Find::Range(-1, 1, 2) }]),
    ("xreadgroup", WRITE | STREAM | SLOW | BLOCKING, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Keyword("STREAMS", 4), find: Find::Range(-1, 1, 2) }]),
    ("xrevrange", READ | STREAM | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("xsetid", WRITE | STREAM | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("xtrim", WRITE | STREAM | SLOW, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zadd", WRITE | SORTEDSET | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zcard", READ | SORTEDSET | FAST, &[], &[KeySpec { notes: None, flags: &["RO"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zcount", READ | SORTEDSET | FAST, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zdiff", READ | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Keynum(0, 1, 1) }]),
    ("zdiffstore", WRITE | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Keynum(0, 1, 1) }]),
    ("zincrby", WRITE | SORTEDSET | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zinter", READ | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Keynum(0, 1, 1) }]),
    ("zintercard", READ | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Keynum(0, 1, 1) }]),
    ("zinterstore", WRITE | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Keynum(0, 1, 1) }]),
    ("zlexcount", READ | SORTEDSET | FAST, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zmpop", WRITE | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Keynum(0, 1, 1) }]),
    ("zmscore", READ | SORTEDSET | FAST, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zpopmax", WRITE | SORTEDSET | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zpopmin", WRITE | SORTEDSET | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "access", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zrandmember", READ | SORTEDSET | SLOW, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zrange", READ | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zrangebylex", READ | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zrangebyscore", READ | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zrangestore", WRITE | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Range(0, 1, 0) }]),
    ("zrank", READ | SORTEDSET | FAST, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zrem", WRITE | SORTEDSET | FAST, &[], &[KeySpec { notes: None, flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zremrangebylex", WRITE | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zremrangebyrank", WRITE | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zremrangebyscore", WRITE | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["RW", "delete"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zrevrange", READ | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zrevrangebylex", READ | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zrevrangebyscore", READ | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zrevrank", READ | SORTEDSET | FAST, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zscan", READ | SORTEDSET | SLOW, &["nondeterministic_output"], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zscore", READ | SORTEDSET | FAST, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }]),
    ("zunion", READ | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(1), find: Find::Keynum(0, 1, 1) }]),
    ("zunionstore", WRITE | SORTEDSET | SLOW, &[], &[KeySpec { notes: None, flags: &["OW", "update"], begin: Begin::Index(1), find: Find::Range(0, 1, 0) }, KeySpec { notes: None, flags: &["RO", "access"], begin: Begin::Index(2), find: Find::Keynum(0, 1, 1) }]),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_is_sorted_and_answers_like_redis() {
        assert!(CATALOG.windows(2).all(|w| w[0].0 < w[1].0));
        let get = entry("get");
        assert_eq!(get.category_names().collect::<Vec<_>>(), vec!["read", "string", "fast"]);
        assert!(get.tips.is_empty());
        assert_eq!(entry("client|kill").category_names().count(), 4);
        assert!(entry("info").tips.contains(&"nondeterministic_output"));
        assert_eq!(entry("nosuch"), Entry { categories: 0, tips: &[], key_specs: &[] });
        let set = entry("set").key_specs;
        assert_eq!(set.len(), 1);
        assert_eq!((set[0].begin, set[0].find), (Begin::Index(1), Find::Range(0, 1, 0)));
        assert_eq!(category(b"PubSub"), Some(PUBSUB));
        assert_eq!(category(b"nosuch"), None);
        let all = KEYSPACE | READ | WRITE | SET | SORTEDSET | LIST | HASH | STRING | BITMAP | HYPERLOGLOG;
        let all = all | GEO | STREAM | PUBSUB | ADMIN | FAST | SLOW | BLOCKING | DANGEROUS | CONNECTION;
        assert_eq!(all | TRANSACTION | SCRIPTING, (1 << CATEGORY_NAMES.len()) - 1);
    }
}
