//! The hash commands (`HSET`, `HGET`, `HINCRBY`, `HRANDFIELD`…).
//!
//! Each follows its Redis 7.0 counterpart in `t_hash.c`: arguments are
//! validated before the key is looked up, a missing key reads as an empty
//! hash, a hash emptied by `HDEL` is deleted, and a key of another type
//! answers `WRONGTYPE`. Counters follow Redis's number syntax: `HINCRBY`
//! reads fields with `string2ll`, `HINCRBYFLOAT` computes in C's
//! `long double` ([`LongDouble`]) and stores the sum as Redis prints it.
//! Small hashes list their fields in insertion order, as Redis's listpacks
//! do, so `HKEYS`, `HVALS` and `HGETALL` match Redis byte for byte.

use super::command::{write_arity_error, write_ok, NOT_INTEGER, WRONGTYPE};
use super::encode::{
    write_array_header, write_bulk, write_error, write_integer, write_map_header, write_null, Protocol,
};
use super::hash::Hash;
use super::long_double::LongDouble;
use super::number::{parse_i64, write_i64};
use super::random::{parse_random_count, Draw};
use super::store::{Store, Ttl, Value};
use super::table::{spec, Flags, Spec, KEY1};

const R: Flags = Flags::READONLY;
const RF: Flags = Flags::READONLY.or(Flags::FAST);
const WF: Flags = Flags::WRITE.or(Flags::FAST);
const WDF: Flags = Flags::WRITE.or(Flags::DENYOOM).or(Flags::FAST);

/// The hash commands.
pub(crate) const COMMANDS: &[Spec] = &[
    spec("hset", -4, WDF, KEY1, |s, c| s.cmd_hset(c.args, false, c.now, c.out)),
    spec("hget", 3, RF, KEY1, |s, c| s.cmd_hget(c.args[1], c.args[2], c.now, c.out)),
    spec("hmset", -4, WDF, KEY1, |s, c| s.cmd_hset(c.args, true, c.now, c.out)),
    spec("hmget", -3, RF, KEY1, |s, c| s.cmd_hmget(c.args, c.now, c.out)),
    spec("hgetall", 2, R, KEY1, |s, c| s.cmd_hgetall(c.args[1], Listing::Both, c.now, c.out)),
    spec("hkeys", 2, R, KEY1, |s, c| s.cmd_hgetall(c.args[1], Listing::Fields, c.now, c.out)),
    spec("hvals", 2, R, KEY1, |s, c| s.cmd_hgetall(c.args[1], Listing::Values, c.now, c.out)),
    spec("hdel", -3, WF, KEY1, |s, c| s.cmd_hdel(c.args, c.now, c.out)),
    spec("hlen", 2, RF, KEY1, |s, c| s.cmd_hlen(c.args[1], c.now, c.out)),
    spec("hexists", 3, RF, KEY1, |s, c| s.cmd_hexists(c.args[1], c.args[2], c.now, c.out)),
    spec("hstrlen", 3, RF, KEY1, |s, c| s.cmd_hstrlen(c.args[1], c.args[2], c.now, c.out)),
    spec("hsetnx", 4, WDF, KEY1, |s, c| s.cmd_hsetnx(c.args, c.now, c.out)),
    spec("hincrby", 4, WDF, KEY1, |s, c| s.cmd_hincrby(c.args, c.now, c.out)),
    spec("hincrbyfloat", 4, WDF, KEY1, |s, c| s.cmd_hincrbyfloat(c.args, c.now, c.out)),
    spec("hrandfield", -2, R, KEY1, |s, c| s.cmd_hrandfield(c.args, c.now, c.out)),
];

/// The key holds another type.
struct WrongType;

/// What `HGETALL`, `HKEYS` and `HVALS` list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Listing {
    Both,
    Fields,
    Values,
}

impl Store {
    /// The hash at `key`, created empty if the key is missing.
    fn hash_for_write(&mut self, key: &[u8], now: u64) -> Result<&mut Hash, WrongType> {
        if !self.contains(key, now) {
            self.insert(key, Value::Hash(Hash::new()), Ttl::Clear, now);
        }
        match self.get_mut(key, now) {
            Some(Value::Hash(hash)) => Ok(hash),
            _ => Err(WrongType),
        }
    }

