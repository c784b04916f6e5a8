//! `COMMAND`: what the command table says about each command, in Redis
//! 7.0's shapes.
//!
//! `COMMAND` and `COMMAND INFO` give Redis's ten fields per command: the
//! full name, arity, flags, first key, last key and key step — all from the
//! table ([`table`](super::table)) — then the ACL categories, tips and key
//! specifications Redis gives the command ([`catalog`](super::catalog)),
//! and the subcommands' own entries for a container (`CLIENT`, `CONFIG`,
//! `PUBSUB`, `COMMAND`), only those this store has. Flags, categories,
//! tips and key specs are sets (`~` in RESP3), as in Redis.
//!
//! `COMMAND COUNT` counts commands (not subcommands); `COMMAND LIST` names
//! every command and subcommand, with Redis's filters (`MODULE` matches
//! nothing: there are no modules); `COMMAND GETKEYS` finds the keys of a
//! call by the command's key specifications, as Redis does
//! ([`getkeys`](super::getkeys)), or by the table's key range where the
//! catalog has none. `COMMAND DOCS` answers an empty map: the
//! store carries no documentation (Redis's summary, since, group,
//! complexity and arguments), and a partial entry would mislead
//! `redis-cli`, which then shows no help rather than wrong help.
//! Command order is the table's (Redis's is its dictionary's).

use super::catalog::{self, Begin, Find, KeySpec};
use super::command::{arity_ok, SYNTAX};
use super::encode::{
    write_array_header, write_bulk, write_error, write_integer, write_map_header, write_null, write_simple, Protocol,
};
use super::getkeys;
use super::glob::{glob_match, Case};
use super::pubsub::write_help;
use super::server::LOADING_STALE;
use super::store::Store;
use super::table::{self, lookup, lookup_full_name, resolve, spec, Flags, Spec, NO_KEYS};

/// Flags of `COMMAND` and its subcommands.
const FLAGS: Flags = LOADING_STALE;

/// `COMMAND` and its subcommands.
pub(crate) const COMMAND_COMMANDS: &[Spec] = &[
    spec("command", -1, FLAGS.or(Flags::CONTAINER), NO_KEYS, |s, c| s.write_all_command_info(c.out)),
    spec("command|count", 2, FLAGS, NO_KEYS, |_, c| write_integer(c.out, table::top_level().count() as i64)),
    spec("command|info", -2, FLAGS, NO_KEYS, |s, c| {
        if c.args.len() == 2 {
            return s.write_all_command_info(c.out);
        }
        write_array_header(c.out, c.args.len() - 2);
        for name in &c.args[2..] {
            match lookup_full_name(name) {
                Some(spec) => write_command_info(c.out, spec, s.protocol),
                None => write_null(c.out, s.protocol),
            }
        }
    }),
    spec("command|list", -2, FLAGS, NO_KEYS, |s, c| s.cmd_command_list(c.args, c.out)),
    spec("command|docs", -2, FLAGS, NO_KEYS, |s, c| write_map_header(c.out, 0, s.protocol)),
    spec("command|getkeys", -4, FLAGS, NO_KEYS, |_, c| command_getkeys(c.args, c.out)),
    spec("command|help", 2, FLAGS, NO_KEYS, |_, c| write_help(c.out, COMMAND_HELP)),
];

/// `COMMAND HELP`'s lines: the subcommands this store has, in Redis's words.
const COMMAND_HELP: &[&str] = &[
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "HELP",
    "    Prints this help.",
];

