//! The connection and server commands, and what they report.
//!
//! Real clients send these before any data command: `redis-cli` asks for
//! `COMMAND DOCS`, `redis-benchmark` for `CONFIG GET save` and `appendonly`,
//! redis-py names itself with `CLIENT SETINFO`, and redis-py 8 opens every
//! connection with `HELLO 3` — and gives up if the server refuses RESP3, so
//! `HELLO 3` switches the session to RESP3 (the reply shapes of
//! `encode::Protocol`) rather than answering `NOPROTO`. The answers are
//! honest: no persistence (`save` is empty, `appendonly` is `no`), and
//! `INFO` reports the store's own counters, every non-empty database, and
//! whatever the server around it knows ([`ServerInfo`](super::session::ServerInfo)).
//! `TIME` answers the store's clock, which counts milliseconds.
//!
//! For compatibility the server calls itself `redis` 7.0.0 in `HELLO` and
//! `INFO`'s `redis_version` (clients gate features on that version); `INFO`
//! names the real implementation in `granule_version`.

use super::command::{arity_ok, c_string, write_arity_error, write_ok, Flow, SYNTAX};
use super::encode::{
    write_array_header, write_bulk, write_error, write_integer, write_map_header, write_null, write_verbatim, Protocol,
};
use super::glob::{glob_match, Case};
use super::number::parse_i64;
use super::session::Session;
use super::store::{Store, DATABASES};
use super::table::{self, lookup, spec, Flags, Spec, NO_KEYS};

/// The Redis version this store answers as.
pub const REDIS_VERSION: &str = "7.0.0";

/// The configuration parameters `CONFIG GET` knows, with their values.
const CONFIG: &[(&str, &str)] = &[("save", ""), ("appendonly", "no")];

/// Flags of the commands a client may send before anything else.
const HANDSHAKE: Flags = Flags::NOSCRIPT.or(Flags::LOADING).or(Flags::STALE).or(Flags::FAST).or(Flags::NO_AUTH);
/// Flags of the introspection commands.
const LOADING_STALE: Flags = Flags::LOADING.or(Flags::STALE);

/// The connection and server commands.
pub(crate) const COMMANDS: &[Spec] = &[
    spec("echo", 2, Flags::FAST, NO_KEYS, |_, c| write_bulk(c.out, c.args[1])),
    spec("time", 1, LOADING_STALE.or(Flags::FAST), NO_KEYS, |_, c| write_time(c.now, c.out)),
    spec("info", -1, LOADING_STALE, NO_KEYS, |s, c| s.cmd_info(c.args, c.now, c.out)),
    spec("command", -1, LOADING_STALE, NO_KEYS, |s, c| s.cmd_command(c.args, c.out)),
    spec("config", -2, Flags::NONE, NO_KEYS, |s, c| s.cmd_config(c.args, c.out)),
    spec("client", -2, Flags::NONE, NO_KEYS, |s, c| s.cmd_client(c.session, c.args, c.out)),
    spec("hello", -1, HANDSHAKE, NO_KEYS, |s, c| s.cmd_hello(c.session, c.args, c.out)),
    spec("auth", -2, HANDSHAKE, NO_KEYS, |s, c| s.cmd_auth(c.args, c.out)),
    spec("quit", -1, HANDSHAKE, NO_KEYS, |_, c| {
        write_ok(c.out);
        c.flow = Flow::Close;
    }),
];

/// `INFO` sections in the order they are written.
const SECTIONS: &[&str] = &["server", "clients", "stats", "replication", "keyspace"];

impl Store {
    /// The session's id, assigning one on first use.
    pub(crate) fn session_id(&mut self, session: &mut Session) -> u64 {
        if session.id == 0 {
            session.id = self.next_client_id();
        }
        session.id
    }

    pub(crate) fn cmd_ping(&mut self, args: &[&[u8]], out: &mut Vec<u8>) {
        match args {
            [_] => out.extend_from_slice(b"+PONG\r\n"),
            [_, message] => write_bulk(out, message),
            _ => write_arity_error(out, "ping"),
        }
    }

