//! The command executor: one request's arguments in, its reply out.
//!
//! [`Store::execute_in`] is the single entry point: it looks the command up
//! (case-insensitively, without allocating), checks its arity against the
//! table as Redis does, then hands the arguments to one handler per command,
//! which writes exactly one reply into the output buffer. Handlers
//! reproduce Redis 7's reply types and error texts byte for byte — clients
//! and their test suites match on them — and validate every argument before
//! changing anything, so a command either happens completely or not at all.
//!
//! This file holds the dispatch, the hot path's table, the first string
//! commands and the key commands; `strings.rs` has the other string
//! commands, `hashes.rs` the hash commands, `zsets.rs`, `zrange.rs` and
//! `zsetops.rs` the sorted-set commands, and `server.rs` the connection and
//! server commands (`PING`, `HELLO`, `INFO`, `CONFIG`…).
//! Nothing here panics on any input, and a reply is at most proportional to
//! the request plus the data it reads.

use super::encode::{write_array_header, write_bulk, write_error, write_integer, write_null};
use super::number::{parse_i64, write_i64};
use super::session::Session;
use super::store::{Store, Ttl, Value};
use super::table::{lookup, resolve, spec, Call, Flags, Spec, ALL_KEYS, KEY1, NO_KEYS};

/// What the connection does after a command.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Keep reading requests.
    Continue,
    /// Send the replies written so far, then close (after `QUIT` or a
    /// protocol error).
    Close,
}

pub(crate) const WRONGTYPE: &[u8] = b"WRONGTYPE Operation against a key holding the wrong kind of value";
pub(crate) const SYNTAX: &[u8] = b"ERR syntax error";
pub(crate) const NOT_INTEGER: &[u8] = b"ERR value is not an integer or out of range";
pub(crate) const NOT_FLOAT: &[u8] = b"ERR value is not a valid float";
const OVERFLOW: &[u8] = b"ERR increment or decrement would overflow";
pub(crate) const TOO_LONG: &[u8] = b"ERR string exceeds maximum allowed size (proto-max-bulk-len)";

/// Largest string value (Redis's `proto-max-bulk-len` default): bounds what
/// `APPEND` can grow.
pub const MAX_STRING: usize = 512 << 20;

/// The `+OK` reply.
pub(crate) fn write_ok(out: &mut Vec<u8>) {
    out.extend_from_slice(b"+OK\r\n");
}

/// Flags of a command that writes.
const W: Flags = Flags::WRITE;
/// Flags of a write that may grow memory.
const WD: Flags = Flags::WRITE.or(Flags::DENYOOM);
/// Flags of a fast write that may grow memory.
const WDF: Flags = Flags::WRITE.or(Flags::DENYOOM).or(Flags::FAST);
/// Flags of a fast write.
const WF: Flags = Flags::WRITE.or(Flags::FAST);
/// Flags of a fast read.
const RF: Flags = Flags::READONLY.or(Flags::FAST);

/// The hot path's commands, scanned before any other table.
pub(crate) const HOT: &[Spec] = &[
    spec("get", 2, RF, KEY1, |s, c| s.cmd_get(c.args[1], c.now, c.out)),
    spec("set", -3, WD, KEY1, |s, c| s.cmd_set(c.args, c.now, c.out)),
    spec("incr", 2, WDF, KEY1, |s, c| s.incr_by(c.args[1], 1, c.now, c.out)),
    spec("ping", -1, Flags::FAST, NO_KEYS, |s, c| s.cmd_ping(c.session, c.args, c.out)),
    spec("mget", -2, RF, ALL_KEYS, |s, c| s.cmd_mget(c.args, c.now, c.out)),
    spec("mset", -3, WD, (1, -1, 2), |s, c| s.cmd_mset(c.args, c.now, c.out)),
];

