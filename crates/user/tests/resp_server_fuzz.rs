//! The server commands (`CLIENT`, `CONFIG`, `COMMAND`, `INFO`, pub/sub,
//! `RESET`…) with arbitrary arguments from three clients: nothing panics,
//! every reply and every message for another client is well-formed RESP,
//! and closing the clients leaves no subscription behind.

use granule_user::resp::{encode_command, parse_reply, Connection, Flow, Store};
use proptest::prelude::*;

/// Words the commands recognise, and some they do not.
const WORDS: &[&str] = &[
    "CLIENT",
    "LIST",
    "INFO",
    "KILL",
    "ID",
    "TYPE",
    "ADDR",
    "LADDR",
    "USER",
    "SKIPME",
    "SETNAME",
    "GETNAME",
    "NO-EVICT",
    "ON",
    "OFF",
    "yes",
    "no",
    "pubsub",
    "normal",
    "master",
    "default",
    "?:0",
    "CONFIG",
    "GET",
    "SET",
    "RESETSTAT",
    "save",
    "maxmemory",
    "timeout",
    "appendonly",
    "databases",
    "*",
    "m*",
    "COMMAND",
    "COUNT",
    "DOCS",
    "GETKEYS",
    "FILTERBY",
    "PATTERN",
    "ACLCAT",
    "MODULE",
    "HELP",
    "SUBSCRIBE",
    "UNSUBSCRIBE",
    "PSUBSCRIBE",
    "PUNSUBSCRIBE",
    "SSUBSCRIBE",
    "SUNSUBSCRIBE",
    "PUBLISH",
    "SPUBLISH",
    "PUBSUB",
    "CHANNELS",
    "NUMSUB",
    "NUMPAT",
    "SHARDCHANNELS",
    "SHARDNUMSUB",
    "RESET",
    "PING",
    "HELLO",
    "MULTI",
    "EXEC",
    "DISCARD",
    "QUIT",
    "EVAL",
    "SCRIPT",
    "a",
    "b",
    "a*",
    "[a-",
    "\\",
    "",
    "0",
    "1",
    "2",
    "3",
    "-1",
    "99999999999999999999",
    "1gb",
    "x y",
];

fn command() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(proptest::sample::select(WORDS), 1..6)
        .prop_map(|words| words.into_iter().map(str::to_owned).collect())
}

/// Asserts `bytes` is a sequence of whole RESP replies.
fn well_formed(bytes: &[u8]) -> Result<(), TestCaseError> {
    let mut at = 0;
    while at < bytes.len() {
        match parse_reply(&bytes[at..], usize::MAX) {
            Ok(Some((_, used))) => at += used,
            other => prop_assert!(false, "bad bytes at {}: {:?} in {:?}", at, other, String::from_utf8_lossy(bytes)),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn server_commands_never_panic_and_answer_resp(calls in proptest::collection::vec((0usize..3, command()), 1..40)) {
        let mut store = Store::new();
        let mut clients: Vec<Option<Connection>> = (0..3).map(|_| Some(Connection::default())).collect();
        for (who, words) in &calls {
            let Some(connection) = clients[*who].as_mut() else { continue };
            let args: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
            let mut request = Vec::new();
            encode_command(&args, &mut request);
            let mut out = Vec::new();
            let flow = connection.feed(&request, &mut store, 1_000, &mut out);
            well_formed(&out)?;
            for (_, bytes) in store.take_outbox() {
                well_formed(&bytes)?;
            }
            let id = connection.id();
            if flow == Flow::Close {
                store.forget_client(id);
                clients[*who] = None;
            }
            for killed in store.take_killed() {
                for slot in clients.iter_mut() {
                    if slot.as_ref().is_some_and(|c| c.id() == killed) {
                        *slot = None;
                    }
                }
            }
        }
        for connection in clients.into_iter().flatten() {
            store.forget_client(connection.id());
        }
        let mut out = Vec::new();
        let _ = store.execute(&[b"PUBSUB", b"NUMPAT"], 1_000, &mut out);
        let _ = store.execute(&[b"PUBSUB", b"CHANNELS"], 1_000, &mut out);
        let _ = store.execute(&[b"PUBSUB", b"SHARDCHANNELS"], 1_000, &mut out);
        prop_assert_eq!(String::from_utf8_lossy(&out), ":0\r\n*0\r\n*0\r\n");
    }
}
