//! The string commands beyond the hot path against a real `redis-server`:
//! every reply compared byte for byte, in RESP2 and RESP3, errors included
//! (skipped where Redis is not installed).

#[allow(dead_code)]
mod common;

use common::twin::{now_ms, Twin};
use granule_user::resp::Reply;

#[test]
fn string_commands_are_described_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    for name in ["getset", "getex", "incrbyfloat", "getrange", "substr", "setrange", "msetnx", "lcs"] {
        let (ours, theirs) = t.both(0, &["COMMAND", "INFO", name]);
        let head = |reply: Reply| match reply {
            Reply::Array(Some(mut entries)) => match entries.remove(0) {
                Reply::Array(Some(fields)) => fields.into_iter().take(6).collect::<Vec<_>>(),
                other => panic!("{name}: {other:?}"),
            },
            other => panic!("{name}: {other:?}"),
        };
        assert_eq!(head(ours), head(theirs), "COMMAND INFO {name}");
    }
}

/// Asserts both give `key` the same time to live within a second (the
/// two servers read their clocks a moment apart).
fn same_ttl_roughly(t: &mut Twin, key: &str) {
    match t.both(0, &["TTL", key]) {
        (Reply::Integer(ours), Reply::Integer(theirs)) => assert!((ours - theirs).abs() <= 1, "{ours} {theirs}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn getset_and_msetnx() {
    let Some(mut t) = Twin::start() else { return };
    for protocol in [2, 3] {
        if protocol == 3 {
            t.both(0, &["HELLO", "3"]);
        }
        t.same(&["DEL", "k", "h", "a", "b", "c"]);
        t.same(&["GETSET", "k", "v1"]);
        t.same(&["GETSET", "k", "v2"]);
        t.same(&["SET", "k", "v3", "EX", "100"]);
        t.same(&["GETSET", "k", "v4"]);
        t.same(&["TTL", "k"]);
        t.same(&["HSET", "h", "f", "v"]);
        t.same(&["GETSET", "h", "v"]);
        t.same(&["GETSET", "k"]);
        t.same(&["MSETNX", "a", "1", "b", "2"]);
        t.same(&["MGET", "a", "b"]);
        t.same(&["MSETNX", "b", "3", "c", "4"]);
        t.same(&["EXISTS", "c"]);
        t.same(&["MSETNX", "h", "3"]);
        t.same(&["MSETNX", "c", "1", "c", "2"]);
        t.same(&["GET", "c"]);
        t.same(&["MSETNX", "a"]);
        t.same(&["MSETNX", "a", "1", "b"]);
    }
}

#[test]
fn getex_options() {
    let Some(mut t) = Twin::start() else { return };
    for protocol in [2, 3] {
        if protocol == 3 {
            t.both(0, &["HELLO", "3"]);
        }
        t.same(&["SET", "k", "v"]);
        t.same(&["GETEX", "k"]);
        t.same(&["TTL", "k"]);
        t.same(&["GETEX", "k", "EX", "100"]);
        t.same(&["TTL", "k"]);
        t.same(&["GETEX", "k", "PX", "200000"]);
        t.same(&["TTL", "k"]);
        let in_a_while = (now_ms() / 1000 + 300).to_string();
        t.same(&["GETEX", "k", "EXAT", &in_a_while]);
        same_ttl_roughly(&mut t, "k");
        let in_a_while = (now_ms() + 400_000).to_string();
        t.same(&["GETEX", "k", "pxat", &in_a_while]);
        same_ttl_roughly(&mut t, "k");
        t.same(&["GETEX", "k", "PERSIST"]);
        t.same(&["TTL", "k"]);
        t.same(&["GETEX", "k", "persist", "PERSIST"]);
        t.same(&["GETEX", "k", "EX", "10", "EX", "20"]);
        t.same(&["TTL", "k"]);
        for bad in [
            &["GETEX", "k", "EX"][..],
            &["GETEX", "k", "EX", "10", "PX", "10"],
            &["GETEX", "k", "PERSIST", "EX", "10"],
            &["GETEX", "k", "EX", "10", "PERSIST"],
            &["GETEX", "k", "KEEPTTL"],
            &["GETEX", "k", "NX"],
            &["GETEX", "k", "EX", "0"],
            &["GETEX", "k", "EX", "-1"],
            &["GETEX", "k", "EX", "abc"],
            &["GETEX", "k", "EX", "9223372036854775807"],
            &["GETEX", "k", "PX", "9223372036854775807"],
            &["GETEX", "k", "EXAT", "9223372036854775807"],
            &["GETEX", "nokey", "EX", "abc"],
            &["GETEX", "nokey", "FOO"],
            &["GETEX"],
        ] {
            t.same(bad);
        }
        t.same(&["TTL", "k"]);
        t.same(&["HSET", "h", "f", "v"]);
        t.same(&["GETEX", "h"]);
        t.same(&["GETEX", "h", "EX", "abc"]);
        t.same(&["GETEX", "nokey"]);
        // A time already past deletes the key.
        t.same(&["GETEX", "k", "PXAT", "1"]);
        t.same(&["EXISTS", "k"]);
        t.same(&["SET", "k", "v"]);
        t.same(&["GETEX", "k", "EXAT", "1"]);
        t.same(&["EXISTS", "k"]);
    }
}

#[test]
fn incrbyfloat_is_a_long_double() {
    let Some(mut t) = Twin::start() else { return };
    for protocol in [2, 3] {
        if protocol == 3 {
            t.both(0, &["HELLO", "3"]);
        }
        t.same(&["DEL", "f"]);
        for increment in [
            "10.5",
            "0.1",
            "-5",
            "5.0e3",
            "2.0e2",
            "0.0000000001",
            "-1e-15",
            "1e20",
            "-1e20",
            "3.14159265358979323846",
            "0x1p-3",
            "0X1.8P1",
            "-0",
            "1.7976931348623157e308",
            "-1.7976931348623157e308",
            "0.1",
            "0.2",
            "0.3",
        ] {
            t.same(&["INCRBYFLOAT", "f", increment]);
        }
        t.same(&["GET", "f"]);
        // Values that are already there.
        for (value, increment) in [
            ("10", "1.5"),
            ("-3", "0.5"),
            ("1e3", "1"),
            ("  1", "1"),
            ("abc", "1"),
            ("", "1"),
            ("1.5e4931", "1.5e4931"),
            ("1e4932", "1e4932"),
            ("123456789012345678901234567890", "1"),
            ("0.1", "-0.1"),
            ("99999999999999999999", "0.00000000000000001"),
        ] {
            t.same(&["SET", "v", value]);
            t.same(&["INCRBYFLOAT", "v", increment]);
            t.same(&["GET", "v"]);
        }
        for bad in ["abc", "", " 1", "1 ", "nan", "1e5000", "-1e5000", "1e-5000", "1.2.3", "0x", "1e+", "--1"] {
            t.same(&["INCRBYFLOAT", "f", bad]);
        }
        t.same(&["INCRBYFLOAT", "f", "inf"]);
        t.same(&["INCRBYFLOAT", "f", "-Infinity"]);
        t.same(&["INCRBYFLOAT", "tiny", "1e-4940"]);
        t.same(&["INCRBYFLOAT", "tiny", "1e-4940"]);
        // The time to live stays.
        t.same(&["SET", "ttl", "1", "EX", "100"]);
        t.same(&["INCRBYFLOAT", "ttl", "1.5"]);
        t.same(&["TTL", "ttl"]);
        t.same(&["HSET", "h", "a", "1"]);
        t.same(&["INCRBYFLOAT", "h", "1"]);
        t.same(&["INCRBYFLOAT", "h", "abc"]);
        t.same(&["INCRBYFLOAT", "f"]);
    }
}

#[test]
fn ranges_of_strings() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["SET", "s", "Hello World"]);
    t.same(&["SET", "n", "12345"]);
    for (start, end) in [
        ("0", "4"),
        ("-5", "-1"),
        ("-1", "-5"),
        ("5", "2"),
        ("0", "-1"),
        ("0", "100"),
        ("100", "200"),
        ("-100", "2"),
        ("-9223372036854775808", "9223372036854775807"),
        ("3", "3"),
        ("-1", "-1"),
        ("0", "-100"),
    ] {
        t.same(&["GETRANGE", "s", start, end]);
        t.same(&["SUBSTR", "n", start, end]);
        t.same(&["GETRANGE", "nokey", start, end]);
    }
    t.same(&["SET", "e", ""]);
    t.same(&["GETRANGE", "e", "0", "-1"]);
    for bad in [&["GETRANGE", "s", "a", "1"][..], &["GETRANGE", "s", "0", "1.5"], &["GETRANGE", "s", "0"]] {
        t.same(bad);
    }
    t.same(&["HSET", "h", "a", "1"]);
    t.same(&["GETRANGE", "h", "0", "1"]);
    t.same(&["GETRANGE", "h", "x", "1"]);
    t.same(&["SETRANGE", "s", "6", "Redis"]);
    t.same(&["GET", "s"]);
    t.same(&["SETRANGE", "s", "20", "!"]);
    t.same(&["GET", "s"]);
    t.same(&["SETRANGE", "s", "0", ""]);
    t.same(&["SETRANGE", "new", "3", "abc"]);
    t.same(&["GET", "new"]);
    t.same(&["SETRANGE", "empty", "3", ""]);
    t.same(&["EXISTS", "empty"]);
    t.same(&["SETRANGE", "n", "1", "x"]);
    t.same(&["GET", "n"]);
    for bad in [
        &["SETRANGE", "s", "-1", "x"][..],
        &["SETRANGE", "s", "abc", "x"],
        &["SETRANGE", "s", "536870912", "x"],
        &["SETRANGE", "s", "536870911", "xy"],
        &["SETRANGE", "s", "9223372036854775807", "x"],
        &["SETRANGE", "nokey", "536870912", "x"],
        &["SETRANGE", "nokey", "-1", ""],
        &["SETRANGE", "h", "0", "x"],
        &["SETRANGE", "h", "-1", "x"],
        &["SETRANGE", "s", "0"],
    ] {
        t.same(bad);
    }
    t.same(&["SETRANGE", "nokey", "536870912", ""]);
    t.same(&["SETRANGE", "s", "536870912", ""]);
    t.same(&["EXISTS", "nokey"]);
}