/// The string and key commands.
pub(crate) const COMMANDS: &[Spec] = &[
    spec("setex", 4, WD, KEY1, |s, c| s.cmd_setex(c.args, TimeUnit::Seconds, c.now, c.out)),
    spec("psetex", 4, WD, KEY1, |s, c| s.cmd_setex(c.args, TimeUnit::Millis, c.now, c.out)),
    spec("setnx", 3, WDF, KEY1, |s, c| s.cmd_setnx(c.args, c.now, c.out)),
    spec("getdel", 2, WF, KEY1, |s, c| s.cmd_getdel(c.args[1], c.now, c.out)),
    spec("del", -2, W, ALL_KEYS, |s, c| {
        let removed = c.args[1..].iter().filter(|key| s.remove(key, c.now)).count();
        write_integer(c.out, removed as i64);
    }),
    spec("exists", -2, RF, ALL_KEYS, |s, c| {
        let found = c.args[1..].iter().filter(|key| s.contains(key, c.now)).count();
        write_integer(c.out, found as i64);
    }),
    spec("decr", 2, WDF, KEY1, |s, c| s.incr_by(c.args[1], -1, c.now, c.out)),
    spec("incrby", 3, WDF, KEY1, |s, c| match parse_i64(c.args[2]) {
        Some(delta) => s.incr_by(c.args[1], delta, c.now, c.out),
        None => write_error(c.out, NOT_INTEGER),
    }),
    spec("decrby", 3, WDF, KEY1, |s, c| match parse_i64(c.args[2]) {
        Some(i64::MIN) => write_error(c.out, b"ERR decrement would overflow"),
        Some(delta) => s.incr_by(c.args[1], -delta, c.now, c.out),
        None => write_error(c.out, NOT_INTEGER),
    }),
    spec("append", 3, WDF, KEY1, |s, c| s.cmd_append(c.args[1], c.args[2], c.now, c.out)),
    spec("strlen", 2, RF, KEY1, |s, c| s.cmd_strlen(c.args[1], c.now, c.out)),
    spec("type", 2, RF, KEY1, |s, c| {
        let name = s.get_mut(c.args[1], c.now).map_or("none", |value| value.type_name());
        c.out.push(b'+');
        c.out.extend_from_slice(name.as_bytes());
        c.out.extend_from_slice(b"\r\n");
    }),
    spec("ttl", 2, RF, KEY1, |s, c| s.cmd_ttl(c.args[1], false, c.now, c.out)),
    spec("pttl", 2, RF, KEY1, |s, c| s.cmd_ttl(c.args[1], true, c.now, c.out)),
    spec("expire", -3, WF, KEY1, |s, c| s.cmd_expire(c.args, TimeUnit::Seconds, "expire", c.now, c.out)),
    spec("pexpire", -3, WF, KEY1, |s, c| s.cmd_expire(c.args, TimeUnit::Millis, "pexpire", c.now, c.out)),
    spec("persist", 2, WF, KEY1, |s, c| {
        let had = s.persist(c.args[1], c.now);
        write_integer(c.out, i64::from(had));
    }),
];

/// Whether `count` arguments satisfy `arity` (exact if positive, a minimum
/// if negative).
pub(crate) fn arity_ok(arity: i32, count: usize) -> bool {
    let wanted = arity.unsigned_abs() as usize;
    if arity >= 0 {
        count == wanted
    } else {
        count >= wanted
    }
}

/// `-ERR wrong number of arguments for '<name>' command`.
pub(crate) fn write_arity_error(out: &mut Vec<u8>, name: &str) {
    out.extend_from_slice(b"-ERR wrong number of arguments for '");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"' command\r\n");
}

/// Redis's reply to an unknown command: the name and the first arguments
/// (each cut at a NUL byte, 128 bytes of name and about 128 of arguments),
/// with CR and LF turned into spaces.
fn write_unknown_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    let mut message = b"ERR unknown command '".to_vec();
    message.extend_from_slice(c_string(args[0], 128));
    message.extend_from_slice(b"', with args beginning with: ");
    let mut listed = 0;
    for arg in &args[1..] {
        if listed >= 128 {
            break;
        }
        let shown = c_string(arg, 128 - listed);
        message.push(b'\'');
        message.extend_from_slice(shown);
        message.extend_from_slice(b"' ");
        listed += shown.len() + 3;
    }
    write_error(out, &message);
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

