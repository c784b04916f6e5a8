//! The introspection commands against a real `redis-server`: `CLIENT`,
//! `INFO`, `CONFIG`, `COMMAND` and the refused scripting commands. Replies
//! that must match are compared byte for byte; those that carry values
//! that legitimately differ (ids, addresses, buffer sizes, versions, memory)
//! field by field, with those values masked (skipped where Redis is not
//! installed).

#[allow(dead_code)]
mod common;

use std::collections::BTreeMap;

use common::twin::Twin;
use granule_user::resp::Reply;

/// The text of a bulk (or verbatim) reply.
fn text(reply: &Reply) -> String {
    match reply {
        // A RESP3 verbatim string keeps its format prefix here.
        Reply::Bulk(Some(bytes)) => String::from_utf8_lossy(bytes.strip_prefix(b"txt:").unwrap_or(bytes)).into_owned(),
        other => panic!("not text: {other:?}"),
    }
}

/// `CLIENT LIST` lines as (name, value) pairs, in order.
fn client_lines(reply: &Reply) -> Vec<Vec<(String, String)>> {
    text(reply)
        .lines()
        .map(|line| {
            line.split(' ')
                .map(|field| {
                    let (name, value) = field.split_once('=').unwrap_or((field, ""));
                    (name.to_owned(), value.to_owned())
                })
                .collect()
        })
        .collect()
}

/// Fields whose values differ between two servers by nature: ids,
/// addresses, sockets, times, buffer sizes, memory.
const MASKED: &[&str] = &[
    "id",
    "addr",
    "laddr",
    "fd",
    "age",
    "idle",
    "qbuf",
    "qbuf-free",
    "multi-mem",
    "rbs",
    "rbp",
    "obl",
    "oll",
    "omem",
    "tot-mem",
    "events",
];

/// Asserts two `CLIENT LIST`/`CLIENT INFO` replies have the same lines with
/// the same field names in the same order, and the same unmasked values.
fn same_client_lines(ours: &Reply, theirs: &Reply) {
    let (ours, theirs) = (client_lines(ours), client_lines(theirs));
    assert_eq!(ours.len(), theirs.len(), "client count: {ours:?} vs {theirs:?}");
    for (a, b) in ours.iter().zip(&theirs) {
        let names = |line: &Vec<(String, String)>| line.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(names(a), names(b), "field names");
        for ((name, x), (_, y)) in a.iter().zip(b) {
            if MASKED.contains(&name.as_str()) {
                continue;
            }
            assert_eq!(x, y, "field {name} of {a:?} vs {b:?}");
        }
    }
}

/// `INFO` as section → (field → value), in order of fields.
fn info_sections(reply: &Reply) -> BTreeMap<String, Vec<(String, String)>> {
    let mut sections = BTreeMap::new();
    let mut current = String::new();
    for line in text(reply).lines() {
        if let Some(title) = line.strip_prefix("# ") {
            current = title.to_owned();
            sections.insert(current.clone(), Vec::new());
        } else if let Some((name, value)) = line.split_once(':') {
            sections.entry(current.clone()).or_insert_with(Vec::new).push((name.to_owned(), value.to_owned()));
        }
    }
    sections
}

#[test]
fn client_list_and_info_carry_redis_fields_and_values() {
    let Some(mut t) = Twin::start() else { return };
    let other = t.client();
    t.same(&["SET", "k", "v"]);
    t.same_from(other, &["CLIENT", "SETNAME", "worker-1"]);
    let (ours, theirs) = t.both(0, &["CLIENT", "LIST"]);
    same_client_lines(&ours, &theirs);
    let (ours, theirs) = t.both(0, &["CLIENT", "INFO"]);
    same_client_lines(&ours, &theirs);
    assert!(text(&ours).ends_with('\n'));
    // A subscriber, a transaction, no-evict: flags and counts.
    t.same_from(other, &["SUBSCRIBE", "a", "b"]);
    t.same_from(other, &["PSUBSCRIBE", "c*"]);
    t.same(&["CLIENT", "NO-EVICT", "on"]);
    t.same(&["MULTI"]);
    t.same(&["SET", "x", "1"]);
    let extra = t.client();
    let (ours, theirs) = t.both(extra, &["CLIENT", "LIST"]);
    same_client_lines(&ours, &theirs);
    t.same(&["EXEC"]);
    t.same(&["CLIENT", "NO-EVICT", "off"]);
    for command in [&["CLIENT", "LIST", "TYPE", "pubsub"][..], &["CLIENT", "LIST", "TYPE", "normal"]] {
        let (ours, theirs) = t.both(0, command);
        same_client_lines(&ours, &theirs);
    }
    t.same(&["CLIENT", "LIST", "TYPE", "master"]);
    t.same(&["CLIENT", "LIST", "TYPE", "replica"]);
    t.same(&["CLIENT", "LIST", "ID", "99999", "123456"]);
    // RESP3: a verbatim string.
    let (ours, theirs) = t.both(extra, &["HELLO", "3"]);
    assert!(matches!((ours, theirs), (Reply::Array(Some(_)), Reply::Array(Some(_)))));
    let (ours, theirs) = t.both(extra, &["CLIENT", "INFO"]);
    same_client_lines(&ours, &theirs);
}