#[test]
fn longest_common_subsequences() {
    let Some(mut t) = Twin::start() else { return };
    for protocol in [2, 3] {
        if protocol == 3 {
            t.both(0, &["HELLO", "3"]);
        }
        t.same(&["MSET", "a", "ohmytext", "b", "mynewtext", "c", "", "d", "aaaa", "e", "abcabcabc", "f", "cbacba"]);
        for (x, y) in
            [("a", "b"), ("b", "a"), ("a", "c"), ("c", "nokey"), ("d", "d"), ("e", "f"), ("f", "e"), ("a", "a")]
        {
            for options in [
                &[][..],
                &["LEN"],
                &["IDX"],
                &["IDX", "WITHMATCHLEN"],
                &["IDX", "MINMATCHLEN", "3"],
                &["IDX", "MINMATCHLEN", "2", "WITHMATCHLEN"],
                &["IDX", "MINMATCHLEN", "-5"],
                &["MINMATCHLEN", "2", "LEN"],
                &["WITHMATCHLEN"],
            ] {
                let mut command = vec!["LCS", x, y];
                command.extend_from_slice(options);
                t.same(&command);
            }
        }
        for bad in [
            &["LCS", "a", "b", "LEN", "IDX"][..],
            &["LCS", "a", "b", "MINMATCHLEN"],
            &["LCS", "a", "b", "MINMATCHLEN", "x"],
            &["LCS", "a", "b", "FOO"],
            &["LCS", "a"],
        ] {
            t.same(bad);
        }
        t.same(&["HSET", "h", "f", "v"]);
        t.same(&["LCS", "a", "h"]);
        t.same(&["LCS", "h", "a", "FOO"]);
    }
}
