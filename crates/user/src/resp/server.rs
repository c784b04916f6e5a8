//! The connection commands: `PING`, `ECHO`, `HELLO`, `AUTH`, `QUIT`,
//! `RESET`, and `TIME`.
//!
//! Real clients send these before any data command: redis-py 8 opens every
//! connection with `HELLO 3` — and gives up if the server refuses RESP3, so
//! `HELLO 3` switches the session to RESP3 (the reply shapes of
//! `encode::Protocol`) rather than answering `NOPROTO`. The answers are
//! honest. `RESET` ends the connection's state as Redis's does:
//! subscriptions, name, RESP3, the selected database, the open transaction
//! and the watched keys. `TIME` answers the store's clock, which counts
//! milliseconds. The databases' commands (`SELECT`, `DBSIZE`, `FLUSHDB`…)
//! live in `keyspace.rs`; the server's introspection beside: `CLIENT` in
//! `client_command.rs`, `CONFIG` in `config.rs`, `INFO` in `info.rs`,
//! `COMMAND` in `command_info.rs`. This file also holds Redis's glob
//! matcher, which `CONFIG GET`, `COMMAND LIST` and the channel patterns
//! share.
//!
//! For compatibility the server calls itself `redis` 7.0.0 in `HELLO` and
//! `INFO`'s `redis_version` (clients gate features on that version); `INFO`
//! names the real implementation in `granule_version`.

use super::command::{c_string, write_arity_error, write_ok, Flow, SYNTAX};
use super::encode::{
    write_array_header, write_bulk, write_error, write_integer, write_map_header, write_simple, Protocol,
};
use super::number::parse_i64;
use super::session::Session;
use super::store::Store;
use super::table::{spec, Call, Flags, Spec, NO_KEYS};

/// The Redis version this store answers as.
pub const REDIS_VERSION: &str = "7.0.0";

/// Flags of the commands a client may send before anything else.
const HANDSHAKE: Flags =
    Flags::NOSCRIPT.or(Flags::LOADING).or(Flags::STALE).or(Flags::FAST).or(Flags::NO_AUTH).or(Flags::ALLOW_BUSY);
/// Flags of the commands allowed while loading and on a stale replica.
pub(crate) const LOADING_STALE: Flags = Flags::LOADING.or(Flags::STALE);

/// The connection and server commands.
pub(crate) const COMMANDS: &[Spec] = &[
    spec("echo", 2, LOADING_STALE.or(Flags::FAST), NO_KEYS, |_, c| write_bulk(c.out, c.args[1])),
    spec("time", 1, LOADING_STALE.or(Flags::FAST), NO_KEYS, |_, c| write_time(c.now, c.out)),
    spec("hello", -1, HANDSHAKE, NO_KEYS, |s, c| s.cmd_hello(c)),
    spec("auth", -2, HANDSHAKE, NO_KEYS, |s, c| s.cmd_auth(c.args, c.out)),
    spec("quit", -1, HANDSHAKE, NO_KEYS, |_, c| {
        write_ok(c.out);
        c.flow = Flow::Close;
    }),
    spec("reset", 1, HANDSHAKE, NO_KEYS, |s, c| s.cmd_reset(c)),
];

impl Store {
    /// `PING [message]`; in the subscribed context of a RESP2 client,
    /// `*2 pong <message or "">` as Redis answers there.
    pub(crate) fn cmd_ping(&mut self, session: &Session, args: &[&[u8]], out: &mut Vec<u8>) {
        if args.len() > 2 {
            return write_arity_error(out, "ping");
        }
        if session.subscribed && session.protocol == Protocol::Resp2 {
            write_array_header(out, 2);
            write_bulk(out, b"pong");
            write_bulk(out, args.get(1).copied().unwrap_or(b""));
            return;
        }
        match args.get(1) {
            None => out.extend_from_slice(b"+PONG\r\n"),
            Some(message) => write_bulk(out, message),
        }
    }

