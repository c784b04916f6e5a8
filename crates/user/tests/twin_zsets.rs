//! The sorted-set commands against a real `redis-server`: every reply
//! compared byte for byte, in RESP2 and RESP3, errors and option conflicts
//! included (skipped where Redis is not installed).

#[allow(dead_code)]
mod common;

use common::twin::Twin;
use granule_user::resp::Reply;

/// Runs `check` in RESP2, then again after both switched to RESP3.
fn in_both_protocols(t: &mut Twin, mut check: impl FnMut(&mut Twin)) {
    check(t);
    t.both(0, &["HELLO", "3"]);
    check(t);
}

/// Sends every command to both and compares the replies.
fn all_same(t: &mut Twin, commands: &[&[&str]]) {
    for command in commands {
        t.same(command);
    }
}

/// A sorted set `key` with `count` members `m0`, `m1`… scored `i * step`.
fn fill(t: &mut Twin, key: &str, count: usize, step: f64) {
    let mut args = vec!["ZADD".to_string(), key.to_string()];
    for i in 0..count {
        args.push(format!("{}", i as f64 * step));
        args.push(format!("m{i}"));
    }
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    t.same(&words);
}

#[test]
fn sorted_set_commands_are_described_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    for name in [
        "zrange",
        "zrevrange",
        "zrangebylex",
        "zrevrangebylex",
        "zrangebyscore",
        "zrevrangebyscore",
        "zrangestore",
        "zrank",
        "zrevrank",
        "zcount",
        "zlexcount",
        "zincrby",
        "zpopmin",
        "zpopmax",
        "zmscore",
        "zremrangebyscore",
        "zremrangebyrank",
        "zremrangebylex",
        "zrandmember",
        "zunionstore",
        "zinterstore",
        "zdiffstore",
        "zunion",
        "zinter",
        "zdiff",
        "zintercard",
        "zadd",
        "zrem",
    ] {
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

#[test]
fn zrange_by_rank() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "0.1", "f", "-inf", "g", "inf", "h"]);
    fill(&mut t, "big", 300, 0.5);
    in_both_protocols(&mut t, |t| {
        t.same(&["ZRANGE", "nokey", "0", "-1", "WITHSCORES"]);
        t.same(&["ZREVRANGE", "nokey", "0", "-1"]);
        for key in ["z", "big"] {
            for (start, stop) in [
                ("0", "-1"),
                ("0", "0"),
                ("2", "4"),
                ("-3", "-1"),
                ("-100", "2"),
                ("5", "1"),
                ("7", "100"),
                ("250", "260"),
                ("-1", "-1"),
                ("0", "-400"),
                ("-9223372036854775808", "9223372036854775807"),
            ] {
                t.same(&["ZRANGE", key, start, stop]);
                t.same(&["ZRANGE", key, start, stop, "WITHSCORES"]);
                t.same(&["ZRANGE", key, start, stop, "REV"]);
                t.same(&["ZRANGE", key, start, stop, "rev", "withscores"]);
                t.same(&["ZREVRANGE", key, start, stop]);
                t.same(&["ZREVRANGE", key, start, stop, "WITHSCORES"]);
            }
        }
        all_same(
            t,
            &[
                &["ZRANGE", "z", "0", "1", "LIMIT", "0", "1"],
                &["ZRANGE", "z", "0", "1", "LIMIT", "5", "-1"],
                &["ZRANGE", "z", "0", "1", "LIMIT", "x", "1"],
                &["ZRANGE", "z", "0", "1", "LIMIT", "0"],
                &["ZRANGE", "z", "0", "1", "WITHSCORES", "WITHSCORES", "REV", "REV"],
                &["ZRANGE", "z", "a", "1"],
                &["ZRANGE", "z", "0", "1.5"],
                &["ZRANGE", "z", "0", "1", "FOO"],
                &["ZRANGE", "z", "0"],
                &["ZREVRANGE", "z", "0", "1", "REV"],
                &["ZREVRANGE", "z", "0", "1", "BYSCORE"],
                &["ZREVRANGE", "z", "0", "1", "LIMIT", "0", "1"],
                &["ZREVRANGE", "z", "0", "1", "LIMIT", "0", "-1"],
                &["ZREVRANGE", "z", "x", "1"],
                &["SET", "s", "v"],
                &["ZRANGE", "s", "0", "1"],
                &["ZREVRANGE", "s", "0", "1"],
                &["ZRANGE", "s", "x", "1"],
            ],
        );
    });
}

