//! The set commands against a real `redis-server`: the same requests, the
//! same replies — byte for byte where Redis fixes the order (integer sets
//! come back sorted), as sorted elements where it does not, and by shape
//! (sizes, membership, distinctness) where Redis draws at random.

#[allow(dead_code)]
mod common;

use std::collections::BTreeSet;

use common::twin::Twin;
use granule_user::resp::Reply;

/// The elements of an array reply, as byte strings.
fn elements(reply: &Reply) -> Vec<Vec<u8>> {
    match reply {
        Reply::Array(Some(items)) => items
            .iter()
            .map(|item| match item {
                Reply::Bulk(Some(bytes)) => bytes.clone(),
                other => panic!("not a bulk string: {other:?}"),
            })
            .collect(),
        other => panic!("not an array: {other:?}"),
    }
}

/// `words` as owned byte strings.
fn set_of(words: &[&str]) -> BTreeSet<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

/// Sends `SADD key members...` to both.
fn sadd(t: &mut Twin, key: &str, members: &[String]) {
    let mut args = vec!["SADD", key];
    args.extend(members.iter().map(String::as_str));
    t.same(&args);
}

#[test]
fn the_table_describes_set_commands_as_redis_does() {
    let Some(mut t) = Twin::start() else { return };
    for name in [
        "sadd",
        "srem",
        "spop",
        "srandmember",
        "smembers",
        "sismember",
        "smismember",
        "scard",
        "sinter",
        "sunion",
        "sdiff",
        "sinterstore",
        "sunionstore",
        "sdiffstore",
        "sintercard",
        "smove",
    ] {
        t.same_command_info(name);
    }
}

#[test]
fn adding_removing_and_membership() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["SADD", "s", "3", "1", "2", "1"]);
    t.same(&["SADD", "s", "3", "4"]);
    t.same(&["SMEMBERS", "s"]);
    t.same(&["SCARD", "s"]);
    t.same(&["TYPE", "s"]);
    t.same(&["SISMEMBER", "s", "2"]);
    t.same(&["SISMEMBER", "s", "02"]);
    t.same(&["SISMEMBER", "s", "x"]);
    t.same(&["SISMEMBER", "nokey", "x"]);
    t.same(&["SMISMEMBER", "s", "1", "x", "4", "1"]);
    t.same(&["SMISMEMBER", "nokey", "a", "b"]);
    // A string member turns the integer set into a table.
    t.same(&["SADD", "s", "a", "", "1"]);
    t.same_unordered(&["SMEMBERS", "s"]);
    t.same(&["SISMEMBER", "s", ""]);
    t.same(&["SISMEMBER", "s", "3"]);
    t.same(&["SREM", "s", "1", "a", "nope", "1"]);
    t.same(&["SCARD", "s"]);
    t.same(&["SREM", "nokey", "a"]);
    // Emptied: deleted.
    t.same(&["SREM", "s", "2", "3", "4", "", "x"]);
    t.same(&["EXISTS", "s"]);
    t.same(&["SMEMBERS", "s"]);
    t.same(&["SCARD", "s"]);
    // Strings that are not integers as Redis reads them.
    t.same(&["SADD", "n", "007", "+1", "-0", "9223372036854775808", "-9223372036854775808", " 1"]);
    t.same_unordered(&["SMEMBERS", "n"]);
    t.same(&["SISMEMBER", "n", "7"]);
    t.same(&["SISMEMBER", "n", "-9223372036854775808"]);
    // Integer extremes stay an integer set, in order.
    t.same(&["SADD", "i", "9223372036854775807", "-9223372036854775808", "0", "-1"]);
    t.same(&["SMEMBERS", "i"]);
    // Past 512 integers a set becomes a table.
    let many: Vec<String> = (0..600).map(|i| i.to_string()).collect();
    sadd(&mut t, "big", &many[..512]);
    t.same(&["SMEMBERS", "big"]);
    sadd(&mut t, "big", &many[500..]);
    t.same(&["SCARD", "big"]);
    t.same_unordered(&["SMEMBERS", "big"]);
    t.same(&["SISMEMBER", "big", "599"]);
}

