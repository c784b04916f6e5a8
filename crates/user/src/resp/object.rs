//! What a value is made of: `OBJECT` and `MEMORY`.
//!
//! `OBJECT ENCODING` names the representation a value really has here, in
//! Redis's words for the same idea: a string is always a separate buffer
//! (`raw`; this store has no `int` or `embstr` strings), a hash is a
//! `listpack` while small and a `hashtable` past that, a set an `intset`
//! while it holds few integers and a `hashtable` otherwise, a list is
//! always one structure (a ring buffer, in the role of Redis 7.0's
//! `quicklist`), and a sorted set is always a score index beside a hash
//! table (`skiplist`). `OBJECT REFCOUNT`
//! is 1 (values are never shared), `OBJECT FREQ` answers Redis's error for
//! a server without an LFU policy, and `OBJECT IDLETIME` is refused: access
//! times are not kept (that would cost every read a write).
//!
//! `MEMORY USAGE key [SAMPLES n]` estimates the bytes the key occupies: its
//! slot in the database's table and its name, its deadline's index entry,
//! and its value's buffers and tables, counted by capacity (not by the
//! allocator's size classes, which Redis adds). As in Redis, the elements
//! of a hash or sorted set are sampled — the first `n` (5 by default, 0 for
//! all) — and their average size stands for every element; like Redis's, it
//! does not look at deadlines. `redis-cli --memkeys` reads it. `MEMORY
//! PURGE` has nothing to do, `MEMORY MALLOC-STATS` answers what Redis does
//! without jemalloc, and `MEMORY STATS` and `MEMORY DOCTOR` are refused.

use std::mem::size_of;

use super::command::{write_ok, NOT_INTEGER, SYNTAX};
use super::encode::{write_array_header, write_bulk, write_error, write_integer, write_null, write_simple};
use super::hash::Hash;
use super::number::parse_i64;
use super::server::LOADING_STALE;
use super::set::Set;
use super::store::{Entry, Store, Value};
use super::table::{spec, Flags, Spec, NO_KEYS};
use super::zset::Score;

/// The read flag of the subcommands that look at a key.
const R: Flags = Flags::READONLY;
/// The key of `OBJECT ENCODING key` and `MEMORY USAGE key`.
const KEY2: (i32, i32, i32) = (2, 2, 1);

/// `OBJECT` and `MEMORY`, with their subcommands.
pub(crate) const OBJECT_COMMANDS: &[Spec] = &[
    spec("object", -2, Flags::CONTAINER, NO_KEYS, |_, _| {}),
    spec("object|encoding", 3, R, KEY2, |s, c| s.cmd_object(c.args, c.now, c.out)),
    spec("object|freq", 3, R, KEY2, |s, c| s.cmd_object(c.args, c.now, c.out)),
    spec("object|idletime", 3, R, KEY2, |s, c| s.cmd_object(c.args, c.now, c.out)),
    spec("object|refcount", 3, R, KEY2, |s, c| s.cmd_object(c.args, c.now, c.out)),
    spec("object|help", 2, LOADING_STALE, NO_KEYS, |_, c| write_help(c.out, "OBJECT", OBJECT_HELP)),
    spec("memory", -2, Flags::CONTAINER, NO_KEYS, |_, _| {}),
    spec("memory|usage", -3, R, KEY2, |s, c| s.memory_usage(c.args, c.out)),
    spec("memory|purge", 2, Flags::NONE, NO_KEYS, |_, c| write_ok(c.out)),
    spec("memory|malloc-stats", 2, Flags::NONE, NO_KEYS, |_, c| {
        write_bulk(c.out, b"Stats not supported for the current allocator");
    }),
    spec("memory|stats", 2, Flags::NONE, NO_KEYS, |_, c| write_error(c.out, NOT_SUPPORTED)),
    spec("memory|doctor", 2, Flags::NONE, NO_KEYS, |_, c| write_error(c.out, NOT_SUPPORTED)),
    spec("memory|help", 2, LOADING_STALE, NO_KEYS, |_, c| write_help(c.out, "MEMORY", MEMORY_HELP)),
];

/// The answer of the `MEMORY` subcommands this store does not have.
const NOT_SUPPORTED: &[u8] = b"ERR this MEMORY subcommand is not supported by this server";

/// `OBJECT HELP`'s lines (Redis's).
const OBJECT_HELP: &[&str] = &[
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
];

/// `MEMORY HELP`'s lines (Redis's).
const MEMORY_HELP: &[&str] = &[
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
];

/// Elements `MEMORY USAGE` samples by default (Redis's
/// `OBJ_COMPUTE_SIZE_DEF_SAMPLES`).
const DEFAULT_SAMPLES: usize = 5;