    /// `RESET`: the connection as new — no subscriptions, no name, RESP2,
    /// database 0 (the open transaction, kept by the connection, is
    /// discarded before this runs).
    pub(crate) fn cmd_reset(&mut self, c: &mut Call<'_, '_>) {
        self.unsubscribe_silently(c.session, c.now);
        c.session.protocol = Protocol::Resp2;
        c.session.name = None;
        let client = self.clients.entry(c.session.id, c.now);
        client.protocol = Protocol::Resp2;
        client.name = None;
        client.db = 0;
        client.multi = None;
        c.session.db = 0;
        self.db = 0;
        self.watches.forget(c.session.id);
        write_simple(c.out, b"RESET");
    }

    /// `HELLO [protover [AUTH user pass] [SETNAME name]]`: switches the
    /// session to RESP2 or RESP3 and describes the server.
    pub(crate) fn cmd_hello(&mut self, c: &mut Call<'_, '_>) {
        let (session, args, out) = (&mut *c.session, c.args, &mut *c.out);
        let mut protocol = session.protocol;
        if let Some(version) = args.get(1) {
            protocol = match parse_i64(version) {
                Some(2) => Protocol::Resp2,
                Some(3) => Protocol::Resp3,
                Some(_) => return write_error(out, b"NOPROTO unsupported protocol version"),
                None => return write_error(out, b"ERR Protocol version is not an integer or out of range"),
            };
        }
        let mut name = None;
        let mut i = 2;
        while i < args.len() {
            let more = args.len() - 1 - i;
            if args[i].eq_ignore_ascii_case(b"AUTH") && more >= 2 {
                if args[i + 1] != b"default" {
                    return write_error(out, b"WRONGPASS invalid username-password pair or user is disabled.");
                }
                i += 3;
            } else if args[i].eq_ignore_ascii_case(b"SETNAME") && more >= 1 {
                if !valid_client_name(args[i + 1]) {
                    return write_error(
                        out,
                        b"ERR Client names cannot contain spaces, newlines or special characters.",
                    );
                }
                name = Some(args[i + 1]);
                i += 2;
            } else {
                let mut message = b"ERR Syntax error in HELLO option '".to_vec();
                message.extend_from_slice(c_string(args[i], usize::MAX));
                message.push(b'\'');
                return write_error(out, &message);
            }
        }
        if let Some(name) = name {
            session.name = (!name.is_empty()).then(|| name.to_vec());
        }
        session.protocol = protocol;
        let id = session.id;
        let client = self.clients.entry(id, c.now);
        client.protocol = protocol;
        client.name.clone_from(&session.name);
        write_map_header(out, 7, protocol);
        for (field, value) in [("server", "redis"), ("version", REDIS_VERSION)] {
            write_bulk(out, field.as_bytes());
            write_bulk(out, value.as_bytes());
        }
        write_bulk(out, b"proto");
        write_integer(out, if protocol == Protocol::Resp3 { 3 } else { 2 });
        write_bulk(out, b"id");
        write_integer(out, i64::try_from(id).unwrap_or(i64::MAX));
        for (field, value) in [("mode", "standalone"), ("role", "master")] {
            write_bulk(out, field.as_bytes());
            write_bulk(out, value.as_bytes());
        }
        write_bulk(out, b"modules");
        write_array_header(out, 0);
    }

    /// `AUTH [user] password` with no password configured: Redis's answers.
    pub(crate) fn cmd_auth(&mut self, args: &[&[u8]], out: &mut Vec<u8>) {
        match args {
            [_, _] => write_error(
                out,
                b"ERR AUTH <password> called without any password configured for the default user. \
                  Are you sure your configuration is correct?",
            ),
            [_, user, _] if *user == b"default" => write_ok(out),
            [_, _, _] => write_error(out, b"WRONGPASS invalid username-password pair or user is disabled."),
            _ => write_error(out, SYNTAX),
        }
    }
}