/// `bytes` as C's `%.<max>s` prints it: up to the first NUL, at most `max`.
pub(crate) fn c_string(bytes: &[u8], max: usize) -> &[u8] {
    let end = bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len()).min(max);
    &bytes[..end]
}

/// How a `SET`/`EXPIRE` time argument counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimeUnit {
    /// `EX`: seconds from now.
    Seconds,
    /// `PX`: milliseconds from now.
    Millis,
    /// `EXAT`: a Unix time in seconds.
    UnixSeconds,
    /// `PXAT`: a Unix time in milliseconds.
    UnixMillis,
}

impl TimeUnit {
    pub(crate) fn from_option(option: &[u8]) -> Option<TimeUnit> {
        [
            ("EX", TimeUnit::Seconds),
            ("PX", TimeUnit::Millis),
            ("EXAT", TimeUnit::UnixSeconds),
            ("PXAT", TimeUnit::UnixMillis),
        ]
        .into_iter()
        .find(|(text, _)| option.eq_ignore_ascii_case(text.as_bytes()))
        .map(|(_, unit)| unit)
    }

    fn in_seconds(self) -> bool {
        matches!(self, TimeUnit::Seconds | TimeUnit::UnixSeconds)
    }

    fn relative(self) -> bool {
        matches!(self, TimeUnit::Seconds | TimeUnit::Millis)
    }
}

/// `now_ms` as Redis's signed time.
fn signed(now_ms: u64) -> i64 {
    i64::try_from(now_ms).unwrap_or(i64::MAX)
}

impl Store {
    /// Executes one command on behalf of the store's own session (for
    /// callers without connections) and appends its reply to `out`, then
    /// serves the clients blocked on keys it created. An empty argument
    /// list is an empty request: no reply. This session has no client id,
    /// so its blocking commands never block (they time out at once); it
    /// starts on database 0 (a `SELECT` through it holds for later calls).
    pub fn execute(&mut self, args: &[&[u8]], now_ms: u64, out: &mut Vec<u8>) -> Flow {
        let mut session = std::mem::take(&mut self.session);
        // Without a connection there is nobody to answer later: no blocking.
        self.deny_blocking(true);
        let flow = if Store::refuse_in_pubsub_context(&session, args, out) {
            Flow::Continue
        } else {
            self.execute_in(&mut session, args, now_ms, out)
        };
        self.deny_blocking(false);
        self.session = session;
        self.serve_ready_keys(now_ms);
        flow
    }

