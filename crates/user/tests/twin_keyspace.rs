//! The keyspace commands against a real `redis-server`: databases (`SELECT`,
//! `DBSIZE`, `FLUSHDB`, `FLUSHALL`, `SWAPDB`, `MOVE`, `INFO keyspace`),
//! `RENAME`, `RENAMENX`, `COPY`, `UNLINK`, `TOUCH`, `RANDOMKEY`, absolute
//! deadlines, `TIME`, `OBJECT` and `MEMORY` (skipped where Redis is not
//! installed).

#[allow(dead_code)]
mod common;

use common::twin::{now_ms, Twin};
use granule_user::resp::Reply;

/// Both answered an integer (sizes, times that differ by design).
fn both_integers(t: &mut Twin, c: usize, args: &[&str]) -> (i64, i64) {
    match t.both(c, args) {
        (Reply::Integer(ours), Reply::Integer(theirs)) => (ours, theirs),
        other => panic!("{args:?}: {other:?}"),
    }
}

#[test]
fn select_gives_each_client_its_own_database() {
    let Some(mut t) = Twin::start() else { return };
    let other = t.client();
    t.same(&["SET", "k", "zero"]);
    t.same(&["SELECT", "15"]);
    t.same(&["GET", "k"]);
    t.same(&["SET", "k", "fifteen"]);
    t.same(&["DBSIZE"]);
    t.same_from(other, &["GET", "k"]);
    t.same_from(other, &["DBSIZE"]);
    t.same_unordered(&["KEYS", "*"]);
    t.same(&["SELECT", "0"]);
    t.same(&["GET", "k"]);
    t.same_from(other, &["SELECT", "15"]);
    t.same_from(other, &["SET", "only15", "x"]);
    t.same_unordered(&["KEYS", "*"]);
    t.same(&["SCAN", "0"]);
    t.same(&["SELECT", "15"]);
    t.same_unordered(&["KEYS", "*"]);
    t.same(&["SELECT", "0"]);
    for bad in ["16", "-1", "2147483648", "-2147483649", "1.5", "x", ""] {
        t.same(&["SELECT", bad]);
    }
    t.same(&["SELECT"]);
    t.same(&["SELECT", "1", "2"]);
    t.same(&["DBSIZE", "x"]);
    // A transaction's SELECT holds for the rest of it and after.
    t.same(&["MULTI"]);
    t.same(&["SELECT", "15"]);
    t.same(&["GET", "k"]);
    t.same(&["EXEC"]);
    t.same(&["GET", "k"]);
}

#[test]
fn flushdb_empties_one_database_and_flushall_every_one() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["INFO", "keyspace"]);
    t.same(&["MSET", "a", "1", "b", "2"]);
    t.same(&["SELECT", "3"]);
    t.same(&["SET", "c", "3"]);
    t.same(&["HSET", "h", "f", "v"]);
    t.same(&["SELECT", "12"]);
    t.same(&["SET", "d", "4"]);
    t.same(&["INFO", "keyspace"]);
    t.same(&["FLUSHDB"]);
    t.same(&["DBSIZE"]);
    t.same(&["INFO", "keyspace"]);
    t.same(&["SELECT", "3"]);
    t.same(&["FLUSHDB", "ASYNC"]);
    t.same(&["SELECT", "0"]);
    t.same(&["DBSIZE"]);
    t.same(&["SELECT", "5"]);
    t.same(&["SET", "e", "5"]);
    t.same(&["FLUSHALL", "sync"]);
    t.same(&["INFO", "keyspace"]);
    t.same(&["SELECT", "0"]);
    t.same(&["DBSIZE"]);
    for bad in [&["FLUSHDB", "FOO"][..], &["FLUSHDB", "ASYNC", "SYNC"], &["FLUSHALL", "x"], &["FLUSHALL", "SYNC", "x"]]
    {
        t.same(bad);
    }
}

