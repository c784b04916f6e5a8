//! The list commands against a real `redis-server`: the same requests, the
//! same reply bytes (skipped where Redis is not installed), blocking pops
//! included.

#[allow(dead_code)]
mod common;
use common::twin::Twin;
use granule_user::resp::Reply;

/// Lists of a few shapes to work on.
fn fill(t: &mut Twin) {
    t.same(&["RPUSH", "l", "a", "b", "c", "d", "e"]);
    t.same(&["RPUSH", "dup", "x", "a", "x", "b", "x", "c", "x"]);
    t.same(&["SET", "s", "string"]);
}

#[test]
fn pushes_and_pops_answer_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    fill(&mut t);
    t.same(&["LPUSH", "p", "1", "2", "3"]);
    t.same(&["RPUSH", "p", "4"]);
    t.same(&["LRANGE", "p", "0", "-1"]);
    t.same(&["LPUSHX", "p", "0"]);
    t.same(&["RPUSHX", "p", "5", "6"]);
    t.same(&["LPUSHX", "nokey", "0"]);
    t.same(&["RPUSHX", "nokey", "0"]);
    t.same(&["EXISTS", "nokey"]);
    t.same(&["LPOP", "p"]);
    t.same(&["RPOP", "p"]);
    t.same(&["LPOP", "p", "2"]);
    t.same(&["RPOP", "p", "2"]);
    t.same(&["LPOP", "p", "0"]);
    t.same(&["RPOP", "p", "9223372036854775807"]);
    t.same(&["EXISTS", "p"]);
    t.same(&["LPOP", "l", "9223372036854775807"]);
    t.same(&["LPOP", "missing"]);
    t.same(&["RPOP", "missing"]);
    t.same(&["LPOP", "missing", "2"]);
    t.same(&["LPOP", "missing", "0"]);
    t.same(&["TYPE", "dup"]);
    t.same(&["LLEN", "dup"]);
    t.same(&["LLEN", "missing"]);
    // Errors: counts, arity, types.
    t.same(&["LPOP", "dup", "-1"]);
    t.same(&["LPOP", "dup", "x"]);
    t.same(&["RPOP", "missing", "-5"]);
    t.same(&["LPOP", "dup", "1", "2"]);
    t.same(&["RPOP", "dup", "1", "2"]);
    t.same(&["LPOP"]);
    t.same(&["LPUSH", "l"]);
    t.same(&["RPUSHX", "l"]);
    t.same(&["LLEN"]);
    for command in
        [&["LPUSH", "s", "x"][..], &["RPUSHX", "s", "x"], &["LPOP", "s"], &["RPOP", "s", "2"], &["LLEN", "s"]]
    {
        t.same(command);
    }
    t.same(&["LPOP", "s", "-1"]);
    t.same(&["lpush", "MixedCase", "x"]);
    t.same(&["LPUSH", "empty-element", ""]);
    t.same(&["LRANGE", "empty-element", "0", "-1"]);
}

#[test]
fn ranges_and_indices_answer_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    fill(&mut t);
    for (start, stop) in [
        ("0", "-1"),
        ("1", "2"),
        ("-2", "-1"),
        ("-100", "100"),
        ("3", "1"),
        ("5", "10"),
        ("0", "-6"),
        ("-9223372036854775808", "9223372036854775807"),
        ("9223372036854775807", "-9223372036854775808"),
    ] {
        t.same(&["LRANGE", "l", start, stop]);
    }
    t.same(&["LRANGE", "missing", "0", "-1"]);
    t.same(&["LRANGE", "l", "x", "1"]);
    t.same(&["LRANGE", "l", "0", "1.5"]);
    t.same(&["LRANGE", "s", "x", "1"]);
    t.same(&["LRANGE", "s", "0", "1"]);
    t.same(&["LRANGE", "l", "0"]);
    for index in ["0", "-1", "4", "-5", "5", "-6", "9223372036854775807", "-9223372036854775808"] {
        t.same(&["LINDEX", "l", index]);
    }
    t.same(&["LINDEX", "l", "x"]);
    t.same(&["LINDEX", "missing", "x"]);
    t.same(&["LINDEX", "s", "x"]);
    t.same(&["LINDEX", "s", "0"]);
    t.same(&["LINDEX", "l"]);
    t.same(&["LSET", "l", "0", "A"]);
    t.same(&["LSET", "l", "-1", "E"]);
    t.same(&["LSET", "l", "5", "x"]);
    t.same(&["LSET", "l", "-6", "x"]);
    t.same(&["LSET", "l", "x", "x"]);
    t.same(&["LSET", "missing", "0", "x"]);
    t.same(&["LSET", "missing", "x", "x"]);
    t.same(&["LSET", "s", "0", "x"]);
    t.same(&["LSET", "l", "0"]);
    t.same(&["LRANGE", "l", "0", "-1"]);
}