#[test]
fn wrong_arguments_and_types_answer_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["SET", "str", "v"]);
    for command in [
        &["SADD", "s"][..],
        &["SREM", "s"],
        &["SCARD"],
        &["SCARD", "a", "b"],
        &["SISMEMBER", "s"],
        &["SMISMEMBER", "s"],
        &["SMEMBERS"],
        &["SMEMBERS", "a", "b"],
        &["SPOP"],
        &["SRANDMEMBER"],
        &["SINTER"],
        &["SUNION"],
        &["SDIFF"],
        &["SINTERSTORE", "d"],
        &["SUNIONSTORE", "d"],
        &["SDIFFSTORE", "d"],
        &["SINTERCARD", "1"],
        &["SMOVE", "a", "b"],
        &["SADD", "str", "a"],
        &["SREM", "str", "a"],
        &["SCARD", "str"],
        &["SISMEMBER", "str", "a"],
        &["SMISMEMBER", "str", "a"],
        &["SMEMBERS", "str"],
        &["SPOP", "str"],
        &["SPOP", "str", "1"],
        &["SPOP", "str", "0"],
        &["SRANDMEMBER", "str"],
        &["SRANDMEMBER", "str", "1"],
        &["SINTER", "nokey", "str"],
        &["SUNION", "nokey", "str"],
        &["SDIFF", "nokey", "str"],
        &["SINTERSTORE", "d", "nokey", "str"],
        &["SUNIONSTORE", "d", "str"],
        &["SDIFFSTORE", "d", "str"],
        &["SINTERCARD", "2", "nokey", "str"],
        &["SMOVE", "str", "d", "a"],
    ] {
        t.same(command);
    }
    t.same(&["EXISTS", "d"]);
}

#[test]
fn intersections_unions_and_differences() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["SADD", "a", "1", "2", "3", "4", "5"]);
    t.same(&["SADD", "b", "4", "5", "6"]);
    t.same(&["SADD", "c", "5", "4", "x"]);
    t.same(&["SADD", "d", "x", "y", "z", "5"]);
    // Integer results come back sorted, as from Redis.
    for command in [
        &["SINTER", "a", "b"][..],
        &["SINTER", "b", "a", "a"],
        &["SINTER", "a", "nokey"],
        &["SINTER", "nokey"],
        &["SUNION", "a", "b"],
        &["SUNION", "b", "nokey", "a"],
        &["SUNION", "nokey"],
        &["SDIFF", "a", "b"],
        &["SDIFF", "a", "b", "c"],
        &["SDIFF", "a", "a"],
        &["SDIFF", "a", "b", "a"],
        &["SDIFF", "nokey", "a"],
        &["SDIFF", "a", "nokey"],
    ] {
        t.same(command);
    }
    for command in [
        &["SINTER", "c", "d"][..],
        &["SINTER", "a", "c"],
        &["SUNION", "a", "c", "d"],
        &["SDIFF", "d", "a"],
        &["SDIFF", "c", "a"],
    ] {
        t.same_unordered(command);
    }
    // The STORE forms replace any value and deadline; an empty result deletes.
    t.same(&["SET", "dst", "v", "EX", "100"]);
    t.same(&["SINTERSTORE", "dst", "a", "b"]);
    t.same(&["TYPE", "dst"]);
    t.same(&["TTL", "dst"]);
    t.same(&["SMEMBERS", "dst"]);
    t.same(&["SUNIONSTORE", "dst", "a", "c"]);
    t.same_unordered(&["SMEMBERS", "dst"]);
    t.same(&["SDIFFSTORE", "dst", "a", "b", "c"]);
    t.same(&["SMEMBERS", "dst"]);
    t.same(&["SDIFFSTORE", "dst", "dst", "a"]);
    t.same(&["EXISTS", "dst"]);
    t.same(&["SUNIONSTORE", "dst", "nokey"]);
    t.same(&["SINTERSTORE", "a2", "a", "a"]);
    t.same(&["SINTERSTORE", "a2", "a", "nokey"]);
    t.same(&["EXISTS", "a2"]);
    // A source may be the destination.
    t.same(&["SUNIONSTORE", "a", "a", "b"]);
    t.same(&["SMEMBERS", "a"]);
    t.same(&["SINTERSTORE", "b", "a", "b"]);
    t.same(&["SMEMBERS", "b"]);
}