impl Store {
    /// `OBJECT ENCODING|REFCOUNT|FREQ|IDLETIME key`.
    fn cmd_object(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        let Some(value) = self.get(args[2], now) else {
            return write_null(out, protocol);
        };
        let sub = args[1];
        if sub.eq_ignore_ascii_case(b"encoding") {
            write_bulk(out, encoding(value).as_bytes());
        } else if sub.eq_ignore_ascii_case(b"refcount") {
            write_integer(out, 1);
        } else if sub.eq_ignore_ascii_case(b"freq") {
            write_error(
                out,
                b"ERR An LFU maxmemory policy is not selected, access frequency not tracked. \
                  Please note that when switching between policies at runtime LRU and LFU data \
                  will take some time to adjust.",
            );
        } else {
            write_error(out, b"ERR idle time is not tracked by this server");
        }
    }

    /// `MEMORY USAGE key [SAMPLES count]`: options first, then the key as
    /// the database holds it (expired or not, as Redis's `dictFind`).
    fn memory_usage(&mut self, args: &[&[u8]], out: &mut Vec<u8>) {
        let mut samples = DEFAULT_SAMPLES;
        let mut i = 3;
        while i < args.len() {
            if !(args[i].eq_ignore_ascii_case(b"SAMPLES") && i + 1 < args.len()) {
                return write_error(out, SYNTAX);
            }
            samples = match parse_i64(args[i + 1]) {
                None => return write_error(out, NOT_INTEGER),
                Some(n) if n < 0 => return write_error(out, SYNTAX),
                Some(0) => usize::MAX,
                Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
            };
            i += 2;
        }
        match self.dbs[self.db].keys.get_key_value(args[2]) {
            Some((key, entry)) => {
                let bytes = entry_bytes(key, entry).saturating_add(value_bytes(&entry.value, samples));
                write_integer(out, i64::try_from(bytes).unwrap_or(i64::MAX));
            }
            None => write_null(out, self.protocol),
        }
    }
}

/// `OBJECT ENCODING`'s answer for `value`.
fn encoding(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "raw",
        Value::Hash(Hash::Small(_)) => "listpack",
        Value::Hash(Hash::Large(_)) => "hashtable",
        Value::ZSet(_) => "skiplist",
        Value::Set(Set::Ints(_)) => "intset",
        Value::Set(Set::Table(_)) => "hashtable",
        Value::List(_) => "quicklist",
    }
}