#[test]
fn zrange_by_score() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["ZADD", "z", "1", "a", "2", "b", "2", "bb", "3", "c", "4", "d", "5", "e", "-inf", "g", "inf", "h"]);
    t.same(&["ZADD", "z", "0.1", "x", "1e-5", "y", "1.5e17", "w"]);
    fill(&mut t, "big", 300, 0.25);
    in_both_protocols(&mut t, |t| {
        for key in ["z", "big"] {
            for (min, max) in [
                ("-inf", "+inf"),
                ("1", "3"),
                ("(1", "3"),
                ("1", "(3"),
                ("(1", "(2"),
                ("2", "2"),
                ("(2", "2"),
                ("5", "1"),
                ("-inf", "-inf"),
                ("inf", "inf"),
                ("(inf", "inf"),
                ("10", "50.5"),
                ("(-inf", "(+inf"),
                ("0", "1e300"),
                (" 1", "3"),
                ("", "3"),
                ("(", "2"),
                ("1e400", "inf"),
            ] {
                t.same(&["ZRANGEBYSCORE", key, min, max]);
                t.same(&["ZRANGEBYSCORE", key, min, max, "WITHSCORES"]);
                t.same(&["ZRANGEBYSCORE", key, min, max, "LIMIT", "1", "3"]);
                t.same(&["ZREVRANGEBYSCORE", key, max, min, "WITHSCORES", "LIMIT", "2", "-1"]);
                t.same(&["ZRANGE", key, min, max, "BYSCORE", "LIMIT", "0", "5", "WITHSCORES"]);
                t.same(&["ZRANGE", key, max, min, "BYSCORE", "REV", "LIMIT", "1", "2"]);
                t.same(&["ZCOUNT", key, min, max]);
            }
        }
        all_same(
            t,
            &[
                &["ZRANGEBYSCORE", "z", "-inf", "inf", "LIMIT", "-1", "5"],
                &["ZRANGEBYSCORE", "z", "-inf", "inf", "LIMIT", "0", "0"],
                &["ZRANGEBYSCORE", "z", "-inf", "inf", "LIMIT", "100", "5"],
                &["ZRANGEBYSCORE", "z", "-inf", "inf", "LIMIT", "1", "1", "LIMIT", "2", "2"],
                &["ZRANGEBYSCORE", "z", "-inf", "inf", "LIMIT", "a", "1"],
                &["ZRANGEBYSCORE", "z", "-inf", "inf", "REV"],
                &["ZRANGEBYSCORE", "z", "-inf", "inf", "BYSCORE"],
                &["ZRANGEBYSCORE", "z", "a", "1"],
                &["ZRANGEBYSCORE", "z", "1", "nan"],
                &["ZRANGEBYSCORE", "z", "(a", "1"],
                &["ZRANGEBYSCORE", "z", "1 ", "2"],
                &["ZRANGEBYSCORE", "z", "[1", "2"],
                &["ZRANGEBYSCORE", "nokey", "0", "1"],
                &["ZRANGEBYSCORE", "nokey", "x", "1"],
                &["ZREVRANGEBYSCORE", "z", "1", "x"],
                &["ZRANGE", "z", "1", "x", "BYSCORE"],
                &["ZRANGE", "z", "0", "1", "BYSCORE", "BYSCORE"],
                &["ZRANGE", "z", "0", "1", "BYSCORE", "BYLEX"],
                &["ZCOUNT", "z", "x", "1"],
                &["ZCOUNT", "z", "1"],
                &["ZCOUNT", "nokey", "0", "1"],
                &["SET", "s", "v"],
                &["ZRANGEBYSCORE", "s", "0", "1"],
                &["ZRANGEBYSCORE", "s", "x", "1"],
                &["ZCOUNT", "s", "0", "1"],
            ],
        );
    });
}

