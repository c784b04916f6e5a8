//! The hash commands against a real `redis-server`: every reply compared
//! byte for byte, in RESP2 and RESP3, errors included (skipped where Redis
//! is not installed).

#[allow(dead_code)]
mod common;

use common::twin::Twin;
use granule_user::resp::Reply;

/// Switches client 0 of both servers to RESP3.
fn resp3(t: &mut Twin) {
    t.both(0, &["HELLO", "3"]);
}

#[test]
fn hash_commands_are_described_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    for name in ["hkeys", "hvals", "hincrby", "hincrbyfloat", "hsetnx", "hstrlen", "hrandfield", "hgetall", "hset"] {
        t.same_command_info(name);
    }
}

#[test]
fn keys_values_lengths_and_setnx() {
    let Some(mut t) = Twin::start() else { return };
    for protocol in [2, 3] {
        if protocol == 3 {
            resp3(&mut t);
        }
        t.same(&["DEL", "h", "s"]);
        t.same(&["HSET", "h", "b", "1", "a", "two", "c", ""]);
        t.same(&["HKEYS", "h"]);
        t.same(&["HVALS", "h"]);
        t.same(&["HGETALL", "h"]);
        t.same(&["HKEYS", "nokey"]);
        t.same(&["HVALS", "nokey"]);
        t.same(&["HGETALL", "nokey"]);
        t.same(&["HSTRLEN", "h", "a"]);
        t.same(&["HSTRLEN", "h", "c"]);
        t.same(&["HSTRLEN", "h", "nofield"]);
        t.same(&["HSTRLEN", "nokey", "a"]);
        t.same(&["HSETNX", "h", "a", "x"]);
        t.same(&["HSETNX", "h", "d", "x"]);
        t.same(&["HSETNX", "new", "f", "v"]);
        t.same(&["HGETALL", "new"]);
        t.same(&["SET", "s", "v"]);
        for command in [
            &["HKEYS", "s"][..],
            &["HVALS", "s"],
            &["HSTRLEN", "s", "a"],
            &["HSETNX", "s", "a", "b"],
            &["HINCRBY", "s", "a", "1"],
            &["HINCRBYFLOAT", "s", "a", "1"],
            &["HRANDFIELD", "s"],
            &["HRANDFIELD", "s", "2"],
        ] {
            t.same(command);
        }
        for command in [
            &["HKEYS"][..],
            &["HKEYS", "h", "x"],
            &["HVALS"],
            &["HSTRLEN", "h"],
            &["HSETNX", "h", "a"],
            &["HSETNX", "h", "a", "b", "c"],
            &["HINCRBY", "h", "a"],
            &["HINCRBYFLOAT", "h", "a", "1", "2"],
            &["HRANDFIELD"],
        ] {
            t.same(command);
        }
    }
}

#[test]
fn large_hashes_list_every_field() {
    let Some(mut t) = Twin::start() else { return };
    let mut args = vec!["HSET".to_string(), "big".to_string()];
    for i in 0..300 {
        args.push(format!("field:{i}"));
        args.push(format!("{}", i * 7));
    }
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    t.same(&words);
    t.same_unordered(&["HKEYS", "big"]);
    t.same_unordered(&["HVALS", "big"]);
    t.same(&["HSTRLEN", "big", "field:299"]);
    t.same(&["HINCRBY", "big", "field:10", "5"]);
    t.same(&["HGET", "big", "field:10"]);
}

#[test]
fn integer_increments() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["HINCRBY", "h", "n", "5"]);
    t.same(&["HINCRBY", "h", "n", "-12"]);
    t.same(&["HINCRBY", "h", "n", "0"]);
    t.same(&["HGET", "h", "n"]);
    t.same(&["HINCRBY", "fresh", "n", "-9223372036854775808"]);
    t.same(&["HINCRBY", "fresh", "n", "-1"]);
    t.same(&["HSET", "h", "big", "9223372036854775807", "text", "abc", "spaced", " 1", "zeros", "007", "neg0", "-0"]);
    t.same(&["HINCRBY", "h", "big", "1"]);
    t.same(&["HINCRBY", "h", "big", "-1"]);
    for field in ["text", "spaced", "zeros", "neg0"] {
        t.same(&["HINCRBY", "h", field, "1"]);
    }
    for bad in ["abc", "1.5", "", " 1", "9223372036854775808", "+1"] {
        t.same(&["HINCRBY", "h", "n", bad]);
    }
    t.same(&["HINCRBY", "nokey", "n", "x"]);
    t.same(&["EXISTS", "nokey"]);
    t.same(&["HGETALL", "h"]);
}

