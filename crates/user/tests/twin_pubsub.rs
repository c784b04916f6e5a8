//! Publish/subscribe against a real `redis-server`: two clients of each,
//! one subscribing and one publishing, the same bytes for every reply and
//! every message that arrives (skipped where Redis is not installed).

#[allow(dead_code)]
mod common;

use common::twin::Twin;
use granule_user::resp::Reply;

/// Switches client `c` of both servers to RESP3 (the `HELLO` replies differ
/// in version and id by design).
fn resp3(t: &mut Twin, c: usize) {
    let (ours, theirs) = t.both(c, &["HELLO", "3"]);
    assert!(matches!((ours, theirs), (Reply::Array(Some(_)), Reply::Array(Some(_)))));
}

#[test]
fn messages_reach_channel_subscribers_in_resp2() {
    let Some(mut t) = Twin::start() else { return };
    let sub = t.client();
    t.same_from(sub, &["SUBSCRIBE", "news", "sport"]);
    t.same_from(sub, &["SUBSCRIBE", "news"]);
    t.same(&["PUBLISH", "news", "hello"]);
    t.same_arrivals(sub);
    t.same(&["PUBLISH", "sport", ""]);
    t.same(&["PUBLISH", "weather", "rain"]);
    t.same(&["PUBLISH", "NEWS", "case matters"]);
    t.same_arrivals(sub);
    t.same(&["PUBSUB", "NUMSUB", "news", "sport", "weather"]);
    t.same(&["PUBSUB", "NUMSUB"]);
    t.same_unordered(&["PUBSUB", "CHANNELS"]);
    t.same_unordered(&["PUBSUB", "CHANNELS", "n*"]);
    t.same_unordered(&["PUBSUB", "CHANNELS", "N*"]);
    t.same(&["PUBSUB", "NUMPAT"]);
    // A second subscriber: one message each, counted twice.
    let other = t.client();
    t.same_from(other, &["SUBSCRIBE", "news"]);
    t.same(&["PUBLISH", "news", "both"]);
    t.same_arrivals(sub);
    t.same_arrivals(other);
    t.same(&["PUBSUB", "NUMSUB", "news"]);
    t.same_from(sub, &["UNSUBSCRIBE", "news", "never"]);
    t.same(&["PUBLISH", "news", "one left"]);
    t.same_arrivals(other);
    t.same_arrivals(sub);
    t.same_from(sub, &["UNSUBSCRIBE"]);
    t.same_from(sub, &["UNSUBSCRIBE"]);
    t.same_from(sub, &["PUNSUBSCRIBE"]);
    t.same_from(sub, &["GET", "k"]);
    t.same(&["PUBSUB", "NUMSUB", "news", "sport"]);
}

#[test]
fn the_subscribed_context_limits_resp2_clients() {
    let Some(mut t) = Twin::start() else { return };
    let sub = t.client();
    t.same_from(sub, &["SUBSCRIBE", "a"]);
    for command in [
        &["GET", "k"][..],
        &["SET", "k", "v"],
        &["PUBLISH", "a", "x"],
        &["CLIENT", "LIST"],
        &["CONFIG", "GET", "save"],
        &["MULTI"],
        &["EXEC"],
        &["HELLO", "3"],
        &["PING"],
        &["PING", "hi"],
        &["PING", "a", "b"],
        &["GET"],
        &["NOSUCH", "x"],
        &["CLIENT", "NOSUCH"],
        &["PSUBSCRIBE", "b*"],
        &["PUNSUBSCRIBE", "b*"],
        &["SSUBSCRIBE", "s"],
        &["SUNSUBSCRIBE", "s"],
    ] {
        t.same_from(sub, command);
    }
    t.same_from(sub, &["UNSUBSCRIBE", "a"]);
    t.same_from(sub, &["PING"]);
    t.same_from(sub, &["SET", "k", "v"]);
}

#[test]
fn patterns_match_with_case_and_deliver_pmessages() {
    let Some(mut t) = Twin::start() else { return };
    let sub = t.client();
    t.same_from(sub, &["PSUBSCRIBE", "n*", "h?llo", "[abc]x"]);
    t.same_from(sub, &["PSUBSCRIBE", "n*"]);
    for channel in ["news", "hello", "Hello", "bx", "dx", "n"] {
        t.same(&["PUBLISH", channel, "m"]);
        t.same_arrivals(sub);
    }
    t.same(&["PUBSUB", "NUMPAT"]);
    // A channel subscription and a pattern: the channel's message first.
    t.same_from(sub, &["SUBSCRIBE", "news"]);
    t.same(&["PUBLISH", "news", "twice"]);
    t.same_arrivals(sub);
    t.same_from(sub, &["PUNSUBSCRIBE", "n*", "zz"]);
    t.same(&["PUBLISH", "news", "once"]);
    t.same_arrivals(sub);
    t.same_from(sub, &["UNSUBSCRIBE"]);
    t.same_unordered(&["PUBSUB", "CHANNELS"]);
    t.same(&["PUBSUB", "NUMPAT"]);
}