#[test]
fn client_subcommands_fail_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    for command in [
        &["CLIENT"][..],
        &["CLIENT", "NOSUCH"],
        &["CLIENT", "LIST", "foo"],
        &["CLIENT", "LIST", "TYPE", "foo"],
        &["CLIENT", "LIST", "ID", "abc"],
        &["CLIENT", "LIST", "TYPE"],
        &["CLIENT", "INFO", "x"],
        &["CLIENT", "ID", "x"],
        &["CLIENT", "GETNAME", "x"],
        &["CLIENT", "SETNAME"],
        &["CLIENT", "SETNAME", "a b"],
        &["CLIENT", "NO-EVICT", "maybe"],
        &["CLIENT", "NO-EVICT"],
        &["CLIENT", "KILL"],
        &["CLIENT", "KILL", "ID"],
        &["CLIENT", "KILL", "ID", "abc"],
        &["CLIENT", "KILL", "ID", "0"],
        &["CLIENT", "KILL", "ID", "-5"],
        &["CLIENT", "KILL", "ID", "5", "SKIPME"],
        &["CLIENT", "KILL", "FOO", "bar"],
        &["CLIENT", "KILL", "TYPE", "foo"],
        &["CLIENT", "KILL", "USER", "nobody"],
        &["CLIENT", "KILL", "SKIPME", "maybe"],
        &["CLIENT", "KILL", "1.2.3.4:5"],
        &["CLIENT", "KILL", "ADDR", "1.2.3.4:5"],
        &["CLIENT", "KILL", "LADDR", "1.2.3.4:5"],
        &["CLIENT", "KILL", "ID", "999999"],
        &["CLIENT", "KILL", "USER", "default", "ID", "999999"],
        &["CLIENT", "GETREDIR"],
        &["CLIENT", "GETNAME"],
        &["CLIENT", "SETNAME", "me"],
        &["CLIENT", "GETNAME"],
        &["CLIENT", "SETNAME", ""],
        &["CLIENT", "GETNAME"],
    ] {
        t.same(command);
    }
    // The help lists what this store has, in Redis's words.
    let (ours, theirs) = t.both(0, &["CLIENT", "HELP"]);
    let lines = |r: Reply| match r {
        Reply::Array(Some(items)) => items,
        other => panic!("{other:?}"),
    };
    let (ours, theirs) = (lines(ours), lines(theirs));
    assert_eq!(ours[0], theirs[0]);
    assert!(ours.iter().all(|line| theirs.contains(line)), "{ours:?}");
}

#[test]
fn client_kill_ends_other_clients() {
    let Some(mut t) = Twin::start() else { return };
    let sub = t.client();
    let idle = t.client();
    t.same(&["PING"]);
    t.same_from(idle, &["PING"]);
    t.same_from(sub, &["SUBSCRIBE", "a"]);
    // Killing by type spares the caller (SKIPME yes by default).
    t.same(&["CLIENT", "KILL", "TYPE", "pubsub"]);
    t.same(&["PUBSUB", "NUMSUB", "a"]);
    let (ours, theirs) = t.both(0, &["CLIENT", "LIST"]);
    same_client_lines(&ours, &theirs);
    t.same(&["CLIENT", "KILL", "TYPE", "normal"]);
    t.same(&["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"]);
    let (ours, theirs) = t.both(0, &["CLIENT", "LIST"]);
    same_client_lines(&ours, &theirs);
    assert_eq!(client_lines(&ours).len(), 1);
    let killed = t.store().take_killed();
    assert_eq!(killed.len(), 2, "{killed:?}");
}

