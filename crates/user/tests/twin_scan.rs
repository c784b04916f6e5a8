//! `KEYS` and the scan family against a real `redis-server`, and the scan
//! guarantee as a property of the store alone.
//!
//! Redis and the store visit elements in different orders, so a scan of
//! several calls cannot be compared reply by reply; what is compared is
//! every error, every reply of a collection Redis returns whole (integer
//! sets, small hashes and sorted sets: byte for byte), and a scan whose
//! `COUNT` covers everything (as sorted elements). The property test then
//! interleaves inserts and deletes with scan calls and checks that every
//! element present throughout is returned (here: exactly once) and that
//! the scan ends.

#[allow(dead_code)]
mod common;

use std::collections::BTreeSet;

use common::twin::Twin;
use granule_user::resp::{parse_reply, Reply, Store};
use proptest::prelude::*;

#[test]
fn the_table_describes_scan_commands_as_redis_does() {
    let Some(mut t) = Twin::start() else { return };
    for name in ["keys", "scan", "sscan", "hscan", "zscan"] {
        t.same_command_info(name);
    }
}

#[test]
fn keys_matches_globs_as_redis_does() {
    let Some(mut t) = Twin::start() else { return };
    let keys = [
        "hello",
        "hallo",
        "hxllo",
        "hllo",
        "heeeello",
        "h*llo",
        "h?llo",
        "h[a]llo",
        "a-",
        "_",
        "`",
        "]",
        "\\",
        "-",
        "",
        "key:1",
        "KEY:1",
        "x",
        "[",
        "^",
        "a",
        "b",
        "abc",
        "a]",
        "xa",
        "foo:bar:baz",
        "foo::baz",
        "a\\",
        "?",
        "*",
    ];
    for key in keys {
        t.same(&["SET", key, "v"]);
    }
    for pattern in [
        "*",
        "**",
        "***",
        "",
        "?",
        "??",
        "h?llo",
        "h*llo",
        "h[ae]llo",
        "h[^e]llo",
        "h[a-b]llo",
        "h[b-a]llo",
        "[]]",
        "[]",
        "[^]",
        "[\\]]",
        "[\\",
        "[a-]",
        "[a-]x]",
        "[abc",
        "[",
        "[^",
        "x[^",
        "[a-",
        "\\",
        "a\\",
        "a\\\\",
        "\\?",
        "\\*",
        "h\\*llo",
        "h\\?llo",
        "h\\[a\\]llo",
        "KEY*",
        "key*",
        "*:*",
        "foo:*:baz",
        "foo:?:baz",
        "*o*",
        "[]-a]",
        "[!a]",
        "[^a-z]",
        "[-]",
        "[a-c-e]",
        "*[",
        "h*l*o",
        "*llo",
        "h*",
        "[^]]",
        "[[]",
        "*\\",
    ] {
        t.same_unordered(&["KEYS", pattern]);
    }
    // Expired keys are not listed.
    t.same(&["SET", "tmp", "v", "PX", "1"]);
    std::thread::sleep(std::time::Duration::from_millis(10));
    t.same_unordered(&["KEYS", "*"]);
    t.same(&["KEYS", "tmp"]);
    t.same(&["KEYS"]);
    t.same(&["KEYS", "a", "b"]);
}

/// Fills the keyspace with strings, sets, hashes and sorted sets.
fn populate(t: &mut Twin, n: usize) {
    for i in 0..n {
        let key = format!("s:{i}");
        t.same(&["SET", &key, "v"]);
        let key = format!("set:{i}");
        t.same(&["SADD", &key, "m"]);
        let key = format!("h:{i}");
        t.same(&["HSET", &key, "f", "v"]);
        let key = format!("z:{i}");
        t.same(&["ZADD", &key, "1", "m"]);
    }
}