    /// `INFO [section ...]`: the sections asked for (all by default), in
    /// Redis's text format.
    pub(crate) fn cmd_info(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let everything = args.len() == 1
            || args[1..]
                .iter()
                .any(|arg| [&b"all"[..], b"everything", b"default"].iter().any(|s| arg.eq_ignore_ascii_case(s)));
        let mut text = String::new();
        for section in SECTIONS {
            if !everything && !args[1..].iter().any(|arg| arg.eq_ignore_ascii_case(section.as_bytes())) {
                continue;
            }
            let body = self.info_section(section, now);
            if body.is_empty() {
                continue;
            }
            if !text.is_empty() {
                text.push_str("\r\n");
            }
            text.push_str(&body);
        }
        write_verbatim(out, text.as_bytes(), self.protocol);
    }

    /// One `INFO` section with its `# Title` line; empty if it has nothing.
    fn info_section(&mut self, section: &str, now: u64) -> String {
        let mut lines: Vec<String> = Vec::new();
        let info = &self.info;
        match section {
            "server" => {
                lines.push(format!("redis_version:{REDIS_VERSION}"));
                lines.push(format!("granule_version:{}", env!("CARGO_PKG_VERSION")));
                lines.push("redis_mode:standalone".into());
                lines.push(format!("os:{} {}", std::env::consts::OS, std::env::consts::ARCH));
                lines.push(format!("arch_bits:{}", usize::BITS));
                lines.extend(info.process_id.map(|pid| format!("process_id:{pid}")));
                lines.extend(info.tcp_port.map(|port| format!("tcp_port:{port}")));
                if let Some(seconds) = info.uptime_seconds {
                    lines.push(format!("uptime_in_seconds:{seconds}"));
                    lines.push(format!("uptime_in_days:{}", seconds / 86_400));
                }
                lines.extend(info.extra.iter().map(|(name, value)| format!("{name}:{value}")));
            }
            "clients" => {
                lines.extend(info.connected_clients.map(|n| format!("connected_clients:{n}")));
            }
            "stats" => {
                let stats = self.stats;
                lines.extend(info.total_connections_received.map(|n| format!("total_connections_received:{n}")));
                lines.push(format!("total_commands_processed:{}", stats.commands_processed));
                lines.push(format!("expired_keys:{}", stats.expired_keys));
                lines.push(format!("keyspace_hits:{}", stats.keyspace_hits));
                lines.push(format!("keyspace_misses:{}", stats.keyspace_misses));
            }
            "replication" => {
                lines.push("role:master".into());
                lines.push("connected_slaves:0".into());
            }
            "keyspace" => {
                for db in 0..DATABASES {
                    let (keys, expires) = self.db_counts(db, now);
                    if keys > 0 {
                        lines.push(format!("db{db}:keys={keys},expires={expires},avg_ttl=0"));
                    }
                }
                // Redis writes the title even with no database to list.
                return format!("# Keyspace\r\n{}", lines.iter().map(|l| format!("{l}\r\n")).collect::<String>());
            }
            _ => {}
        }
        if lines.is_empty() {
            return String::new();
        }
        let mut title = section.to_string();
        title[..1].make_ascii_uppercase();
        let mut body = format!("# {title}\r\n");
        for line in lines {
            // A line must stay one line, whatever the caller put in `extra`.
            body.push_str(&line.replace(['\r', '\n'], " "));
            body.push_str("\r\n");
        }
        body
    }

