//! The list commands, blocking ones included.
//!
//! Each follows its Redis 7.0 counterpart in `t_list.c`: the same order of
//! checks (which decides which error a bad request gets: `LINDEX` looks the
//! key up before it reads the index, `LRANGE` reads its indices first), the
//! same replies for a missing key (`LPOP key count` answers the null array,
//! `LPOS key x COUNT n` the empty one), negative indices counted from the
//! tail and ranges clamped, a list emptied by a command deleted, and
//! `WRONGTYPE` for a key of another type.
//!
//! The blocking pops pop at once when a key has elements; otherwise the
//! client blocks ([`super::blocking`]), and is served from here
//! ([`Store::serve_list_waiter`]) when a key it waits for is created.

use super::blocking::{write_timeout, Wait};
use super::command::{write_arity_error, write_ok, NOT_INTEGER, SYNTAX, WRONGTYPE};
use super::encode::{write_array_header, write_bulk, write_error, write_integer, write_null, Protocol};
use super::list::{End, List};
use super::number::parse_i64;
use super::store::{Store, Ttl, Value};
use super::table::{spec, Call, Flags, Spec, KEY1};
use super::timeout::{deadline, parse_timeout};

const R: Flags = Flags::READONLY;
const RF: Flags = Flags::READONLY.or(Flags::FAST);
const W: Flags = Flags::WRITE;
const WF: Flags = Flags::WRITE.or(Flags::FAST);
const WD: Flags = Flags::WRITE.or(Flags::DENYOOM);
const WDF: Flags = Flags::WRITE.or(Flags::DENYOOM).or(Flags::FAST);
/// `BLPOP`, `BRPOP`.
const BLOCKING: Flags = Flags::WRITE.or(Flags::NOSCRIPT).or(Flags::BLOCKING);
/// `BLMOVE`, `BRPOPLPUSH`.
const BLOCKING_D: Flags = BLOCKING.or(Flags::DENYOOM);
/// The first two arguments are keys (`LMOVE source destination`).
const KEY1_2: (i32, i32, i32) = (1, 2, 1);
/// Every argument but the last is a key (`BLPOP key... timeout`).
const KEYS_BUT_LAST: (i32, i32, i32) = (1, -2, 1);

/// The list commands.
pub(crate) const LIST_COMMANDS: &[Spec] = &[
    spec("lpush", -3, WDF, KEY1, |s, c| s.cmd_push(c.args, End::Left, false, c.now, c.out)),
    spec("rpush", -3, WDF, KEY1, |s, c| s.cmd_push(c.args, End::Right, false, c.now, c.out)),
    spec("lpushx", -3, WDF, KEY1, |s, c| s.cmd_push(c.args, End::Left, true, c.now, c.out)),
    spec("rpushx", -3, WDF, KEY1, |s, c| s.cmd_push(c.args, End::Right, true, c.now, c.out)),
    spec("lpop", -2, WF, KEY1, |s, c| s.cmd_pop(c.args, End::Left, c.now, c.out)),
    spec("rpop", -2, WF, KEY1, |s, c| s.cmd_pop(c.args, End::Right, c.now, c.out)),
    spec("lrange", 4, R, KEY1, |s, c| s.cmd_lrange(c.args, c.now, c.out)),
    spec("llen", 2, RF, KEY1, |s, c| s.cmd_llen(c.args[1], c.now, c.out)),
    spec("lindex", 3, R, KEY1, |s, c| s.cmd_lindex(c.args, c.now, c.out)),
    spec("lset", 4, WD, KEY1, |s, c| s.cmd_lset(c.args, c.now, c.out)),
    spec("lrem", 4, W, KEY1, |s, c| s.cmd_lrem(c.args, c.now, c.out)),
    spec("ltrim", 4, W, KEY1, |s, c| s.cmd_ltrim(c.args, c.now, c.out)),
    spec("linsert", 5, WD, KEY1, |s, c| s.cmd_linsert(c.args, c.now, c.out)),
    spec("lpos", -3, R, KEY1, |s, c| s.cmd_lpos(c.args, c.now, c.out)),
    spec("lmove", 5, WD, KEY1_2, |s, c| match (End::parse(c.args[3]), End::parse(c.args[4])) {
        (Some(from), Some(to)) => s.lmove(c.args[1], c.args[2], from, to, c.now, c.out),
        _ => write_error(c.out, SYNTAX),
    }),
    spec("rpoplpush", 3, WD, KEY1_2, |s, c| s.lmove(c.args[1], c.args[2], End::Right, End::Left, c.now, c.out)),
    spec("blpop", -3, BLOCKING, KEYS_BUT_LAST, |s, c| s.cmd_blocking_pop(c, End::Left)),
    spec("brpop", -3, BLOCKING, KEYS_BUT_LAST, |s, c| s.cmd_blocking_pop(c, End::Right)),
    spec("blmove", 6, BLOCKING_D, KEY1_2, |s, c| match (End::parse(c.args[3]), End::parse(c.args[4])) {
        (Some(from), Some(to)) => s.cmd_blocking_move(c, from, to, c.args[5]),
        _ => write_error(c.out, SYNTAX),
    }),
    spec("brpoplpush", 4, BLOCKING_D, KEY1_2, |s, c| s.cmd_blocking_move(c, End::Right, End::Left, c.args[3])),
];