#[test]
fn removal_trimming_and_insertion_answer_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    fill(&mut t);
    t.same(&["LREM", "dup", "2", "x"]);
    t.same(&["LRANGE", "dup", "0", "-1"]);
    t.same(&["LREM", "dup", "-1", "x"]);
    t.same(&["LRANGE", "dup", "0", "-1"]);
    t.same(&["RPUSH", "dup", "x", "x"]);
    t.same(&["LREM", "dup", "0", "x"]);
    t.same(&["LREM", "dup", "0", "nothing"]);
    t.same(&["LREM", "dup", "-9223372036854775808", "a"]);
    t.same(&["LRANGE", "dup", "0", "-1"]);
    t.same(&["LREM", "dup", "0", "b"]);
    t.same(&["LREM", "dup", "1", "c"]);
    t.same(&["EXISTS", "dup"]);
    t.same(&["LREM", "missing", "0", "x"]);
    t.same(&["LREM", "l", "x", "a"]);
    t.same(&["LREM", "s", "0", "a"]);
    t.same(&["LREM", "s", "x", "a"]);
    t.same(&["LREM", "l", "0"]);

    t.same(&["LTRIM", "l", "1", "-2"]);
    t.same(&["LRANGE", "l", "0", "-1"]);
    t.same(&["LTRIM", "l", "-9223372036854775808", "9223372036854775807"]);
    t.same(&["LRANGE", "l", "0", "-1"]);
    t.same(&["LTRIM", "l", "x", "1"]);
    t.same(&["LTRIM", "l", "0", "y"]);
    t.same(&["LTRIM", "missing", "0", "1"]);
    t.same(&["LTRIM", "s", "0", "1"]);
    t.same(&["LTRIM", "s", "x", "1"]);
    t.same(&["LTRIM", "l", "2", "1"]);
    t.same(&["EXISTS", "l"]);
    t.same(&["LTRIM", "l", "0"]);

    t.same(&["RPUSH", "i", "a", "p", "b", "p"]);
    t.same(&["LINSERT", "i", "BEFORE", "p", "1"]);
    t.same(&["LINSERT", "i", "after", "p", "2"]);
    t.same(&["LINSERT", "i", "After", "b", "3"]);
    t.same(&["LINSERT", "i", "before", "nothing", "3"]);
    t.same(&["LRANGE", "i", "0", "-1"]);
    t.same(&["LINSERT", "i", "middle", "p", "3"]);
    t.same(&["LINSERT", "missing", "before", "p", "3"]);
    t.same(&["LINSERT", "missing", "middle", "p", "3"]);
    t.same(&["LINSERT", "s", "before", "p", "3"]);
    t.same(&["LINSERT", "s", "middle", "p", "3"]);
    t.same(&["LINSERT", "i", "before", "p"]);
}