#[test]
fn float_increments_are_long_doubles() {
    let Some(mut t) = Twin::start() else { return };
    for protocol in [2, 3] {
        if protocol == 3 {
            resp3(&mut t);
        }
        t.same(&["DEL", "h"]);
        for increment in [
            "10.5",
            "0.1",
            "-5",
            "1e3",
            "3.0e3",
            "0.0000001",
            "-0.0000001",
            "1.5e-10",
            "123456789.123456789",
            "0x10",
            "-1e-20",
            "5.",
            ".5",
            "+2",
            "1e30",
            "-1e30",
            "0.333333333333333333333",
        ] {
            t.same(&["HINCRBYFLOAT", "h", "f", increment]);
        }
        t.same(&["HGET", "h", "f"]);
        t.same(&["HSET", "h", "int", "17", "text", "abc", "space", " 1", "huge", "1e4932", "exp", "2.5e2"]);
        t.same(&["HINCRBYFLOAT", "h", "int", "0.5"]);
        t.same(&["HINCRBYFLOAT", "h", "exp", "1"]);
        t.same(&["HINCRBYFLOAT", "h", "text", "1"]);
        t.same(&["HINCRBYFLOAT", "h", "space", "1"]);
        t.same(&["HINCRBYFLOAT", "h", "huge", "1e4932"]);
        t.same(&["HINCRBYFLOAT", "h", "huge", "-1e4932"]);
        for bad in ["abc", "", " 1", "1 ", "nan", "inf", "-inf", "1e5000", "1e-5000", "1e", "0x"] {
            t.same(&["HINCRBYFLOAT", "h", "f", bad]);
        }
        t.same(&["HINCRBYFLOAT", "h", "new", "1e-4940"]);
        t.same(&["HGETALL", "h"]);
    }
}

#[test]
fn random_fields_have_redis_shapes() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["HSET", "h", "a", "1", "b", "2", "c", "3"]);
    for protocol in [2, 3] {
        if protocol == 3 {
            resp3(&mut t);
        }
        // Deterministic answers: missing keys, zero, the whole hash.
        for command in [
            &["HRANDFIELD", "nokey"][..],
            &["HRANDFIELD", "nokey", "5"],
            &["HRANDFIELD", "nokey", "-5", "WITHVALUES"],
            &["HRANDFIELD", "h", "0"],
            &["HRANDFIELD", "h", "0", "WITHVALUES"],
            &["HRANDFIELD", "h", "3"],
            &["HRANDFIELD", "h", "10", "WITHVALUES"],
            &["HRANDFIELD", "h", "9223372036854775807"],
        ] {
            t.same(command);
        }
        // Errors, checked before the key.
        for command in [
            &["HRANDFIELD", "h", "abc"][..],
            &["HRANDFIELD", "h", "1", "WITHSCORES"],
            &["HRANDFIELD", "h", "1", "WITHVALUES", "x"],
            &["HRANDFIELD", "h", "-9223372036854775808"],
            &["HRANDFIELD", "h", "4611686018427387904", "WITHVALUES"],
            &["HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES"],
            &["HRANDFIELD", "nokey", "4611686018427387904", "WITHVALUES"],
        ] {
            t.same(command);
        }
        t.same(&["HRANDFIELD", "nokey", "4611686018427387903", "WITHVALUES"]);
        // Random answers: the same shape and only real fields.
        let fields = ["a", "b", "c"].map(|f| Reply::Bulk(Some(f.as_bytes().to_vec())));
        let (ours, theirs) = t.both(0, &["HRANDFIELD", "h"]);
        assert!(fields.contains(&ours) && fields.contains(&theirs), "{ours:?} {theirs:?}");
        for (count, len) in [("2", 2), ("-7", 7), ("1", 1)] {
            let (ours, theirs) = t.both(0, &["HRANDFIELD", "h", count]);
            for reply in [&ours, &theirs] {
                let Reply::Array(Some(items)) = reply else { panic!("{reply:?}") };
                assert_eq!(items.len(), len);
                assert!(items.iter().all(|item| fields.contains(item)));
                if count == "2" {
                    assert_ne!(items[0], items[1]);
                }
            }
        }
        let (ours, theirs) = t.both(0, &["HRANDFIELD", "h", "-4", "WITHVALUES"]);
        let shape = |reply: &Reply| match reply {
            Reply::Array(Some(items)) => {
                items.iter().map(|item| matches!(item, Reply::Array(Some(pair)) if pair.len() == 2)).collect::<Vec<_>>()
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(shape(&ours), shape(&theirs));
    }
}

#[test]
fn random_float_increments_answer_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    let mut state = 11u64;
    let mut below = move |n: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    for i in 0..150 {
        let digits: String = (0..1 + below(25)).map(|_| char::from(b'0' + below(10) as u8)).collect();
        let point = below(digits.len() as u64 + 1) as usize;
        let sign = ["", "-", "+"][below(3) as usize];
        let mut text = format!("{sign}{}.{}", &digits[..point], &digits[point..]);
        if below(3) == 0 {
            text.push_str(&format!("e{}", below(80) as i64 - 40));
        }
        let field = format!("f{}", i % 7);
        t.same(&["HINCRBYFLOAT", "h", &field, &text]);
        t.same(&["INCRBYFLOAT", &field, &text]);
    }
    t.same(&["HGETALL", "h"]);
}
