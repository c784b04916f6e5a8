//! The command table: what every command is called, how many arguments it
//! takes, which of them are keys, its flags, and the function that runs it.
//!
//! Each family of commands (strings and keys, hashes, sorted sets, lists,
//! sets, the keyspace, the server) keeps its own table beside its handlers
//! as a `pub(crate) const COMMANDS: &[Spec]`, and [`TABLES`] lists the
//! families. `COMMAND`, `COMMAND INFO` and `WATCH`'s tracking of writes
//! (the `write` flag) read the same entries, so a command is described in
//! exactly one place.
//!
//! Lookup is case-insensitive and allocation-free: the hot commands (the
//! first table, `GET` and `SET` first) are found by a short scan, every
//! other one through a map built on first use.

use std::collections::HashMap;
use std::sync::OnceLock;

use foldhash::fast::FixedState;

use super::command::Flow;
use super::session::Session;
use super::store::Store;

/// One request being executed: its arguments, the time, the reply buffer
/// and the client's session. A handler writes exactly one reply into `out`
/// (none only while the client is blocked or subscribed, as in Redis).
pub(crate) struct Call<'a, 'b> {
    /// The arguments, the command's name first.
    pub(crate) args: &'a [&'b [u8]],
    /// The current time in milliseconds (the only clock the store sees).
    pub(crate) now: u64,
    /// Where the reply goes.
    pub(crate) out: &'a mut Vec<u8>,
    /// The client's session.
    pub(crate) session: &'a mut Session,
    /// Set to [`Flow::Close`] to close the connection after the reply.
    pub(crate) flow: Flow,
}

/// A command's implementation.
pub(crate) type Handler = fn(&mut Store, &mut Call<'_, '_>);

/// A command's flags, as `COMMAND INFO` names them (a bit set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Flags(pub(crate) u32);

impl Flags {
    /// Modifies the keyspace: `WATCH`ed keys it names become dirty.
    pub(crate) const WRITE: Flags = Flags(1);
    /// Only reads.
    pub(crate) const READONLY: Flags = Flags(1 << 1);
    /// May grow memory use.
    pub(crate) const DENYOOM: Flags = Flags(1 << 2);
    /// Constant or logarithmic time.
    pub(crate) const FAST: Flags = Flags(1 << 3);
    /// Administrative.
    pub(crate) const ADMIN: Flags = Flags(1 << 4);
    /// Publish/subscribe.
    pub(crate) const PUBSUB: Flags = Flags(1 << 5);
    /// Not allowed in scripts.
    pub(crate) const NOSCRIPT: Flags = Flags(1 << 6);
    /// May block the client.
    pub(crate) const BLOCKING: Flags = Flags(1 << 7);
    /// Allowed while loading.
    pub(crate) const LOADING: Flags = Flags(1 << 8);
    /// Allowed on a stale replica.
    pub(crate) const STALE: Flags = Flags(1 << 9);
    /// Allowed before authentication.
    pub(crate) const NO_AUTH: Flags = Flags(1 << 10);
    /// Not allowed inside `MULTI`.
    pub(crate) const NO_MULTI: Flags = Flags(1 << 11);
    /// Not shown to `MONITOR`.
    pub(crate) const SKIP_MONITOR: Flags = Flags(1 << 12);
    /// Not logged by the slow log.
    pub(crate) const SKIP_SLOWLOG: Flags = Flags(1 << 13);
    /// Allowed on an importing cluster slot.
    pub(crate) const ASKING: Flags = Flags(1 << 14);
    /// May be called without any key.
    pub(crate) const NO_MANDATORY_KEYS: Flags = Flags(1 << 15);
    /// Refused during an asynchronous load.
    pub(crate) const NO_ASYNC_LOADING: Flags = Flags(1 << 16);
    /// Key positions depend on the arguments.
    pub(crate) const MOVABLE_KEYS: Flags = Flags(1 << 17);
    /// Allowed while a script or function runs too long.
    pub(crate) const ALLOW_BUSY: Flags = Flags(1 << 18);
    /// A container: its first argument names a subcommand, whose own entry
    /// (`container|sub`) runs (Redis shows no flag for it).
    pub(crate) const CONTAINER: Flags = Flags(1 << 19);
    /// No flags.
    pub(crate) const NONE: Flags = Flags(0);

    /// Names in Redis's order (`COMMAND INFO` lists them so).
    const NAMES: &'static [(Flags, &'static str)] = &[
        (Flags::WRITE, "write"),
        (Flags::READONLY, "readonly"),
        (Flags::DENYOOM, "denyoom"),
        (Flags::ADMIN, "admin"),
        (Flags::PUBSUB, "pubsub"),
        (Flags::NOSCRIPT, "noscript"),
        (Flags::BLOCKING, "blocking"),
        (Flags::LOADING, "loading"),
        (Flags::STALE, "stale"),
        (Flags::SKIP_MONITOR, "skip_monitor"),
        (Flags::SKIP_SLOWLOG, "skip_slowlog"),
        (Flags::ASKING, "asking"),
        (Flags::FAST, "fast"),
        (Flags::NO_AUTH, "no_auth"),
        (Flags::NO_MANDATORY_KEYS, "no_mandatory_keys"),
        (Flags::NO_ASYNC_LOADING, "no_async_loading"),
        (Flags::NO_MULTI, "no_multi"),
        (Flags::MOVABLE_KEYS, "movablekeys"),
        (Flags::ALLOW_BUSY, "allow_busy"),
    ];

    /// Both sets of flags.
    pub(crate) const fn or(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    /// Whether every flag of `other` is set.
    pub(crate) const fn has(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// The names of the flags set, in Redis's order.
    pub(crate) fn names(self) -> impl Iterator<Item = &'static str> {
        Flags::NAMES.iter().filter(move |(flag, _)| self.has(*flag)).map(|(_, name)| *name)
    }
}