    /// The hash at `key` for reading: `Ok(None)` if missing.
    fn hash_for_read(&mut self, key: &[u8], now: u64) -> Result<Option<&Hash>, WrongType> {
        match self.get(key, now) {
            None => Ok(None),
            Some(Value::Hash(hash)) => Ok(Some(hash)),
            Some(_) => Err(WrongType),
        }
    }

    /// `HSET key field value [field value ...]` (`HMSET` when `hmset`).
    fn cmd_hset(&mut self, args: &[&[u8]], hmset: bool, now: u64, out: &mut Vec<u8>) {
        if args.len() % 2 != 0 {
            return write_arity_error(out, if hmset { "hmset" } else { "hset" });
        }
        let Ok(hash) = self.hash_for_write(args[1], now) else {
            return write_error(out, WRONGTYPE);
        };
        let added = args[2..].chunks_exact(2).filter(|pair| hash.set(pair[0], pair[1])).count();
        if hmset {
            write_ok(out);
        } else {
            write_integer(out, added as i64);
        }
    }

    fn cmd_hget(&mut self, key: &[u8], field: &[u8], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        match self.hash_for_read(key, now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(hash) => match hash.and_then(|hash| hash.get(field)) {
                Some(value) => write_bulk(out, value),
                None => write_null(out, protocol),
            },
        }
    }

    fn cmd_hmget(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        let Ok(hash) = self.hash_for_read(args[1], now) else {
            return write_error(out, WRONGTYPE);
        };
        write_array_header(out, args.len() - 2);
        for field in &args[2..] {
            match hash.and_then(|hash| hash.get(field)) {
                Some(value) => write_bulk(out, value),
                None => write_null(out, protocol),
            }
        }
    }

    /// `HGETALL` (a map), `HKEYS` and `HVALS` (arrays).
    fn cmd_hgetall(&mut self, key: &[u8], listing: Listing, now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        let hash = match self.hash_for_read(key, now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(hash) => hash,
        };
        let len = hash.map_or(0, Hash::len);
        match listing {
            Listing::Both => write_map_header(out, len, protocol),
            Listing::Fields | Listing::Values => write_array_header(out, len),
        }
        for (field, value) in hash.iter().flat_map(|hash| hash.iter()) {
            if listing != Listing::Values {
                write_bulk(out, field);
            }
            if listing != Listing::Fields {
                write_bulk(out, value);
            }
        }
    }

    fn cmd_hdel(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let removed = self.remove_items(args[1], now, |value| match value {
            Value::Hash(hash) => Some((args[2..].iter().filter(|field| hash.remove(field)).count(), hash.is_empty())),
            _ => None,
        });
        match removed {
            Some(n) => write_integer(out, n as i64),
            None => write_error(out, WRONGTYPE),
        }
    }

    fn cmd_hlen(&mut self, key: &[u8], now: u64, out: &mut Vec<u8>) {
        match self.hash_for_read(key, now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(hash) => write_integer(out, hash.map_or(0, Hash::len) as i64),
        }
    }

    fn cmd_hexists(&mut self, key: &[u8], field: &[u8], now: u64, out: &mut Vec<u8>) {
        match self.hash_for_read(key, now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(hash) => write_integer(out, i64::from(hash.and_then(|hash| hash.get(field)).is_some())),
        }
    }

    /// `HSTRLEN key field`: the value's length, 0 if there is none.
    fn cmd_hstrlen(&mut self, key: &[u8], field: &[u8], now: u64, out: &mut Vec<u8>) {
        match self.hash_for_read(key, now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(hash) => write_integer(out, hash.and_then(|hash| hash.get(field)).map_or(0, <[u8]>::len) as i64),
        }
    }