#[test]
fn lpos_answers_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    fill(&mut t);
    let cases: &[&[&str]] = &[
        &["x"],
        &["x", "RANK", "2"],
        &["x", "RANK", "-1"],
        &["x", "RANK", "-2"],
        &["x", "RANK", "5"],
        &["x", "COUNT", "0"],
        &["x", "COUNT", "2"],
        &["x", "RANK", "2", "COUNT", "2"],
        &["x", "RANK", "-2", "COUNT", "0"],
        &["x", "MAXLEN", "3"],
        &["x", "RANK", "-1", "MAXLEN", "1"],
        &["x", "RANK", "2", "COUNT", "0", "MAXLEN", "3"],
        &["x", "rank", "1", "rank", "3"],
        &["x", "COUNT", "1", "COUNT", "0"],
        &["x", "RANK", "9223372036854775807"],
        &["x", "RANK", "9223372036854775807", "COUNT", "0"],
        &["x", "RANK", "-9223372036854775807", "COUNT", "0"],
        &["x", "RANK", "-9223372036854775808"],
        &["x", "RANK", "-9223372036854775808", "COUNT", "1"],
        &["x", "COUNT", "9223372036854775807", "MAXLEN", "9223372036854775807"],
        &["nothing"],
        &["nothing", "COUNT", "0"],
        // Errors.
        &["x", "RANK", "0"],
        &["x", "RANK", "x"],
        &["x", "COUNT", "-1"],
        &["x", "COUNT", "x"],
        &["x", "MAXLEN", "-1"],
        &["x", "MAXLEN", "1.5"],
        &["x", "COUNT"],
        &["x", "RANK"],
        &["x", "FOO", "1"],
        &["x", "RANK", "1", "MAXLEN"],
    ];
    for case in cases {
        let mut command = vec!["LPOS", "dup"];
        command.extend_from_slice(case);
        t.same(&command);
    }
    t.same(&["LPOS", "missing", "x"]);
    t.same(&["LPOS", "missing", "x", "COUNT", "0"]);
    t.same(&["LPOS", "missing", "x", "RANK", "0"]);
    t.same(&["LPOS", "s", "x"]);
    t.same(&["LPOS", "s", "x", "RANK", "0"]);
    t.same(&["LPOS", "s", "x", "COUNT", "1"]);
    t.same(&["LPOS", "dup"]);
}

#[test]
fn moves_answer_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    fill(&mut t);
    t.same(&["LMOVE", "l", "m", "LEFT", "RIGHT"]);
    t.same(&["LMOVE", "l", "m", "right", "left"]);
    t.same(&["LMOVE", "l", "m", "Left", "Left"]);
    t.same(&["LMOVE", "l", "l", "RIGHT", "LEFT"]);
    t.same(&["LMOVE", "l", "l", "LEFT", "LEFT"]);
    t.same(&["RPOPLPUSH", "l", "m"]);
    t.same(&["LRANGE", "l", "0", "-1"]);
    t.same(&["LRANGE", "m", "0", "-1"]);
    t.same(&["RPOPLPUSH", "l", "m"]);
    t.same(&["EXISTS", "l"]);
    t.same(&["RPUSH", "one", "only"]);
    t.same(&["RPOPLPUSH", "one", "one"]);
    t.same(&["LRANGE", "one", "0", "-1"]);
    t.same(&["LMOVE", "missing", "m", "LEFT", "LEFT"]);
    t.same(&["RPOPLPUSH", "missing", "m"]);
    t.same(&["RPOPLPUSH", "missing", "s"]);
    t.same(&["LMOVE", "m", "s", "LEFT", "LEFT"]);
    t.same(&["RPOPLPUSH", "m", "s"]);
    t.same(&["LMOVE", "s", "m", "LEFT", "LEFT"]);
    t.same(&["RPOPLPUSH", "s", "m"]);
    t.same(&["LMOVE", "m", "n", "UP", "LEFT"]);
    t.same(&["LMOVE", "m", "n", "LEFT", "DOWN"]);
    t.same(&["LMOVE", "s", "n", "UP", "LEFT"]);
    t.same(&["LMOVE", "m", "n", "LEFT"]);
    t.same(&["RPOPLPUSH", "m"]);
    t.same(&["LRANGE", "m", "0", "-1"]);
}