    /// The entry that would run `args` — a known command (or subcommand)
    /// with a valid argument count; otherwise the error Redis gives is
    /// appended to `out`.
    pub(crate) fn check(args: &[&[u8]], out: &mut Vec<u8>) -> Option<&'static Spec> {
        let &name = args.first()?;
        let Some(spec) = lookup(name) else {
            write_unknown_command(out, args);
            return None;
        };
        let Some(spec) = resolve(spec, args) else {
            write_unknown_subcommand(out, args);
            return None;
        };
        if !arity_ok(spec.arity, args.len()) {
            write_arity_error(out, spec.text);
            return None;
        }
        Some(spec)
    }

    /// Executes one command for the client `session` (its name, its id, its
    /// database) and appends its reply to `out`. `now_ms` is the current
    /// time in milliseconds, the only clock the store sees. While the
    /// command runs the store's accessors act on the session's database;
    /// after it, on database 0 again.
    pub fn execute_in(&mut self, session: &mut Session, args: &[&[u8]], now_ms: u64, out: &mut Vec<u8>) -> Flow {
        let Some(&name) = args.first() else {
            return Flow::Continue;
        };
        let Some(spec) = lookup(name) else {
            write_unknown_command(out, args);
            return Flow::Continue;
        };
        let Some(spec) = resolve(spec, args) else {
            write_unknown_subcommand(out, args);
            return Flow::Continue;
        };
        if !arity_ok(spec.arity, args.len()) {
            write_arity_error(out, spec.text);
            return Flow::Continue;
        }
        self.protocol = session.protocol();
        if session.id == 0 {
            session.id = self.next_client_id();
        }
        self.clients.touch(session, now_ms, spec.text);
        self.db = session.db;
        let start = out.len();
        let tracked = self.begin_command(spec.flags.has(Flags::WRITE));
        let mut call = Call { args, now: now_ms, out, session, flow: Flow::Continue };
        (spec.run)(self, &mut call);
        if tracked {
            self.end_tracked_command(call.out.get(start) == Some(&b'-'));
        }
        self.db = 0;
        // Counted once done, as Redis counts: `INFO` does not count itself.
        self.stats.commands_processed += 1;
        call.flow
    }

    /// `SETEX key seconds value` and `PSETEX key milliseconds value`.
    fn cmd_setex(&mut self, args: &[&[u8]], unit: TimeUnit, now: u64, out: &mut Vec<u8>) {
        let name = if unit == TimeUnit::Seconds { "setex" } else { "psetex" };
        match expire_deadline(args[2], unit, now, name) {
            Ok(deadline) => {
                self.set_string(args[1], args[3], Ttl::At(deadline), now);
                write_ok(out);
            }
            Err(message) => write_error(out, &message),
        }
    }

    fn cmd_setnx(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let fresh = !self.contains(args[1], now);
        if fresh {
            self.set_string(args[1], args[2], Ttl::Clear, now);
        }
        write_integer(out, i64::from(fresh));
    }

    fn cmd_get(&mut self, key: &[u8], now: u64, out: &mut Vec<u8>) {
        match self.get(key, now) {
            None => write_null(out, self.protocol),
            Some(Value::String(data)) => write_bulk(out, data),
            Some(_) => write_error(out, WRONGTYPE),
        }
    }

    /// `SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]`.
    fn cmd_set(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let (key, value) = (args[1], args[2]);
        let (mut nx, mut xx, mut get, mut keep_ttl) = (false, false, false, false);
        let mut expire: Option<(TimeUnit, &[u8])> = None;
        let mut i = 3;
        while i < args.len() {
            let option = args[i];
            let unit = TimeUnit::from_option(option);
            if option.eq_ignore_ascii_case(b"NX") && !xx {
                nx = true;
            } else if option.eq_ignore_ascii_case(b"XX") && !nx {
                xx = true;
            } else if option.eq_ignore_ascii_case(b"GET") {
                get = true;
            } else if option.eq_ignore_ascii_case(b"KEEPTTL") && expire.is_none() {
                keep_ttl = true;
            } else if let Some(unit) = unit.filter(|&unit| {
                // The same unit may repeat (the last wins), as in Redis.
                !keep_ttl && i + 1 < args.len() && expire.map_or(true, |(previous, _)| previous == unit)
            }) {
                expire = Some((unit, args[i + 1]));
                i += 1;
            } else {
                return write_error(out, SYNTAX);
            }
            i += 1;
        }
        let ttl = match expire {
            None if keep_ttl => Ttl::Keep,
            None => Ttl::Clear,
            Some((unit, text)) => match expire_deadline(text, unit, now, "set") {
                Ok(deadline) => Ttl::At(deadline),
                Err(message) => return write_error(out, &message),
            },
        };
        if get {
            match self.get(key, now) {
                None => write_null(out, self.protocol),
                Some(Value::String(old)) => write_bulk(out, old),
                Some(_) => return write_error(out, WRONGTYPE),
            }
        }
        if nx || xx {
            let exists = self.contains(key, now);
            if (nx && exists) || (xx && !exists) {
                if !get {
                    write_null(out, self.protocol);
                }
                return;
            }
        }
        self.set_string(key, value, ttl, now);
        if !get {
            write_ok(out);
        }
    }

    fn cmd_getdel(&mut self, key: &[u8], now: u64, out: &mut Vec<u8>) {
        match self.get(key, now) {
            None => return write_null(out, self.protocol),
            Some(Value::String(data)) => write_bulk(out, data),
            Some(_) => return write_error(out, WRONGTYPE),
        }
        self.remove(key, now);
    }

    fn incr_by(&mut self, key: &[u8], delta: i64, now: u64, out: &mut Vec<u8>) {
        match self.get_mut(key, now) {
            Some(Value::String(data)) => {
                let Some(current) = parse_i64(data) else {
                    return write_error(out, NOT_INTEGER);
                };
                let Some(next) = current.checked_add(delta) else {
                    return write_error(out, OVERFLOW);
                };
                data.clear();
                write_i64(data, next);
                write_integer(out, next);
            }
            Some(_) => write_error(out, WRONGTYPE),
            None => {
                let mut digits = Vec::with_capacity(20);
                write_i64(&mut digits, delta);
                self.insert(key, Value::String(digits), Ttl::Clear, now);
                write_integer(out, delta);
            }
        }
    }

    fn cmd_append(&mut self, key: &[u8], tail: &[u8], now: u64, out: &mut Vec<u8>) {
        match self.get_mut(key, now) {
            Some(Value::String(data)) => {
                if data.len() + tail.len() > MAX_STRING {
                    return write_error(out, TOO_LONG);
                }
                data.extend_from_slice(tail);
                write_integer(out, data.len() as i64);
            }
            Some(_) => write_error(out, WRONGTYPE),
            None => {
                self.set_string(key, tail, Ttl::Clear, now);
                write_integer(out, tail.len() as i64);
            }
        }
    }

    fn cmd_strlen(&mut self, key: &[u8], now: u64, out: &mut Vec<u8>) {
        match self.get(key, now) {
            None => write_integer(out, 0),
            Some(Value::String(data)) => write_integer(out, data.len() as i64),
            Some(_) => write_error(out, WRONGTYPE),
        }
    }

    fn cmd_mget(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        write_array_header(out, args.len() - 1);
        for key in &args[1..] {
            match self.get(key, now) {
                Some(Value::String(data)) => write_bulk(out, data),
                _ => write_null(out, self.protocol),
            }
        }
    }

    fn cmd_mset(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        if args.len() % 2 == 0 {
            return write_arity_error(out, "mset");
        }
        for pair in args[1..].chunks_exact(2) {
            self.set_string(pair[0], pair[1], Ttl::Clear, now);
        }
        write_ok(out);
    }

    fn cmd_ttl(&mut self, key: &[u8], millis: bool, now: u64, out: &mut Vec<u8>) {
        let reply = match self.deadline(key, now) {
            None => -2,
            Some(None) => -1,
            Some(Some(deadline)) => {
                let left = signed(deadline.saturating_sub(now));
                if millis {
                    left
                } else {
                    left.saturating_add(500) / 1000
                }
            }
        };
        write_integer(out, reply);
    }

    /// `EXPIRE key seconds [NX|XX|GT|LT]`, `PEXPIRE` in milliseconds, and
    /// `EXPIREAT`/`PEXPIREAT` with a Unix time in seconds or milliseconds.
    pub(crate) fn cmd_expire(&mut self, args: &[&[u8]], unit: TimeUnit, name: &str, now: u64, out: &mut Vec<u8>) {
        let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
        for option in &args[3..] {
            let flag = if option.eq_ignore_ascii_case(b"NX") {
                &mut nx
            } else if option.eq_ignore_ascii_case(b"XX") {
                &mut xx
            } else if option.eq_ignore_ascii_case(b"GT") {
                &mut gt
            } else if option.eq_ignore_ascii_case(b"LT") {
                &mut lt
            } else {
                let mut message = b"ERR Unsupported option ".to_vec();
                message.extend_from_slice(c_string(option, usize::MAX));
                return write_error(out, &message);
            };
            *flag = true;
        }
        if nx && (xx || gt || lt) {
            return write_error(out, b"ERR NX and XX, GT or LT options at the same time are not compatible");
        }
        if gt && lt {
            return write_error(out, b"ERR GT and LT options at the same time are not compatible");
        }
        let Some(amount) = parse_i64(args[2]) else {
            return write_error(out, NOT_INTEGER);
        };
        let invalid = || format!("ERR invalid expire time in '{name}' command").into_bytes();
        let millis = if unit.in_seconds() { amount.checked_mul(1000) } else { Some(amount) };
        let base = if unit.relative() { signed(now) } else { 0 };
        let Some(when) = millis.and_then(|ms| ms.checked_add(base)) else {
            return write_error(out, &invalid());
        };
        let key = args[1];
        let Some(current) = self.deadline(key, now) else {
            return write_integer(out, 0);
        };
        // A key without a deadline counts as expiring never (infinitely late).
        let refused = (nx && current.is_some())
            || (xx && current.is_none())
            || (gt && current.map_or(true, |deadline| when <= signed(deadline)))
            || (lt && current.is_some_and(|deadline| when >= signed(deadline)));
        if refused {
            return write_integer(out, 0);
        }
        if when <= signed(now) {
            self.remove(key, now);
        } else {
            // `when` is positive here, so the conversion cannot fail.
            self.set_deadline(key, Ttl::At(u64::try_from(when).unwrap_or(u64::MAX)), now);
        }
        write_integer(out, 1);
    }
}