    /// `HSETNX key field value`: sets the field only if it is new.
    fn cmd_hsetnx(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let Ok(hash) = self.hash_for_write(args[1], now) else {
            return write_error(out, WRONGTYPE);
        };
        let fresh = hash.get(args[2]).is_none();
        if fresh {
            hash.set(args[2], args[3]);
        } else {
            self.unchanged(args[1]);
        }
        write_integer(out, i64::from(fresh));
    }

    /// `HINCRBY key field increment`: a missing field counts as 0.
    fn cmd_hincrby(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let Some(delta) = parse_i64(args[3]) else {
            return write_error(out, NOT_INTEGER);
        };
        let Ok(hash) = self.hash_for_write(args[1], now) else {
            return write_error(out, WRONGTYPE);
        };
        let current = match hash.get(args[2]) {
            None => 0,
            Some(text) => match parse_i64(text) {
                Some(value) => value,
                None => return write_error(out, b"ERR hash value is not an integer"),
            },
        };
        let Some(next) = current.checked_add(delta) else {
            return write_error(out, b"ERR increment or decrement would overflow");
        };
        let mut digits = Vec::with_capacity(20);
        write_i64(&mut digits, next);
        hash.set(args[2], &digits);
        write_integer(out, next);
    }

    /// `HINCRBYFLOAT key field increment`, in `long double` as Redis does.
    fn cmd_hincrbyfloat(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let Some(delta) = LongDouble::parse(args[3]) else {
            return write_error(out, b"ERR value is not a valid float");
        };
        if delta.is_infinite() {
            return write_error(out, b"ERR value is NaN or Infinity");
        }
        let Ok(hash) = self.hash_for_write(args[1], now) else {
            return write_error(out, WRONGTYPE);
        };
        let current = match hash.get(args[2]) {
            None => LongDouble::ZERO,
            Some(text) => match LongDouble::parse(text) {
                Some(value) => value,
                None => return write_error(out, b"ERR hash value is not a float"),
            },
        };
        let sum = current + delta;
        if sum.is_infinite() {
            return write_error(out, b"ERR increment would produce NaN or Infinity");
        }
        let text = sum.to_human();
        hash.set(args[2], &text);
        write_bulk(out, &text);
    }

