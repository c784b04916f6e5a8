//! The keyspace commands: databases (`SELECT`, `DBSIZE`, `FLUSHDB`,
//! `FLUSHALL`, `SWAPDB`, `MOVE`), renaming and copying keys (`RENAME`,
//! `RENAMENX`, `COPY`), `UNLINK`, `TOUCH`, `RANDOMKEY`, and absolute
//! deadlines (`EXPIREAT`, `PEXPIREAT`, `EXPIRETIME`, `PEXPIRETIME`).
//!
//! They follow Redis 7.0's `db.c` and `expire.c`: database indexes are read
//! as 32-bit integers first (so `SELECT 2147483648` and `SELECT 16` fail
//! differently), `RENAME` carries the deadline and answers `OK` for a key
//! renamed to itself (`RENAMENX`: 0) but an error for a missing one, `COPY`
//! and `MOVE` refuse to overwrite unless told and refuse a key onto itself,
//! `UNLINK` is `DEL` (values are freed at once either way), `TOUCH` counts
//! the keys that exist, and `EXPIRETIME` rounds to the nearest second as
//! `TTL` does. `RANDOMKEY` draws from the store's seeded generator; finding
//! the drawn key walks the table, so it is linear in the database's size
//! where Redis's is constant.

use super::command::{write_ok, TimeUnit, NOT_INTEGER, SYNTAX};
use super::databases::is_db;
use super::encode::{write_bulk, write_error, write_integer, write_null};
use super::number::parse_i64;
use super::store::Store;
use super::table::{spec, Call, Flags, Spec, ALL_KEYS, KEY1, NO_KEYS};

/// Flags of a command that writes.
const W: Flags = Flags::WRITE;
/// Flags of a fast write.
const WF: Flags = Flags::WRITE.or(Flags::FAST);
/// Flags of a fast read.
const RF: Flags = Flags::READONLY.or(Flags::FAST);
/// The first two arguments are the keys.
const KEYS12: (i32, i32, i32) = (1, 2, 1);

/// The keyspace commands.
pub(crate) const KEYSPACE_COMMANDS: &[Spec] = &[
    spec("select", 2, Flags::LOADING.or(Flags::STALE).or(Flags::FAST), NO_KEYS, |s, c| s.cmd_select(c)),
    spec("dbsize", 1, RF, NO_KEYS, |s, c| {
        let keys = s.len(c.now);
        write_integer(c.out, keys as i64);
    }),
    spec("flushdb", -1, W, NO_KEYS, |s, c| s.cmd_flush(c.args, false, c.out)),
    spec("flushall", -1, W, NO_KEYS, |s, c| s.cmd_flush(c.args, true, c.out)),
    spec("swapdb", 3, WF, NO_KEYS, |s, c| s.cmd_swapdb(c.args, c.now, c.out)),
    spec("move", 3, WF, KEY1, |s, c| s.cmd_move(c.args, c.now, c.out)),
    spec("copy", -3, W.or(Flags::DENYOOM), KEYS12, |s, c| s.cmd_copy(c.args, c.now, c.out)),
    spec("rename", 3, W, KEYS12, |s, c| s.cmd_rename(c.args, false, c.now, c.out)),
    spec("renamenx", 3, WF, KEYS12, |s, c| s.cmd_rename(c.args, true, c.now, c.out)),
    spec("unlink", -2, WF, ALL_KEYS, |s, c| {
        let removed = c.args[1..].iter().filter(|key| s.remove(key, c.now)).count();
        write_integer(c.out, removed as i64);
    }),
    spec("touch", -2, RF, ALL_KEYS, |s, c| {
        let found = c.args[1..].iter().filter(|key| s.get(key, c.now).is_some()).count();
        write_integer(c.out, found as i64);
    }),
    spec("randomkey", 1, Flags::READONLY, NO_KEYS, |s, c| s.cmd_randomkey(c.now, c.out)),
    spec("expireat", -3, WF, KEY1, |s, c| s.cmd_expire(c.args, TimeUnit::UnixSeconds, "expireat", c.now, c.out)),
    spec("pexpireat", -3, WF, KEY1, |s, c| s.cmd_expire(c.args, TimeUnit::UnixMillis, "pexpireat", c.now, c.out)),
    spec("expiretime", 2, RF, KEY1, |s, c| s.cmd_expiretime(c.args[1], false, c.now, c.out)),
    spec("pexpiretime", 2, RF, KEY1, |s, c| s.cmd_expiretime(c.args[1], true, c.now, c.out)),
];