#[test]
fn scan_walks_the_keyspace() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["SCAN", "0"]);
    t.same(&["SCAN", "0", "MATCH", "*", "COUNT", "1", "TYPE", "string"]);
    populate(&mut t, 80);
    for command in [
        &["SCAN", "0", "COUNT", "100000"][..],
        &["SCAN", "", "COUNT", "100000"],
        &["SCAN", "-0", "COUNT", "100000"],
        &["SCAN", "0", "COUNT", "100000", "MATCH", "s:1*"],
        &["SCAN", "0", "MATCH", "*", "COUNT", "100000"],
        &["SCAN", "0", "COUNT", "100000", "TYPE", "set"],
        &["SCAN", "0", "COUNT", "100000", "type", "ZSET"],
        &["SCAN", "0", "COUNT", "100000", "TYPE", "hash", "MATCH", "h:2*"],
        &["SCAN", "0", "COUNT", "100000", "TYPE", "string", "MATCH", "h:*"],
        &["SCAN", "0", "COUNT", "100000", "TYPE", "nosuchtype"],
        &["SCAN", "0", "COUNT", "5", "COUNT", "100000", "MATCH", "x", "MATCH", "z:?"],
    ] {
        t.same_unordered(command);
    }
    for command in [
        &["SCAN"][..],
        &["SCAN", "abc"],
        &["SCAN", " 0"],
        &["SCAN", "0 "],
        &["SCAN", "1.5"],
        &["SCAN", "0x10"],
        &["SCAN", "18446744073709551616"],
        &["SCAN", "-"],
        &["SCAN", "0", "COUNT", "0"],
        &["SCAN", "0", "COUNT", "-5"],
        &["SCAN", "0", "COUNT", "abc"],
        &["SCAN", "0", "COUNT", "99999999999999999999"],
        &["SCAN", "0", "COUNT"],
        &["SCAN", "0", "MATCH"],
        &["SCAN", "0", "TYPE"],
        &["SCAN", "0", "FOO"],
        &["SCAN", "0", "FOO", "bar"],
        &["SCAN", "0", "COUNT", "10", "BAR", "x"],
        &["SCAN", "abc", "COUNT", "0"],
        &["SCAN", "0", "COUNT", "0", "FOO"],
        &["SCAN", "0", "FOO", "COUNT", "0"],
        &["SCAN", "0", "NOVALUES"],
    ] {
        t.same(command);
    }
}

#[test]
fn small_collections_come_back_whole_and_in_order() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["SADD", "ints", "5", "1", "3", "-7", "12"]);
    t.same(&["HSET", "h", "f1", "v1", "f2", "v2", "f3", "v3", "g", "w"]);
    let scores = ["1", "a", "0.1", "b", "1e17", "c", "inf", "d", "-2.5", "e", "4611686018427387904", "f"];
    let more = ["9e18", "g", "-inf", "h", "3", "i", "-4611686018427387904", "j", "1.5e300", "k"];
    let mut zadd = vec!["ZADD", "z"];
    zadd.extend(scores);
    zadd.extend(more);
    t.same(&zadd);
    for command in [
        &["SSCAN", "ints", "0"][..],
        &["SSCAN", "ints", "0", "COUNT", "1"],
        &["SSCAN", "ints", "123"],
        &["SSCAN", "ints", "-1"],
        &["SSCAN", "ints", "0", "MATCH", "1*"],
        &["SSCAN", "ints", "0", "MATCH", "-*", "COUNT", "2"],
        &["HSCAN", "h", "0"],
        &["HSCAN", "h", "0", "COUNT", "1"],
        &["HSCAN", "h", "0", "MATCH", "f[12]"],
        &["HSCAN", "h", "0", "MATCH", "v*"],
        &["ZSCAN", "z", "0"],
        &["ZSCAN", "z", "0", "MATCH", "[a-e]"],
        &["ZSCAN", "z", "7", "COUNT", "1"],
    ] {
        t.same(command);
    }
    t.both(0, &["HELLO", "3"]);
    t.same(&["SSCAN", "ints", "0"]);
    t.same(&["HSCAN", "h", "0"]);
    t.same(&["ZSCAN", "z", "0"]);
    t.same(&["SSCAN", "nokey", "0"]);
}