/// The key holds another type.
struct WrongType;

/// `ERR value is out of range, must be positive` (a pop's count).
const NOT_POSITIVE: &[u8] = b"ERR value is out of range, must be positive";
const NO_SUCH_KEY: &[u8] = b"ERR no such key";
const OUT_OF_RANGE: &[u8] = b"ERR index out of range";
const RANK_ZERO: &[u8] = b"ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... \
or use negative to start from the end of the list";

/// Appends the null array: `*-1` in RESP2, `_` in RESP3.
fn write_null_array(out: &mut Vec<u8>, protocol: Protocol) {
    write_timeout(out, protocol);
}

/// A count or length option that must be a non-negative integer; `message`
/// is the error for anything else.
fn parse_non_negative(text: &[u8], message: &'static [u8]) -> Result<i64, &'static [u8]> {
    parse_i64(text).filter(|&n| n >= 0).ok_or(message)
}

impl Store {
    /// The list at `key` for reading (a keyspace hit or miss).
    fn list_for_read(&mut self, key: &[u8], now: u64) -> Result<Option<&List>, WrongType> {
        match self.get(key, now) {
            None => Ok(None),
            Some(Value::List(list)) => Ok(Some(list)),
            Some(_) => Err(WrongType),
        }
    }

    /// The list at `key` for modification.
    fn list_for_write(&mut self, key: &[u8], now: u64) -> Result<Option<&mut List>, WrongType> {
        match self.get_mut(key, now) {
            None => Ok(None),
            Some(Value::List(list)) => Ok(Some(list)),
            Some(_) => Err(WrongType),
        }
    }

    /// Pops at `end` of the list at `key`, deleting the key when that
    /// empties it.
    fn pop_and_drop(&mut self, key: &[u8], end: End, now: u64) -> Option<Box<[u8]>> {
        let Ok(Some(list)) = self.list_for_write(key, now) else { return None };
        let element = list.pop(end);
        if list.is_empty() {
            self.remove(key, now);
        }
        element
    }

    /// `LPUSH`/`RPUSH key element...`, and with `existing_only` `LPUSHX`/
    /// `RPUSHX` (which do not create the key).
    fn cmd_push(&mut self, args: &[&[u8]], end: End, existing_only: bool, now: u64, out: &mut Vec<u8>) {
        let key = args[1];
        match self.list_for_write(key, now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(Some(list)) => {
                for element in &args[2..] {
                    list.push(end, element);
                }
                write_integer(out, list.len() as i64);
            }
            Ok(None) if existing_only => write_integer(out, 0),
            Ok(None) => {
                let mut list = List::new();
                for element in &args[2..] {
                    list.push(end, element);
                }
                write_integer(out, list.len() as i64);
                self.insert(key, Value::List(list), Ttl::Clear, now);
            }
        }
    }

    /// `LPOP`/`RPOP key [count]`.
    fn cmd_pop(&mut self, args: &[&[u8]], end: End, now: u64, out: &mut Vec<u8>) {
        if args.len() > 3 {
            let name = if end == End::Left { "lpop" } else { "rpop" };
            return write_arity_error(out, name);
        }
        let count = match args.get(2) {
            None => None,
            Some(text) => match parse_non_negative(text, NOT_POSITIVE) {
                Ok(count) => Some(count),
                Err(message) => return write_error(out, message),
            },
        };
        let protocol = self.protocol;
        let key = args[1];
        let list = match self.list_for_write(key, now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(None) if count.is_some() => return write_null_array(out, protocol),
            Ok(None) => return write_null(out, protocol),
            Ok(Some(list)) => list,
        };
        match count {
            // Nothing popped, nothing changed: the key's watchers are left
            // alone (Redis's fast exit for a count of 0).
            Some(0) => {
                self.unchanged(args[1]);
                return write_array_header(out, 0);
            }
            None => match list.pop(end) {
                Some(element) => write_bulk(out, &element),
                None => write_null(out, protocol),
            },
            Some(count) => {
                let taken = list.len().min(usize::try_from(count).unwrap_or(usize::MAX));
                write_array_header(out, taken);
                for _ in 0..taken {
                    if let Some(element) = list.pop(end) {
                        write_bulk(out, &element);
                    }
                }
            }
        }
        if list.is_empty() {
            self.remove(key, now);
        }
    }

    /// `LRANGE key start stop`.
    fn cmd_lrange(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let (Some(start), Some(stop)) = (parse_i64(args[2]), parse_i64(args[3])) else {
            return write_error(out, NOT_INTEGER);
        };
        match self.list_for_read(args[1], now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(None) => write_array_header(out, 0),
            Ok(Some(list)) => match list.range(start, stop) {
                None => write_array_header(out, 0),
                Some((first, last)) => {
                    write_array_header(out, last - first + 1);
                    for element in list.iter_range(first, last) {
                        write_bulk(out, element);
                    }
                }
            },
        }
    }

    /// `LLEN key`.
    fn cmd_llen(&mut self, key: &[u8], now: u64, out: &mut Vec<u8>) {
        match self.list_for_read(key, now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(list) => write_integer(out, list.map_or(0, List::len) as i64),
        }
    }

    /// `LINDEX key index` (the key is looked up before the index is read).
    fn cmd_lindex(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        match self.list_for_read(args[1], now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(None) => write_null(out, protocol),
            Ok(Some(list)) => match parse_i64(args[2]) {
                None => write_error(out, NOT_INTEGER),
                Some(index) => match list.get(index) {
                    Some(element) => write_bulk(out, element),
                    None => write_null(out, protocol),
                },
            },
        }
    }

    /// `LSET key index element`.
    fn cmd_lset(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        match self.list_for_write(args[1], now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(None) => write_error(out, NO_SUCH_KEY),
            Ok(Some(list)) => match parse_i64(args[2]) {
                None => write_error(out, NOT_INTEGER),
                Some(index) if list.set(index, args[3]) => write_ok(out),
                Some(_) => write_error(out, OUT_OF_RANGE),
            },
        }
    }

    /// `LREM key count element`.
    fn cmd_lrem(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let Some(count) = parse_i64(args[2]) else {
            return write_error(out, NOT_INTEGER);
        };
        let (removed, emptied) = match self.list_for_write(args[1], now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(None) => (0, false),
            Ok(Some(list)) => (list.remove(args[3], count), list.is_empty()),
        };
        if removed == 0 {
            self.unchanged(args[1]);
        }
        if emptied {
            self.remove(args[1], now);
        }
        write_integer(out, removed as i64);
    }

    /// `LTRIM key start stop`.
    fn cmd_ltrim(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let (Some(start), Some(stop)) = (parse_i64(args[2]), parse_i64(args[3])) else {
            return write_error(out, NOT_INTEGER);
        };
        match self.list_for_write(args[1], now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(None) => {}
            Ok(Some(list)) => {
                list.trim(start, stop);
                if list.is_empty() {
                    self.remove(args[1], now);
                }
            }
        }
        write_ok(out);
    }

    /// `LINSERT key BEFORE|AFTER pivot element`.
    fn cmd_linsert(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let after = if args[2].eq_ignore_ascii_case(b"after") {
            true
        } else if args[2].eq_ignore_ascii_case(b"before") {
            false
        } else {
            return write_error(out, SYNTAX);
        };
        match self.list_for_write(args[1], now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(None) => write_integer(out, 0),
            Ok(Some(list)) => match list.insert(args[3], args[4], after) {
                true => write_integer(out, list.len() as i64),
                false => {
                    self.unchanged(args[1]);
                    write_integer(out, -1);
                }
            },
        }
    }

    /// `LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]`.
    fn cmd_lpos(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let (mut rank, mut count, mut maxlen): (i64, Option<i64>, i64) = (1, None, 0);
        let mut i = 3;
        while i < args.len() {
            let (option, more) = (args[i], i + 1 < args.len());
            let value = args.get(i + 1).copied().unwrap_or_default();
            if option.eq_ignore_ascii_case(b"rank") && more {
                match parse_i64(value) {
                    None => return write_error(out, NOT_INTEGER),
                    Some(0) => return write_error(out, RANK_ZERO),
                    Some(r) => rank = r,
                }
            } else if option.eq_ignore_ascii_case(b"count") && more {
                match parse_non_negative(value, b"ERR COUNT can't be negative") {
                    Ok(n) => count = Some(n),
                    Err(message) => return write_error(out, message),
                }
            } else if option.eq_ignore_ascii_case(b"maxlen") && more {
                match parse_non_negative(value, b"ERR MAXLEN can't be negative") {
                    Ok(n) => maxlen = n,
                    Err(message) => return write_error(out, message),
                }
            } else {
                return write_error(out, SYNTAX);
            }
            i += 2;
        }
        let protocol = self.protocol;
        let list = match self.list_for_read(args[1], now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(None) if count.is_some() => return write_array_header(out, 0),
            Ok(None) => return write_null(out, protocol),
            Ok(Some(list)) => list,
        };
        let found = lpos(list, args[2], rank, count, maxlen);
        match count {
            Some(_) => {
                write_array_header(out, found.len());
                for index in found {
                    write_integer(out, index as i64);
                }
            }
            None => match found.first() {
                Some(&index) => write_integer(out, index as i64),
                None => write_null(out, protocol),
            },
        }
    }

    /// `LMOVE source destination from to` (and `RPOPLPUSH`): pops at `from`
    /// of `source`, pushes at `to` of `destination`, replies the element.
    fn lmove(&mut self, source: &[u8], destination: &[u8], from: End, to: End, now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        match self.list_for_write(source, now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(None) => return write_null(out, protocol),
            Ok(Some(_)) => {}
        }
        if let Err(message) = self.move_element(source, destination, from, to, now, out) {
            write_error(out, message);
        }
    }

    /// Moves one element from the non-empty list at `source` to
    /// `destination` and writes it as a bulk string; `Err(WRONGTYPE)`
    /// (nothing moved) when the destination holds another type.
    fn move_element(
        &mut self,
        source: &[u8],
        destination: &[u8],
        from: End,
        to: End,
        now: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), &'static [u8]> {
        if source == destination {
            if let Ok(Some(list)) = self.list_for_write(source, now) {
                if let Some(element) = list.pop(from) {
                    write_bulk(out, &element);
                    list.push_owned(to, element);
                }
            }
            return Ok(());
        }
        if self.list_for_write(destination, now).is_err() {
            return Err(WRONGTYPE);
        }
        let Some(element) = self.pop_and_drop(source, from, now) else {
            return Ok(());
        };
        write_bulk(out, &element);
        match self.list_for_write(destination, now) {
            Ok(Some(list)) => list.push_owned(to, element),
            _ => {
                let mut list = List::new();
                list.push_owned(to, element);
                self.insert(destination, Value::List(list), Ttl::Clear, now);
            }
        }
        Ok(())
    }

    /// `BLPOP`/`BRPOP key... timeout`.
    fn cmd_blocking_pop(&mut self, c: &mut Call<'_, '_>, end: End) {
        let args = c.args;
        let (keys, timeout) = args[1..].split_at(args.len() - 2);
        let millis = match parse_timeout(timeout[0]) {
            Ok(millis) => millis,
            Err(error) => return write_error(c.out, error.message()),
        };
        for &key in keys {
            match self.list_for_write(key, c.now) {
                Err(WrongType) => return write_error(c.out, WRONGTYPE),
                Ok(None) => continue,
                Ok(Some(_)) => {
                    let Some(element) = self.pop_and_drop(key, end, c.now) else { continue };
                    write_array_header(c.out, 2);
                    write_bulk(c.out, key);
                    write_bulk(c.out, &element);
                    return;
                }
            }
        }
        let (id, protocol) = (c.session.id, self.protocol);
        if self.may_block(id) {
            self.block(id, keys, Wait::Pop(end), deadline(millis, c.now), protocol);
        } else {
            write_timeout(c.out, protocol);
        }
    }

    /// `BLMOVE source destination from to timeout` and `BRPOPLPUSH`.
    fn cmd_blocking_move(&mut self, c: &mut Call<'_, '_>, from: End, to: End, timeout: &[u8]) {
        let millis = match parse_timeout(timeout) {
            Ok(millis) => millis,
            Err(error) => return write_error(c.out, error.message()),
        };
        let (source, destination) = (c.args[1], c.args[2]);
        let (id, protocol) = (c.session.id, self.protocol);
        let may_block = self.may_block(id);
        match self.list_for_write(source, c.now) {
            Err(WrongType) => write_error(c.out, WRONGTYPE),
            Ok(Some(_)) => self.lmove(source, destination, from, to, c.now, c.out),
            Ok(None) if !may_block => write_null(c.out, protocol),
            Ok(None) => {
                let wait = Wait::Move { from, to, destination: destination.to_vec() };
                self.block(id, &[source], wait, deadline(millis, c.now), protocol);
            }
        }
    }

    /// Serves one client blocked on `key` (signalled ready) by `wait`,
    /// writing its reply in `protocol` to `reply`; `false` (nothing done)
    /// when `key` holds no list with elements, which ends the serving of
    /// this key. A `BLMOVE` whose destination holds another type is
    /// answered `WRONGTYPE` and nothing moves, as in Redis.
    pub(crate) fn serve_list_waiter(
        &mut self,
        key: &[u8],
        wait: &Wait,
        protocol: Protocol,
        now: u64,
        reply: &mut Vec<u8>,
    ) -> bool {
        if !matches!(self.list_for_write(key, now), Ok(Some(list)) if !list.is_empty()) {
            return false;
        }
        let saved = std::mem::replace(&mut self.protocol, protocol);
        match wait {
            Wait::Pop(end) => {
                if let Some(element) = self.pop_and_drop(key, *end, now) {
                    write_array_header(reply, 2);
                    write_bulk(reply, key);
                    write_bulk(reply, &element);
                }
            }
            Wait::Move { from, to, destination } => {
                if let Err(message) = self.move_element(key, destination, *from, *to, now, reply) {
                    write_error(reply, message);
                }
            }
        }
        self.protocol = saved;
        true
    }
}