const OUT_OF_RANGE: &[u8] = b"ERR DB index is out of range";
const SAME_OBJECT: &[u8] = b"ERR source and destination objects are the same";

/// A database index argument, read as Redis's `getIntFromObjectOrReply`
/// then `selectDb` do: a 32-bit integer (else `invalid`, or Redis's own
/// texts), then a database that exists.
pub(crate) fn parse_db(arg: &[u8], invalid: Option<&[u8]>) -> Result<usize, Vec<u8>> {
    let value = match parse_i64(arg) {
        Some(value) if i32::try_from(value).is_ok() => value,
        Some(_) => {
            let range: &[u8] = b"ERR value is out of range, value must between -2147483648 and 2147483647";
            return Err(invalid.unwrap_or(range).to_vec());
        }
        None => return Err(invalid.unwrap_or(NOT_INTEGER).to_vec()),
    };
    if !is_db(value) {
        return Err(OUT_OF_RANGE.to_vec());
    }
    usize::try_from(value).map_err(|_| OUT_OF_RANGE.to_vec())
}

impl Store {
    /// `SELECT index`: the client's commands act on that database from now.
    fn cmd_select(&mut self, c: &mut Call<'_, '_>) {
        match parse_db(c.args[1], None) {
            Ok(db) => {
                c.session.db = db;
                self.db = db;
                // `CLIENT LIST` shows it (`db=`).
                self.clients.entry(c.session.id, c.now).db = db as i64;
                write_ok(c.out);
            }
            Err(message) => write_error(c.out, &message),
        }
    }

    /// `FLUSHDB [ASYNC|SYNC]` empties the selected database, `FLUSHALL
    /// [ASYNC|SYNC]` every one (both at once: freeing is not deferred).
    fn cmd_flush(&mut self, args: &[&[u8]], all: bool, out: &mut Vec<u8>) {
        match args {
            [_] => {}
            [_, mode] if mode.eq_ignore_ascii_case(b"ASYNC") || mode.eq_ignore_ascii_case(b"SYNC") => {}
            _ => return write_error(out, SYNTAX),
        }
        if all {
            self.flush();
        } else {
            self.flush_db(self.db);
        }
        write_ok(out);
    }

    /// `SWAPDB index1 index2`.
    fn cmd_swapdb(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let first = parse_db(args[1], Some(b"ERR invalid first DB index"));
        // Redis reads both as integers before checking either's range.
        let first = match first {
            Err(message) if message != OUT_OF_RANGE => return write_error(out, &message),
            other => other,
        };
        let second = parse_db(args[2], Some(b"ERR invalid second DB index"));
        match (first, second) {
            (Ok(a), Ok(b)) => {
                self.swap_dbs(a, b, now);
                write_ok(out);
            }
            (_, Err(message)) | (Err(message), _) => write_error(out, &message),
        }
    }

    /// `MOVE key db`.
    fn cmd_move(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let to = match parse_db(args[2], None) {
            Ok(to) => to,
            Err(message) => return write_error(out, &message),
        };
        if to == self.db {
            return write_error(out, SAME_OBJECT);
        }
        let moved = self.move_key(args[1], to, now);
        write_integer(out, i64::from(moved));
    }

    /// `COPY source destination [DB destination-db] [REPLACE]`.
    fn cmd_copy(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let (mut to, mut replace) = (self.db, false);
        let mut i = 3;
        while i < args.len() {
            if args[i].eq_ignore_ascii_case(b"REPLACE") {
                replace = true;
            } else if args[i].eq_ignore_ascii_case(b"DB") && i + 1 < args.len() {
                to = match parse_db(args[i + 1], None) {
                    Ok(to) => to,
                    Err(message) => return write_error(out, &message),
                };
                i += 1;
            } else {
                return write_error(out, SYNTAX);
            }
            i += 1;
        }
        if to == self.db && args[1] == args[2] {
            return write_error(out, SAME_OBJECT);
        }
        let copied = self.copy_key(args[1], to, args[2], replace, now);
        write_integer(out, i64::from(copied));
    }

