//! `WATCH` and `UNWATCH` against a real `redis-server`: a transaction whose
//! watched key changed — written by another client or by the watcher,
//! expired, flushed, swapped, moved, renamed — answers the null array, and
//! one whose keys did not change runs (skipped where Redis is not
//! installed).

#[allow(dead_code)]
mod common;

use std::thread::sleep;
use std::time::Duration;

use common::twin::Twin;

/// Client 0 runs `MULTI`, `INCR n`, `EXEC` and both must answer alike (the
/// null array if a watched key changed, else the increment).
fn transaction(t: &mut Twin) {
    t.same(&["MULTI"]);
    t.same(&["INCR", "n"]);
    t.same(&["EXEC"]);
}

#[test]
fn a_write_by_another_client_fails_the_transaction() {
    let Some(mut t) = Twin::start() else { return };
    let other = t.client();
    t.same(&["SET", "k", "1"]);
    t.same(&["WATCH", "k"]);
    t.same_from(other, &["SET", "k", "2"]);
    transaction(&mut t);
    // The failed EXEC unwatched: the next transaction runs.
    t.same_from(other, &["SET", "k", "3"]);
    transaction(&mut t);
    // Untouched watched keys let it run.
    t.same(&["WATCH", "k", "nokey", "k"]);
    t.same_from(other, &["SET", "unrelated", "x"]);
    transaction(&mut t);
    // Any type, any write.
    for (setup, write) in [
        (&["HSET", "h", "f", "v"][..], &["HSET", "h", "f", "w"][..]),
        (&["HSET", "h", "f", "v"], &["HDEL", "h", "f"]),
        (&["ZADD", "z", "1", "m"], &["ZADD", "z", "2", "m"]),
        (&["ZADD", "z", "1", "m"], &["ZREM", "z", "m"]),
        (&["SET", "e", "v"], &["EXPIRE", "e", "100"]),
        (&["SET", "e", "v", "EX", "100"], &["PERSIST", "e"]),
        (&["SET", "e", "v"], &["APPEND", "e", "x"]),
        (&["SET", "e", "1"], &["INCR", "e"]),
        (&["SET", "e", "v"], &["DEL", "e"]),
        (&["SET", "e", "v"], &["UNLINK", "e"]),
        (&["SET", "e", "v"], &["GETDEL", "e"]),
        (&["DEL", "e"], &["SET", "e", "v"]),
        (&["DEL", "e"], &["MSET", "x", "1", "e", "2"]),
    ] {
        t.same_from(other, setup);
        t.same(&["WATCH", setup[1]]);
        t.same_from(other, write);
        transaction(&mut t);
    }
}

#[test]
fn writes_that_change_nothing_leave_the_transaction_alone() {
    let Some(mut t) = Twin::start() else { return };
    let other = t.client();
    t.same(&["SET", "k", "v"]);
    t.same(&["HSET", "h", "f", "v"]);
    t.same(&["ZADD", "z", "1", "m"]);
    for write in [
        &["DEL", "nokey"][..],
        &["SET", "k", "w", "NX"],
        &["SET", "nokey", "w", "XX"],
        &["SETNX", "k", "w"],
        &["EXPIRE", "nokey", "100"],
        &["EXPIRE", "k", "100", "XX"],
        &["PERSIST", "k"],
        &["GETEX", "k", "PERSIST"],
        &["GETEX", "k"],
        &["INCR", "k"],
        &["HSET", "k", "f", "v"],
        &["HDEL", "h", "nofield"],
        &["HSETNX", "h", "f", "other"],
        &["ZADD", "z", "1", "m"],
        &["ZADD", "z", "NX", "5", "m"],
        &["ZREM", "z", "nomember"],
        &["RENAMENX", "nokey", "k"],
        &["GET", "k"],
    ] {
        t.same(&["WATCH", "k", "h", "z", "nokey"]);
        t.same_from(other, write);
        transaction(&mut t);
    }
}

