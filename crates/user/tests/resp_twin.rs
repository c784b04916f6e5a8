//! The store against a real `redis-server`, command by command: the same
//! requests, the same reply bytes (skipped where Redis is not installed).

#[allow(dead_code)]
mod common;

use common::twin::Twin;
use granule_user::resp::Reply;

#[test]
fn the_core_commands_answer_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["SET", "k", "v"]);
    t.same(&["GET", "k"]);
    t.same(&["GET", "missing"]);
    t.same(&["INCR", "k"]);
    t.same(&["HSET", "h", "a", "1", "b", "2"]);
    t.same(&["HGETALL", "h"]);
    t.same(&["ZADD", "z", "1", "a", "2", "b"]);
    t.same(&["ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES"]);
    t.same(&["NOSUCHCOMMAND", "x"]);
    t.same(&["GET"]);
    // The version and the client id differ by design; the fields do not.
    let (ours, theirs) = t.both(0, &["HELLO", "3"]);
    let fields = |r: Reply| match r {
        Reply::Array(Some(items)) => items.into_iter().step_by(2).collect::<Vec<_>>(),
        other => panic!("HELLO answered {other:?}"),
    };
    assert_eq!(fields(ours), fields(theirs));
    t.same(&["HGETALL", "h"]);
    t.same(&["GET", "missing"]);
}