#[test]
fn large_collections_are_scanned_completely() {
    let Some(mut t) = Twin::start() else { return };
    let mut sadd = vec!["SADD".to_string(), "s".to_string()];
    let mut hset = vec!["HSET".to_string(), "h".to_string()];
    let mut zadd = vec!["ZADD".to_string(), "z".to_string()];
    for i in 0..300 {
        sadd.push(format!("m{i}"));
        hset.push(format!("f{i}"));
        hset.push(format!("v{i}"));
        zadd.push(match i % 4 {
            0 => format!("{}", i as f64 / 3.0),
            1 => format!("{i}e15"),
            2 => format!("-{i}"),
            _ => format!("{i}.25"),
        });
        zadd.push(format!("m{i}"));
    }
    for command in [&sadd, &hset, &zadd] {
        let words: Vec<&str> = command.iter().map(String::as_str).collect();
        t.same(&words);
    }
    for command in [
        &["SSCAN", "s", "0", "COUNT", "100000"][..],
        &["SSCAN", "s", "0", "COUNT", "100000", "MATCH", "m1*"],
        &["HSCAN", "h", "0", "COUNT", "100000"],
        &["HSCAN", "h", "0", "COUNT", "100000", "MATCH", "f2?"],
        &["ZSCAN", "z", "0", "COUNT", "100000"],
        &["ZSCAN", "z", "0", "COUNT", "100000", "MATCH", "*7"],
    ] {
        t.same_unordered(command);
    }
}

#[test]
fn scan_errors_answer_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["SET", "str", "v"]);
    t.same(&["SADD", "s", "1"]);
    t.same(&["HSET", "h", "f", "v"]);
    t.same(&["ZADD", "z", "1", "m"]);
    for command in [
        &["SSCAN", "s"][..],
        &["HSCAN", "h"],
        &["ZSCAN", "z"],
        &["SSCAN", "nokey", "0"],
        &["SSCAN", "nokey", "abc"],
        &["SSCAN", "nokey", "0", "bad"],
        &["SSCAN", "str", "abc"],
        &["SSCAN", "str", "0", "bad"],
        &["SSCAN", "h", "0"],
        &["HSCAN", "s", "0"],
        &["ZSCAN", "h", "0"],
        &["HSCAN", "z", "0", "COUNT", "0"],
        &["SSCAN", "s", " 0"],
        &["SSCAN", "s", "0", "TYPE", "set"],
        &["SSCAN", "s", "0", "COUNT", "0"],
        &["SSCAN", "s", "0", "COUNT", "x"],
        &["SSCAN", "s", "0", "MATCH"],
        &["HSCAN", "h", "0", "NOVALUES"],
        &["HSCAN", "h", "0", "COUNT", "-1"],
        &["ZSCAN", "z", "0", "MATCH", "m", "COUNT", "0"],
        &["ZSCAN", "z", "0", "WITHSCORES"],
    ] {
        t.same(command);
    }
}

/// Runs one command on the store and parses its reply.
fn call(store: &mut Store, args: &[&[u8]]) -> Reply {
    let mut out = Vec::new();
    let _ = store.execute(args, 0, &mut out);
    match parse_reply(&out, usize::MAX) {
        Ok(Some((reply, used))) if used == out.len() => reply,
        other => panic!("{other:?} for {:?}", String::from_utf8_lossy(&out)),
    }
}

/// What a scan walks: the keyspace, or one set, hash or sorted set.
#[derive(Clone, Copy, Debug)]
enum Walk {
    Keys,
    Set,
    Hash,
    ZSet,
}

impl Walk {
    fn insert(self, store: &mut Store, name: &[u8]) {
        let args: &[&[u8]] = match self {
            Walk::Keys => &[b"SET", name, b"v"],
            Walk::Set => &[b"SADD", b"c", name],
            Walk::Hash => &[b"HSET", b"c", name, b"v"],
            Walk::ZSet => &[b"ZADD", b"c", b"1.5", name],
        };
        call(store, args);
    }

    fn delete(self, store: &mut Store, name: &[u8]) {
        let args: &[&[u8]] = match self {
            Walk::Keys => &[b"DEL", name],
            Walk::Set => &[b"SREM", b"c", name],
            Walk::Hash => &[b"HDEL", b"c", name],
            Walk::ZSet => &[b"ZREM", b"c", name],
        };
        call(store, args);
    }