#[test]
fn zrange_by_lex() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["ZADD", "z", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e", "0", "", "0", "ab", "0", "\u{ff}"]);
    let mut args = vec!["ZADD".to_string(), "big".to_string()];
    for i in 0..300 {
        args.push("7".to_string());
        args.push(format!("member{i:04}"));
    }
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    t.same(&words);
    // Mixed scores in a small set: walked as Redis walks a listpack.
    t.same(&["ZADD", "mixed", "0", "a", "0", "c", "0", "d", "5", "b", "3", "e"]);
    in_both_protocols(&mut t, |t| {
        for key in ["z", "big", "mixed"] {
            for (min, max) in [
                ("-", "+"),
                ("[a", "[c"),
                ("(a", "(c"),
                ("[b", "[b"),
                ("(b", "[b"),
                ("[c", "[a"),
                ("+", "-"),
                ("-", "-"),
                ("+", "+"),
                ("[", "(b"),
                ("(", "+"),
                ("[member0100", "(member0110"),
                ("(member0295", "+"),
            ] {
                t.same(&["ZRANGEBYLEX", key, min, max]);
                t.same(&["ZRANGEBYLEX", key, min, max, "LIMIT", "1", "2"]);
                t.same(&["ZREVRANGEBYLEX", key, max, min]);
                t.same(&["ZREVRANGEBYLEX", key, max, min, "LIMIT", "1", "-1"]);
                t.same(&["ZRANGE", key, min, max, "BYLEX"]);
                t.same(&["ZRANGE", key, max, min, "BYLEX", "REV", "LIMIT", "0", "3"]);
                t.same(&["ZLEXCOUNT", key, min, max]);
            }
        }
        all_same(
            t,
            &[
                &["ZRANGEBYLEX", "z", "a", "[c"],
                &["ZRANGEBYLEX", "z", "[a", "c"],
                &["ZRANGEBYLEX", "z", "", "+"],
                &["ZRANGEBYLEX", "z", "-a", "+"],
                &["ZRANGEBYLEX", "z", "-", "++"],
                &["ZRANGEBYLEX", "z", "-", "+", "WITHSCORES"],
                &["ZRANGEBYLEX", "z", "-", "+", "LIMIT", "-1", "2"],
                &["ZRANGEBYLEX", "z", "-", "+", "LIMIT", "0", "0"],
                &["ZRANGEBYLEX", "z", "-", "+", "LIMIT", "0", "x"],
                &["ZRANGEBYLEX", "z", "x", "y", "WITHSCORES"],
                &["ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES"],
                &["ZRANGE", "z", "x", "y", "BYLEX"],
                &["ZREVRANGEBYLEX", "z", "+", "-", "REV"],
                &["ZLEXCOUNT", "z", "a", "+"],
                &["ZLEXCOUNT", "nokey", "a", "+"],
                &["ZLEXCOUNT", "nokey", "-", "+"],
                &["SET", "s", "v"],
                &["ZRANGEBYLEX", "s", "-", "+"],
                &["ZLEXCOUNT", "s", "-", "+"],
                &["ZLEXCOUNT", "s", "x", "+"],
            ],
        );
    });
}

#[test]
fn zrangestore() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "0", "e"]);
    all_same(
        &mut t,
        &[
            &["ZRANGESTORE", "d", "z", "0", "2"],
            &["ZRANGE", "d", "0", "-1", "WITHSCORES"],
            &["ZRANGESTORE", "d", "z", "(1", "+inf", "BYSCORE", "LIMIT", "1", "2"],
            &["ZRANGE", "d", "0", "-1", "WITHSCORES"],
            &["ZRANGESTORE", "d", "z", "[c", "-", "BYLEX", "REV"],
            &["ZRANGE", "d", "0", "-1", "WITHSCORES"],
            &["ZRANGESTORE", "d", "z", "0", "1", "REV"],
            &["ZRANGE", "d", "0", "-1", "WITHSCORES"],
            &["SET", "ttl", "x", "EX", "100"],
            &["ZRANGESTORE", "ttl", "z", "0", "0"],
            &["TTL", "ttl"],
            &["TYPE", "ttl"],
            &["ZRANGESTORE", "d", "z", "10", "20"],
            &["EXISTS", "d"],
            &["SET", "d", "x"],
            &["ZRANGESTORE", "d", "nokey", "0", "-1"],
            &["EXISTS", "d"],
            &["ZRANGESTORE", "z", "z", "1", "2"],
            &["ZRANGE", "z", "0", "-1", "WITHSCORES"],
            &["ZRANGESTORE", "d", "z", "0", "1", "WITHSCORES"],
            &["ZRANGESTORE", "d", "z", "0", "1", "LIMIT", "0", "1"],
            &["ZRANGESTORE", "d", "z", "a", "1"],
            &["ZRANGESTORE", "d", "z", "0"],
            &["SET", "s", "v"],
            &["ZRANGESTORE", "d", "s", "0", "1"],
            &["ZRANGESTORE", "s", "z", "0", "1"],
            &["TYPE", "s"],
        ],
    );
}