/// A command's table entry.
#[derive(Clone, Copy)]
pub(crate) struct Spec {
    /// Lower-case name, as error messages spell it; a subcommand's is
    /// Redis's full name, `container|sub` (`client|list`).
    pub(crate) text: &'static str,
    /// Argument count including the name: exact if positive, a minimum if
    /// negative (Redis's convention).
    pub(crate) arity: i32,
    /// Flags.
    pub(crate) flags: Flags,
    /// Position of the first key, 0 if none.
    pub(crate) first_key: i32,
    /// Position of the last key (-1: the last argument, -2: the one before).
    pub(crate) last_key: i32,
    /// Step between keys.
    pub(crate) key_step: i32,
    /// The implementation.
    pub(crate) run: Handler,
}

impl std::fmt::Debug for Spec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spec").field("text", &self.text).field("arity", &self.arity).finish()
    }
}

impl Spec {
    /// The key arguments of `args` (a call of this command), by the table's
    /// positions.
    pub(crate) fn keys<'a, 'b>(&self, args: &'a [&'b [u8]]) -> impl Iterator<Item = &'b [u8]> + 'a {
        let len = args.len() as i32;
        let first = self.first_key;
        let last = if self.last_key < 0 { len + self.last_key } else { self.last_key.min(len - 1) };
        let step = self.key_step.max(1);
        let (first, last) = if first > 0 { (first, last) } else { (1, 0) };
        (first..=last).step_by(step as usize).filter_map(move |i| args.get(i as usize).copied())
    }
}

/// A table entry (for the families' `COMMANDS` tables).
pub(crate) const fn spec(text: &'static str, arity: i32, flags: Flags, keys: (i32, i32, i32), run: Handler) -> Spec {
    Spec { text, arity, flags, first_key: keys.0, last_key: keys.1, key_step: keys.2, run }
}

/// No keys.
pub(crate) const NO_KEYS: (i32, i32, i32) = (0, 0, 0);
/// The first argument is the one key.
pub(crate) const KEY1: (i32, i32, i32) = (1, 1, 1);
/// Every argument is a key.
pub(crate) const ALL_KEYS: (i32, i32, i32) = (1, -1, 1);

/// Every family's table; the first is scanned before the map is consulted,
/// so it holds the commands of the hot path.
pub(crate) const TABLES: &[&[Spec]] = &[
    super::command::HOT,
    super::command::COMMANDS,
    super::strings::COMMANDS,
    super::lcs::COMMANDS,
    super::hashes::COMMANDS,
    super::zsets::COMMANDS,
    super::zrange::COMMANDS,
    super::zsetops::COMMANDS,
    super::sets::SET_COMMANDS,
    super::scan::SCAN_COMMANDS,
    super::lists::LIST_COMMANDS,
    super::server::COMMANDS,
    super::pubsub::PUBSUB_COMMANDS,
    super::client_command::CLIENT_COMMANDS,
    super::config::CONFIG_COMMANDS,
    super::command_info::COMMAND_COMMANDS,
    super::info::INFO_COMMANDS,
    super::scripting::SCRIPTING_COMMANDS,
    super::keyspace::KEYSPACE_COMMANDS,
    super::object::OBJECT_COMMANDS,
    super::multi::MULTI_COMMANDS,
];

/// Every entry, subcommands included, in table order.
pub(crate) fn all() -> impl Iterator<Item = &'static Spec> {
    TABLES.iter().flat_map(|table| table.iter())
}

/// Every command a client can name first (no subcommands), in table order.
pub(crate) fn top_level() -> impl Iterator<Item = &'static Spec> {
    all().filter(|spec| !spec.is_subcommand())
}

/// The subcommands of `container`, in table order.
pub(crate) fn subcommands(container: &'static Spec) -> impl Iterator<Item = &'static Spec> {
    let prefix = container.text;
    all().filter(move |spec| {
        spec.text.len() > prefix.len() && spec.text.starts_with(prefix) && spec.text.as_bytes()[prefix.len()] == b'|'
    })
}

impl Spec {
    /// Whether this is a subcommand's entry (`container|sub`).
    pub(crate) fn is_subcommand(&self) -> bool {
        self.text.contains('|')
    }
}

/// Longest command name the map holds.
const MAX_NAME: usize = 32;

/// Every entry by its full lower-case name (`get`, `client|list`). The
/// map never changes after it is built and a name longer than any entry
/// is never hashed, so a client's names cannot make look-ups slow: a fast
/// fixed hash does (SipHash cost about 190 instructions per command).
fn by_name() -> &'static HashMap<&'static [u8], &'static Spec, FixedState> {
    static MAP: OnceLock<HashMap<&'static [u8], &'static Spec, FixedState>> = OnceLock::new();
    MAP.get_or_init(|| all().map(|spec| (spec.text.as_bytes(), spec)).collect())
}