    /// `HRANDFIELD key [count [WITHVALUES]]`.
    fn cmd_hrandfield(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        let options = match args.get(2) {
            None => None,
            Some(count) => match parse_random_count(count, &args[3..], b"WITHVALUES") {
                Ok(count) => Some((count, args.len() == 4)),
                Err(message) => return write_error(out, message),
            },
        };
        let len = match self.hash_for_read(args[1], now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(None) if options.is_none() => return write_null(out, protocol),
            Ok(hash) => hash.map_or(0, Hash::len),
        };
        let (Some(Value::Hash(hash)), random) = self.get_mut_and_random(args[1], now) else {
            return write_array_header(out, 0);
        };
        let hash = &*hash;
        let Some((count, with_values)) = options else {
            if let Some((field, _)) = hash.nth(random.below(len)) {
                write_bulk(out, field);
            }
            return;
        };
        let draw = Draw::of(count, len);
        let pairs: Vec<(&[u8], &[u8])> = if draw == Draw::Nothing { Vec::new() } else { hash.iter().collect() };
        if let Draw::Repeated(draws) = draw {
            let size_of = |i: usize| pairs[i].0.len() + if with_values { pairs[i].1.len() } else { 0 } + 32;
            if !random.draws_fit(len, draws, size_of) {
                return write_error(out, b"ERR HRANDFIELD reply would be too large");
            }
        }
        let nested = with_values && protocol == Protocol::Resp3;
        let replied = draw.len(len);
        write_array_header(out, if with_values && !nested { replied * 2 } else { replied });
        let mut write = |index: usize| {
            let (field, value) = pairs[index];
            if nested {
                write_array_header(out, 2);
            }
            write_bulk(out, field);
            if with_values {
                write_bulk(out, value);
            }
        };
        match draw {
            Draw::Nothing => {}
            Draw::All => (0..len).for_each(&mut write),
            Draw::Distinct(count) => random.distinct_below(len, count).into_iter().for_each(&mut write),
            Draw::Repeated(draws) => (0..draws).for_each(|_| write(random.below(len))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::resp::testing::run;

    #[test]
    fn hashes_follow_redis() {
        let mut store = Store::new();
        let replies = run(
            &mut store,
            &[
                "HSET h",
                "HSET h a",
                "HSET h a b c",
                "HSET h a b c d",
                "HMSET h a x",
                "HGETALL h",
                "HGET h a",
                "HGET h zz",
                "HMGET h a zz",
                "HMGET nokey a",
                "HLEN h",
                "HEXISTS h c",
                "HDEL h a a zz",
                "HDEL h c",
                "EXISTS h",
                "SET s v",
                "HGET s a",
                "HSET s a b",
                "HGETALL nokey",
            ],
        );
        assert_eq!(
            replies,
            concat!(
                "-ERR wrong number of arguments for 'hset' command\r\n",
                "-ERR wrong number of arguments for 'hset' command\r\n",
                "-ERR wrong number of arguments for 'hset' command\r\n",
                ":2\r\n+OK\r\n",
                "*4\r\n$1\r\na\r\n$1\r\nx\r\n$1\r\nc\r\n$1\r\nd\r\n",
                "$1\r\nx\r\n$-1\r\n",
                "*2\r\n$1\r\nx\r\n$-1\r\n",
                "*1\r\n$-1\r\n",
                ":2\r\n:1\r\n:1\r\n:1\r\n:0\r\n",
                "+OK\r\n",
                "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
                "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
                "*0\r\n",
            )
        );
    }

    #[test]
    fn counters_keys_and_values() {
        let mut store = Store::new();
        let replies = run(
            &mut store,
            &[
                "HINCRBY h n 5",
                "HINCRBY h n -7",
                "HINCRBY h n x",
                "HSET h s abc big 9223372036854775807",
                "HINCRBY h s 1",
                "HINCRBY h big 1",
                "HINCRBYFLOAT h f 10.5",
                "HINCRBYFLOAT h f 0.1",
                "HINCRBYFLOAT h f inf",
                "HINCRBYFLOAT h s 1",
                "HSETNX h n 1",
                "HSETNX h m 1",
                "HSTRLEN h s",
                "HSTRLEN h zz",
                "HKEYS h",
                "HVALS nokey",
            ],
        );
        assert_eq!(
            replies,
            concat!(
                ":5\r\n:-2\r\n",
                "-ERR value is not an integer or out of range\r\n",
                ":2\r\n",
                "-ERR hash value is not an integer\r\n",
                "-ERR increment or decrement would overflow\r\n",
                "$4\r\n10.5\r\n$4\r\n10.6\r\n",
                "-ERR value is NaN or Infinity\r\n",
                "-ERR hash value is not a float\r\n",
                ":0\r\n:1\r\n:3\r\n:0\r\n",
                "*5\r\n$1\r\nn\r\n$1\r\ns\r\n$3\r\nbig\r\n$1\r\nf\r\n$1\r\nm\r\n",
                "*0\r\n",
            )
        );
    }

    #[test]
    fn random_fields_have_the_asked_shape() {
        let mut store = Store::new();
        run(&mut store, &["HSET h a 1 b 2 c 3"]);
        let replies = run(&mut store, &["HRANDFIELD h 3", "HRANDFIELD h 0", "HRANDFIELD nokey", "HRANDFIELD h 1 x"]);
        assert_eq!(replies, "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n*0\r\n$-1\r\n-ERR syntax error\r\n".to_string());
        let repeated = run(&mut store, &["HRANDFIELD h -5 WITHVALUES"]);
        assert!(repeated.starts_with("*10\r\n"));
        let two = run(&mut store, &["HRANDFIELD h 2"]);
        assert!(two.starts_with("*2\r\n"));
        assert!(run(&mut store, &["HRANDFIELD h -2000000"]).starts_with("*2000000\r\n"));
        assert_eq!(run(&mut store, &["HRANDFIELD h -2000000000000"]), "-ERR HRANDFIELD reply would be too large\r\n");
    }
}