#[test]
fn the_watcher_itself_and_unwatch() {
    let Some(mut t) = Twin::start() else { return };
    let other = t.client();
    t.same(&["WATCH", "k"]);
    t.same(&["SET", "k", "mine"]);
    transaction(&mut t);
    // UNWATCH forgets the keys, and a dirty state too.
    t.same(&["WATCH", "k"]);
    t.same(&["UNWATCH"]);
    t.same_from(other, &["SET", "k", "theirs"]);
    transaction(&mut t);
    t.same(&["WATCH", "k"]);
    t.same_from(other, &["SET", "k", "again"]);
    t.same(&["UNWATCH"]);
    transaction(&mut t);
    // DISCARD forgets them.
    t.same(&["WATCH", "k"]);
    t.same(&["MULTI"]);
    t.same(&["DISCARD"]);
    t.same_from(other, &["SET", "k", "later"]);
    transaction(&mut t);
    // So does a successful EXEC.
    t.same(&["WATCH", "k"]);
    transaction(&mut t);
    t.same_from(other, &["SET", "k", "after"]);
    transaction(&mut t);
    // Once dirty, watching more changes nothing.
    t.same(&["WATCH", "k"]);
    t.same_from(other, &["SET", "k", "x"]);
    t.same(&["WATCH", "fresh"]);
    transaction(&mut t);
    // A transaction that both failed to queue and lost its watch aborts.
    t.same(&["WATCH", "k"]);
    t.same_from(other, &["SET", "k", "y"]);
    t.same(&["MULTI"]);
    t.same(&["NOSUCHCOMMAND"]);
    t.same(&["EXEC"]);
    transaction(&mut t);
}

#[test]
fn writes_of_lists_sets_and_ranges_that_change_nothing() {
    let Some(mut t) = Twin::start() else { return };
    let other = t.client();
    t.same(&["SET", "k", "v"]);
    t.same(&["RPUSH", "l", "a", "b"]);
    t.same(&["SADD", "s", "a", "b"]);
    t.same(&["ZADD", "z", "1", "m", "2", "n"]);
    for write in [
        &["LREM", "l", "0", "absent"][..],
        &["LINSERT", "l", "BEFORE", "absent", "v"],
        &["LPOP", "l", "0"],
        &["LPUSHX", "nokey", "v"],
        &["SADD", "s", "a"],
        &["SREM", "s", "absent"],
        &["SMOVE", "s", "s2", "absent"],
        &["SMOVE", "s", "s", "a"],
        &["SPOP", "s", "0"],
        &["SINTERSTORE", "nokey", "s", "nokey2"],
        &["ZREMRANGEBYSCORE", "z", "5", "10"],
        &["ZREMRANGEBYSCORE", "z", "(1", "0"],
        &["ZREMRANGEBYRANK", "z", "5", "10"],
        &["ZREMRANGEBYLEX", "z", "[x", "[y"],
        &["ZPOPMIN", "z", "0"],
        &["ZRANGESTORE", "nokey", "z", "5", "10"],
        &["ZUNIONSTORE", "nokey", "1", "nokey2"],
        &["SETRANGE", "k", "0", ""],
        &["SETRANGE", "nokey", "3", ""],
        &["EXPIRE", "k", "100", "GT"],
        &["RENAME", "k", "k"],
        &["RENAMENX", "k", "k"],
        &["SWAPDB", "0", "0"],
        &["GETDEL", "nokey"],
        &["ZADD", "z", "XX", "5", "absent"],
        &["ZADD", "z", "GT", "0", "n"],
        &["LMOVE", "nokey", "l", "LEFT", "LEFT"],
        &["COPY", "nokey", "x"],
        &["MSETNX", "k", "x"],
        &["ZINTERSTORE", "nokey", "1", "nokey2"],
        &["SDIFFSTORE", "nokey", "nokey2"],
    ] {
        t.same(&["WATCH", "k", "l", "s", "z", "nokey"]);
        t.same_from(other, write);
        transaction(&mut t);
    }
}

#[test]
fn watch_errors() {
    let Some(mut t) = Twin::start() else { return };
    let other = t.client();
    t.same(&["WATCH"]);
    t.same(&["UNWATCH", "x"]);
    // Inside MULTI, WATCH is refused without aborting; without keys it is
    // an arity error that does abort.
    t.same(&["MULTI"]);
    t.same(&["WATCH", "k"]);
    t.same(&["SET", "k", "1"]);
    t.same(&["EXEC"]);
    // The refused WATCH did not watch.
    t.same_from(other, &["SET", "k", "2"]);
    transaction(&mut t);
    t.same(&["MULTI"]);
    t.same(&["WATCH"]);
    t.same(&["EXEC"]);
    // UNWATCH inside MULTI is queued.
    t.same(&["WATCH", "k"]);
    t.same(&["MULTI"]);
    t.same(&["UNWATCH"]);
    t.same(&["EXEC"]);
    // EXEC with arguments aborts, inside a transaction or not, and forgets
    // the watches.
    t.same(&["WATCH", "k"]);
    t.same(&["MULTI"]);
    t.same(&["INCR", "n"]);
    t.same(&["EXEC", "now"]);
    t.same(&["GET", "n"]);
    t.same(&["WATCH", "k"]);
    t.same(&["EXEC", "x"]);
    t.same_from(other, &["SET", "k", "3"]);
    transaction(&mut t);
}