/// The entry whose full name is `name`, in any case.
fn find(name: &[u8]) -> Option<&'static Spec> {
    if name.len() > MAX_NAME {
        return None;
    }
    let mut lower = [0u8; MAX_NAME];
    for (to, from) in lower.iter_mut().zip(name) {
        *to = from.to_ascii_lowercase();
    }
    by_name().get(&lower[..name.len()]).copied()
}

/// The table entry of the command called `name`, in any case (a
/// subcommand's full name is no command name: `client|list` is unknown,
/// as in Redis).
pub(crate) fn lookup(name: &[u8]) -> Option<&'static Spec> {
    if let Some(spec) = TABLES[0].iter().find(|spec| name.eq_ignore_ascii_case(spec.text.as_bytes())) {
        return Some(spec);
    }
    find(name).filter(|spec| !spec.is_subcommand())
}

/// The entry a full name designates, as `COMMAND INFO` reads names: a
/// command (`get`) or a subcommand (`config|get`), in any case.
pub(crate) fn lookup_full_name(name: &[u8]) -> Option<&'static Spec> {
    find(name)
}

/// The entry that runs `args`, a call of `spec`: `spec` itself, or for a
/// container called with a subcommand, that subcommand's entry; `None`
/// when the container has no such subcommand.
#[inline]
pub(crate) fn resolve(spec: &'static Spec, args: &[&[u8]]) -> Option<&'static Spec> {
    if !spec.flags.has(Flags::CONTAINER) || args.len() < 2 {
        return Some(spec);
    }
    resolve_subcommand(spec, args[1])
}

/// The subcommand `sub` of the container `spec`.
fn resolve_subcommand(spec: &'static Spec, sub: &[u8]) -> Option<&'static Spec> {
    let container = spec.text.as_bytes();
    let len = container.len() + 1 + sub.len();
    if len > MAX_NAME || sub.contains(&b'|') {
        return None;
    }
    let mut full = [0u8; MAX_NAME];
    full[..container.len()].copy_from_slice(container);
    full[container.len()] = b'|';
    full[container.len() + 1..len].copy_from_slice(sub);
    find(&full[..len])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_unique_lower_case_and_found_in_any_case() {
        let mut seen = std::collections::HashSet::new();
        for spec in all() {
            assert!(seen.insert(spec.text), "{} is in two tables", spec.text);
            assert_eq!(spec.text, spec.text.to_ascii_lowercase());
            assert!(spec.text.len() <= MAX_NAME);
            let upper = spec.text.to_ascii_uppercase();
            assert_eq!(lookup_full_name(upper.as_bytes()).unwrap().text, spec.text);
            if let Some((container, sub)) = spec.text.split_once('|') {
                assert!(lookup(upper.as_bytes()).is_none(), "{} is found as a command", spec.text);
                let parent = lookup(container.as_bytes()).unwrap();
                assert!(parent.flags.has(Flags::CONTAINER), "{container} is not marked a container");
                let args: [&[u8]; 2] = [container.as_bytes(), sub.as_bytes()];
                assert_eq!(resolve(parent, &args).unwrap().text, spec.text);
                assert!(subcommands(parent).any(|s| s.text == spec.text));
                continue;
            }
            assert_eq!(lookup(upper.as_bytes()).unwrap().text, spec.text);
            assert!(spec.arity != 0, "{}", spec.text);
            assert!(
                !(spec.flags.has(Flags::WRITE) && spec.flags.has(Flags::READONLY)),
                "{} is both write and readonly",
                spec.text
            );
        }
        assert!(lookup(b"nosuchcommand").is_none());
        assert!(lookup(&[b'g'; 100]).is_none());
    }

    #[test]
    fn key_positions_name_the_keys() {
        let noop: Handler = |_, _| {};
        let args: Vec<&[u8]> = vec![b"mset", b"a", b"1", b"b", b"2"];
        let mset = spec("mset", -3, Flags::WRITE, (1, -1, 2), noop);
        assert_eq!(mset.keys(&args).collect::<Vec<_>>(), vec![&b"a"[..], b"b"]);
        let get = spec("get", 2, Flags::READONLY, KEY1, noop);
        assert_eq!(get.keys(&args[..2]).collect::<Vec<_>>(), vec![&b"a"[..]]);
        let ping = spec("ping", -1, Flags::NONE, NO_KEYS, noop);
        assert_eq!(ping.keys(&args).count(), 0);
        let blpop = spec("blpop", -3, Flags::WRITE, (1, -2, 1), noop);
        assert_eq!(blpop.keys(&[b"blpop", b"a", b"b", b"0"]).collect::<Vec<_>>(), vec![&b"a"[..], b"b"]);
    }
}