#[test]
fn ranks_scores_and_counts() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["ZADD", "z", "1", "a", "2", "b", "3", "c", "3", "cc", "-0", "zero"]);
    fill(&mut t, "big", 200, 1.0);
    in_both_protocols(&mut t, |t| {
        all_same(
            t,
            &[
                &["ZRANK", "z", "a"],
                &["ZRANK", "z", "cc"],
                &["ZREVRANK", "z", "a"],
                &["ZREVRANK", "z", "zero"],
                &["ZRANK", "z", "nomember"],
                &["ZREVRANK", "z", "nomember"],
                &["ZRANK", "nokey", "a"],
                &["ZREVRANK", "nokey", "a"],
                &["ZRANK", "big", "m0"],
                &["ZRANK", "big", "m150"],
                &["ZREVRANK", "big", "m150"],
                &["ZRANK", "z", "a", "WITHSCORE"],
                &["ZREVRANK", "z", "a", "WITHSCORE"],
                &["ZRANK", "z"],
                &["ZMSCORE", "z", "a", "nomember", "zero", "cc"],
                &["ZMSCORE", "nokey", "a", "b"],
                &["ZMSCORE", "z"],
                &["ZSCORE", "z", "zero"],
                &["ZINCRBY", "z", "1.5", "a"],
                &["ZINCRBY", "z", "-1.5", "new"],
                &["ZINCRBY", "fresh", "10", "m"],
                &["ZINCRBY", "z", "abc", "a"],
                &["ZINCRBY", "z", "nan", "a"],
                &["ZINCRBY", "z", "inf", "a"],
                &["ZINCRBY", "z", "-inf", "a"],
                &["ZINCRBY", "z", "1", "a", "b"],
                &["ZINCRBY", "z", "1"],
                &["ZINCRBY", "z", "0.1", "b"],
                &["ZINCRBY", "z", "0.2", "b"],
                &["ZRANGE", "z", "0", "-1", "WITHSCORES"],
                &["ZCOUNT", "z", "-inf", "+inf"],
                &["ZCOUNT", "big", "10", "(20"],
                &["ZLEXCOUNT", "big", "-", "+"],
                &["SET", "s", "v"],
                &["ZRANK", "s", "a"],
                &["ZREVRANK", "s", "a"],
                &["ZMSCORE", "s", "a"],
                &["ZINCRBY", "s", "1", "a"],
                &["ZINCRBY", "s", "x", "a"],
                &["DEL", "z", "fresh"],
                &["ZADD", "z", "1", "a", "2", "b", "3", "c", "3", "cc", "-0", "zero"],
            ],
        );
    });
}