    /// `RENAME key newkey` (`OK`) and `RENAMENX key newkey` (1, or 0 if
    /// `newkey` exists): the value and its deadline move.
    fn cmd_rename(&mut self, args: &[&[u8]], nx: bool, now: u64, out: &mut Vec<u8>) {
        let (source, destination) = (args[1], args[2]);
        if !self.contains(source, now) {
            return write_error(out, b"ERR no such key");
        }
        let answer = |out: &mut Vec<u8>, done: bool| match (nx, done) {
            (true, done) => write_integer(out, i64::from(done)),
            (false, _) => write_ok(out),
        };
        if source == destination {
            return answer(out, false);
        }
        let exists = self.contains(destination, now);
        if nx && exists {
            return answer(out, false);
        }
        if let Some(entry) = self.dbs[self.db].take(source) {
            self.dbs[self.db].put(destination, entry);
        }
        self.note_change(source);
        self.note_change(destination);
        self.signal_key_ready(destination);
        answer(out, true);
    }

    /// `RANDOMKEY`: a live key of the selected database, or null.
    fn cmd_randomkey(&mut self, now: u64, out: &mut Vec<u8>) {
        for attempt in 0..2 {
            let db = &self.dbs[self.db];
            if db.keys.is_empty() {
                break;
            }
            let drawn = self.random.below(db.keys.len());
            let Some((key, _)) = db.keys.iter().nth(drawn) else {
                break;
            };
            if attempt == 1 || db.is_live(key, now) {
                return write_bulk(out, key);
            }
            // An expired key was drawn: reclaim every expired key, so that
            // the next draw finds a live one.
            self.active_expire(now, usize::MAX);
        }
        write_null(out, self.protocol);
    }

    /// `EXPIRETIME key` (seconds, rounded) and `PEXPIRETIME key`
    /// (milliseconds): the Unix time the key expires at, -1 if never, -2 if
    /// there is no such key.
    fn cmd_expiretime(&mut self, key: &[u8], millis: bool, now: u64, out: &mut Vec<u8>) {
        let reply = match self.deadline(key, now) {
            None => -2,
            Some(None) => -1,
            Some(Some(deadline)) => {
                let at = i64::try_from(deadline).unwrap_or(i64::MAX);
                if millis {
                    at
                } else {
                    at.saturating_add(500) / 1000
                }
            }
        };
        write_integer(out, reply);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_indexes_parse_like_get_int_from_object() {
        assert_eq!(parse_db(b"15", None), Ok(15));
        assert_eq!(parse_db(b"16", None), Err(OUT_OF_RANGE.to_vec()));
        assert_eq!(parse_db(b"-1", None), Err(OUT_OF_RANGE.to_vec()));
        assert_eq!(parse_db(b"x", None), Err(NOT_INTEGER.to_vec()));
        assert!(parse_db(b"2147483648", None).unwrap_err().starts_with(b"ERR value is out of range"));
        assert_eq!(parse_db(b"2147483648", Some(b"ERR no")), Err(b"ERR no".to_vec()));
        assert_eq!(parse_db(b"99", Some(b"ERR no")), Err(OUT_OF_RANGE.to_vec()));
    }

    #[test]
    fn randomkey_draws_live_keys_only() {
        let mut store = Store::new();
        let mut out = Vec::new();
        store.cmd_randomkey(0, &mut out);
        assert_eq!(out, b"$-1\r\n");
        for i in 0..20 {
            let ttl = if i == 0 { super::super::store::Ttl::Clear } else { super::super::store::Ttl::At(10) };
            store.set_string(format!("k{i}").as_bytes(), b"v", ttl, 0);
        }
        for _ in 0..5 {
            out.clear();
            store.cmd_randomkey(11, &mut out);
            assert_eq!(out, b"$2\r\nk0\r\n");
        }
        assert_eq!(store.len(11), 1);
    }
}