    /// `COMMAND`, `COMMAND COUNT`, `COMMAND INFO [name ...]`, `COMMAND LIST`,
    /// `COMMAND DOCS [name ...]` (no documentation: an empty map).
    pub(crate) fn cmd_command(&mut self, args: &[&[u8]], out: &mut Vec<u8>) {
        let Some(sub) = args.get(1) else {
            write_array_header(out, table::all().count());
            table::all().for_each(|spec| write_command_info(out, spec));
            return;
        };
        let arity = match subcommand(sub, &[("count", 2), ("docs", -2), ("info", -2), ("list", -2)]) {
            Some(found) => found,
            None => return write_unknown_subcommand(out, args),
        };
        if !arity_ok(arity.1, args.len()) {
            return write_arity_error(out, &format!("command|{}", arity.0));
        }
        match arity.0 {
            "count" => write_integer(out, table::all().count() as i64),
            "docs" => write_map_header(out, 0, self.protocol),
            "info" => {
                write_array_header(out, args.len() - 2);
                for name in &args[2..] {
                    match lookup(name) {
                        Some(spec) => write_command_info(out, spec),
                        None => write_null(out, self.protocol),
                    }
                }
            }
            _ if args.len() > 2 => write_error(out, SYNTAX),
            _ => {
                write_array_header(out, table::all().count());
                table::all().for_each(|spec| write_bulk(out, spec.text.as_bytes()));
            }
        }
    }

    /// `CONFIG GET pattern [pattern ...]`, `CONFIG SET` (nothing can be
    /// set), `CONFIG RESETSTAT`.
    pub(crate) fn cmd_config(&mut self, args: &[&[u8]], out: &mut Vec<u8>) {
        let Some(found) = subcommand(args[1], &[("get", -3), ("set", -4), ("resetstat", 2)]) else {
            return write_unknown_subcommand(out, args);
        };
        if !arity_ok(found.1, args.len()) {
            return write_arity_error(out, &format!("config|{}", found.0));
        }
        match found.0 {
            "get" => {
                let matching: Vec<&(&str, &str)> = CONFIG
                    .iter()
                    .filter(|(name, _)| {
                        args[2..].iter().any(|pattern| glob_match(pattern, name.as_bytes(), Case::Insensitive))
                    })
                    .collect();
                write_map_header(out, matching.len(), self.protocol);
                for (name, value) in matching {
                    write_bulk(out, name.as_bytes());
                    write_bulk(out, value.as_bytes());
                }
            }
            "set" => {
                let mut message = b"ERR Unknown option or number of arguments for CONFIG SET - '".to_vec();
                message.extend_from_slice(c_string(args[2], usize::MAX));
                message.push(b'\'');
                write_error(out, &message);
            }
            _ => {
                self.stats = Default::default();
                write_ok(out);
            }
        }
    }

    /// `CLIENT SETNAME|GETNAME|ID|SETINFO`.
    pub(crate) fn cmd_client(&mut self, session: &mut Session, args: &[&[u8]], out: &mut Vec<u8>) {
        let table = [("setname", 3), ("getname", 2), ("id", 2), ("setinfo", 4)];
        let Some(found) = subcommand(args[1], &table) else {
            return write_unknown_subcommand(out, args);
        };
        if !arity_ok(found.1, args.len()) {
            return write_arity_error(out, &format!("client|{}", found.0));
        }
        match found.0 {
            "setname" => match valid_client_name(args[2]) {
                true => {
                    session.name = (!args[2].is_empty()).then(|| args[2].to_vec());
                    write_ok(out);
                }
                false => write_error(out, b"ERR Client names cannot contain spaces, newlines or special characters."),
            },
            "getname" => match &session.name {
                Some(name) => write_bulk(out, name),
                None => write_null(out, self.protocol),
            },
            "id" => {
                let id = self.session_id(session);
                write_integer(out, i64::try_from(id).unwrap_or(i64::MAX));
            }
            _ => {
                let (attribute, value) = (args[2], args[3]);
                let slot = if attribute.eq_ignore_ascii_case(b"lib-name") {
                    &mut session.lib_name
                } else if attribute.eq_ignore_ascii_case(b"lib-ver") {
                    &mut session.lib_version
                } else {
                    let mut message = b"ERR Unrecognized option '".to_vec();
                    message.extend_from_slice(c_string(attribute, usize::MAX));
                    message.push(b'\'');
                    return write_error(out, &message);
                };
                if !valid_client_name(value) {
                    let mut message = c_string(attribute, usize::MAX).to_vec();
                    message.extend_from_slice(b" cannot contain spaces, newlines or special characters.");
                    message.splice(0..0, *b"ERR ");
                    return write_error(out, &message);
                }
                *slot = (!value.is_empty()).then(|| value.to_vec());
                write_ok(out);
            }
        }
    }