#[test]
fn pops() {
    let Some(mut t) = Twin::start() else { return };
    in_both_protocols(&mut t, |t| {
        t.same(&["DEL", "z"]);
        t.same(&["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "0.5", "f"]);
        fill(t, "big", 200, 2.0);
        all_same(
            t,
            &[
                &["ZPOPMIN", "z"],
                &["ZPOPMAX", "z"],
                &["ZPOPMIN", "z", "2"],
                &["ZPOPMAX", "z", "1"],
                &["ZPOPMIN", "z", "0"],
                &["ZPOPMIN", "z", "-1"],
                &["ZPOPMIN", "z", "abc"],
                &["ZPOPMIN", "z", "1", "2"],
                &["ZPOPMAX", "z", "100"],
                &["EXISTS", "z"],
                &["ZPOPMIN", "z"],
                &["ZPOPMIN", "z", "3"],
                &["ZPOPMAX", "nokey", "0"],
                &["ZPOPMAX", "nokey", "-5"],
                &["ZPOPMIN", "big", "3"],
                &["ZPOPMAX", "big", "3"],
                &["ZPOPMIN", "big"],
                &["ZPOPMAX", "big", "9223372036854775807"],
                &["EXISTS", "big"],
                &["SET", "s", "v"],
                &["ZPOPMIN", "s"],
                &["ZPOPMAX", "s", "1"],
                &["ZPOPMAX", "s", "x"],
                &["ZPOPMIN"],
            ],
        );
    });
}

#[test]
fn removals_by_range() {
    let Some(mut t) = Twin::start() else { return };
    let reset = |t: &mut Twin| {
        t.same(&["DEL", "z"]);
        t.same(&["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"]);
    };
    for command in [
        &["ZREMRANGEBYRANK", "z", "0", "1"][..],
        &["ZREMRANGEBYRANK", "z", "-2", "-1"],
        &["ZREMRANGEBYRANK", "z", "3", "1"],
        &["ZREMRANGEBYRANK", "z", "0", "-1"],
        &["ZREMRANGEBYRANK", "z", "10", "20"],
        &["ZREMRANGEBYRANK", "z", "-100", "100"],
        &["ZREMRANGEBYRANK", "z", "a", "1"],
        &["ZREMRANGEBYSCORE", "z", "2", "4"],
        &["ZREMRANGEBYSCORE", "z", "(2", "(4"],
        &["ZREMRANGEBYSCORE", "z", "-inf", "+inf"],
        &["ZREMRANGEBYSCORE", "z", "4", "2"],
        &["ZREMRANGEBYSCORE", "z", "x", "2"],
        &["ZREMRANGEBYLEX", "z", "[b", "(d"],
        &["ZREMRANGEBYLEX", "z", "-", "+"],
        &["ZREMRANGEBYLEX", "z", "(e", "+"],
        &["ZREMRANGEBYLEX", "z", "b", "+"],
    ] {
        reset(&mut t);
        t.same(command);
        t.same(&["ZRANGE", "z", "0", "-1", "WITHSCORES"]);
        t.same(&["EXISTS", "z"]);
    }
    fill(&mut t, "big", 300, 1.0);
    all_same(
        &mut t,
        &[
            &["ZREMRANGEBYRANK", "big", "10", "19"],
            &["ZREMRANGEBYSCORE", "big", "100", "(150"],
            &["ZREMRANGEBYLEX", "big", "-", "+"],
            &["ZCARD", "big"],
            &["ZREMRANGEBYRANK", "nokey", "0", "-1"],
            &["ZREMRANGEBYSCORE", "nokey", "x", "1"],
            &["ZREMRANGEBYLEX", "nokey", "x", "+"],
            &["SET", "s", "v"],
            &["ZREMRANGEBYRANK", "s", "0", "-1"],
            &["ZREMRANGEBYSCORE", "s", "0", "1"],
            &["ZREMRANGEBYLEX", "s", "-", "+"],
            &["ZREMRANGEBYLEX", "s", "x", "+"],
            &["ZREMRANGEBYRANK", "s", "0"],
        ],
    );
}

#[test]
fn union_inter_diff() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["ZADD", "a", "1", "x", "2", "y", "3", "z", "-inf", "n", "inf", "p"]);
    t.same(&["ZADD", "b", "10", "y", "20", "z", "30", "w", "inf", "n", "-inf", "p"]);
    t.same(&["ZADD", "c", "0", "x", "0", "y", "0", "q"]);
    in_both_protocols(&mut t, |t| {
        for op in ["ZUNION", "ZINTER"] {
            for tail in [
                &[][..],
                &["WITHSCORES"],
                &["WEIGHTS", "2", "3", "WITHSCORES"],
                &["WEIGHTS", "0", "1", "WITHSCORES"],
                &["WEIGHTS", "-1", "1", "WITHSCORES"],
                &["AGGREGATE", "MIN", "WITHSCORES"],
                &["AGGREGATE", "max", "WITHSCORES"],
                &["AGGREGATE", "sum", "WEIGHTS", "1", "0.5", "WITHSCORES"],
                &["WITHSCORES", "WITHSCORES"],
                &["WEIGHTS", "1"],
                &["WEIGHTS", "1", "x"],
                &["WEIGHTS", "1", "nan"],
                &["AGGREGATE", "avg"],
                &["AGGREGATE"],
                &["FOO"],
                &["LIMIT", "1"],
            ] {
                let mut command = vec![op, "2", "a", "b"];
                command.extend_from_slice(tail);
                t.same(&command);
                let mut command = vec![op, "3", "c", "a", "b"];
                command.extend_from_slice(tail);
                if !tail.contains(&"WEIGHTS") {
                    t.same(&command);
                }
            }
        }
        all_same(
            t,
            &[
                // Unstored results keep a zero's sign.
                &["ZUNION", "1", "c", "WEIGHTS", "-1", "WITHSCORES"],
                &["ZINTER", "2", "c", "a", "WEIGHTS", "-1", "0", "WITHSCORES"],
                &["ZDIFF", "2", "a", "b"],
                &["ZDIFF", "2", "a", "b", "WITHSCORES"],
                &["ZDIFF", "1", "a", "WITHSCORES"],
                &["ZDIFF", "3", "a", "c", "nokey", "WITHSCORES"],
                &["ZDIFF", "2", "nokey", "a"],
                &["ZDIFF", "2", "a", "a"],
                &["ZDIFF", "2", "a", "b", "WEIGHTS", "1", "1"],
                &["ZDIFF", "2", "a", "b", "AGGREGATE", "MIN"],
                &["ZUNION", "2", "a", "nokey", "WITHSCORES"],
                &["ZINTER", "2", "a", "nokey", "WITHSCORES"],
                &["ZUNION", "1", "nokey"],
                &["ZUNION", "2", "a", "a", "WITHSCORES"],
                &["ZINTER", "2", "a", "a", "WITHSCORES"],
                &["ZUNION", "0", "a"],
                &["ZINTER", "-1", "a"],
                &["ZDIFF", "0", "a"],
                &["ZUNION", "x", "a"],
                &["ZUNION", "3", "a", "b"],
                &["ZUNION", "9223372036854775807", "a"],
                &["ZINTERCARD", "2", "a", "b"],
                &["ZINTERCARD", "2", "a", "b", "LIMIT", "1"],
                &["ZINTERCARD", "2", "a", "b", "LIMIT", "0"],
                &["ZINTERCARD", "2", "a", "b", "LIMIT", "100"],
                &["ZINTERCARD", "2", "a", "b", "LIMIT", "-1"],
                &["ZINTERCARD", "2", "a", "b", "LIMIT", "x"],
                &["ZINTERCARD", "2", "a", "b", "LIMIT"],
                &["ZINTERCARD", "2", "a", "b", "WITHSCORES"],
                &["ZINTERCARD", "2", "a", "b", "WEIGHTS", "1", "2"],
                &["ZINTERCARD", "0", "a"],
                &["ZINTERCARD", "3", "a", "b"],
                &["ZINTERCARD", "1", "nokey"],
                &["SET", "s", "v"],
                &["ZUNION", "2", "a", "s"],
                &["ZUNION", "2", "a", "s", "FOO"],
                &["ZINTER", "2", "nokey", "s"],
                &["ZDIFF", "2", "a", "s"],
                &["ZINTERCARD", "2", "s", "a"],
                &["ZUNION", "1"],
                &["ZUNION", "1", "s", "x"],
            ],
        );
    });
}