#[test]
fn swapdb_exchanges_the_data_not_the_clients() {
    let Some(mut t) = Twin::start() else { return };
    let other = t.client();
    t.same(&["SET", "k", "zero"]);
    t.same_from(other, &["SELECT", "1"]);
    t.same_from(other, &["SET", "k", "one"]);
    t.same_from(other, &["SET", "only1", "x"]);
    t.same(&["SWAPDB", "0", "1"]);
    t.same(&["GET", "k"]);
    t.same(&["GET", "only1"]);
    t.same_from(other, &["GET", "k"]);
    t.same_from(other, &["DBSIZE"]);
    t.same(&["SWAPDB", "1", "1"]);
    t.same(&["INFO", "keyspace"]);
    for (a, b) in [("0", "x"), ("x", "0"), ("x", "y"), ("0", "16"), ("16", "0"), ("-1", "0"), ("99999999999", "0")] {
        t.same(&["SWAPDB", a, b]);
    }
    t.same(&["SWAPDB", "16", "x"]);
    t.same(&["SWAPDB", "0", "99999999999"]);
    t.same(&["SWAPDB", "0"]);
}

#[test]
fn move_carries_the_deadline_and_refuses_to_overwrite() {
    let Some(mut t) = Twin::start() else { return };
    let deadline = (now_ms() / 1000 + 1000).to_string();
    t.same(&["SET", "k", "v"]);
    t.same(&["EXPIREAT", "k", &deadline]);
    t.same(&["MOVE", "k", "2"]);
    t.same(&["EXISTS", "k"]);
    t.same(&["MOVE", "k", "2"]);
    t.same(&["SELECT", "2"]);
    t.same(&["EXPIRETIME", "k"]);
    t.same(&["GET", "k"]);
    t.same(&["SET", "x", "in2"]);
    t.same(&["SELECT", "0"]);
    t.same(&["SET", "x", "in0"]);
    t.same(&["MOVE", "x", "2"]);
    t.same(&["GET", "x"]);
    t.same(&["HSET", "h", "f", "v"]);
    t.same(&["MOVE", "h", "15"]);
    t.same(&["MOVE", "x", "0"]);
    for bad in ["16", "-1", "x", "99999999999"] {
        t.same(&["MOVE", "x", bad]);
    }
    t.same(&["MOVE", "nokey", "0"]);
    t.same(&["MOVE", "x"]);
}

#[test]
fn rename_moves_value_and_deadline() {
    let Some(mut t) = Twin::start() else { return };
    let deadline = (now_ms() + 1_000_000).to_string();
    t.same(&["SET", "a", "1"]);
    t.same(&["PEXPIREAT", "a", &deadline]);
    t.same(&["RENAME", "a", "b"]);
    t.same(&["EXISTS", "a"]);
    t.same(&["PEXPIRETIME", "b"]);
    t.same(&["GET", "b"]);
    // Onto an existing key (of another type): replaced, deadline dropped.
    t.same(&["SET", "c", "3"]);
    t.same(&["ZADD", "z", "1", "m"]);
    t.same(&["RENAME", "c", "z"]);
    t.same(&["TYPE", "z"]);
    t.same(&["GET", "z"]);
    t.same(&["SET", "p", "persistent"]);
    t.same(&["RENAME", "b", "p"]);
    t.same(&["PEXPIRETIME", "p"]);
    t.same(&["SET", "q", "x"]);
    t.same(&["RENAME", "q", "p"]);
    t.same(&["PEXPIRETIME", "p"]);
    // The same key: OK (RENAMENX: 0) if it exists, an error if not.
    t.same(&["RENAME", "p", "p"]);
    t.same(&["RENAMENX", "p", "p"]);
    t.same(&["RENAME", "nokey", "nokey"]);
    t.same(&["RENAMENX", "nokey", "nokey"]);
    t.same(&["RENAME", "nokey", "p"]);
    t.same(&["RENAMENX", "nokey", "p"]);
    t.same(&["SET", "r", "1"]);
    t.same(&["RENAMENX", "r", "p"]);
    t.same(&["RENAMENX", "r", "s"]);
    t.same(&["GET", "s"]);
    t.same(&["RENAME", "s"]);
    t.same(&["RENAMENX", "s", "t", "u"]);
}