#[test]
fn resp3_replies_answer_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    fill(&mut t);
    t.both(0, &["HELLO", "3"]);
    t.same(&["LPOP", "missing"]);
    t.same(&["LPOP", "missing", "2"]);
    t.same(&["RPOP", "missing", "0"]);
    t.same(&["LPOP", "l", "2"]);
    t.same(&["LINDEX", "l", "100"]);
    t.same(&["LINDEX", "missing", "0"]);
    t.same(&["LPOS", "dup", "nothing"]);
    t.same(&["LPOS", "missing", "x"]);
    t.same(&["LPOS", "dup", "x", "COUNT", "0"]);
    t.same(&["LMOVE", "missing", "m", "LEFT", "LEFT"]);
    t.same(&["RPOPLPUSH", "missing", "m"]);
    t.same(&["LRANGE", "missing", "0", "-1"]);
    t.same(&["MULTI"]);
    t.same(&["BLPOP", "missing", "0"]);
    t.same(&["BRPOP", "missing", "0"]);
    t.same(&["BLMOVE", "missing", "m", "LEFT", "LEFT", "0"]);
    t.same(&["BRPOPLPUSH", "missing", "m", "0"]);
    t.same(&["EXEC"]);
}

#[test]
fn blocking_pops_take_what_is_there_and_check_their_arguments() {
    let Some(mut t) = Twin::start() else { return };
    fill(&mut t);
    t.same(&["BLPOP", "missing", "l", "0"]);
    t.same(&["BRPOP", "l", "missing", "0"]);
    t.same(&["BLPOP", "l", "l", "1.5"]);
    t.same(&["BRPOPLPUSH", "l", "l", "0"]);
    t.same(&["BRPOPLPUSH", "l", "s", "0"]);
    t.same(&["LRANGE", "l", "0", "-1"]);
    t.same(&["BLMOVE", "l", "m", "LEFT", "RIGHT", "0"]);
    t.same(&["BRPOPLPUSH", "l", "m", "0"]);
    t.same(&["LRANGE", "m", "0", "-1"]);
    t.same(&["EXISTS", "l"]);
    t.same(&["RPUSH", "m", "0", "1", "2", "3", "4"]);
    t.same(&["BLPOP", "m", "0X1P3"]);
    t.same(&["BLPOP", "m", "-0x1p-2000"]);
    t.same(&["BLPOP", "m", "-0.0001"]);
    t.same(&["BLPOP", "m", "0x10"]);
    t.same(&["BLPOP", "m", "1e-400"]);
    t.same(&["BLPOP", "m", "-0.001"]);
    t.same(&["LRANGE", "m", "0", "-1"]);
    let timeouts = [
        "x",
        "-1",
        "-0.002",
        "-0.00100000000000000000002",
        "1e400",
        "1e5000",
        "-1e5000",
        "1e-5000",
        "inf",
        "-inf",
        "nan",
        "",
        " 1",
        "1 ",
        "1e30",
        "--1",
        "0x",
        "0x1p",
        "0x1p2000",
        "0x1p99999",
        "0x1p-99999",
    ];
    for timeout in timeouts {
        t.same(&["BLPOP", "missing", timeout]);
        t.same(&["BRPOP", "missing", timeout]);
        t.same(&["BLMOVE", "missing", "m", "LEFT", "LEFT", timeout]);
        t.same(&["BRPOPLPUSH", "missing", "m", timeout]);
    }
    t.same(&["BLPOP", "missing", "s", "0"]);
    t.same(&["BLPOP", "s", "missing", "0"]);
    t.same(&["BRPOP", "s", "0"]);
    t.same(&["BLMOVE", "s", "m", "LEFT", "LEFT", "0"]);
    t.same(&["BLMOVE", "m", "s", "LEFT", "LEFT", "0"]);
    t.same(&["BRPOPLPUSH", "s", "m", "0"]);
    t.same(&["BLMOVE", "m", "n", "UP", "LEFT", "x"]);
    t.same(&["BLMOVE", "m", "n", "LEFT", "UP", "-1"]);
    t.same(&["BLMOVE", "s", "n", "LEFT", "LEFT", "-1"]);
    t.same(&["BLPOP", "l"]);
    t.same(&["BRPOP"]);
    t.same(&["BLMOVE", "a", "b", "LEFT", "LEFT"]);
    t.same(&["BRPOPLPUSH", "a", "b"]);
    // Inside a transaction nothing blocks: the timeout reply at once.
    t.same(&["MULTI"]);
    t.same(&["BLPOP", "missing", "0"]);
    t.same(&["BRPOP", "missing", "0.01"]);
    t.same(&["BLMOVE", "missing", "m", "LEFT", "LEFT", "0"]);
    t.same(&["BRPOPLPUSH", "missing", "m", "0"]);
    t.same(&["BLPOP", "m", "0"]);
    t.same(&["BLPOP", "missing", "x"]);
    t.same(&["EXEC"]);
}