    /// `HELLO [protover [AUTH user pass] [SETNAME name]]`: switches the
    /// session to RESP2 or RESP3 and describes the server.
    pub(crate) fn cmd_hello(&mut self, session: &mut Session, args: &[&[u8]], out: &mut Vec<u8>) {
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
        let id = self.session_id(session);
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

/// The entry of `table` (name, arity) whose name is `sub`, in any case.
pub(crate) fn subcommand(sub: &[u8], table: &[(&'static str, i32)]) -> Option<(&'static str, i32)> {
    table.iter().copied().find(|(name, _)| sub.eq_ignore_ascii_case(name.as_bytes()))
}

/// `-ERR unknown subcommand '<sub>'. Try <COMMAND> HELP.`
pub(crate) fn write_unknown_subcommand(out: &mut Vec<u8>, args: &[&[u8]]) {
    let mut message = b"ERR unknown subcommand '".to_vec();
    message.extend_from_slice(c_string(args[1], 128));
    message.extend_from_slice(b"'. Try ");
    message.extend_from_slice(&c_string(args[0], usize::MAX).to_ascii_uppercase());
    message.extend_from_slice(b" HELP.");
    write_error(out, &message);
}

/// One `COMMAND INFO` entry (Redis 7's ten fields; ACL categories, tips,
/// key specs and subcommands are left empty).
fn write_command_info(out: &mut Vec<u8>, spec: &Spec) {
    write_array_header(out, 10);
    write_bulk(out, spec.text.as_bytes());
    write_integer(out, i64::from(spec.arity));
    let flags: Vec<&str> = spec.flags.names().collect();
    write_array_header(out, flags.len());
    for flag in flags {
        super::encode::write_simple(out, flag.as_bytes());
    }
    write_integer(out, i64::from(spec.first_key));
    write_integer(out, i64::from(spec.last_key));
    write_integer(out, i64::from(spec.key_step));
    for _ in 0..4 {
        write_array_header(out, 0);
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
fn valid_client_name(name: &[u8]) -> bool {
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
        assert_eq!(text(&mut store, "CONFIG GET *").matches('$').count(), 4);
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
    fn info_reports_the_keyspace_and_counters() {
        let mut store = Store::new();
        store.server_info_mut().connected_clients = Some(3);
        assert_eq!(text(&mut store, "INFO keyspace"), "$12\r\n# Keyspace\r\n\r\n");
        let _ = text(&mut store, "SET a 1 EX 100");
        let _ = text(&mut store, "SET b 1");
        assert_eq!(text(&mut store, "INFO keyspace"), "$44\r\n# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl=0\r\n\r\n");
        let all = text(&mut store, "INFO");
        assert!(all.contains("# Server\r\nredis_version:7.0.0\r\ngranule_version:"));
        assert!(all.contains("\r\n\r\n# Clients\r\nconnected_clients:3\r\n"));
        assert!(all.contains("total_commands_processed:5\r\n"));
        assert!(all.contains("# Keyspace\r\ndb0:keys=2"));
        assert_eq!(text(&mut store, "INFO nothing"), "$0\r\n\r\n");
    }

    #[test]
    fn time_answers_the_store_clock_at_millisecond_resolution() {
        let mut out = Vec::new();
        write_time(1_700_000_123_456, &mut out);
        assert_eq!(out, b"*2\r\n$10\r\n1700000123\r\n$6\r\n456000\r\n");
    }
}