#[test]
fn copy_duplicates_within_and_across_databases() {
    let Some(mut t) = Twin::start() else { return };
    let deadline = (now_ms() / 1000 + 5000).to_string();
    t.same(&["HSET", "h", "a", "1", "b", "2"]);
    t.same(&["EXPIREAT", "h", &deadline]);
    t.same(&["COPY", "h", "h2"]);
    t.same(&["HGETALL", "h2"]);
    t.same(&["EXPIRETIME", "h2"]);
    // A copy is independent of its source.
    t.same(&["HSET", "h2", "c", "3"]);
    t.same(&["HLEN", "h"]);
    t.same(&["COPY", "h", "h2"]);
    t.same(&["COPY", "h", "h2", "REPLACE"]);
    t.same(&["HLEN", "h2"]);
    t.same(&["SET", "s", "v"]);
    t.same(&["COPY", "s", "s", "DB", "7"]);
    t.same(&["COPY", "s", "s", "DB", "7"]);
    t.same(&["COPY", "s", "s", "db", "7", "replace"]);
    t.same(&["ZADD", "z", "1", "m", "2.5", "n"]);
    t.same(&["COPY", "z", "z", "REPLACE", "DB", "7"]);
    t.same(&["SELECT", "7"]);
    t.same(&["GET", "s"]);
    t.same(&["ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES"]);
    t.same(&["COPY", "s", "back", "DB", "0"]);
    t.same(&["SELECT", "0"]);
    t.same(&["GET", "back"]);
    t.same(&["COPY", "nokey", "x"]);
    t.same(&["COPY", "s", "s"]);
    t.same(&["COPY", "s", "s", "DB", "0"]);
    for bad in [
        &["COPY", "s", "t", "DB"][..],
        &["COPY", "s", "t", "DB", "x"],
        &["COPY", "s", "t", "DB", "16"],
        &["COPY", "s", "t", "DB", "-1"],
        &["COPY", "s", "t", "DB", "99999999999"],
        &["COPY", "s", "t", "FOO"],
        &["COPY", "s", "t", "REPLACE", "FOO"],
        &["COPY", "s", "s", "FOO"],
        &["COPY", "s"],
    ] {
        t.same(bad);
    }
}

#[test]
fn unlink_touch_and_randomkey() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["RANDOMKEY"]);
    t.same(&["MSET", "a", "1", "b", "2", "c", "3"]);
    t.same(&["TOUCH", "a", "b", "nokey", "a"]);
    t.same(&["UNLINK", "a", "nokey", "a"]);
    t.same(&["UNLINK", "b"]);
    t.same(&["RANDOMKEY"]);
    t.same(&["SET", "d", "4"]);
    match t.both(0, &["RANDOMKEY"]) {
        (Reply::Bulk(Some(ours)), Reply::Bulk(Some(theirs))) => {
            assert!(ours == b"c" || ours == b"d", "{ours:?}");
            assert!(theirs == b"c" || theirs == b"d", "{theirs:?}");
        }
        other => panic!("RANDOMKEY: {other:?}"),
    }
    t.same(&["SELECT", "9"]);
    t.same(&["RANDOMKEY"]);
    // Expired keys are never drawn.
    t.same(&["SET", "gone", "x", "PX", "1"]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    t.same(&["RANDOMKEY"]);
    t.same(&["SET", "live", "x"]);
    t.same(&["RANDOMKEY"]);
    t.same(&["UNLINK"]);
    t.same(&["TOUCH"]);
    t.same(&["RANDOMKEY", "x"]);
}