/// `TIME`: the Unix time in seconds and microseconds. The store's clock
/// counts milliseconds, so the microseconds are a multiple of 1000.
fn write_time(now_ms: u64, out: &mut Vec<u8>) {
    write_array_header(out, 2);
    let mut digits = Vec::with_capacity(20);
    for part in [now_ms / 1000, (now_ms % 1000) * 1000] {
        digits.clear();
        super::number::write_u64(&mut digits, part);
        write_bulk(out, &digits);
    }
}

/// Whether a client name (or library attribute) is acceptable: printable
/// ASCII without spaces.
pub(crate) fn valid_client_name(name: &[u8]) -> bool {
    name.iter().all(|&c| (b'!'..=b'~').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::encode::parse_reply;
    use crate::resp::encode::Reply;

    fn run(store: &mut Store, session: &mut Session, command: &[&str]) -> Vec<u8> {
        let words: Vec<&[u8]> = command.iter().map(|w| w.as_bytes()).collect();
        let mut out = Vec::new();
        let _ = store.execute_in(session, &words, 0, &mut out);
        out
    }

    fn text(store: &mut Store, command: &str) -> String {
        let words: Vec<&str> = command.split(' ').collect();
        String::from_utf8(run(store, &mut Session::new(), &words)).unwrap()
    }

    #[test]
    fn handshake_commands_answer_like_redis() {
        let mut store = Store::new();
        assert_eq!(text(&mut store, "PING"), "+PONG\r\n");
        assert_eq!(text(&mut store, "PING hi"), "$2\r\nhi\r\n");
        assert_eq!(text(&mut store, "PING a b"), "-ERR wrong number of arguments for 'ping' command\r\n");
        assert_eq!(text(&mut store, "SELECT 0"), "+OK\r\n");
        assert_eq!(text(&mut store, "SELECT 15"), "+OK\r\n");
        assert_eq!(text(&mut store, "SELECT 16"), "-ERR DB index is out of range\r\n");
        assert_eq!(text(&mut store, "TIME"), "*2\r\n$1\r\n0\r\n$1\r\n0\r\n");
        assert_eq!(text(&mut store, "SELECT abc"), "-ERR value is not an integer or out of range\r\n");
        assert_eq!(text(&mut store, "HELLO 4"), "-NOPROTO unsupported protocol version\r\n");
        assert_eq!(text(&mut store, "HELLO 1"), "-NOPROTO unsupported protocol version\r\n");
        assert_eq!(text(&mut store, "HELLO abc"), "-ERR Protocol version is not an integer or out of range\r\n");
        assert_eq!(text(&mut store, "HELLO 2 FOO"), "-ERR Syntax error in HELLO option 'FOO'\r\n");
        assert_eq!(text(&mut store, "HELLO 2 AUTH"), "-ERR Syntax error in HELLO option 'AUTH'\r\n");
        assert_eq!(text(&mut store, "COMMAND DOCS"), "*0\r\n");
        assert_eq!(
            text(&mut store, "COMMAND COUNT x"),
            "-ERR wrong number of arguments for 'command|count' command\r\n"
        );
        assert_eq!(text(&mut store, "command foo"), "-ERR unknown subcommand 'foo'. Try COMMAND HELP.\r\n");
        assert_eq!(text(&mut store, "CONFIG GET save"), "*2\r\n$4\r\nsave\r\n$0\r\n\r\n");
        assert_eq!(text(&mut store, "CONFIG GET appendonly"), "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n");
        assert_eq!(text(&mut store, "CONFIG GET *").matches('$').count(), 14);
        assert_eq!(text(&mut store, "CONFIG GET nothing"), "*0\r\n");
        assert_eq!(text(&mut store, "CONFIG GET"), "-ERR wrong number of arguments for 'config|get' command\r\n");
        assert_eq!(text(&mut store, "config foo"), "-ERR unknown subcommand 'foo'. Try CONFIG HELP.\r\n");
        assert_eq!(text(&mut store, "CLIENT"), "-ERR wrong number of arguments for 'client' command\r\n");
        assert_eq!(text(&mut store, "CLIENT SETINFO lib-name redis-py"), "+OK\r\n");
        assert_eq!(text(&mut store, "CLIENT SETINFO foo 1"), "-ERR Unrecognized option 'foo'\r\n");
        assert_eq!(text(&mut store, "FLUSHALL ASYNC"), "+OK\r\n");
        assert_eq!(text(&mut store, "FLUSHALL FOO"), "-ERR syntax error\r\n");
        assert_eq!(text(&mut store, "AUTH x"), "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n");
        assert_eq!(text(&mut store, "AUTH default x"), "+OK\r\n");
        assert_eq!(text(&mut store, "AUTH a b c"), "-ERR syntax error\r\n");
        assert_eq!(text(&mut store, "QUIT"), "+OK\r\n");
    }

    #[test]
    fn sessions_keep_names_and_ids() {
        let mut store = Store::new();
        let mut session = Session::new();
        assert_eq!(run(&mut store, &mut session, &["CLIENT", "GETNAME"]), b"$-1\r\n");
        assert_eq!(
            run(&mut store, &mut session, &["client", "setname", "a b"]),
            b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n"
        );
        assert_eq!(run(&mut store, &mut session, &["CLIENT", "SETNAME", "worker"]), b"+OK\r\n");
        assert_eq!(run(&mut store, &mut session, &["CLIENT", "GETNAME"]), b"$6\r\nworker\r\n");
        assert_eq!(run(&mut store, &mut session, &["CLIENT", "ID"]), b":1\r\n");
        assert_eq!(run(&mut store, &mut Session::new(), &["CLIENT", "ID"]), b":2\r\n");
        let hello = run(&mut store, &mut session, &["HELLO", "2", "SETNAME", "other"]);
        let Some((Reply::Array(Some(fields)), _)) = parse_reply(&hello, 1 << 16).unwrap() else {
            panic!("HELLO replied {hello:?}");
        };
        assert_eq!(fields.len(), 14);
        assert_eq!(fields[5], Reply::Integer(2));
        assert_eq!(fields[7], Reply::Integer(1));
        assert_eq!(session.name(), Some(&b"other"[..]));
    }

    #[test]
    fn hello_3_switches_the_session_to_resp3() {
        let mut store = Store::new();
        let mut session = Session::new();
        let hello = run(&mut store, &mut session, &["HELLO", "3"]);
        assert!(hello.starts_with(b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n"));
        assert!(hello.windows(15).any(|w| w == b"$5\r\nproto\r\n:3\r\n"));
        assert_eq!(session.protocol(), Protocol::Resp3);
        let replies: Vec<Vec<u8>> = [
            &["GET", "nokey"][..],
            &["HSET", "h", "f", "v"],
            &["HGETALL", "h"],
            &["HGETALL", "nokey"],
            &["ZADD", "z", "1.5", "m"],
            &["ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES"],
            &["ZSCORE", "z", "m"],
            &["CONFIG", "GET", "save"],
            &["INFO", "nothing"],
        ]
        .iter()
        .map(|command| run(&mut store, &mut session, command))
        .collect();
        assert_eq!(
            replies.concat(),
            concat!(
                "_\r\n:1\r\n%1\r\n$1\r\nf\r\n$1\r\nv\r\n%0\r\n:1\r\n",
                "*1\r\n*2\r\n$1\r\nm\r\n,1.5\r\n,1.5\r\n",
                "%1\r\n$4\r\nsave\r\n$0\r\n\r\n=4\r\ntxt:\r\n",
            )
            .as_bytes()
        );
        let _ = run(&mut store, &mut session, &["HELLO", "2"]);
        assert_eq!(run(&mut store, &mut session, &["GET", "nokey"]), b"$-1\r\n");
    }

    #[test]
    fn time_answers_the_store_clock_at_millisecond_resolution() {
        let mut out = Vec::new();
        write_time(1_700_000_123_456, &mut out);
        assert_eq!(out, b"*2\r\n$10\r\n1700000123\r\n$6\r\n456000\r\n");
    }
}