#[test]
fn expiry_after_watch_fails_the_transaction() {
    let Some(mut t) = Twin::start() else { return };
    // Still present (not yet reclaimed) at EXEC, but past its deadline.
    t.same(&["SET", "k", "v", "PX", "100"]);
    t.same(&["WATCH", "k"]);
    sleep(Duration::from_millis(200));
    transaction(&mut t);
    // Reclaimed by an access in between.
    t.same(&["SET", "k", "v", "PX", "100"]);
    t.same(&["WATCH", "k"]);
    sleep(Duration::from_millis(200));
    t.same(&["GET", "k"]);
    transaction(&mut t);
    // Already expired when watched: it was absent all along.
    t.same(&["SET", "k", "v", "PX", "20"]);
    sleep(Duration::from_millis(100));
    t.same(&["WATCH", "k"]);
    transaction(&mut t);
    t.same(&["SET", "k", "v", "PX", "20"]);
    sleep(Duration::from_millis(100));
    t.same(&["WATCH", "k"]);
    t.same(&["GET", "k"]);
    transaction(&mut t);
    // ... until something writes it.
    t.same(&["SET", "k", "v", "PX", "20"]);
    sleep(Duration::from_millis(100));
    t.same(&["WATCH", "k"]);
    t.same(&["SET", "k", "new"]);
    transaction(&mut t);
}

#[test]
fn whole_database_commands_touch_the_keys_they_held() {
    let Some(mut t) = Twin::start() else { return };
    let other = t.client();
    // FLUSHDB: a watched key that existed.
    t.same(&["SET", "k", "v"]);
    t.same(&["WATCH", "k"]);
    t.same_from(other, &["FLUSHDB"]);
    transaction(&mut t);
    // ... but not one that did not.
    t.same(&["WATCH", "k"]);
    t.same_from(other, &["FLUSHDB"]);
    transaction(&mut t);
    // FLUSHALL from another database.
    t.same(&["SET", "k", "v"]);
    t.same(&["WATCH", "k"]);
    t.same_from(other, &["SELECT", "9"]);
    t.same_from(other, &["FLUSHALL"]);
    transaction(&mut t);
    // FLUSHDB of another database leaves ours alone.
    t.same(&["SET", "k", "v"]);
    t.same(&["WATCH", "k"]);
    t.same_from(other, &["SET", "k", "in9"]);
    t.same_from(other, &["FLUSHDB"]);
    transaction(&mut t);
    // Watches are per database: a write to the same name elsewhere is
    // another key.
    t.same(&["WATCH", "k"]);
    t.same_from(other, &["SET", "k", "in9"]);
    transaction(&mut t);
    // SWAPDB: a watched key either database holds.
    t.same(&["WATCH", "k"]);
    t.same_from(other, &["SWAPDB", "0", "9"]);
    transaction(&mut t);
    t.same(&["WATCH", "absent"]);
    t.same_from(other, &["SWAPDB", "0", "9"]);
    transaction(&mut t);
    t.same_from(other, &["FLUSHALL"]);
    t.same_from(other, &["SET", "only9", "x"]);
    t.same(&["WATCH", "only9"]);
    t.same_from(other, &["SWAPDB", "9", "0"]);
    transaction(&mut t);
}