#[test]
fn union_inter_diff_store() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["ZADD", "a", "1", "x", "2", "y", "3", "z"]);
    t.same(&["ZADD", "b", "10", "y", "20", "z", "30", "w"]);
    fill(&mut t, "big", 200, 1.5);
    all_same(
        &mut t,
        &[
            &["ZUNIONSTORE", "d", "2", "a", "b"],
            &["ZRANGE", "d", "0", "-1", "WITHSCORES"],
            &["ZINTERSTORE", "d", "2", "a", "b", "WEIGHTS", "2", "0.5", "AGGREGATE", "MAX"],
            &["ZRANGE", "d", "0", "-1", "WITHSCORES"],
            &["ZDIFFSTORE", "d", "2", "b", "a"],
            &["ZRANGE", "d", "0", "-1", "WITHSCORES"],
            &["ZUNIONSTORE", "d", "2", "big", "a", "WEIGHTS", "1", "-1"],
            &["ZRANGE", "d", "0", "5", "WITHSCORES"],
            &["ZCARD", "d"],
            &["ZUNIONSTORE", "a", "2", "a", "b"],
            &["ZRANGE", "a", "0", "-1", "WITHSCORES"],
            &["SET", "ttl", "v", "EX", "100"],
            &["ZINTERSTORE", "ttl", "1", "b"],
            &["TTL", "ttl"],
            &["ZINTERSTORE", "d", "2", "b", "nokey"],
            &["EXISTS", "d"],
            &["ZDIFFSTORE", "d", "1", "nokey"],
            &["ZUNIONSTORE", "d", "0", "a"],
            &["ZINTERSTORE", "d", "x", "a"],
            &["ZDIFFSTORE", "d", "2", "a"],
            &["ZUNIONSTORE", "d", "1", "a", "WITHSCORES"],
            &["ZDIFFSTORE", "d", "1", "a", "WEIGHTS", "2"],
            &["ZUNIONSTORE", "d", "1", "a", "AGGREGATE", "NONE"],
            &["SET", "s", "v"],
            &["ZUNIONSTORE", "d", "2", "a", "s"],
            &["ZUNIONSTORE", "s", "1", "a"],
            &["TYPE", "s"],
            &["ZUNIONSTORE", "d", "1"],
        ],
    );
}

