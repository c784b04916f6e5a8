//! The string commands beyond the hot path: `GETSET`, `GETEX`,
//! `INCRBYFLOAT`, `GETRANGE` (and its old name `SUBSTR`), `SETRANGE` and
//! `MSETNX`.
//!
//! Each follows its Redis 7.0 counterpart in `t_string.c`. `GETEX` takes
//! one expiry option (`EX`, `PX`, `EXAT`, `PXAT`, the same one repeated) or
//! `PERSIST`, checks the time only once the key is found to be a string,
//! and deletes the key when an absolute time is already past.
//! `INCRBYFLOAT` adds in C's `long double` and stores the sum as Redis
//! prints it ([`LongDouble`]), keeping the key's time to live. `SETRANGE`
//! pads with zero bytes and is bounded by [`MAX_STRING`], as Redis's
//! `proto-max-bulk-len` bounds it. `GETSET` and `MSETNX` clear the time to
//! live of what they set, as `SET` does.

use super::command::{
    expire_deadline, write_arity_error, TimeUnit, MAX_STRING, NOT_INTEGER, SYNTAX, TOO_LONG, WRONGTYPE,
};
use super::encode::{write_bulk, write_error, write_integer, write_null};
use super::long_double::LongDouble;
use super::number::parse_i64;
use super::store::{Store, Ttl, Value};
use super::table::{spec, Flags, Spec, KEY1};

const R: Flags = Flags::READONLY;
const WD: Flags = Flags::WRITE.or(Flags::DENYOOM);
const WF: Flags = Flags::WRITE.or(Flags::FAST);
const WDF: Flags = Flags::WRITE.or(Flags::DENYOOM).or(Flags::FAST);

/// The string commands beyond the hot path.
pub(crate) const COMMANDS: &[Spec] = &[
    spec("getset", 3, WDF, KEY1, |s, c| s.cmd_getset(c.args, c.now, c.out)),
    spec("getex", -2, WF, KEY1, |s, c| s.cmd_getex(c.args, c.now, c.out)),
    spec("incrbyfloat", 3, WDF, KEY1, |s, c| s.cmd_incrbyfloat(c.args, c.now, c.out)),
    spec("getrange", 4, R, KEY1, |s, c| s.cmd_getrange(c.args, c.now, c.out)),
    spec("substr", 4, R, KEY1, |s, c| s.cmd_getrange(c.args, c.now, c.out)),
    spec("setrange", 4, WD, KEY1, |s, c| s.cmd_setrange(c.args, c.now, c.out)),
    spec("msetnx", -3, WD, (1, -1, 2), |s, c| s.cmd_msetnx(c.args, c.now, c.out)),
];

/// What `GETEX` does to the key's time to live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expiry<'a> {
    /// Nothing.
    Keep,
    /// Removes it.
    Persist,
    /// Sets it: the unit and the argument.
    Set(TimeUnit, &'a [u8]),
}

/// Parses `GETEX`'s options as Redis's `parseExtendedStringArgumentsOrReply`
/// does for `GET`: one of `EX`/`PX`/`EXAT`/`PXAT` with its argument (the
/// same one may repeat, the last wins) or `PERSIST` (which may repeat).
fn parse_getex_options<'a>(options: &[&'a [u8]]) -> Option<Expiry<'a>> {
    let mut expiry = Expiry::Keep;
    let mut i = 0;
    while i < options.len() {
        let option = options[i];
        if option.eq_ignore_ascii_case(b"PERSIST") && matches!(expiry, Expiry::Keep | Expiry::Persist) {
            expiry = Expiry::Persist;
        } else {
            let unit = TimeUnit::from_option(option)?;
            let compatible = match expiry {
                Expiry::Keep => true,
                Expiry::Persist => false,
                Expiry::Set(previous, _) => previous == unit,
            };
            let argument = options.get(i + 1).filter(|_| compatible)?;
            expiry = Expiry::Set(unit, argument);
            i += 1;
        }
        i += 1;
    }
    Some(expiry)
}

impl Store {
    /// `GETSET key value`: the old value (or null), then a plain `SET`.
    fn cmd_getset(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        match self.get(args[1], now) {
            None => write_null(out, self.protocol),
            Some(Value::String(old)) => write_bulk(out, old),
            Some(_) => return write_error(out, WRONGTYPE),
        }
        self.set_string(args[1], args[2], Ttl::Clear, now);
    }