    /// One scan call: the next cursor and the names returned.
    fn step(self, store: &mut Store, cursor: &[u8], count: &[u8]) -> (Vec<u8>, Vec<Vec<u8>>) {
        let args: Vec<&[u8]> = match self {
            Walk::Keys => vec![b"SCAN", cursor, b"COUNT", count],
            Walk::Set => vec![b"SSCAN", b"c", cursor, b"COUNT", count],
            Walk::Hash => vec![b"HSCAN", b"c", cursor, b"COUNT", count],
            Walk::ZSet => vec![b"ZSCAN", b"c", cursor, b"COUNT", count],
        };
        let Reply::Array(Some(parts)) = call(store, &args) else { panic!("not a scan reply") };
        let [Reply::Bulk(Some(next)), Reply::Array(Some(items))] = &parts[..] else { panic!("{parts:?}") };
        let pairs = matches!(self, Walk::Hash | Walk::ZSet);
        let names = items
            .iter()
            .step_by(if pairs { 2 } else { 1 })
            .map(|item| match item {
                Reply::Bulk(Some(name)) => name.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        (next.clone(), names)
    }

    /// The names present now.
    fn present(self, store: &mut Store) -> BTreeSet<Vec<u8>> {
        let (next, names) = self.step(store, b"0", b"1000000");
        assert_eq!(next, b"0");
        names.into_iter().collect()
    }
}

/// Something that happens between two scan calls.
#[derive(Clone, Debug)]
enum Op {
    Insert(u16),
    Delete(u16),
    Scan(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![(0u16..400).prop_map(Op::Insert), (0u16..400).prop_map(Op::Delete), (1u8..30).prop_map(Op::Scan),]
}

fn walk() -> impl Strategy<Value = Walk> {
    prop_oneof![Just(Walk::Keys), Just(Walk::Set), Just(Walk::Hash), Just(Walk::ZSet)]
}

fn name(i: u16) -> Vec<u8> {
    format!("m{i}").into_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Whatever is inserted and deleted between calls, a scan returns every
    /// element present from its first call to its last, returns nothing
    /// twice and nothing absent at the time, and ends.
    #[test]
    fn scans_return_everything_present_throughout(
        walk in walk(),
        initial in proptest::collection::btree_set(0u16..400, 220..300),
        ops in proptest::collection::vec(op(), 0..80),
    ) {
        let mut store = Store::new();
        for &i in &initial {
            walk.insert(&mut store, &name(i));
        }
        // Every name present at the start and never deleted must come back.
        let mut kept: BTreeSet<Vec<u8>> = initial.iter().map(|&i| name(i)).collect();
        let mut returned = BTreeSet::new();
        let mut cursor = b"0".to_vec();
        let mut ops = ops.into_iter();
        let mut calls = 0;
        loop {
            let count = match ops.next() {
                Some(Op::Insert(i)) => {
                    walk.insert(&mut store, &name(i));
                    continue;
                }
                Some(Op::Delete(i)) => {
                    walk.delete(&mut store, &name(i));
                    kept.remove(&name(i));
                    continue;
                }
                Some(Op::Scan(count)) => count,
                None => 10,
            };
            let present = walk.present(&mut store);
            let (next, names) = walk.step(&mut store, &cursor, count.to_string().as_bytes());
            calls += 1;
            for name in names {
                prop_assert!(present.contains(&name), "{:?} returned but absent", String::from_utf8_lossy(&name));
                prop_assert!(returned.insert(name.clone()), "{:?} returned twice", String::from_utf8_lossy(&name));
            }
            if next == b"0" {
                break;
            }
            prop_assert!(calls < 10_000, "the scan does not end");
            cursor = next;
        }
        let missed: Vec<_> = kept.difference(&returned).map(|n| String::from_utf8_lossy(n).into_owned()).collect();
        prop_assert!(missed.is_empty(), "{walk:?} missed {missed:?}");
        // A scan of a collection of n elements takes about 64 calls at most.
        prop_assert!(calls <= 80 + 80, "{calls} calls");
    }
}