/// Appends the header of a set of `len` elements: `~` in RESP3, an array
/// in RESP2.
fn write_set_header(out: &mut Vec<u8>, len: usize, protocol: Protocol) {
    match protocol {
        Protocol::Resp2 => write_array_header(out, len),
        Protocol::Resp3 => {
            out.push(b'~');
            out.extend_from_slice(len.to_string().as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// One `COMMAND INFO` entry: Redis 7's ten fields.
fn write_command_info(out: &mut Vec<u8>, spec: &'static Spec, protocol: Protocol) {
    write_array_header(out, 10);
    write_bulk(out, spec.text.as_bytes());
    write_integer(out, i64::from(spec.arity));
    let flags: Vec<&str> = spec.flags.names().collect();
    write_set_header(out, flags.len(), protocol);
    for flag in flags {
        write_simple(out, flag.as_bytes());
    }
    write_integer(out, i64::from(spec.first_key));
    write_integer(out, i64::from(spec.last_key));
    write_integer(out, i64::from(spec.key_step));
    let entry = catalog::entry(spec.text);
    let categories: Vec<&str> = entry.category_names().collect();
    write_set_header(out, categories.len(), protocol);
    for category in categories {
        write_simple(out, format!("@{category}").as_bytes());
    }
    write_set_header(out, entry.tips.len(), protocol);
    for tip in entry.tips {
        write_bulk(out, tip.as_bytes());
    }
    write_set_header(out, entry.key_specs.len(), protocol);
    for key_spec in entry.key_specs {
        write_key_spec(out, key_spec, protocol);
    }
    if spec.flags.has(Flags::CONTAINER) {
        let subcommands: Vec<&'static Spec> = table::subcommands(spec).collect();
        write_array_header(out, subcommands.len());
        for sub in subcommands {
            write_command_info(out, sub, protocol);
        }
    } else {
        write_set_header(out, 0, protocol);
    }
}

/// Appends a map of `(name, integer)` pairs.
fn write_integer_map(out: &mut Vec<u8>, pairs: &[(&str, i64)], protocol: Protocol) {
    write_map_header(out, pairs.len(), protocol);
    for (name, value) in pairs {
        write_bulk(out, name.as_bytes());
        write_integer(out, *value);
    }
}

/// Appends one key specification as Redis 7.0 writes it.
fn write_key_spec(out: &mut Vec<u8>, key_spec: &KeySpec, protocol: Protocol) {
    write_map_header(out, 3 + usize::from(key_spec.notes.is_some()), protocol);
    if let Some(notes) = key_spec.notes {
        write_bulk(out, b"notes");
        write_bulk(out, notes.as_bytes());
    }
    write_bulk(out, b"flags");
    write_set_header(out, key_spec.flags.len(), protocol);
    for flag in key_spec.flags {
        write_simple(out, flag.as_bytes());
    }
    let typed = |out: &mut Vec<u8>, kind: &str| {
        write_map_header(out, 2, protocol);
        write_bulk(out, b"type");
        write_bulk(out, kind.as_bytes());
        write_bulk(out, b"spec");
    };
    write_bulk(out, b"begin_search");
    match key_spec.begin {
        Begin::Index(index) => {
            typed(out, "index");
            write_integer_map(out, &[("index", index)], protocol);
        }
        Begin::Keyword(keyword, start) => {
            typed(out, "keyword");
            write_map_header(out, 2, protocol);
            write_bulk(out, b"keyword");
            write_bulk(out, keyword.as_bytes());
            write_bulk(out, b"startfrom");
            write_integer(out, start);
        }
        Begin::Unknown => {
            typed(out, "unknown");
            write_map_header(out, 0, protocol);
        }
    }
    write_bulk(out, b"find_keys");
    match key_spec.find {
        Find::Range(last, step, limit) => {
            typed(out, "range");
            write_integer_map(out, &[("lastkey", last), ("keystep", step), ("limit", limit)], protocol);
        }
        Find::Keynum(index, first, step) => {
            typed(out, "keynum");
            write_integer_map(out, &[("keynumidx", index), ("firstkey", first), ("keystep", step)], protocol);
        }
        Find::Unknown => {
            typed(out, "unknown");
            write_map_header(out, 0, protocol);
        }
    }
}

/// `COMMAND GETKEYS command arg ...`: the keys of that call.
fn command_getkeys(args: &[&[u8]], out: &mut Vec<u8>) {
    let call = &args[2..];
    let Some(spec) = lookup(call[0]).and_then(|spec| resolve(spec, call)) else {
        return write_error(out, b"ERR Invalid command specified");
    };
    // Shard channels sit in key positions but are not keys.
    if (spec.first_key == 0 && !spec.flags.has(Flags::MOVABLE_KEYS)) || spec.flags.has(Flags::PUBSUB) {
        return write_error(out, b"ERR The command has no key arguments");
    }
    if !arity_ok(spec.arity, call.len()) {
        return write_error(out, b"ERR Invalid number of arguments specified for command");
    }
    let keys: Vec<&[u8]> = match getkeys::key_positions(catalog::entry(spec.text).key_specs, call) {
        Some(at) => at.into_iter().filter_map(|i| call.get(i).copied()).collect(),
        None => spec.keys(call).collect(),
    };
    if keys.is_empty() && !spec.flags.has(Flags::NO_MANDATORY_KEYS) {
        return write_error(out, b"ERR Invalid arguments specified for command");
    }
    write_array_header(out, keys.len());
    for key in keys {
        write_bulk(out, key);
    }
}

/// What `COMMAND LIST FILTERBY` keeps.
enum ListFilter<'a> {
    Everything,
    Module,
    Category(Option<u32>),
    Pattern(&'a [u8]),
}

impl ListFilter<'_> {
    fn keeps(&self, spec: &Spec) -> bool {
        match self {
            ListFilter::Everything => true,
            ListFilter::Module => false,
            ListFilter::Category(bit) => bit.is_some_and(|bit| catalog::entry(spec.text).categories & bit != 0),
            ListFilter::Pattern(pattern) => glob_match(pattern, spec.text.as_bytes(), Case::Insensitive),
        }
    }
}

impl Store {
    /// Every command's `COMMAND INFO` entry (`COMMAND`, `COMMAND INFO`).
    fn write_all_command_info(&mut self, out: &mut Vec<u8>) {
        write_array_header(out, table::top_level().count());
        for spec in table::top_level() {
            write_command_info(out, spec, self.protocol);
        }
    }

    /// `COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN glob]`.
    fn cmd_command_list(&mut self, args: &[&[u8]], out: &mut Vec<u8>) {
        let mut filter = ListFilter::Everything;
        let mut i = 2;
        while i < args.len() {
            if !(args[i].eq_ignore_ascii_case(b"filterby") && args.len() - 1 - i == 2) {
                return write_error(out, SYNTAX);
            }
            let (kind, value) = (args[i + 1], args[i + 2]);
            filter = if kind.eq_ignore_ascii_case(b"module") {
                ListFilter::Module
            } else if kind.eq_ignore_ascii_case(b"aclcat") {
                ListFilter::Category(catalog::category(value))
            } else if kind.eq_ignore_ascii_case(b"pattern") {
                ListFilter::Pattern(value)
            } else {
                return write_error(out, SYNTAX);
            };
            i += 3;
        }
        let names: Vec<&str> = table::all().filter(|spec| filter.keeps(spec)).map(|spec| spec.text).collect();
        write_array_header(out, names.len());
        for name in names {
            write_bulk(out, name.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::testing::text;

    #[test]
    fn getkeys_follows_the_table() {
        let mut store = Store::new();
        assert_eq!(text(&mut store, "COMMAND GETKEYS MSET a 1 b 2"), "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
        assert_eq!(
            text(&mut store, "COMMAND GETKEYS GET"),
            "-ERR wrong number of arguments for 'command|getkeys' command\r\n"
        );
        assert_eq!(
            text(&mut store, "COMMAND GETKEYS GET a b"),
            "-ERR Invalid number of arguments specified for command\r\n"
        );
        assert_eq!(text(&mut store, "COMMAND GETKEYS PING a b"), "-ERR The command has no key arguments\r\n");
        assert_eq!(text(&mut store, "COMMAND GETKEYS NOPE a b"), "-ERR Invalid command specified\r\n");
        assert_eq!(text(&mut store, "COMMAND GETKEYS CONFIG NOPE a"), "-ERR Invalid command specified\r\n");
    }

    #[test]
    fn getkeys_follows_key_specifications() {
        let mut store = Store::new();
        let keys = |store: &mut Store, call: &str| text(store, &format!("COMMAND GETKEYS {call}"));
        // The destination, then the counted keys.
        assert_eq!(keys(&mut store, "ZUNIONSTORE d 2 a b WEIGHTS 1 2"), "*3\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nb\r\n");
        // A count `string2ll` refuses is read by `atoi`: the destination last.
        assert_eq!(keys(&mut store, "ZUNIONSTORE d +1 a"), "*2\r\n$1\r\na\r\n$1\r\nd\r\n");
        // Counted keys beyond the call.
        assert_eq!(keys(&mut store, "ZUNIONSTORE d 3 a b"), "-ERR Invalid arguments specified for command\r\n");
        assert_eq!(keys(&mut store, "ZINTERCARD 2 a b LIMIT 1"), "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
        // `EVAL` may name no keys.
        assert_eq!(keys(&mut store, "EVAL s 2 a"), "*0\r\n");
    }

    #[test]
    fn transaction_commands_are_in_the_table() {
        let mut store = Store::new();
        let info = text(&mut store, "COMMAND INFO multi exec discard");
        assert!(info.starts_with("*3\r\n*10\r\n$5\r\nmulti\r\n:1\r\n"), "{info}");
        assert!(info.contains("$4\r\nexec\r\n:1\r\n*4\r\n+noscript\r\n+loading\r\n+stale\r\n+skip_slowlog"), "{info}");
        assert!(info.contains("$7\r\ndiscard\r\n"), "{info}");
        assert!(text(&mut store, "COMMAND LIST FILTERBY PATTERN exec").contains("exec"));
    }

    #[test]
    fn lists_filter_like_redis() {
        let mut store = Store::new();
        assert_eq!(text(&mut store, "COMMAND LIST FILTERBY PATTERN config|g*"), "*1\r\n$10\r\nconfig|get\r\n");
        assert_eq!(text(&mut store, "COMMAND LIST FILTERBY MODULE x"), "*0\r\n");
        assert_eq!(text(&mut store, "COMMAND LIST FILTERBY ACLCAT nosuch"), "*0\r\n");
        assert_eq!(text(&mut store, "COMMAND LIST FILTERBY PATTERN"), "-ERR syntax error\r\n");
        assert_eq!(text(&mut store, "COMMAND LIST FILTERBY FOO x"), "-ERR syntax error\r\n");
        assert!(text(&mut store, "COMMAND LIST FILTERBY ACLCAT pubsub").contains("$7\r\npublish\r\n"));
        let count = text(&mut store, "COMMAND COUNT");
        let all = text(&mut store, "COMMAND");
        assert_eq!(all.lines().next().map(|l| format!(":{}", &l[1..])), count.lines().next().map(str::to_owned));
    }
}