#[test]
fn info_has_the_sections_and_values_tools_read() {
    let Some(mut t) = Twin::start() else { return };
    let other = t.client();
    t.same(&["SET", "a", "1", "EX", "100"]);
    t.same(&["SET", "b", "1"]);
    t.same(&["GET", "a"]);
    t.same(&["GET", "nokey"]);
    t.same_from(other, &["SUBSCRIBE", "ch"]);
    t.same(&["CONFIG", "RESETSTAT"]);
    t.same(&["GET", "a"]);
    let (ours, theirs) = t.both(0, &["INFO"]);
    let (ours, theirs) = (info_sections(&ours), info_sections(&theirs));
    // Every field this store reports is Redis's, in its section.
    for (section, fields) in &ours {
        let redis = theirs.get(section).unwrap_or_else(|| panic!("Redis has no section {section}"));
        let mut at = 0;
        for (name, value) in fields {
            if name == "granule_version" {
                continue;
            }
            // In Redis's order.
            let found = redis[at..].iter().position(|(n, _)| n == name);
            let found = found.unwrap_or_else(|| panic!("{section}: Redis has no {name} after {at}"));
            at += found + 1;
            let theirs = &redis[at - 1].1;
            let differ = [
                "redis_version",
                "os",
                "process_id",
                "tcp_port",
                "uptime_in_seconds",
                "uptime_in_days",
                "maxclients",
                "used_memory",
                "used_memory_human",
                "used_memory_peak",
                "used_memory_peak_human",
                "used_memory_dataset",
            ];
            if differ.contains(&name.as_str()) {
                continue;
            }
            if name == "db0" {
                // avg_ttl is Redis's sampled estimate.
                assert_eq!(value.rsplit_once(',').unwrap().0, theirs.rsplit_once(',').unwrap().0);
                continue;
            }
            assert_eq!(value, theirs, "{section}: {name}");
        }
    }
    for tool_reads in [
        "used_memory",
        "connected_clients",
        "blocked_clients",
        "total_commands_processed",
        "total_connections_received",
    ] {
        assert!(ours.values().flatten().any(|(name, _)| name == tool_reads), "{tool_reads}");
    }
    let used: u64 = ours["Memory"][0].1.parse().unwrap();
    assert!(used > 0);
    // Sections by name, any case; unknown ones are empty.
    let (ours, theirs) = t.both(0, &["INFO", "KEYSPACE", "clients"]);
    assert_eq!(info_sections(&ours).keys().collect::<Vec<_>>(), info_sections(&theirs).keys().collect::<Vec<_>>());
    t.same(&["INFO", "nosuchsection"]);
    t.same(&["FLUSHALL"]);
    t.same(&["INFO", "keyspace"]);
}

#[test]
fn config_reports_and_accepts_only_what_is_true() {
    let Some(mut t) = Twin::start() else { return };
    for command in [
        &["CONFIG", "GET", "save"][..],
        &["CONFIG", "GET", "appendonly"],
        &["CONFIG", "GET", "maxmemory"],
        &["CONFIG", "GET", "MAXMEMORY-policy"],
        &["CONFIG", "GET", "timeout"],
        &["CONFIG", "GET", "notify-keyspace-events"],
        &["CONFIG", "GET", "nosuch"],
        &["CONFIG", "GET"],
        &["CONFIG", "SET", "maxmemory", "0"],
        &["CONFIG", "SET", "maxmemory", "0gb", "timeout", "0"],
        &["CONFIG", "SET", "appendonly", "NO"],
        &["CONFIG", "SET", "save", ""],
        &["CONFIG", "SET", "maxmemory-policy", "noeviction"],
        &["CONFIG", "SET", "save"],
        &["CONFIG", "SET", "a", "b", "c"],
        &["CONFIG", "SET", "nosuch", "1"],
        &["CONFIG", "SET", "timeout", "0", "nosuch", "1"],
        &["CONFIG", "SET", "databases", "4"],
        &["CONFIG", "SET", "timeout", "0", "timeout", "0"],
        &["CONFIG", "SET", "timeout", "abc"],
        &["CONFIG", "SET", "timeout", "-1"],
        &["CONFIG", "SET", "maxmemory", "lots"],
        &["CONFIG", "SET", "appendonly", "maybe"],
        &["CONFIG", "SET", "maxmemory-policy", "sometimes"],
        &["CONFIG", "SET", "save", "100"],
        &["CONFIG", "SET", "save", "a b"],
        &["CONFIG", "RESETSTAT"],
        &["CONFIG", "RESETSTAT", "x"],
        &["CONFIG", "NOSUCH"],
        &["CONFIG"],
    ] {
        t.same(command);
    }
    t.same_unordered(&["CONFIG", "GET", "save", "appendonly", "maxmemory", "Timeout", "save"]);
    t.same_unordered(&["CONFIG", "GET", "appendonl?", "maxmemory-p*", "[s]ave"]);
    // A value the store cannot take is refused (Redis would apply it).
    let (ours, theirs) = t.both(0, &["CONFIG", "SET", "maxmemory", "1mb"]);
    assert_eq!(theirs, Reply::Simple(b"OK".to_vec()));
    assert_eq!(
        ours,
        Reply::Error(
            b"ERR CONFIG SET failed (possibly related to argument 'maxmemory') - this server cannot change it from '0'"
                .to_vec()
        )
    );
    t.same(&["CONFIG", "SET", "maxmemory", "0"]);
    let (ours, theirs) = t.both(0, &["HELLO", "3"]);
    assert!(matches!((ours, theirs), (Reply::Array(Some(_)), Reply::Array(Some(_)))));
    t.same(&["CONFIG", "GET", "appendonly"]);
}