#[test]
fn random_members_have_redis_shapes() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["ZADD", "z", "1", "a", "2", "b", "3", "c"]);
    in_both_protocols(&mut t, |t| {
        all_same(
            t,
            &[
                &["ZRANDMEMBER", "nokey"],
                &["ZRANDMEMBER", "nokey", "5"],
                &["ZRANDMEMBER", "nokey", "-5", "WITHSCORES"],
                &["ZRANDMEMBER", "z", "0"],
                &["ZRANDMEMBER", "z", "0", "WITHSCORES"],
                &["ZRANDMEMBER", "z", "3"],
                &["ZRANDMEMBER", "z", "10", "WITHSCORES"],
                &["ZRANDMEMBER", "z", "abc"],
                &["ZRANDMEMBER", "z", "1", "WITHVALUES"],
                &["ZRANDMEMBER", "z", "1", "WITHSCORES", "x"],
                &["ZRANDMEMBER", "z", "-9223372036854775808"],
                &["ZRANDMEMBER", "z", "4611686018427387904", "WITHSCORES"],
                &["SET", "s", "v"],
                &["ZRANDMEMBER", "s"],
                &["ZRANDMEMBER", "s", "1"],
                &["ZRANDMEMBER"],
            ],
        );
        let members = ["a", "b", "c"].map(|f| Reply::Bulk(Some(f.as_bytes().to_vec())));
        let (ours, theirs) = t.both(0, &["ZRANDMEMBER", "z"]);
        assert!(members.contains(&ours) && members.contains(&theirs), "{ours:?} {theirs:?}");
        for (count, len) in [("2", 2), ("-7", 7), ("1", 1)] {
            let (ours, theirs) = t.both(0, &["ZRANDMEMBER", "z", count]);
            for reply in [&ours, &theirs] {
                let Reply::Array(Some(items)) = reply else { panic!("{reply:?}") };
                assert_eq!(items.len(), len);
                assert!(items.iter().all(|item| members.contains(item)));
                if count == "2" {
                    assert_ne!(items[0], items[1]);
                }
            }
        }
        let (ours, theirs) = t.both(0, &["ZRANDMEMBER", "z", "-4", "WITHSCORES"]);
        let shape = |reply: &Reply| match reply {
            Reply::Array(Some(items)) => {
                items.iter().map(|item| matches!(item, Reply::Array(Some(pair)) if pair.len() == 2)).collect::<Vec<_>>()
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(shape(&ours), shape(&theirs));
    });
}

/// A small deterministic generator for the randomized comparisons.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

#[test]
fn random_ranges_answer_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    let mut rng = Lcg(7);
    let scores = ["0", "1", "1.5", "2", "-3", "inf", "-inf", "10"];
    let members = ["a", "b", "c", "aa", "ab", "b0", "", "zz", "m", "n", "x1", "x2"];
    let bounds = ["-inf", "+inf", "0", "(0", "1", "(1", "1.5", "(2", "2", "-3", "(10", "5"];
    let lex = ["-", "+", "[a", "(a", "[b", "(b0", "[m", "(zz", "[", "(", "[x"];
    let ranks = ["0", "1", "-1", "-2", "3", "5", "100", "-100"];
    for round in 0..4 {
        let key = format!("r{round}");
        t.same(&["DEL", &key]);
        // Rounds 0-1 tie every score (the lex order is defined), 2-3 mix them.
        for member in members {
            if rng.below(4) != 0 {
                let score = if round < 2 { "0" } else { rng.pick(&scores) };
                t.same(&["ZADD", &key, score, member]);
            }
        }
        in_both_protocols(&mut t, |t| {
            for _ in 0..10 {
                let (a, b) = (rng.pick(&bounds), rng.pick(&bounds));
                let (l1, l2) = (rng.pick(&lex), rng.pick(&lex));
                let (r1, r2) = (rng.pick(&ranks), rng.pick(&ranks));
                let (offset, count) = (rng.pick(&["0", "1", "2", "-1"]), rng.pick(&["-1", "0", "1", "3"]));
                t.same(&["ZRANGE", &key, r1, r2, "WITHSCORES"]);
                t.same(&["ZRANGE", &key, r1, r2, "REV"]);
                t.same(&["ZRANGE", &key, a, b, "BYSCORE", "LIMIT", offset, count, "WITHSCORES"]);
                t.same(&["ZRANGE", &key, a, b, "BYSCORE", "REV", "LIMIT", offset, count]);
                t.same(&["ZRANGE", &key, l1, l2, "BYLEX", "LIMIT", offset, count]);
                t.same(&["ZRANGE", &key, l1, l2, "BYLEX", "REV", "LIMIT", offset, count]);
                t.same(&["ZCOUNT", &key, a, b]);
                t.same(&["ZLEXCOUNT", &key, l1, l2]);
                t.same(&["ZRANK", &key, rng.pick(&members)]);
                t.same(&["ZREVRANK", &key, rng.pick(&members)]);
            }
        });
        t.both(0, &["HELLO", "2"]);
        let copy = format!("c{round}");
        t.same(&["ZUNIONSTORE", &copy, "1", &key]);
        t.same(&["ZREMRANGEBYLEX", &copy, rng.pick(&lex), rng.pick(&lex)]);
        t.same(&["ZRANGE", &copy, "0", "-1", "WITHSCORES"]);
        t.same(&["ZUNIONSTORE", &copy, "1", &key]);
        t.same(&["ZREMRANGEBYSCORE", &copy, rng.pick(&bounds), rng.pick(&bounds)]);
        t.same(&["ZRANGE", &copy, "0", "-1", "WITHSCORES"]);
        t.same(&["ZUNIONSTORE", &copy, "1", &key]);
        t.same(&["ZREMRANGEBYRANK", &copy, rng.pick(&ranks), rng.pick(&ranks)]);
        t.same(&["ZRANGE", &copy, "0", "-1", "WITHSCORES"]);
    }
}