    /// `GETEX key [EX s | PX ms | EXAT s | PXAT ms | PERSIST]`.
    fn cmd_getex(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        let Some(expiry) = parse_getex_options(&args[2..]) else {
            return write_error(out, SYNTAX);
        };
        let key = args[1];
        match self.get(key, now) {
            None => return write_null(out, protocol),
            Some(Value::String(_)) => {}
            Some(_) => return write_error(out, WRONGTYPE),
        }
        let deadline = match expiry {
            Expiry::Set(unit, text) => match expire_deadline(text, unit, now, "getex") {
                Ok(deadline) => Some(deadline),
                Err(message) => return write_error(out, &message),
            },
            Expiry::Keep | Expiry::Persist => None,
        };
        // Read, not reached for a change: a `GETEX` that changes no
        // deadline leaves the key's watchers alone, as in Redis.
        if let Some(Value::String(data)) = self.get(key, now) {
            write_bulk(out, data);
        }
        match (expiry, deadline) {
            // An absolute time already past deletes the key, as in Redis.
            (_, Some(deadline)) if deadline <= now => {
                self.remove(key, now);
            }
            (_, Some(deadline)) => {
                self.set_deadline(key, Ttl::At(deadline), now);
            }
            // Only a deadline removed is a change: a watch of a key that
            // had none stays clean.
            (Expiry::Persist, None) => {
                self.persist(key, now);
            }
            _ => {}
        }
    }

    /// `INCRBYFLOAT key increment`, in `long double` as Redis does.
    fn cmd_incrbyfloat(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        const NOT_FLOAT: &[u8] = b"ERR value is not a valid float";
        let current = match self.get(args[1], now) {
            None => Some(LongDouble::ZERO),
            Some(Value::String(data)) => LongDouble::parse(data),
            Some(_) => return write_error(out, WRONGTYPE),
        };
        let Some(current) = current else {
            return write_error(out, NOT_FLOAT);
        };
        let Some(delta) = LongDouble::parse(args[2]) else {
            return write_error(out, NOT_FLOAT);
        };
        let sum = current + delta;
        if sum.is_infinite() {
            return write_error(out, b"ERR increment would produce NaN or Infinity");
        }
        let text = sum.to_human();
        self.set_string(args[1], &text, Ttl::Keep, now);
        write_bulk(out, &text);
    }

    /// `GETRANGE key start end` (and `SUBSTR`): bytes `start..=end`,
    /// negative positions counting from the end.
    fn cmd_getrange(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let (Some(start), Some(end)) = (parse_i64(args[2]), parse_i64(args[3])) else {
            return write_error(out, NOT_INTEGER);
        };
        let data: &[u8] = match self.get(args[1], now) {
            None => &[],
            Some(Value::String(data)) => data,
            Some(_) => return write_error(out, WRONGTYPE),
        };
        write_bulk(out, substring(data, start, end));
    }

    /// `SETRANGE key offset value`: overwrites from `offset`, padding with
    /// zero bytes; the new length.
    fn cmd_setrange(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let (key, value) = (args[1], args[3]);
        let Some(offset) = parse_i64(args[2]) else {
            return write_error(out, NOT_INTEGER);
        };
        let Ok(offset) = usize::try_from(offset) else {
            return write_error(out, b"ERR offset is out of range");
        };
        let fits = offset.checked_add(value.len()).is_some_and(|end| end <= MAX_STRING);
        match self.get_mut(key, now) {
            None if value.is_empty() => write_integer(out, 0),
            None if !fits => write_error(out, TOO_LONG),
            None => {
                let mut data = vec![0; offset];
                data.extend_from_slice(value);
                write_integer(out, data.len() as i64);
                self.insert(key, Value::String(data), Ttl::Clear, now);
            }
            // Nothing written, nothing changed: the key's watchers are left
            // alone, as in Redis.
            Some(Value::String(data)) if value.is_empty() => {
                write_integer(out, data.len() as i64);
                self.unchanged(key);
            }
            Some(Value::String(_)) if !fits => write_error(out, TOO_LONG),
            Some(Value::String(data)) => {
                let end = offset + value.len();
                if data.len() < end {
                    data.resize(end, 0);
                }
                data[offset..end].copy_from_slice(value);
                write_integer(out, data.len() as i64);
            }
            Some(_) => write_error(out, WRONGTYPE),
        }
    }