#[test]
fn move_rename_and_copy_touch_both_ends() {
    let Some(mut t) = Twin::start() else { return };
    let other = t.client();
    // MOVE: the source key...
    t.same(&["SET", "k", "v"]);
    t.same(&["WATCH", "k"]);
    t.same_from(other, &["MOVE", "k", "3"]);
    transaction(&mut t);
    // ... and the destination database's.
    t.same(&["WATCH", "k"]);
    t.same_from(other, &["SELECT", "3"]);
    t.same_from(other, &["MOVE", "k", "0"]);
    t.same_from(other, &["SELECT", "0"]);
    transaction(&mut t);
    // A refused MOVE changes nothing.
    t.same_from(other, &["SET", "m", "x"]);
    t.same_from(other, &["SELECT", "5"]);
    t.same_from(other, &["SET", "m", "y"]);
    t.same_from(other, &["SELECT", "0"]);
    t.same(&["WATCH", "m"]);
    t.same_from(other, &["MOVE", "m", "5"]);
    transaction(&mut t);
    // RENAME: both names.
    for watched in ["a", "b"] {
        t.same_from(other, &["SET", "a", "1"]);
        t.same(&["WATCH", watched]);
        t.same_from(other, &["RENAME", "a", "b"]);
        transaction(&mut t);
    }
    // COPY: the destination, here or in another database.
    t.same(&["WATCH", "c"]);
    t.same_from(other, &["COPY", "b", "c"]);
    transaction(&mut t);
    t.same(&["WATCH", "c"]);
    t.same_from(other, &["COPY", "b", "c"]);
    transaction(&mut t);
    t.same(&["WATCH", "c"]);
    t.same_from(other, &["COPY", "b", "c", "REPLACE"]);
    transaction(&mut t);
    t.same(&["SELECT", "6"]);
    t.same(&["WATCH", "b"]);
    t.same(&["SELECT", "0"]);
    t.same_from(other, &["COPY", "b", "b", "DB", "6"]);
    transaction(&mut t);
    // Copying does not change the source.
    t.same(&["WATCH", "b"]);
    t.same_from(other, &["COPY", "b", "d"]);
    transaction(&mut t);
}

#[test]
fn a_failed_exec_answers_resp3_null() {
    let Some(mut t) = Twin::start() else { return };
    let other = t.client();
    t.both(0, &["HELLO", "3"]);
    t.same(&["WATCH", "k"]);
    t.same_from(other, &["SET", "k", "v"]);
    transaction(&mut t);
    t.same(&["WATCH", "k"]);
    transaction(&mut t);
}

#[test]
fn lists_and_sets_touch_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    let other = t.client();
    t.same(&["SADD", "s", "a", "b"]);
    t.same(&["RPUSH", "l", "a", "b"]);
    // Each write either changes the watched key (EXEC answers the null
    // array) or not (EXEC runs): SADD of a member already there, SREM or
    // LREM of what is absent, a pivot not found change nothing.
    for (watched, write) in [
        ("s", &["SADD", "s", "a"][..]),
        ("s", &["SADD", "s", "c"]),
        ("s", &["SREM", "s", "zz"]),
        ("s", &["SREM", "s", "c"]),
        ("s", &["SMOVE", "s", "s", "a"]),
        ("s", &["SMOVE", "s", "t", "zz"]),
        ("t", &["SMOVE", "s", "t", "a"]),
        ("t", &["SINTERSTORE", "t", "s", "nokey"]),
        ("l", &["LREM", "l", "0", "zz"]),
        ("l", &["LINSERT", "l", "BEFORE", "zz", "x"]),
        ("l", &["LINSERT", "l", "BEFORE", "a", "x"]),
        ("l", &["LPUSHX", "nokey", "x"]),
        ("l", &["LPUSH", "l", "y"]),
        ("l", &["LTRIM", "l", "0", "-1"]),
    ] {
        t.same(&["WATCH", watched]);
        t.same_from(other, write);
        transaction(&mut t);
    }
}

#[test]
fn serving_a_blocked_move_touches_its_destination() {
    let Some(mut t) = Twin::start() else { return };
    let mover = t.client();
    let pusher = t.client();
    t.same(&["WATCH", "dst"]);
    t.silent(mover, &["BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"]);
    t.same_from(pusher, &["RPUSH", "src", "x"]);
    t.same_arrivals(mover);
    transaction(&mut t);
    t.same(&["LRANGE", "dst", "0", "-1"]);
}

#[test]
fn reset_forgets_the_watched_keys() {
    let Some(mut t) = Twin::start() else { return };
    let other = t.client();
    t.same(&["WATCH", "k"]);
    t.same(&["RESET"]);
    t.same_from(other, &["SET", "k", "v"]);
    transaction(&mut t);
}
