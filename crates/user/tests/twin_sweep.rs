//! Every command granule and a real `redis-server` both serve, called with
//! the same generic arguments — none, keys, values, counts, offsets,
//! options that do not exist — one after another on one connection, so
//! that each command also meets the keys the earlier ones left: every
//! reply the same bytes, every error the same words. The command-by-command
//! twin tests check what each command means; this sweep checks that no
//! command served is left out of them, the arity and syntax errors first.
//!
//! Numbers among the arguments are 0, -1 and 100000, never a small positive
//! count: a deadline of a few milliseconds would pass between the two
//! servers' replies. The commands left out, and those compared as sets or
//! by sign, say why below.

#[allow(dead_code)]
mod common;

use common::compare::Order;
use common::twin::Twin;

/// Commands not swept, and why.
const LEFT_OUT: &[(&str, &str)] = &[
    ("time", "a clock"),
    ("info", "values that differ by design; twin_server.rs compares its fields"),
    ("hello", "server version and client id"),
    ("client|list", "addresses and ids; twin_server.rs"),
    ("client|info", "addresses and ids; twin_server.rs"),
    ("client|id", "ids"),
    ("client|kill", "ids and addresses"),
    ("config|get", "the parameters served differ; twin_server.rs"),
    ("command", "twin_server.rs compares every entry"),
    ("command|info", "twin_server.rs compares every entry"),
    ("command|list", "twin_server.rs"),
    ("command|count", "fewer commands are served"),
    ("command|docs", "answers an empty map (docs/serve.md)"),
    ("command|getkeys", "twin_server.rs sweeps it"),
    ("client|help", "lists only the subcommands served (docs/serve.md)"),
    ("command|help", "lists only the subcommands served (docs/serve.md)"),
    ("config|help", "lists only the subcommands served (docs/serve.md)"),
    ("memory|usage", "counts this store's capacities (docs/serve.md)"),
    ("memory|stats", "the allocator's figures"),
    ("memory|doctor", "the allocator's figures"),
    ("memory|malloc-stats", "the allocator's figures"),
    ("object|encoding", "this store's representations (docs/serve.md)"),
    ("object|idletime", "access times are not kept (docs/serve.md)"),
    ("object|refcount", "values are never shared (docs/serve.md)"),
    ("randomkey", "a random pick"),
    ("srandmember", "a random pick"),
    ("spop", "a random pick, which also changes the set"),
    ("hrandfield", "a random pick"),
    ("zrandmember", "a random pick"),
    ("quit", "closes the connection"),
    ("blpop", "blocks; twin_random.rs"),
    ("brpop", "blocks; twin_random.rs"),
    ("blmove", "blocks; twin_random.rs"),
    ("brpoplpush", "blocks; twin_random.rs"),
    ("subscribe", "enters the subscribed context; twin_random.rs"),
    ("psubscribe", "enters the subscribed context; twin_random.rs"),
    ("ssubscribe", "enters the subscribed context; twin_random.rs"),
    ("script", "scripting is refused (docs/serve.md)"),
    ("function", "scripting is refused (docs/serve.md)"),
    ("eval", "scripting is refused (docs/serve.md)"),
    ("evalsha", "scripting is refused (docs/serve.md)"),
    ("eval_ro", "scripting is refused (docs/serve.md)"),
    ("evalsha_ro", "scripting is refused (docs/serve.md)"),
    ("fcall", "scripting is refused (docs/serve.md)"),
    ("fcall_ro", "scripting is refused (docs/serve.md)"),
];

/// Commands whose elements come in hash-table order: compared as sets.
const UNORDERED: &[&str] = &["keys", "smembers", "sinter", "sunion", "sdiff", "scan", "sscan"];

/// Commands that read a clock: compared by sign.
const CLOCKS: &[&str] = &["ttl", "pttl", "expiretime", "pexpiretime"];

/// The arguments each command is called with, in this order.
const ARGUMENTS: &[&[&str]] = &[
    &[],
    &["a"],
    &["a", "b"],
    &["a", "b", "c"],
    &["a", "0"],
    &["a", "0", "-1"],
    &["a", "100000"],
    &["a", "100000", "b"],
    &["a", "b", "100000"],
    &["x", "0", "100000", "-1"],
    &["a", "x"],
    &["a", "b", "LIMIT", "0", "-1"],
];

/// The arguments of the RESP3 sweep, where what differs is how replies
/// are framed: fewer lists, each meeting a different kind of reply.
const ARGUMENTS_RESP3: &[&[&str]] =
    &[&[], &["a"], &["a", "b"], &["a", "0", "-1"], &["a", "100000", "b"], &["a", "b", "100000"]];

#[test]
fn every_command_both_serve_answers_generic_arguments_as_redis_resp2() {
    sweep(2);
}

#[test]
fn every_command_both_serve_answers_generic_arguments_as_redis_resp3() {
    sweep(3);
}

/// The sweep, on a connection speaking RESP `protocol`.
fn sweep(protocol: u8) {
    let Some(mut t) = Twin::start() else { return };
    t.speak(protocol, &[0]);
    let mut names: Vec<String> =
        t.commands_both_serve().into_iter().filter(|n| !LEFT_OUT.iter().any(|(out, _)| out == n)).collect();
    names.sort();
    assert!(names.len() > 120, "{} commands swept", names.len());
    let mut differences = Vec::new();
    for name in &names {
        let words: Vec<&str> = name.split('|').collect();
        for more in if protocol == 3 { ARGUMENTS_RESP3 } else { ARGUMENTS } {
            let call = [&words[..], more].concat();
            let (ours, theirs) = t.raw(0, &call);
            let order = if UNORDERED.contains(&name.as_str()) {
                Order::Unordered
            } else if CLOCKS.contains(&name.as_str()) {
                Order::Clock
            } else {
                Order::Exact
            };
            let same = order.same(&ours, &theirs);
            if name == "reset" {
                // Back to RESP2: speak the sweep's protocol again.
                t.speak(protocol, &[0]);
            }
            if !same {
                differences.push(format!(
                    "RESP{protocol} {call:?}\n  granule: {}\n  Redis:   {}",
                    String::from_utf8_lossy(&ours).escape_debug(),
                    String::from_utf8_lossy(&theirs).escape_debug()
                ));
            }
        }
    }
    assert!(differences.is_empty(), "{} replies differ:\n{}", differences.len(), differences.join("\n"));
}