    /// `MSETNX key value [key value ...]`: sets them all only if none of
    /// the keys exists.
    fn cmd_msetnx(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        if args.len() % 2 == 0 {
            return write_arity_error(out, "msetnx");
        }
        if args[1..].iter().step_by(2).any(|key| self.contains(key, now)) {
            return write_integer(out, 0);
        }
        for pair in args[1..].chunks_exact(2) {
            self.set_string(pair[0], pair[1], Ttl::Clear, now);
        }
        write_integer(out, 1);
    }
}

/// Redis's `GETRANGE` of `data`: positions clamped, negative ones counted
/// from the end, empty when the range is.
fn substring(data: &[u8], start: i64, end: i64) -> &[u8] {
    if start < 0 && end < 0 && start > end {
        return &[];
    }
    let len = data.len() as i64;
    let start = if start < 0 { start + len } else { start }.max(0);
    let end = if end < 0 { end + len } else { end }.max(0).min(len - 1);
    if start > end || len == 0 {
        return &[];
    }
    &data[start as usize..=end as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::resp::testing::run_at as run;

    #[test]
    fn substrings_follow_redis() {
        let text = b"Hello World";
        assert_eq!(substring(text, 0, 4), b"Hello");
        assert_eq!(substring(text, -5, -1), b"World");
        assert_eq!(substring(text, -1, -5), b"");
        assert_eq!(substring(text, 5, 2), b"");
        assert_eq!(substring(text, 0, i64::MAX), text);
        assert_eq!(substring(text, i64::MIN, 0), b"H");
        assert_eq!(substring(b"", 0, -1), b"");
        assert_eq!(substring(text, 100, 200), b"");
    }

    #[test]
    fn getex_options_follow_redis() {
        assert_eq!(parse_getex_options(&[]), Some(Expiry::Keep));
        assert_eq!(parse_getex_options(&[b"persist", b"PERSIST"]), Some(Expiry::Persist));
        assert_eq!(parse_getex_options(&[b"EX", b"1", b"ex", b"2"]), Some(Expiry::Set(TimeUnit::Seconds, b"2")));
        assert_eq!(parse_getex_options(&[b"EX", b"1", b"PX", b"2"]), None);
        assert_eq!(parse_getex_options(&[b"EX", b"1", b"PERSIST"]), None);
        assert_eq!(parse_getex_options(&[b"PERSIST", b"EX", b"1"]), None);
        assert_eq!(parse_getex_options(&[b"EX"]), None);
        assert_eq!(parse_getex_options(&[b"KEEPTTL"]), None);
    }

    #[test]
    fn string_commands_follow_redis() {
        let mut store = Store::new();
        let replies = run(
            &mut store,
            1000,
            &[
                "GETSET k v1",
                "GETSET k v2",
                "SETRANGE k 4 xy",
                "GET k",
                "SETRANGE k -1 x",
                "SETRANGE n 0 ",
                "SETRANGE k 536870911 ab",
                "GETRANGE k 0 1",
                "SUBSTR k -2 -1",
                "GETRANGE k a 1",
                "GETEX k PX 5000",
                "PTTL k",
                "GETEX k PERSIST",
                "PTTL k",
                "GETEX k EX 0",
                "GETEX k PXAT 1000",
                "EXISTS k",
                "MSETNX a 1 b 2",
                "MSETNX b 3 c 4",
                "MSETNX a",
                "INCRBYFLOAT f 10.5",
                "INCRBYFLOAT f 0.1",
                "INCRBYFLOAT f 1e5000",
                "INCRBYFLOAT a inf",
            ],
        );
        assert_eq!(
            replies,
            concat!(
                "$-1\r\n$2\r\nv1\r\n:6\r\n$6\r\nv2\0\0xy\r\n",
                "-ERR offset is out of range\r\n",
                ":0\r\n",
                "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n",
                "$2\r\nv2\r\n$2\r\nxy\r\n",
                "-ERR value is not an integer or out of range\r\n",
                "$6\r\nv2\0\0xy\r\n:5000\r\n$6\r\nv2\0\0xy\r\n:-1\r\n",
                "-ERR invalid expire time in 'getex' command\r\n",
                "$6\r\nv2\0\0xy\r\n:0\r\n",
                ":1\r\n:0\r\n",
                "-ERR wrong number of arguments for 'msetnx' command\r\n",
                "$4\r\n10.5\r\n$4\r\n10.6\r\n",
                "-ERR value is not a valid float\r\n",
                "-ERR increment would produce NaN or Infinity\r\n",
            )
        );
    }
}