#[test]
fn a_push_unblocks_the_oldest_waiter_first() {
    let Some(mut t) = Twin::start() else { return };
    let (a, b, pusher) = (0, t.client(), t.client());
    t.silent(a, &["BLPOP", "k1", "k2", "0"]);
    t.silent(b, &["BRPOP", "k2", "0"]);
    t.same_from(pusher, &["RPUSH", "k2", "x", "y", "z"]);
    t.same_arrivals(a);
    t.same_arrivals(b);
    t.same_from(pusher, &["LRANGE", "k2", "0", "-1"]);
    // More waiters than elements: the rest keep waiting.
    t.silent(a, &["BLPOP", "k3", "0"]);
    t.silent(b, &["BLPOP", "k3", "0"]);
    t.same_from(pusher, &["LPUSH", "k3", "1"]);
    t.same_arrivals(a);
    t.same_from(pusher, &["EXISTS", "k3"]);
    t.same_from(pusher, &["RPUSH", "k3", "2", "3"]);
    t.same_arrivals(b);
    t.same_from(pusher, &["LRANGE", "k3", "0", "-1"]);
    // A negative timeout above -1 ms rounds to 0: forever.
    t.silent(a, &["BLPOP", "k5", "-0.001"]);
    t.same_from(pusher, &["RPUSH", "k5", "late"]);
    t.same_arrivals(a);
    // A waiter's pipelined requests wait with it, then run in order.
    t.silent(a, &["BLPOP", "k4", "0"]);
    t.silent(a, &["PING"]);
    t.silent(a, &["LLEN", "k4"]);
    t.same_from(pusher, &["RPUSH", "k4", "v", "w"]);
    t.same_arrivals(a);
    t.same(&["PING", "after"]);
}

#[test]
fn blocking_moves_are_served_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    let (a, b, c, pusher) = (0, t.client(), t.client(), t.client());
    t.silent(a, &["BLMOVE", "src", "dst", "RIGHT", "LEFT", "0"]);
    t.silent(b, &["BLPOP", "dst", "0"]);
    t.silent(c, &["BRPOPLPUSH", "src", "str", "0"]);
    t.same_from(pusher, &["SET", "str", "value"]);
    t.same_from(pusher, &["RPUSH", "src", "1", "2"]);
    t.same_arrivals(a);
    t.same_arrivals(c);
    t.same_arrivals(b);
    t.same_from(pusher, &["LRANGE", "src", "0", "-1"]);
    t.same_from(pusher, &["EXISTS", "dst"]);
    // A move onto its own key rotates it and serves the next waiter too.
    t.silent(a, &["BLMOVE", "r", "r", "LEFT", "RIGHT", "0"]);
    t.silent(b, &["BRPOP", "r", "0"]);
    t.same_from(pusher, &["LPUSH", "r", "only"]);
    t.same_arrivals(a);
    t.same_arrivals(b);
    t.same_from(pusher, &["EXISTS", "r"]);
    // LMOVE creates a key a client waits for.
    t.silent(a, &["BRPOPLPUSH", "q", "q2", "0"]);
    t.same_from(pusher, &["RPUSH", "q0", "e"]);
    t.same_from(pusher, &["LMOVE", "q0", "q", "LEFT", "LEFT"]);
    t.same_arrivals(a);
    t.same_from(pusher, &["LRANGE", "q2", "0", "-1"]);
    t.same_from(pusher, &["EXISTS", "q"]);
}