/// Redis's `addReplyHelp`: a header naming `command`, the lines, and the
/// `HELP` entry, as simple strings.
fn write_help(out: &mut Vec<u8>, command: &str, lines: &[&str]) {
    write_array_header(out, lines.len() + 3);
    let header = format!("{command} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
    write_simple(out, header.as_bytes());
    for line in lines.iter().chain(&["HELP", "    Prints this help."]) {
        write_simple(out, line.as_bytes());
    }
}

/// Bytes of a table of `capacity` slots of `slot` bytes (a hash table's
/// buckets are 8/7 of its capacity, each with a control byte).
fn table_bytes(capacity: usize, slot: usize) -> usize {
    capacity.saturating_mul(8).saturating_div(7).saturating_mul(slot + 1)
}

/// Bytes a B-tree spends on `len` elements of `size` bytes (nodes are
/// about two-thirds full).
fn btree_bytes(len: usize, size: usize) -> usize {
    len.saturating_mul(size).saturating_mul(3) / 2
}

/// Bytes of a key's own: its slot in the database table, its name, and
/// its entry in the deadline index.
fn entry_bytes(key: &Vec<u8>, entry: &Entry) -> usize {
    let slot = table_bytes(1, size_of::<(Vec<u8>, Entry)>());
    let deadline = if entry.deadline.is_some() { btree_bytes(1, size_of::<(u64, Vec<u8>)>()) + key.len() } else { 0 };
    slot + key.capacity() + deadline
}

/// Bytes of `value`'s buffers and tables, its elements sampled: the first
/// `samples` stand for all.
fn value_bytes(value: &Value, samples: usize) -> usize {
    const PAIR: usize = size_of::<(Vec<u8>, Vec<u8>)>();
    match value {
        Value::String(data) => data.capacity(),
        Value::Hash(Hash::Small(pairs)) => pairs.capacity().saturating_mul(PAIR).saturating_add(sampled(
            pairs.len(),
            pairs.iter().map(|(field, value)| field.capacity() + value.capacity()),
            samples,
        )),
        Value::Hash(Hash::Large(map)) => table_bytes(map.capacity(), PAIR).saturating_add(sampled(
            map.len(),
            map.iter().map(|(field, value)| field.capacity() + value.capacity()),
            samples,
        )),
        Value::ZSet(set) => {
            // A member lives twice: in the score table and in the order.
            let tables = table_bytes(set.len(), size_of::<(Vec<u8>, Score)>())
                .saturating_add(btree_bytes(set.len(), size_of::<(Score, Vec<u8>)>()));
            tables.saturating_add(sampled(set.len(), set.iter().map(|(_, member)| 2 * member.len()), samples))
        }
        Value::Set(Set::Ints(ints)) => ints.capacity().saturating_mul(size_of::<i64>()),
        Value::Set(set) => {
            // A member's bytes are shared (with their counts) by the member
            // vector and the position table.
            const SHARED: usize = size_of::<std::sync::Arc<[u8]>>();
            let tables =
                set.len().saturating_mul(SHARED).saturating_add(table_bytes(set.len(), SHARED + size_of::<usize>()));
            let members = set.iter().map(|member| member.with_bytes(|bytes| 2 * size_of::<usize>() + bytes.len()));
            tables.saturating_add(sampled(set.len(), members, samples))
        }
        Value::List(list) => list.len().saturating_mul(size_of::<Box<[u8]>>()).saturating_add(sampled(
            list.len(),
            list.iter().map(<[u8]>::len),
            samples,
        )),
    }
}

/// `len` elements' total size estimated from the first `samples` sizes.
fn sampled(len: usize, sizes: impl Iterator<Item = usize>, samples: usize) -> usize {
    let (mut seen, mut total) = (0usize, 0usize);
    for size in sizes.take(samples) {
        seen += 1;
        total = total.saturating_add(size);
    }
    if seen == 0 {
        return 0;
    }
    let estimate = (total as u128) * (len as u128) / (seen as u128);
    usize::try_from(estimate).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::store::Ttl;

    fn usage(store: &mut Store, command: &str) -> String {
        let words: Vec<&[u8]> = command.split(' ').map(str::as_bytes).collect();
        let mut out = Vec::new();
        let _ = store.execute(&words, 0, &mut out);
        String::from_utf8(out).unwrap()
    }

    fn bytes(reply: &str) -> usize {
        reply.trim_start_matches(':').trim_end().parse().unwrap()
    }

    #[test]
    fn memory_usage_grows_with_the_data() {
        let mut store = Store::new();
        store.set_string(b"small", b"v", Ttl::Clear, 0);
        store.set_string(b"big", &[b'x'; 10_000], Ttl::Clear, 0);
        let small = bytes(&usage(&mut store, "MEMORY USAGE small"));
        let big = bytes(&usage(&mut store, "MEMORY USAGE big"));
        assert!((2..200).contains(&small), "{small}");
        assert!((10_000..10_300).contains(&big), "{big}");
        store.set_string(b"small", b"v", Ttl::At(10), 0);
        assert!(bytes(&usage(&mut store, "MEMORY USAGE small")) > small);
        assert_eq!(usage(&mut store, "MEMORY USAGE none"), "$-1\r\n");
    }

    #[test]
    fn sampling_extrapolates_from_the_first_elements() {
        assert_eq!(sampled(100, [10, 20, 30].into_iter(), 2), 1500);
        assert_eq!(sampled(3, [10, 20, 30].into_iter(), usize::MAX), 60);
        assert_eq!(sampled(0, std::iter::empty(), 5), 0);
        let mut store = Store::new();
        for i in 0..200 {
            let _ = usage(&mut store, &format!("HSET h field{i} {}", "v".repeat(100)));
        }
        let all = bytes(&usage(&mut store, "MEMORY USAGE h SAMPLES 0"));
        let five = bytes(&usage(&mut store, "MEMORY USAGE h"));
        assert!(all > 200 * 100, "{all}");
        // Every value has the same size: sampling estimates closely.
        assert!(five.abs_diff(all) < all / 20, "{five} vs {all}");
    }

    #[test]
    fn encodings_name_our_representations() {
        let mut store = Store::new();
        let _ = usage(&mut store, "SET s 1");
        let _ = usage(&mut store, "HSET h f v");
        let _ = usage(&mut store, "ZADD z 1 m");
        assert_eq!(usage(&mut store, "OBJECT ENCODING s"), "$3\r\nraw\r\n");
        assert_eq!(usage(&mut store, "OBJECT ENCODING h"), "$8\r\nlistpack\r\n");
        assert_eq!(usage(&mut store, "OBJECT ENCODING z"), "$8\r\nskiplist\r\n");
        assert_eq!(usage(&mut store, "OBJECT REFCOUNT z"), ":1\r\n");
        assert!(usage(&mut store, "OBJECT IDLETIME z").starts_with("-ERR"));
    }
}