#[test]
fn absolute_deadlines_set_and_read() {
    let Some(mut t) = Twin::start() else { return };
    let seconds = now_ms() / 1000 + 100;
    let (at, at_ms) = (seconds.to_string(), (seconds * 1000 + 250).to_string());
    t.same(&["SET", "k", "v"]);
    t.same(&["EXPIRETIME", "k"]);
    t.same(&["PEXPIRETIME", "k"]);
    t.same(&["EXPIRETIME", "nokey"]);
    t.same(&["PEXPIRETIME", "nokey"]);
    t.same(&["EXPIREAT", "k", &at]);
    t.same(&["EXPIRETIME", "k"]);
    t.same(&["PEXPIRETIME", "k"]);
    t.same(&["PEXPIREAT", "k", &at_ms]);
    t.same(&["PEXPIRETIME", "k"]);
    t.same(&["EXPIRETIME", "k"]);
    let later = (seconds + 50).to_string();
    let sooner = (seconds - 50).to_string();
    for (when, option) in
        [(&later, "NX"), (&later, "XX"), (&sooner, "GT"), (&later, "GT"), (&later, "LT"), (&sooner, "LT")]
    {
        t.same(&["EXPIREAT", "k", when, option]);
        t.same(&["PEXPIRETIME", "k"]);
    }
    t.same(&["EXPIREAT", "nokey", &at]);
    t.same(&["PERSIST", "k"]);
    t.same(&["EXPIREAT", "k", &at, "NX"]);
    // A time in the past deletes the key.
    t.same(&["EXPIREAT", "k", "1"]);
    t.same(&["EXISTS", "k"]);
    t.same(&["SET", "k", "v"]);
    t.same(&["PEXPIREAT", "k", "-5"]);
    t.same(&["EXISTS", "k"]);
    t.same(&["SET", "k", "v"]);
    for bad in [
        &["EXPIREAT", "k", "x"][..],
        &["EXPIREAT", "k", "1.5"],
        &["EXPIREAT", "k", "9223372036854775807"],
        &["EXPIREAT", "k", "-9223372036854775808"],
        &["PEXPIREAT", "k", "9223372036854775808"],
        &["EXPIREAT", "k", "100", "FOO"],
        &["EXPIREAT", "k", "100", "NX", "XX"],
        &["PEXPIREAT", "k", "100", "GT", "LT"],
        &["EXPIREAT", "k"],
        &["EXPIRETIME"],
        &["PEXPIRETIME", "k", "x"],
    ] {
        t.same(bad);
    }
    t.same(&["EXISTS", "k"]);
    t.same(&["PEXPIREAT", "k", "9223372036854775807"]);
    t.same(&["PEXPIRETIME", "k"]);
}

#[test]
fn time_is_the_clock_in_seconds_and_microseconds() {
    let Some(mut t) = Twin::start() else { return };
    let parts = |reply: Reply| match reply {
        Reply::Array(Some(items)) => items
            .into_iter()
            .map(|item| match item {
                Reply::Bulk(Some(text)) => String::from_utf8(text).unwrap().parse::<u64>().unwrap(),
                other => panic!("TIME element {other:?}"),
            })
            .collect::<Vec<_>>(),
        other => panic!("TIME answered {other:?}"),
    };
    let (ours, theirs) = t.both(0, &["TIME"]);
    let (ours, theirs) = (parts(ours), parts(theirs));
    assert_eq!((ours.len(), theirs.len()), (2, 2));
    assert!(ours[0].abs_diff(theirs[0]) <= 2, "{ours:?} vs {theirs:?}");
    assert!(ours[1] < 1_000_000 && ours[1] % 1000 == 0, "{ours:?}");
    t.same(&["TIME", "x"]);
}

#[test]
fn object_and_memory_answer_like_redis_where_they_can() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["HSET", "h", "f", "v"]);
    t.same(&["OBJECT", "ENCODING", "h"]);
    t.same(&["object", "encoding", "nokey"]);
    t.same(&["OBJECT", "REFCOUNT", "nokey"]);
    t.same(&["OBJECT", "FREQ", "nokey"]);
    t.same(&["OBJECT", "IDLETIME", "nokey"]);
    t.same(&["OBJECT", "FREQ", "h"]);
    t.same(&["OBJECT", "REFCOUNT", "h"]);
    t.same(&["OBJECT", "HELP"]);
    t.same(&["OBJECT"]);
    t.same(&["OBJECT", "ENCODING"]);
    t.same(&["OBJECT", "ENCODING", "h", "x"]);
    t.same(&["OBJECT", "HELP", "x"]);
    t.same(&["OBJECT", "FOO", "h"]);
    // Strings are always separate buffers here (Redis: int, embstr, raw).
    t.same(&["SET", "s", "12345"]);
    let (ours, _) = t.both(0, &["OBJECT", "ENCODING", "s"]);
    assert_eq!(ours, Reply::Bulk(Some(b"raw".to_vec())));

    t.same(&["SET", "big", &"x".repeat(5000)]);
    let (small, _) = both_integers(&mut t, 0, &["MEMORY", "USAGE", "s"]);
    let (big, theirs) = both_integers(&mut t, 0, &["MEMORY", "USAGE", "big"]);
    assert!(small > 0 && big > 5000 && theirs > 5000, "{small} {big} {theirs}");
    both_integers(&mut t, 0, &["MEMORY", "USAGE", "h", "SAMPLES", "0"]);
    both_integers(&mut t, 0, &["memory", "usage", "h", "samples", "3", "SAMPLES", "1"]);
    t.same(&["MEMORY", "USAGE", "nokey"]);
    t.same(&["MEMORY", "USAGE", "nokey", "SAMPLES", "5"]);
    t.same(&["MEMORY", "PURGE"]);
    t.same(&["MEMORY", "HELP"]);
    for bad in [
        &["MEMORY"][..],
        &["MEMORY", "USAGE"],
        &["MEMORY", "USAGE", "h", "SAMPLES"],
        &["MEMORY", "USAGE", "h", "SAMPLES", "-1"],
        &["MEMORY", "USAGE", "h", "SAMPLES", "x"],
        &["MEMORY", "USAGE", "nokey", "SAMPLES", "x"],
        &["MEMORY", "USAGE", "h", "FOO"],
        &["MEMORY", "PURGE", "x"],
        &["MEMORY", "FOO"],
    ] {
        t.same(bad);
    }
}