/// The absolute deadline a `SET` expire option (or `SETEX`, `PSETEX`) asks
/// for, with Redis's checks: a positive integer whose deadline fits in a
/// signed 64-bit time. The error names the command, as Redis's does.
pub(crate) fn expire_deadline(text: &[u8], unit: TimeUnit, now: u64, command: &str) -> Result<u64, Vec<u8>> {
    let invalid = || format!("ERR invalid expire time in '{command}' command").into_bytes();
    let amount = parse_i64(text).ok_or_else(|| NOT_INTEGER.to_vec())?;
    if amount <= 0 || (unit.in_seconds() && amount > i64::MAX / 1000) {
        return Err(invalid());
    }
    let millis = if unit.in_seconds() { amount * 1000 } else { amount };
    let deadline = if unit.relative() { millis.checked_add(signed(now)).ok_or_else(invalid)? } else { millis };
    u64::try_from(deadline).map_err(|_| invalid())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::resp::testing::run_at as run;

    #[test]
    fn names_are_case_insensitive_and_arity_is_checked() {
        let mut store = Store::new();
        assert_eq!(
            run(&mut store, 0, &["set k v", "GeT k", "GET", "get a b"]),
            concat!(
                "+OK\r\n$1\r\nv\r\n",
                "-ERR wrong number of arguments for 'get' command\r\n",
                "-ERR wrong number of arguments for 'get' command\r\n"
            )
        );
    }

    #[test]
    fn unknown_commands_echo_their_first_arguments() {
        let mut store = Store::new();
        assert_eq!(
            run(&mut store, 0, &["FOO bar baz", "FOO"]),
            concat!(
                "-ERR unknown command 'FOO', with args beginning with: 'bar' 'baz' \r\n",
                "-ERR unknown command 'FOO', with args beginning with: \r\n"
            )
        );
        let mut out = Vec::new();
        let long = vec![b'x'; 300];
        let _ = store.execute(&[b"nope\r\n", &long, b"y"], 0, &mut out);
        let expected = format!("-ERR unknown command 'nope  ', with args beginning with: '{}' \r\n", "x".repeat(128));
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }

    #[test]
    fn set_options_follow_redis() {
        let mut store = Store::new();
        let replies = run(
            &mut store,
            5000,
            &[
                "SET a b EX 0",
                "SET a b EX abc",
                "SET a b NX XX",
                "SET a b EX 10 PX 10",
                "SET a b EX",
                "SET a b EX 10 ex 20",
                "TTL a",
                "SET a c NX",
                "SET z c XX",
                "SET a d XX GET EX 30",
                "SET a e KEEPTTL",
                "PTTL a",
                "SET a b PX 9223372036854775807",
                "SET a b EXAT 1",
                "EXISTS a",
            ],
        );
        assert_eq!(
            replies,
            concat!(
                "-ERR invalid expire time in 'set' command\r\n",
                "-ERR value is not an integer or out of range\r\n",
                "-ERR syntax error\r\n",
                "-ERR syntax error\r\n",
                "-ERR syntax error\r\n",
                "+OK\r\n",
                ":20\r\n",
                "$-1\r\n",
                "$-1\r\n",
                "$1\r\nb\r\n",
                "+OK\r\n",
                ":30000\r\n",
                "-ERR invalid expire time in 'set' command\r\n",
                "+OK\r\n",
                ":0\r\n",
            )
        );
    }

    #[test]
    fn setex_setnx_and_getdel_follow_redis() {
        let mut store = Store::new();
        let replies = run(
            &mut store,
            0,
            &[
                "SETEX a 0 v",
                "SETEX a abc v",
                "SETEX a 10 v",
                "TTL a",
                "PSETEX a -1 v",
                "PSETEX a 1000 v",
                "PTTL a",
                "SETNX a v",
                "SETNX b v",
                "GETDEL b",
                "GETDEL b",
                "HSET h a 1",
                "GETDEL h",
                "SETEX a 9223372036854775807 v",
            ],
        );
        assert_eq!(
            replies,
            concat!(
                "-ERR invalid expire time in 'setex' command\r\n",
                "-ERR value is not an integer or out of range\r\n",
                "+OK\r\n:10\r\n",
                "-ERR invalid expire time in 'psetex' command\r\n",
                "+OK\r\n:1000\r\n:0\r\n:1\r\n$1\r\nv\r\n$-1\r\n:1\r\n",
                "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
                "-ERR invalid expire time in 'setex' command\r\n",
            )
        );
    }

    #[test]
    fn counters_follow_string2ll() {
        let mut store = Store::new();
        let replies = run(
            &mut store,
            0,
            &[
                "INCR n",
                "INCRBY n 41",
                "DECR n",
                "SET big 9223372036854775807",
                "INCR big",
                "SET s 007",
                "INCR s",
                "DECRBY n -9223372036854775808",
                "HSET h f v",
                "INCR h",
                "GET n",
            ],
        );
        assert_eq!(
            replies,
            concat!(
                ":1\r\n:42\r\n:41\r\n+OK\r\n",
                "-ERR increment or decrement would overflow\r\n",
                "+OK\r\n-ERR value is not an integer or out of range\r\n",
                "-ERR decrement would overflow\r\n",
                ":1\r\n-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
                "$2\r\n41\r\n",
            )
        );
    }

    #[test]
    fn expire_options_and_ttls() {
        let mut store = Store::new();
        let replies = run(
            &mut store,
            5000,
            &[
                "SET a 1",
                "EXPIRE a 100 GT",
                "EXPIRE a 100 NX",
                "EXPIRE a 100 LT",
                "EXPIRE a 50 LT",
                "TTL a",
                "EXPIRE a 100 nx xx",
                "EXPIRE a 100 gt lt",
                "EXPIRE a 100 foo",
                "EXPIRE nokey 10",
                "PERSIST a",
                "PERSIST a",
                "TTL a",
                "TTL nokey",
                "PEXPIRE a -5",
                "EXISTS a",
                "EXPIRE a 9223372036854775807",
            ],
        );
        assert_eq!(
            replies,
            concat!(
                "+OK\r\n:0\r\n:1\r\n:0\r\n:1\r\n:50\r\n",
                "-ERR NX and XX, GT or LT options at the same time are not compatible\r\n",
                "-ERR GT and LT options at the same time are not compatible\r\n",
                "-ERR Unsupported option foo\r\n",
                ":0\r\n:1\r\n:0\r\n:-1\r\n:-2\r\n:1\r\n:0\r\n",
                "-ERR invalid expire time in 'expire' command\r\n",
            )
        );
    }

    #[test]
    fn keys_disappear_after_their_deadline() {
        let mut store = Store::new();
        assert_eq!(run(&mut store, 0, &["SET k v PX 100", "MSET a 1 b 2"]), "+OK\r\n+OK\r\n");
        assert_eq!(run(&mut store, 100, &["GET k", "DBSIZE"]), "$1\r\nv\r\n:3\r\n");
        assert_eq!(
            run(&mut store, 101, &["GET k", "DBSIZE", "MGET a k b"]),
            concat!("$-1\r\n:2\r\n", "*3\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n",)
        );
    }

    #[test]
    fn strings_append_and_measure() {
        let mut store = Store::new();
        assert_eq!(
            run(
                &mut store,
                0,
                &["APPEND s ab", "APPEND s cd", "STRLEN s", "STRLEN none", "TYPE s", "TYPE none", "DEL s s none"]
            ),
            ":2\r\n:4\r\n:4\r\n:0\r\n+string\r\n+none\r\n:1\r\n"
        );
    }
}