#[test]
fn resp3_clients_get_pushes_and_keep_every_command() {
    let Some(mut t) = Twin::start() else { return };
    let sub = t.client();
    resp3(&mut t, sub);
    t.same_from(sub, &["SUBSCRIBE", "a"]);
    t.same_from(sub, &["PSUBSCRIBE", "a*"]);
    t.same_from(sub, &["GET", "k"]);
    t.same_from(sub, &["PING"]);
    t.same(&["PUBLISH", "a", "to resp3"]);
    t.same_arrivals(sub);
    // Its own messages come before the count.
    t.same_from(sub, &["PUBLISH", "a", "mine"]);
    t.same_from(sub, &["PUBLISH", "ab", "mine too"]);
    // A RESP2 subscriber of the same channel gets RESP2 arrays.
    let old = t.client();
    t.same_from(old, &["SUBSCRIBE", "a"]);
    t.same_from(sub, &["PUBLISH", "a", "mixed"]);
    t.same_arrivals(old);
    t.same_from(sub, &["UNSUBSCRIBE"]);
    t.same_from(sub, &["UNSUBSCRIBE"]);
    t.same_from(sub, &["PUNSUBSCRIBE", "a*"]);
    t.same_from(sub, &["PUNSUBSCRIBE"]);
}

#[test]
fn shard_channels_are_a_namespace_of_their_own() {
    let Some(mut t) = Twin::start() else { return };
    let sub = t.client();
    t.same_from(sub, &["SSUBSCRIBE", "s1", "s2"]);
    t.same_from(sub, &["PSUBSCRIBE", "s*"]);
    t.same(&["SPUBLISH", "s1", "sharded"]);
    t.same_arrivals(sub);
    t.same(&["PUBLISH", "s1", "global"]);
    t.same_arrivals(sub);
    t.same(&["PUBSUB", "SHARDNUMSUB", "s1", "s3"]);
    t.same_unordered(&["PUBSUB", "SHARDCHANNELS"]);
    t.same_unordered(&["PUBSUB", "SHARDCHANNELS", "*2"]);
    t.same(&["PUBSUB", "NUMSUB", "s1"]);
    t.same_from(sub, &["SUNSUBSCRIBE", "s1"]);
    t.same_from(sub, &["PUNSUBSCRIBE"]);
    t.same_from(sub, &["SUNSUBSCRIBE"]);
    t.same_from(sub, &["SUNSUBSCRIBE"]);
    t.same_from(sub, &["GET", "k"]);
}

#[test]
fn transactions_and_reset_end_subscriptions_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    let sub = t.client();
    t.same_from(sub, &["MULTI"]);
    t.same_from(sub, &["SUBSCRIBE", "a"]);
    t.same_from(sub, &["SSUBSCRIBE", "s"]);
    t.same_from(sub, &["EXEC"]);
    t.same(&["PUBLISH", "a", "after exec"]);
    t.same_arrivals(sub);
    t.same_from(sub, &["RESET"]);
    t.same_from(sub, &["GET", "k"]);
    t.same(&["PUBLISH", "a", "nobody"]);
    t.same(&["PUBSUB", "NUMSUB", "a"]);
    // RESET ends a transaction and RESP3.
    resp3(&mut t, sub);
    t.same_from(sub, &["GET", "k"]);
    t.same_from(sub, &["MULTI"]);
    t.same_from(sub, &["SET", "k", "v"]);
    t.same_from(sub, &["RESET"]);
    t.same_from(sub, &["EXEC"]);
    t.same_from(sub, &["GET", "k"]);
    t.same_from(sub, &["RESET", "x"]);
}

#[test]
fn wrong_calls_fail_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    for command in [
        &["SUBSCRIBE"][..],
        &["PSUBSCRIBE"],
        &["SSUBSCRIBE"],
        &["PUBLISH", "a"],
        &["PUBLISH", "a", "b", "c"],
        &["SPUBLISH", "a"],
        &["PUBSUB"],
        &["PUBSUB", "FOO"],
        &["PUBSUB", "NUMPAT", "x"],
        &["PUBSUB", "CHANNELS", "a", "b"],
        &["PUBSUB", "SHARDCHANNELS", "a", "b"],
        &["PUBSUB", "HELP"],
        &["PUBSUB", "HELP", "x"],
        &["PUBSUB", "numpat"],
    ] {
        t.same(command);
    }
}