#[test]
fn transactions_serve_waiters_when_they_end() {
    let Some(mut t) = Twin::start() else { return };
    let (a, pusher) = (0, t.client());
    t.silent(a, &["BLPOP", "k", "0"]);
    t.same_from(pusher, &["MULTI"]);
    t.same_from(pusher, &["LPUSH", "k", "gone"]);
    t.same_from(pusher, &["LPOP", "k"]);
    t.same_from(pusher, &["EXEC"]);
    t.same_arrivals(a);
    t.same_from(pusher, &["MULTI"]);
    t.same_from(pusher, &["RPUSH", "k", "1", "2"]);
    t.same_from(pusher, &["RPUSH", "k", "3"]);
    t.same_from(pusher, &["EXEC"]);
    t.same_arrivals(a);
    t.same_from(pusher, &["LRANGE", "k", "0", "-1"]);
    // The first key made ready serves a client waiting for several.
    t.silent(a, &["BLPOP", "k8", "k9", "k8", "0"]);
    t.same_from(pusher, &["MULTI"]);
    t.same_from(pusher, &["RPUSH", "k9", "x"]);
    t.same_from(pusher, &["RPUSH", "k8", "y", "z"]);
    t.same_from(pusher, &["EXEC"]);
    t.same_arrivals(a);
    t.same_from(pusher, &["LRANGE", "k8", "0", "-1"]);
    t.same_from(pusher, &["EXISTS", "k9"]);
    // A key of another type serves nobody.
    t.silent(a, &["BLPOP", "k5", "0"]);
    t.same_from(pusher, &["SET", "k5", "string"]);
    t.same_arrivals(a);
    t.same_from(pusher, &["DEL", "k5"]);
    t.same_from(pusher, &["RPUSH", "k5", "finally"]);
    t.same_arrivals(a);
}

#[test]
fn resp3_waiters_get_resp3_replies() {
    let Some(mut t) = Twin::start() else { return };
    let (a, pusher) = (0, t.client());
    t.both(a, &["HELLO", "3"]);
    t.silent(a, &["BRPOP", "k", "0"]);
    t.same_from(pusher, &["RPUSH", "k", "1"]);
    t.same_arrivals(a);
    t.silent(a, &["BLPOP", "k", "0.1"]);
    std::thread::sleep(std::time::Duration::from_millis(400));
    t.tick();
    t.same_arrivals(a);
    t.silent(a, &["BLMOVE", "k", "d", "LEFT", "LEFT", "0.1"]);
    std::thread::sleep(std::time::Duration::from_millis(400));
    t.tick();
    t.same_arrivals(a);
}

#[test]
fn waiters_time_out_with_the_null_array() {
    let Some(mut t) = Twin::start() else { return };
    let (a, b) = (0, t.client());
    t.silent(a, &["BLPOP", "k", "0.1"]);
    t.silent(a, &["PING"]);
    t.silent(b, &["BLMOVE", "k", "d", "LEFT", "LEFT", "0.1"]);
    std::thread::sleep(std::time::Duration::from_millis(400));
    t.tick();
    t.same_arrivals(a);
    t.same_arrivals(b);
    t.silent(b, &["BRPOPLPUSH", "k", "d", "0.05"]);
    std::thread::sleep(std::time::Duration::from_millis(400));
    t.tick();
    t.same_arrivals(b);
    t.same(&["EXISTS", "k", "d"]);
}

#[test]
fn command_info_describes_the_list_commands_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    let names = [
        "lpush",
        "rpush",
        "lpushx",
        "rpushx",
        "lpop",
        "rpop",
        "lrange",
        "llen",
        "lindex",
        "lset",
        "lrem",
        "ltrim",
        "linsert",
        "lpos",
        "lmove",
        "rpoplpush",
        "blpop",
        "brpop",
        "blmove",
        "brpoplpush",
    ];
    for name in names {
        // Name, arity, flags and key positions; ACL categories, tips and key
        // specs are not modelled.
        let fields = |reply: Reply| match reply {
            Reply::Array(Some(mut entries)) => match entries.remove(0) {
                Reply::Array(Some(fields)) => fields[..6].to_vec(),
                other => panic!("{name}: {other:?}"),
            },
            other => panic!("{name}: {other:?}"),
        };
        let (ours, theirs) = t.both(0, &["COMMAND", "INFO", name]);
        assert_eq!(fields(ours), fields(theirs), "{name}");
    }
}
