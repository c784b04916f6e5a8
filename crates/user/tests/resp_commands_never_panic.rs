//! Every command the store serves, with random arguments, from several
//! clients at once: nothing panics, every byte written is a whole RESP
//! reply, and bytes for other clients only go to clients that exist.
//!
//! The command names are read from the store itself (`COMMAND LIST`), so
//! a command added to the table is covered without touching this file.

use granule_user::resp::{encode_command, parse_reply, Connection, Flow, Reply, Store};
use proptest::prelude::*;

/// The names `COMMAND LIST` answers.
fn command_names() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let _ = Store::new().execute(&[b"COMMAND", b"LIST"], 0, &mut out);
    match parse_reply(&out, usize::MAX) {
        Ok(Some((Reply::Array(Some(items)), _))) => items
            .into_iter()
            .filter_map(|r| match r {
                Reply::Bulk(Some(name)) => Some(name),
                _ => None,
            })
            .collect(),
        other => panic!("COMMAND LIST answered {other:?}"),
    }
}

/// Arguments that reach options, numbers at their limits, keys that exist
/// and hold every type, patterns and plain garbage.
fn arb_arg() -> impl Strategy<Value = Vec<u8>> {
    let words = [
        "k",
        "l",
        "s",
        "h",
        "z",
        "str",
        "0",
        "1",
        "-1",
        "2",
        "3",
        "10",
        "100",
        "-100",
        "0.5",
        "-inf",
        "+inf",
        "inf",
        "nan",
        "(1",
        "[a",
        "-",
        "+",
        "*",
        "?",
        "[",
        "9223372036854775807",
        "-9223372036854775808",
        "18446744073709551616",
        "1e308",
        "EX",
        "PX",
        "NX",
        "XX",
        "GT",
        "LT",
        "CH",
        "INCR",
        "GET",
        "KEEPTTL",
        "LIMIT",
        "WITHSCORES",
        "BYSCORE",
        "BYLEX",
        "REV",
        "COUNT",
        "MATCH",
        "TYPE",
        "LEFT",
        "RIGHT",
        "BEFORE",
        "AFTER",
        "RANK",
        "MAXLEN",
        "WEIGHTS",
        "AGGREGATE",
        "SUM",
        "MIN",
        "MAX",
        "STORE",
        "ALL",
        "ID",
        "KILL",
        "LIST",
        "INFO",
        "SET",
        "GETNAME",
        "SETNAME",
        "HELLO",
        "AUTH",
        "default",
        "DB",
        "REPLACE",
        "ASYNC",
        "SYNC",
        "USAGE",
        "SAMPLES",
        "ENCODING",
        "WITHVALUES",
        "SKIPME",
        "yes",
        "no",
        "ADDR",
        "CHANNELS",
        "NUMSUB",
        "NUMPAT",
        "FILTERBY",
        "ACLCAT",
        "PATTERN",
        "MODULE",
        "DOCS",
        "GETKEYS",
        "RESETSTAT",
        "save",
        "maxmemory",
        "PERSIST",
        "EXAT",
        "PXAT",
        "QUIT",
        "RESET",
        "ch",
        "news",
        "n*",
        "IDX",
        "LEN",
        "MINMATCHLEN",
        "WITHMATCHLEN",
        "0x1p3",
        "1e4932",
        "-0",
        "(a",
    ];
    prop_oneof![
        8 => proptest::sample::select(words.to_vec()).prop_map(|w| w.as_bytes().to_vec()),
        1 => proptest::collection::vec(any::<u8>(), 0..12),
        1 => (-5i64..5).prop_map(|n| n.to_string().into_bytes()),
    ]
}

/// A command: an index into the name list, then arguments.
fn arb_command() -> impl Strategy<Value = (prop::sample::Index, Vec<Vec<u8>>, usize)> {
    (any::<prop::sample::Index>(), proptest::collection::vec(arb_arg(), 0..7), 0usize..3)
}

/// Whether `bytes` is a sequence of whole replies.
fn whole_replies(bytes: &[u8]) -> Result<(), String> {
    let mut at = 0;
    while at < bytes.len() {
        match parse_reply(&bytes[at..], usize::MAX) {
            Ok(Some((_, used))) => at += used,
            other => return Err(format!("bad reply bytes at {at}: {other:?} in {:?}", String::from_utf8_lossy(bytes))),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_commands_from_three_clients_never_panic(commands in proptest::collection::vec(arb_command(), 1..40)) {
        let names = command_names();
        let mut store = Store::new();
        let mut clients: Vec<Connection> = (0..3).map(|_| Connection::default()).collect();
        let mut out = Vec::new();
        let mut now = 1_000_000;
        for (name, args, client) in &commands {
            let mut words: Vec<&[u8]> = vec![names[name.index(names.len())].as_slice()];
            words.extend(args.iter().map(Vec::as_slice));
            let mut request = Vec::new();
            encode_command(&words, &mut request);
            out.clear();
            let flow = clients[*client].feed(&request, &mut store, now, &mut out);
            whole_replies(&out).map_err(TestCaseError::fail)?;
            if flow == Flow::Close {
                clients[*client] = Connection::default();
            }
            for (id, bytes) in store.take_outbox() {
                prop_assert!(id != 0, "bytes for a client without an id");
                whole_replies(&bytes).map_err(TestCaseError::fail)?;
            }
            now += 7;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    /// `COMMAND GETKEYS` of any command served (subcommands spelt as
    /// words), with key counts, offsets and words at random: whole replies,
    /// never a panic, whatever the key specifications make of them.
    #[test]
    fn getkeys_of_random_calls_never_panics(name in any::<prop::sample::Index>(), args in proptest::collection::vec(arb_arg(), 0..9)) {
        let names = command_names();
        let name = String::from_utf8_lossy(&names[name.index(names.len())]).into_owned();
        let mut words: Vec<&[u8]> = vec![b"COMMAND", b"GETKEYS"];
        words.extend(name.split('|').map(str::as_bytes));
        words.extend(args.iter().map(Vec::as_slice));
        let mut out = Vec::new();
        let _ = Store::new().execute(&words, 0, &mut out);
        whole_replies(&out).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn the_store_serves_at_least_the_core_commands() {
    let names = command_names();
    for name in ["get", "set", "hset", "zadd", "ping"] {
        assert!(names.iter().any(|n| n == name.as_bytes()), "COMMAND LIST lacks {name}");
    }
}