/// The fields of a `COMMAND INFO` entry: all nine as they are, then the
/// subcommands by name (this store has only some of them).
fn comparable(entry: &Reply) -> Vec<Reply> {
    let Reply::Array(Some(fields)) = entry else { panic!("{entry:?}") };
    let mut kept: Vec<Reply> = fields[..9].to_vec();
    if let Reply::Array(Some(subs)) = &fields[9] {
        let mut names: Vec<Reply> = subs
            .iter()
            .map(|sub| match sub {
                Reply::Array(Some(f)) => f[0].clone(),
                other => other.clone(),
            })
            .collect();
        names.sort_by_key(|r| format!("{r:?}"));
        kept.push(Reply::Array(Some(names)));
    }
    kept
}

#[test]
fn command_describes_every_command_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    let (ours, theirs) = t.both(0, &["COMMAND", "LIST"]);
    let (Reply::Array(Some(ours)), Reply::Array(Some(theirs))) = (ours, theirs) else { panic!() };
    // Redis 7.2's, which redis-py sends unasked.
    let newer = [Reply::Bulk(Some(b"client|setinfo".to_vec()))];
    let ours: Vec<Reply> = ours.into_iter().filter(|name| !newer.contains(name)).collect();
    for name in &ours {
        assert!(theirs.contains(name), "Redis has no {name:?}");
    }
    let mut mismatches = Vec::new();
    for name in ours {
        let Reply::Bulk(Some(name)) = name else { panic!() };
        let name = String::from_utf8(name).unwrap();
        let (ours, theirs) = t.both(0, &["COMMAND", "INFO", &name]);
        let (Reply::Array(Some(ours)), Reply::Array(Some(theirs))) = (ours, theirs) else { panic!() };
        let (ours, theirs) = (comparable(&ours[0]), comparable(&theirs[0]));
        if ours[..9] != theirs[..9] {
            mismatches.push(format!("{name}: ours {:?}, Redis {:?}", ours[..9].to_vec(), theirs[..9].to_vec()));
        }
        if let (Some(Reply::Array(Some(a))), Some(Reply::Array(Some(b)))) = (ours.get(9), theirs.get(9)) {
            assert!(a.iter().all(|sub| b.contains(sub) || newer.contains(sub)), "subcommands of {name}: {a:?}");
        }
    }
    assert!(mismatches.is_empty(), "COMMAND INFO differs:\n{}", mismatches.join("\n"));
    t.same(&["COMMAND", "INFO", "nosuch"]);
    t.same(&["COMMAND", "INFO", "get", "nosuch", "CONFIG|GET"]);
    t.same(&["COMMAND", "INFO", "client|list"]);
    t.same(&["COMMAND", "INFO", "client|nosuch"]);
    let (ours, theirs) = t.both(0, &["HELLO", "3"]);
    assert!(matches!((ours, theirs), (Reply::Array(Some(_)), Reply::Array(Some(_)))));
    t.same(&["COMMAND", "INFO", "get", "publish", "ping", "mset", "ssubscribe", "client|kill"]);
}