#[test]
fn sintercard_counts_with_a_limit() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["SADD", "a", "1", "2", "3", "4", "5", "x"]);
    t.same(&["SADD", "b", "2", "3", "4", "5", "x", "y"]);
    for command in [
        &["SINTERCARD", "2", "a", "b"][..],
        &["SINTERCARD", "1", "a"],
        &["SINTERCARD", "2", "a", "b", "LIMIT", "0"],
        &["SINTERCARD", "2", "a", "b", "limit", "3"],
        &["SINTERCARD", "2", "a", "b", "LIMIT", "100"],
        &["SINTERCARD", "2", "a", "b", "LIMIT", "1", "LIMIT", "2"],
        &["SINTERCARD", "2", "a", "nokey"],
        &["SINTERCARD", "1", "a", "b"],
        &["SINTERCARD", "0", "a"],
        &["SINTERCARD", "-1", "a"],
        &["SINTERCARD", "x", "a"],
        &["SINTERCARD", "3", "a", "b"],
        &["SINTERCARD", "99999999999999999999", "a"],
        &["SINTERCARD", "2", "a", "b", "LIMIT"],
        &["SINTERCARD", "2", "a", "b", "LIMIT", "-1"],
        &["SINTERCARD", "2", "a", "b", "LIMIT", "x"],
        &["SINTERCARD", "2", "a", "b", "FOO", "1"],
        &["SINTERCARD", "1", "a", "LIMIT", "1", "extra"],
    ] {
        t.same(command);
    }
}

#[test]
fn smove_moves_one_member() {
    let Some(mut t) = Twin::start() else { return };
    t.same(&["SADD", "src", "a", "b", "1"]);
    t.same(&["SET", "str", "v"]);
    for command in [
        &["SMOVE", "src", "dst", "a"][..],
        &["SMOVE", "src", "dst", "a"],
        &["SMOVE", "src", "dst", "nope"],
        &["SMOVE", "nokey", "dst", "a"],
        &["SMOVE", "nokey", "str", "a"],
        &["SMOVE", "src", "str", "nope"],
        &["SMOVE", "str", "dst", "a"],
        &["SMOVE", "src", "src", "b"],
        &["SMOVE", "src", "src", "nope"],
        &["SMOVE", "src", "ints", "1"],
        &["TYPE", "ints"],
        &["SMEMBERS", "ints"],
        &["SMOVE", "src", "dst", "b"],
        &["EXISTS", "src"],
        &["SCARD", "dst"],
        &["SISMEMBER", "dst", "b"],
    ] {
        t.same(command);
    }
}

#[test]
fn spop_removes_random_members() {
    let Some(mut t) = Twin::start() else { return };
    let members = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
    let mut args = vec!["SADD", "s"];
    args.extend(members);
    t.same(&args);
    let all = set_of(&members);
    // One member: a member of the set, gone afterwards on both sides.
    let (ours, theirs) = t.both(0, &["SPOP", "s"]);
    for reply in [&ours, &theirs] {
        let Reply::Bulk(Some(member)) = reply else { panic!("SPOP answered {reply:?}") };
        assert!(all.contains(member));
    }
    t.same(&["SCARD", "s"]);
    // A few members (drawn one by one), then most (the rest kept).
    for count in ["3", "5"] {
        let (ours, theirs) = t.both(0, &["SPOP", "s", count]);
        for reply in [&ours, &theirs] {
            let popped = elements(reply);
            let distinct: BTreeSet<_> = popped.iter().cloned().collect();
            assert_eq!(popped.len(), count.parse::<usize>().unwrap());
            assert_eq!(distinct.len(), popped.len());
            assert!(distinct.is_subset(&all));
        }
        t.same(&["SCARD", "s"]);
    }
    t.same(&["SPOP", "s", "0"]);
    // Asking for more than there is empties the set.
    let (ours, theirs) = t.both(0, &["SPOP", "s", "10"]);
    assert_eq!(elements(&ours).len(), 1);
    assert_eq!(elements(&theirs).len(), 1);
    t.same(&["EXISTS", "s"]);
    // An integer set taken whole comes back sorted.
    t.same(&["SADD", "i", "5", "3", "9", "-1"]);
    t.same(&["SPOP", "i", "100"]);
    // So does a table that holds only integers, as Redis copies it.
    t.same(&["SADD", "t", "x", "30", "20", "10"]);
    t.same(&["SREM", "t", "x"]);
    t.same(&["SPOP", "t", "3"]);
    for command in [
        &["SPOP", "nokey"][..],
        &["SPOP", "nokey", "3"],
        &["SPOP", "nokey", "0"],
        &["SPOP", "nokey", "-1"],
        &["SPOP", "s", "-1"],
        &["SPOP", "s", "abc"],
        &["SPOP", "s", "1", "2"],
        &["SPOP", "s", "9223372036854775808"],
    ] {
        t.same(command);
    }
}