#[test]
fn sets_are_inputs_scoring_one() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["ZADD", "z", "1", "x", "2", "y", "5", "10", "-1", "7"]);
    t.same(&["SADD", "words", "x", "q", "y"]);
    t.same(&["SADD", "ints", "10", "7", "3", "-2"]);
    in_both_protocols(&mut t, |t| {
        all_same(
            t,
            &[
                &["ZUNION", "2", "z", "words", "WITHSCORES"],
                &["ZUNION", "3", "z", "words", "ints", "WEIGHTS", "1", "2", "3", "WITHSCORES"],
                &["ZINTER", "2", "z", "ints", "AGGREGATE", "MAX", "WITHSCORES"],
                &["ZINTER", "2", "words", "z", "WITHSCORES"],
                &["ZDIFF", "2", "z", "ints", "WITHSCORES"],
                &["ZDIFF", "2", "words", "z", "WITHSCORES"],
                &["ZDIFF", "1", "ints", "WITHSCORES"],
                &["ZINTERCARD", "2", "ints", "z"],
                &["ZUNIONSTORE", "d", "2", "ints", "words"],
                &["ZRANGE", "d", "0", "-1", "WITHSCORES"],
                &["ZINTERSTORE", "d", "2", "words", "words", "WEIGHTS", "2", "0.5"],
                &["ZRANGE", "d", "0", "-1", "WITHSCORES"],
            ],
        );
    });
}