/// `COMMAND GETKEYS` of every command served, over argument lists that
/// meet its key specifications' ranges, key counts (valid, too large,
/// negative, overflowing, read by `atoi` where the strict reading fails)
/// and destinations: the same keys, in the same order, or the same error.
#[test]
fn command_getkeys_follows_every_key_specification_as_redis() {
    let Some(mut t) = Twin::start() else { return };
    let cases = [
        ["ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"].as_slice(),
        &["ZUNIONSTORE", "d", "2abc", "a", "b"],
        &["ZUNIONSTORE", "d", "+1", "a"],
        &["ZUNIONSTORE", "d", " 2", "a", "b"],
        &["ZUNIONSTORE", "d", "-0", "a"],
        &["ZUNIONSTORE", "d", "3", "a", "b"],
        &["ZUNIONSTORE", "d", "4294967298", "a", "b"],
        &["ZUNIONSTORE", "d", "99999999999999999999", "a"],
        &["ZINTER", "2x", "a", "b"],
        &["SINTERCARD", "1z", "a", "LIMIT", "2"],
        &["EVAL", "s", "2", "a"],
        &["EVAL", "s", "1x", "a"],
        &["FCALL", "f", "0"],
    ];
    for case in cases {
        t.same(&[&["COMMAND", "GETKEYS"][..], case].concat());
    }
    // Every command both serve (granule also has `CLIENT SETINFO`, which
    // Redis 7.0 does not), less `SCRIPT` and `FUNCTION`: Redis's are
    // containers of subcommands, granule's whole commands that refuse
    // scripting (`docs/serve.md`).
    let names: Vec<String> = t.commands_both_serve().into_iter().filter(|n| n != "script" && n != "function").collect();
    assert!(names.len() > 150, "{} commands in common", names.len());
    let args: [&[&str]; 6] = [
        &["a"],
        &["a", "b", "c"],
        &["a", "1", "b", "2"],
        &["d", "2", "a", "b"],
        &["2", "a", "b", "LIMIT", "1"],
        &["d", "+2", "a", "b", "c"],
    ];
    for name in &names {
        let words: Vec<&str> = name.split('|').collect();
        for more in args {
            t.same(&[&["COMMAND", "GETKEYS"][..], &words, more].concat());
        }
    }
}

#[test]
fn command_subcommands_answer_like_redis() {
    let Some(mut t) = Twin::start() else { return };
    for command in [
        &["COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2"][..],
        &["COMMAND", "GETKEYS", "GET", "k"],
        &["COMMAND", "GETKEYS", "get", "k", "x"],
        &["COMMAND", "GETKEYS", "PING"],
        &["COMMAND", "GETKEYS", "PING", "x"],
        &["COMMAND", "GETKEYS", "NOSUCH", "x"],
        &["COMMAND", "GETKEYS", "CONFIG", "NOSUCH"],
        &["COMMAND", "GETKEYS", "CONFIG", "GET", "x"],
        &["COMMAND", "GETKEYS", "SSUBSCRIBE", "a", "b"],
        &["COMMAND", "GETKEYS"],
        &["COMMAND", "COUNT", "x"],
        &["COMMAND", "NOSUCH"],
        &["COMMAND", "LIST", "FILTERBY"],
        &["COMMAND", "LIST", "FILTERBY", "PATTERN"],
        &["COMMAND", "LIST", "FILTERBY", "FOO", "x"],
        &["COMMAND", "LIST", "FILTERBY", "PATTERN", "x", "y"],
        &["COMMAND", "LIST", "FILTERBY", "MODULE", "nosuch"],
        &["COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuch"],
        &["COMMAND", "LIST", "FILTERBY", "PATTERN", "client|k*"],
        &["COMMAND", "LIST", "FILTERBY", "PATTERN", "CONFIG|SET"],
    ] {
        t.same(command);
    }
    // Filters keep a subset of Redis's commands.
    for command in
        [&["COMMAND", "LIST", "FILTERBY", "ACLCAT", "pubsub"][..], &["COMMAND", "LIST", "FILTERBY", "PATTERN", "p*"]]
    {
        let (ours, theirs) = t.both(0, command);
        let (Reply::Array(Some(ours)), Reply::Array(Some(theirs))) = (ours, theirs) else { panic!() };
        assert!(!ours.is_empty());
        assert!(ours.iter().all(|name| theirs.contains(name)), "{command:?}: {ours:?}");
    }
}

#[test]
fn scripting_answers_one_clear_error() {
    let Some(mut t) = Twin::start() else { return };
    for command in [
        &["EVAL", "return 1", "0"][..],
        &["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"],
        &["EVAL_RO", "return 1", "0"],
        &["EVALSHA_RO", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"],
        &["SCRIPT", "FLUSH"],
        &["FCALL", "f", "0"],
        &["FCALL_RO", "f", "0"],
        &["FUNCTION", "LIST"],
    ] {
        let (ours, _) = t.both(0, command);
        assert_eq!(ours, Reply::Error(b"ERR scripting is not supported by this server".to_vec()), "{command:?}");
    }
    for command in [&["EVAL", "return 1"][..], &["EVALSHA"], &["FCALL", "f"], &["SCRIPT"], &["FUNCTION"]] {
        t.same(command);
    }
}