/// The positions `LPOS` reports for `element` in `list`: matches from the
/// head (`rank > 0`) or the tail (`rank < 0`), the first `|rank| - 1`
/// skipped, then one (no `count`), `count` of them, or all (`count` 0),
/// looking at no more than `maxlen` elements (0: all). As in Redis 7.0, a
/// rank of `i64::MIN` (whose negation overflows there) reports every match
/// from the tail, whatever the count.
fn lpos(list: &List, element: &[u8], rank: i64, count: Option<i64>, maxlen: i64) -> Vec<usize> {
    let from_tail = rank < 0;
    let skip = if rank == i64::MIN { 0 } else { rank.unsigned_abs() - 1 };
    let wanted = match count {
        None => 1,
        Some(_) if rank == i64::MIN => u64::MAX,
        Some(0) => u64::MAX,
        Some(n) => n as u64,
    };
    let scanned = match maxlen {
        0 => list.len(),
        _ => list.len().min(usize::try_from(maxlen).unwrap_or(usize::MAX)),
    };
    let len = list.len();
    let positions: Box<dyn Iterator<Item = (usize, &[u8])>> = if from_tail {
        Box::new(list.iter().rev().enumerate().map(move |(i, e)| (len - 1 - i, e)))
    } else {
        Box::new(list.iter().enumerate())
    };
    let mut found = Vec::new();
    let mut matches: u64 = 0;
    for (index, candidate) in positions.take(scanned) {
        if candidate != element {
            continue;
        }
        matches += 1;
        if matches > skip {
            found.push(index);
            if found.len() as u64 >= wanted {
                break;
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::Connection;

    use crate::resp::testing::run_at as run;

    /// Feeds `input` to `conn` at `now`; what it answered.
    fn feed(conn: &mut Connection, store: &mut Store, now: u64, input: &str) -> String {
        let mut out = Vec::new();
        let _ = conn.feed(input.as_bytes(), store, now, &mut out);
        String::from_utf8(out).unwrap()
    }

    /// The outbox, as text per client.
    fn outbox(store: &mut Store) -> Vec<(u64, String)> {
        store.take_outbox().into_iter().map(|(id, bytes)| (id, String::from_utf8(bytes).unwrap())).collect()
    }

    #[test]
    fn lpos_skips_counts_and_bounds_its_scan() {
        let mut list = List::new();
        for e in ["a", "b", "a", "c", "a", "d"] {
            list.push(End::Right, e.as_bytes());
        }
        assert_eq!(lpos(&list, b"a", 1, None, 0), [0]);
        assert_eq!(lpos(&list, b"a", -1, None, 0), [4]);
        assert_eq!(lpos(&list, b"a", 2, Some(0), 0), [2, 4]);
        assert_eq!(lpos(&list, b"a", -2, Some(1), 0), [2]);
        assert_eq!(lpos(&list, b"a", 1, Some(0), 3), [0, 2]);
        assert_eq!(lpos(&list, b"a", -1, None, 1), Vec::<usize>::new());
        assert_eq!(lpos(&list, b"a", i64::MIN, Some(1), 0), [4, 2, 0]);
        assert_eq!(lpos(&list, b"a", i64::MAX, Some(0), 0), Vec::<usize>::new());
        assert_eq!(lpos(&list, b"a", 1, Some(i64::MAX), i64::MAX), [0, 2, 4]);
    }

    #[test]
    fn emptied_lists_are_deleted() {
        let mut store = Store::new();
        let replies = run(
            &mut store,
            0,
            &["RPUSH l a b", "LPOP l 5", "EXISTS l", "RPUSH l a", "LREM l 0 a", "EXISTS l", "RPUSH l a", "LTRIM l 1 0"],
        );
        assert_eq!(replies, ":2\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n:0\r\n:1\r\n:1\r\n:0\r\n:1\r\n+OK\r\n");
        assert!(store.is_empty(0));
        assert_eq!(
            run(&mut store, 0, &["RPUSH l a", "RPOPLPUSH l l", "LMOVE l m left left", "EXISTS l"]),
            ":1\r\n$1\r\na\r\n$1\r\na\r\n:0\r\n"
        );
        // Without a connection there is nobody to answer later: no blocking.
        assert_eq!(run(&mut store, 0, &["BLPOP k 0", "BLMOVE k m left left 0"]), "*-1\r\n$-1\r\n");
    }

    #[test]
    fn a_push_serves_blocked_clients_in_order() {
        let mut store = Store::new();
        let (mut a, mut b, mut c) = (Connection::default(), Connection::default(), Connection::default());
        assert_eq!(feed(&mut a, &mut store, 0, "BLPOP k1 k2 0\r\nPING\r\n"), "");
        assert!(store.is_blocked(a.id()));
        assert_eq!(feed(&mut a, &mut store, 0, "PING\r\n"), "");
        assert_eq!(feed(&mut b, &mut store, 0, "BRPOP k2 0\r\n"), "");
        // Two elements, two waiters on k2: the oldest first.
        assert_eq!(feed(&mut c, &mut store, 0, "RPUSH k2 x y z\r\n"), ":3\r\n");
        assert_eq!(
            outbox(&mut store),
            [
                (a.id(), "*2\r\n$2\r\nk2\r\n$1\r\nx\r\n".to_string()),
                (b.id(), "*2\r\n$2\r\nk2\r\n$1\r\nz\r\n".to_string())
            ]
        );
        assert_eq!(store.take_unblocked(), [a.id(), b.id()]);
        // The requests that waited run now.
        assert_eq!(feed(&mut a, &mut store, 0, ""), "+PONG\r\n+PONG\r\n");
        assert_eq!(run(&mut store, 0, &["LRANGE k2 0 -1"]), "*1\r\n$1\r\ny\r\n");
    }

    #[test]
    fn a_transaction_serves_waiters_after_exec_only() {
        let mut store = Store::new();
        let (mut a, mut b) = (Connection::default(), Connection::default());
        assert_eq!(feed(&mut a, &mut store, 0, "BLPOP k 0\r\n"), "");
        let got = feed(&mut b, &mut store, 0, "MULTI\r\nLPUSH k a\r\nLPOP k\r\nEXEC\r\n");
        assert!(got.ends_with("*2\r\n:1\r\n$1\r\na\r\n"), "{got}");
        assert!(store.take_outbox().is_empty() && store.is_blocked(a.id()));
        // Inside EXEC nothing blocks.
        let got = feed(&mut b, &mut store, 0, "MULTI\r\nBLPOP k 0\r\nBLMOVE k d left left 0\r\nEXEC\r\n");
        assert!(got.ends_with("*2\r\n*-1\r\n$-1\r\n"), "{got}");
        let got = feed(&mut b, &mut store, 0, "MULTI\r\nRPUSH k a b\r\nEXEC\r\n");
        assert!(got.ends_with("*1\r\n:2\r\n"), "{got}");
        assert_eq!(outbox(&mut store), [(a.id(), "*2\r\n$1\r\nk\r\n$1\r\na\r\n".to_string())]);
    }

    #[test]
    fn blmove_chains_and_refuses_a_wrong_destination() {
        let mut store = Store::new();
        let (mut a, mut b, mut c, mut d) =
            (Connection::default(), Connection::default(), Connection::default(), Connection::default());
        assert_eq!(feed(&mut a, &mut store, 0, "BLMOVE src dst right left 0\r\n"), "");
        assert_eq!(feed(&mut b, &mut store, 0, "BLPOP dst 0\r\n"), "");
        assert!(!feed(&mut d, &mut store, 0, "HELLO 3\r\n").is_empty());
        assert_eq!(feed(&mut d, &mut store, 0, "BRPOPLPUSH src str 0\r\n"), "");
        assert_eq!(feed(&mut c, &mut store, 0, "SET str s\r\nRPUSH src 1 2\r\n"), "+OK\r\n:2\r\n");
        assert_eq!(
            outbox(&mut store),
            [
                (a.id(), "$1\r\n2\r\n".to_string()),
                (d.id(), "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n".to_string()),
                (b.id(), "*2\r\n$3\r\ndst\r\n$1\r\n2\r\n".to_string()),
            ]
        );
        assert_eq!(run(&mut store, 0, &["LRANGE src 0 -1", "EXISTS dst"]), "*1\r\n$1\r\n1\r\n:0\r\n");
    }

    #[test]
    fn waiters_time_out_at_their_deadline() {
        let mut store = Store::new();
        let (mut a, mut b, mut c) = (Connection::default(), Connection::default(), Connection::default());
        assert_eq!(feed(&mut a, &mut store, 1000, "BLPOP k 0.5\r\nPING\r\n"), "");
        assert!(!feed(&mut b, &mut store, 1000, "HELLO 3\r\n").is_empty());
        assert_eq!(feed(&mut b, &mut store, 1100, "BLMOVE k d left left 0.1\r\n"), "");
        assert_eq!(feed(&mut c, &mut store, 1100, "BRPOPLPUSH k d 0\r\n"), "");
        assert_eq!(store.next_block_deadline(), Some(1200));
        store.expire_blocked(1200);
        assert!(store.take_outbox().is_empty());
        store.expire_blocked(1201);
        assert_eq!(outbox(&mut store), [(b.id(), "_\r\n".to_string())]);
        store.expire_blocked(1501);
        assert_eq!(outbox(&mut store), [(a.id(), "*-1\r\n".to_string())]);
        assert_eq!(store.take_unblocked(), [b.id(), a.id()]);
        assert_eq!(feed(&mut a, &mut store, 1501, ""), "+PONG\r\n");
        assert_eq!(store.next_block_deadline(), None);
        assert!(store.is_blocked(c.id()));
        // A client that disconnects is forgotten: a push serves nobody.
        store.forget_client(c.id());
        assert_eq!(run(&mut store, 1600, &["RPUSH k x", "LLEN k"]), ":1\r\n:1\r\n");
        assert!(store.take_outbox().is_empty());
    }

    #[test]
    fn a_blocked_connection_keeps_bounded_input() {
        let mut store = Store::new();
        let limits = crate::resp::Limits::with_max_request(1024);
        let mut a = Connection::new(limits);
        assert_eq!(feed(&mut a, &mut store, 0, "BLPOP k 0\r\n"), "");
        let mut out = Vec::new();
        let ping = "PING\r\n".repeat(1000);
        let mut flow = crate::resp::Flow::Continue;
        for _ in 0..10 {
            flow = a.feed(ping.as_bytes(), &mut store, 0, &mut out);
        }
        assert_eq!(flow, crate::resp::Flow::Close);
        assert!(out.is_empty() && !store.is_blocked(a.id()));
    }
}