#[test]
fn srandmember_draws_without_removing() {
    let Some(mut t) = Twin::start() else { return };
    let members = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
    let mut args = vec!["SADD", "s"];
    args.extend(members);
    t.same(&args);
    let all = set_of(&members);
    let (ours, theirs) = t.both(0, &["SRANDMEMBER", "s"]);
    for reply in [&ours, &theirs] {
        let Reply::Bulk(Some(member)) = reply else { panic!("SRANDMEMBER answered {reply:?}") };
        assert!(all.contains(member));
    }
    // Distinct members: few, most, all.
    for (count, expected) in [("1", 1), ("3", 3), ("9", 9), ("10", 10), ("100", 10)] {
        let (ours, theirs) = t.both(0, &["SRANDMEMBER", "s", count]);
        for reply in [&ours, &theirs] {
            let drawn = elements(reply);
            let distinct: BTreeSet<_> = drawn.iter().cloned().collect();
            assert_eq!(drawn.len(), expected);
            assert_eq!(distinct.len(), expected);
            assert!(distinct.is_subset(&all));
        }
    }
    // A negative count draws with repeats.
    let (ours, theirs) = t.both(0, &["SRANDMEMBER", "s", "-25"]);
    for reply in [&ours, &theirs] {
        let drawn = elements(reply);
        assert_eq!(drawn.len(), 25);
        assert!(drawn.iter().all(|m| all.contains(m)));
    }
    t.same(&["SCARD", "s"]);
    // Every member of an integer set, in order.
    t.same(&["SADD", "i", "5", "3", "9", "-1"]);
    t.same(&["SRANDMEMBER", "i", "4"]);
    t.same(&["SRANDMEMBER", "i", "100"]);
    t.same(&["SADD", "one", "x"]);
    t.same(&["SRANDMEMBER", "one", "-3"]);
    t.same(&["SRANDMEMBER", "one", "1"]);
    t.same(&["SRANDMEMBER", "one"]);
    for command in [
        &["SRANDMEMBER", "nokey"][..],
        &["SRANDMEMBER", "nokey", "3"],
        &["SRANDMEMBER", "nokey", "-3"],
        &["SRANDMEMBER", "s", "0"],
        &["SRANDMEMBER", "s", "abc"],
        &["SRANDMEMBER", "s", "1", "2"],
        &["SRANDMEMBER", "s", "-9223372036854775808"],
        &["SRANDMEMBER", "s", "9223372036854775808"],
        &["SRANDMEMBER", "nokey", "-9223372036854775808"],
        &["SRANDMEMBER", "nokey", "x"],
    ] {
        t.same(command);
    }
}

#[test]
fn resp3_clients_get_sets() {
    let Some(mut t) = Twin::start() else { return };
    t.both(0, &["HELLO", "3"]);
    t.same(&["SADD", "i", "3", "1", "2"]);
    t.same(&["SADD", "j", "2", "3", "4"]);
    for command in [
        &["SMEMBERS", "i"][..],
        &["SMEMBERS", "nokey"],
        &["SINTER", "i", "j"],
        &["SINTER", "i", "nokey"],
        &["SUNION", "i", "j"],
        &["SDIFF", "i", "j"],
        &["SDIFF", "nokey"],
        &["SPOP", "nokey"],
        &["SPOP", "nokey", "2"],
        &["SPOP", "i", "0"],
        &["SRANDMEMBER", "nokey"],
        &["SRANDMEMBER", "nokey", "2"],
        &["SRANDMEMBER", "i", "0"],
        &["SRANDMEMBER", "i", "10"],
        &["SMISMEMBER", "i", "1", "7"],
        &["SINTERSTORE", "k", "i", "j"],
        &["SPOP", "i", "10"],
        &["SPOP", "j", "10"],
        &["SCARD", "k"],
    ] {
        t.same(command);
    }
    // A set with random members has the set's type and size.
    t.same(&["SADD", "s", "a", "b", "c", "d"]);
    let (ours, theirs) = t.both(0, &["SPOP", "s", "2"]);
    assert_eq!(elements(&ours).len(), 2);
    assert_eq!(elements(&theirs).len(), 2);
    t.same(&["SCARD", "s"]);
}