#[test]
fn resp3_nulls_and_keyspace_commands() {
    let Some(mut t) = Twin::start() else { return };
    t.both(0, &["HELLO", "3"]);
    t.same(&["RANDOMKEY"]);
    t.same(&["OBJECT", "ENCODING", "nokey"]);
    t.same(&["MEMORY", "USAGE", "nokey"]);
    t.same(&["SET", "k", "v"]);
    t.same(&["SELECT", "4"]);
    t.same(&["RANDOMKEY"]);
    t.same(&["COPY", "k", "k", "DB", "0"]);
    t.same(&["SELECT", "0"]);
    t.same(&["RANDOMKEY"]);
    t.same(&["RENAME", "k", "j"]);
    t.same(&["EXPIRETIME", "j"]);
    t.same(&["INFO", "keyspace"]);
}

#[test]
fn blocked_clients_wait_for_keys_of_their_own_database() {
    let Some(mut t) = Twin::start() else { return };
    let waiter = t.client();
    t.same_from(waiter, &["SELECT", "2"]);
    t.silent(waiter, &["BLPOP", "l", "0"]);
    // The same name in another database serves nobody.
    t.same(&["LPUSH", "l", "in0"]);
    assert!(t.same_arrivals(waiter).is_empty());
    t.same(&["SELECT", "2"]);
    t.same(&["LPUSH", "l", "in2"]);
    t.same_arrivals(waiter);
    // What MOVE, COPY ... DB, RENAME and SWAPDB bring into its database
    // serves it too.
    t.same(&["SELECT", "0"]);
    t.silent(waiter, &["BLPOP", "l", "0"]);
    t.same(&["MOVE", "l", "2"]);
    t.same_arrivals(waiter);
    t.same(&["RPUSH", "src", "a", "b"]);
    t.silent(waiter, &["BRPOP", "copied", "0"]);
    t.same(&["COPY", "src", "copied", "DB", "2"]);
    t.same_arrivals(waiter);
    t.silent(waiter, &["BLPOP", "renamed", "0"]);
    t.same(&["SELECT", "2"]);
    t.same(&["RENAME", "copied", "renamed"]);
    t.same_arrivals(waiter);
    t.same(&["SELECT", "0"]);
    t.same(&["RPUSH", "swapped", "x"]);
    t.silent(waiter, &["BLPOP", "swapped", "0"]);
    t.same(&["SWAPDB", "0", "2"]);
    t.same_arrivals(waiter);
    t.same_from(waiter, &["LRANGE", "src", "0", "-1"]);
    t.same(&["DBSIZE"]);
}

#[test]
fn reset_returns_to_database_0_and_config_says_sixteen() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["CONFIG", "GET", "databases"]);
    t.same(&["SELECT", "5"]);
    t.same(&["SET", "k", "v"]);
    t.same(&["RESET"]);
    t.same(&["GET", "k"]);
    t.same(&["DBSIZE"]);
    // Subcommand arity errors abort a transaction, as in Redis.
    t.same(&["MULTI"]);
    t.same(&["OBJECT", "ENCODING"]);
    t.same(&["MEMORY", "USAGE"]);
    t.same(&["OBJECT", "NOSUCH", "k"]);
    t.same(&["EXEC"]);
}
