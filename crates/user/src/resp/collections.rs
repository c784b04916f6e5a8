//! The hash and sorted-set commands.
//!
//! Each follows its Redis 7 counterpart: arguments are validated in full
//! (option conflicts, every score) before the key is even looked up, a
//! missing key reads as an empty collection, a collection emptied by a
//! removal is deleted, and a key of another type answers `WRONGTYPE`.

use super::command::{write_arity_error, write_ok, NOT_FLOAT, NOT_INTEGER, SYNTAX, WRONGTYPE};
use super::encode::{
    write_array_header, write_bulk, write_double, write_error, write_integer, write_map_header, write_null, Protocol,
};
use super::hash::Hash;
use super::number::{parse_f64, parse_i64, parse_score_bound};
use super::store::{Store, Ttl, Value};
use super::table::{spec, Flags, Spec, KEY1};
use super::zset::{AddOutcome, Score, ZSet};

const RF: Flags = Flags::READONLY.or(Flags::FAST);
const WF: Flags = Flags::WRITE.or(Flags::FAST);
const WDF: Flags = Flags::WRITE.or(Flags::DENYOOM).or(Flags::FAST);

/// The hash commands.
pub(crate) const HASH_COMMANDS: &[Spec] = &[
    spec("hset", -4, WDF, KEY1, |s, c| s.cmd_hset(c.args, false, c.now, c.out)),
    spec("hget", 3, RF, KEY1, |s, c| s.cmd_hget(c.args[1], c.args[2], c.now, c.out)),
    spec("hmset", -4, WDF, KEY1, |s, c| s.cmd_hset(c.args, true, c.now, c.out)),
    spec("hmget", -3, RF, KEY1, |s, c| s.cmd_hmget(c.args, c.now, c.out)),
    spec("hgetall", 2, Flags::READONLY, KEY1, |s, c| s.cmd_hgetall(c.args[1], c.now, c.out)),
    spec("hdel", -3, WF, KEY1, |s, c| s.cmd_hdel(c.args, c.now, c.out)),
    spec("hlen", 2, RF, KEY1, |s, c| s.cmd_hlen(c.args[1], c.now, c.out)),
    spec("hexists", 3, RF, KEY1, |s, c| s.cmd_hexists(c.args[1], c.args[2], c.now, c.out)),
];

/// The sorted-set commands.
pub(crate) const ZSET_COMMANDS: &[Spec] = &[
    spec("zadd", -4, WDF, KEY1, |s, c| s.cmd_zadd(c.args, c.now, c.out)),
    spec("zrem", -3, WF, KEY1, |s, c| s.cmd_zrem(c.args, c.now, c.out)),
    spec("zrangebyscore", -4, Flags::READONLY, KEY1, |s, c| s.cmd_zrangebyscore(c.args, c.now, c.out)),
    spec("zcard", 2, RF, KEY1, |s, c| s.cmd_zcard(c.args[1], c.now, c.out)),
    spec("zscore", 3, RF, KEY1, |s, c| s.cmd_zscore(c.args[1], c.args[2], c.now, c.out)),
];

/// The key holds another type.
struct WrongType;

/// `ZADD` options.
#[derive(Clone, Copy, Debug, Default)]
struct ZAddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
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

    /// The sorted set at `key` for reading: `Ok(None)` if missing.
    fn zset_for_read(&mut self, key: &[u8], now: u64) -> Result<Option<&ZSet>, WrongType> {
        match self.get(key, now) {
            None => Ok(None),
            Some(Value::ZSet(set)) => Ok(Some(set)),
            Some(_) => Err(WrongType),
        }
    }

    /// `HSET key field value [field value ...]` (`HMSET` when `hmset`).
    pub(crate) fn cmd_hset(&mut self, args: &[&[u8]], hmset: bool, now: u64, out: &mut Vec<u8>) {
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

    pub(crate) fn cmd_hget(&mut self, key: &[u8], field: &[u8], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        match self.hash_for_read(key, now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(hash) => match hash.and_then(|hash| hash.get(field)) {
                Some(value) => write_bulk(out, value),
                None => write_null(out, protocol),
            },
        }
    }

    pub(crate) fn cmd_hmget(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
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

    pub(crate) fn cmd_hgetall(&mut self, key: &[u8], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        match self.hash_for_read(key, now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(None) => write_map_header(out, 0, protocol),
            Ok(Some(hash)) => {
                write_map_header(out, hash.len(), protocol);
                for (field, value) in hash.iter() {
                    write_bulk(out, field);
                    write_bulk(out, value);
                }
            }
        }
    }

    pub(crate) fn cmd_hdel(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let key = args[1];
        let (removed, emptied) = match self.get_mut(key, now) {
            None => (0, false),
            Some(Value::Hash(hash)) => {
                let removed = args[2..].iter().filter(|field| hash.remove(field)).count();
                (removed, hash.is_empty())
            }
            Some(_) => return write_error(out, WRONGTYPE),
        };
        if removed == 0 {
            self.unchanged(key);
        }
        if emptied {
            self.remove(key, now);
        }
        write_integer(out, removed as i64);
    }

    pub(crate) fn cmd_hlen(&mut self, key: &[u8], now: u64, out: &mut Vec<u8>) {
        match self.hash_for_read(key, now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(hash) => write_integer(out, hash.map_or(0, Hash::len) as i64),
        }
    }

    pub(crate) fn cmd_hexists(&mut self, key: &[u8], field: &[u8], now: u64, out: &mut Vec<u8>) {
        match self.hash_for_read(key, now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(hash) => write_integer(out, i64::from(hash.and_then(|hash| hash.get(field)).is_some())),
        }
    }

    /// `ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]`.
    pub(crate) fn cmd_zadd(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        let key = args[1];
        let mut flags = ZAddFlags::default();
        let mut first = 2;
        while let Some(option) = args.get(first) {
            let flag = if option.eq_ignore_ascii_case(b"NX") {
                &mut flags.nx
            } else if option.eq_ignore_ascii_case(b"XX") {
                &mut flags.xx
            } else if option.eq_ignore_ascii_case(b"GT") {
                &mut flags.gt
            } else if option.eq_ignore_ascii_case(b"LT") {
                &mut flags.lt
            } else if option.eq_ignore_ascii_case(b"CH") {
                &mut flags.ch
            } else if option.eq_ignore_ascii_case(b"INCR") {
                &mut flags.incr
            } else {
                break;
            };
            *flag = true;
            first += 1;
        }
        let pairs = &args[first..];
        if pairs.is_empty() || pairs.len() % 2 != 0 {
            return write_error(out, SYNTAX);
        }
        if flags.nx && flags.xx {
            return write_error(out, b"ERR XX and NX options at the same time are not compatible");
        }
        if (flags.nx && (flags.gt || flags.lt)) || (flags.gt && flags.lt) {
            return write_error(out, b"ERR GT, LT, and/or NX options at the same time are not compatible");
        }
        if flags.incr && pairs.len() > 2 {
            return write_error(out, b"ERR INCR option supports a single increment-element pair");
        }
        // Every score is checked before anything changes.
        if pairs.chunks_exact(2).any(|pair| parse_f64(pair[0]).is_none()) {
            return write_error(out, NOT_FLOAT);
        }
        let exists = match self.get_mut(key, now) {
            None => false,
            Some(Value::ZSet(_)) => true,
            Some(_) => return write_error(out, WRONGTYPE),
        };
        if !exists {
            if flags.xx {
                return zadd_reply(out, protocol, flags, 0, None);
            }
            self.insert(key, Value::ZSet(ZSet::new()), Ttl::Clear, now);
        }
        let Some(Value::ZSet(set)) = self.get_mut(key, now) else {
            return write_error(out, WRONGTYPE);
        };
        let (mut changed, mut touched) = (0, !exists);
        let mut last_score = None;
        for pair in pairs.chunks_exact(2) {
            let (Some(value), member) = (parse_f64(pair[0]), pair[1]) else {
                continue;
            };
            match zadd_one(set, member, value, flags) {
                Err(()) => {
                    let emptied = set.is_empty();
                    if emptied {
                        self.remove(key, now);
                    }
                    return write_error(out, b"ERR resulting score is not a number (NaN)");
                }
                Ok(None) => {}
                Ok(Some((outcome, score))) => {
                    last_score = Some(score);
                    touched |= outcome != AddOutcome::Unchanged;
                    match outcome {
                        AddOutcome::Added => changed += 1,
                        AddOutcome::Updated if flags.ch => changed += 1,
                        AddOutcome::Updated | AddOutcome::Unchanged => {}
                    }
                }
            }
        }
        if !touched {
            self.unchanged(key);
        }
        zadd_reply(out, protocol, flags, changed, last_score);
    }

    pub(crate) fn cmd_zrem(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let key = args[1];
        let (removed, emptied) = match self.get_mut(key, now) {
            None => (0, false),
            Some(Value::ZSet(set)) => {
                let removed = args[2..].iter().filter(|member| set.remove(member)).count();
                (removed, set.is_empty())
            }
            Some(_) => return write_error(out, WRONGTYPE),
        };
        if removed == 0 {
            self.unchanged(key);
        }
        if emptied {
            self.remove(key, now);
        }
        write_integer(out, removed as i64);
    }

    /// `ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]`.
    pub(crate) fn cmd_zrangebyscore(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        let mut with_scores = false;
        let (mut offset, mut count) = (0i64, -1i64);
        let mut i = 4;
        while i < args.len() {
            if args[i].eq_ignore_ascii_case(b"WITHSCORES") {
                with_scores = true;
            } else if args[i].eq_ignore_ascii_case(b"LIMIT") && i + 2 < args.len() {
                let (Some(o), Some(c)) = (parse_i64(args[i + 1]), parse_i64(args[i + 2])) else {
                    return write_error(out, NOT_INTEGER);
                };
                (offset, count) = (o, c);
                i += 2;
            } else {
                return write_error(out, SYNTAX);
            }
            i += 1;
        }
        let (Some(min), Some(max)) = (parse_score_bound(args[2]), parse_score_bound(args[3])) else {
            return write_error(out, b"ERR min or max is not a float");
        };
        let set = match self.zset_for_read(args[1], now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(None) => return write_array_header(out, 0),
            Ok(Some(set)) => set,
        };
        // A negative offset selects nothing; a negative count means all.
        let skip = usize::try_from(offset).unwrap_or(usize::MAX);
        let take = usize::try_from(count).unwrap_or(usize::MAX);
        let selected = || set.range_by_score(min, max).skip(skip).take(take);
        let found = selected().count();
        // RESP3 pairs each member with its score; RESP2 interleaves them.
        let pairs = with_scores && protocol == Protocol::Resp3;
        write_array_header(out, if with_scores && !pairs { found * 2 } else { found });
        for (score, member) in selected() {
            if pairs {
                write_array_header(out, 2);
            }
            write_bulk(out, member);
            if with_scores {
                write_double(out, score.get(), protocol);
            }
        }
    }

    pub(crate) fn cmd_zcard(&mut self, key: &[u8], now: u64, out: &mut Vec<u8>) {
        match self.zset_for_read(key, now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(set) => write_integer(out, set.map_or(0, ZSet::len) as i64),
        }
    }

    pub(crate) fn cmd_zscore(&mut self, key: &[u8], member: &[u8], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        match self.zset_for_read(key, now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(set) => match set.and_then(|set| set.score(member)) {
                Some(score) => write_double(out, score.get(), protocol),
                None => write_null(out, protocol),
            },
        }
    }
}

/// Applies one `ZADD` pair as Redis's `zsetAdd`: `Ok(None)` when the flags
/// skip it, `Ok(Some((outcome, score)))` with the member's score after it,
/// `Err` when `INCR` would make the score NaN.
fn zadd_one(set: &mut ZSet, member: &[u8], value: f64, flags: ZAddFlags) -> Result<Option<(AddOutcome, f64)>, ()> {
    match set.score(member) {
        Some(current) => {
            if flags.nx {
                return Ok(None);
            }
            let current = current.get();
            let target = if flags.incr { current + value } else { value };
            let score = Score::new(target).ok_or(())?;
            let target = score.get();
            if (flags.lt && target >= current) || (flags.gt && target <= current) {
                return Ok(None);
            }
            Ok(Some((set.add(member, score), target)))
        }
        None if flags.xx => Ok(None),
        None => {
            let score = Score::new(value).ok_or(())?;
            Ok(Some((set.add(member, score), score.get())))
        }
    }
}

/// `ZADD`'s reply: the count (added, plus updated with `CH`), or with
/// `INCR` the member's new score (null when the flags skipped it).
fn zadd_reply(out: &mut Vec<u8>, protocol: Protocol, flags: ZAddFlags, changed: i64, last_score: Option<f64>) {
    if flags.incr {
        match last_score {
            Some(score) => write_double(out, score, protocol),
            None => write_null(out, protocol),
        }
    } else {
        write_integer(out, changed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(store: &mut Store, commands: &[&str]) -> String {
        let mut out = Vec::new();
        for command in commands {
            let words: Vec<&[u8]> = command.split(' ').map(str::as_bytes).collect();
            let _ = store.execute(&words, 0, &mut out);
        }
        String::from_utf8(out).unwrap()
    }

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
    fn zadd_options_follow_redis() {
        let mut store = Store::new();
        let replies = run(
            &mut store,
            &[
                "ZADD z 1",
                "ZADD z abc m",
                "ZADD z nan m",
                "ZADD z 1 a 2 b inf c -inf d",
                "ZADD z NX 5 a",
                "ZADD z XX CH 3 a",
                "ZADD z NX XX 3 a",
                "ZADD z INCR 1 a",
                "ZADD z INCR 1 a 2 b",
                "ZADD z GT LT 1 a",
                "ZADD z GT 1 a",
                "ZADD z GT CH 10 a",
                "ZADD z NX INCR 1 a",
                "ZADD z XX INCR 1 q",
                "ZADD z INCR -inf c",
                "ZADD z 1 a 2",
                "ZADD z nx 1",
                "ZADD none XX 1 a",
                "EXISTS none",
                "ZCARD z",
                "ZSCORE z a",
                "ZSCORE z q",
            ],
        );
        assert_eq!(
            replies,
            concat!(
                "-ERR wrong number of arguments for 'zadd' command\r\n",
                "-ERR value is not a valid float\r\n",
                "-ERR value is not a valid float\r\n",
                ":4\r\n:0\r\n:1\r\n",
                "-ERR XX and NX options at the same time are not compatible\r\n",
                "$1\r\n4\r\n",
                "-ERR INCR option supports a single increment-element pair\r\n",
                "-ERR GT, LT, and/or NX options at the same time are not compatible\r\n",
                ":0\r\n:1\r\n$-1\r\n$-1\r\n",
                "-ERR resulting score is not a number (NaN)\r\n",
                "-ERR syntax error\r\n-ERR syntax error\r\n",
                ":0\r\n:0\r\n:4\r\n$2\r\n10\r\n$-1\r\n",
            )
        );
    }

    #[test]
    fn zrangebyscore_follows_redis() {
        let mut store = Store::new();
        let replies = run(
            &mut store,
            &[
                "ZADD z 1.5 b 1e3 c 16 d 10 a 0.1 e",
                "ZRANGEBYSCORE z -inf +inf WITHSCORES",
                "ZRANGEBYSCORE z (1.5 +inf withscores limit 0 2",
                "ZRANGEBYSCORE z [1 2",
                "ZRANGEBYSCORE z 0 10 limit -1 2",
                "ZRANGEBYSCORE z 0 100 limit 1 -1",
                "ZRANGEBYSCORE z 0 100 limit 1 0",
                "ZRANGEBYSCORE z 0 10 limit 0 abc",
                "ZRANGEBYSCORE z 0 10 foo",
                "ZRANGEBYSCORE z 0 10 limit",
                "ZRANGEBYSCORE nokey a 1",
                "ZRANGEBYSCORE nokey 0 1",
                "ZREM z a b q",
                "ZREM z c d e",
                "EXISTS z",
            ],
        );
        assert_eq!(
            replies,
            concat!(
                ":5\r\n",
                "*10\r\n$1\r\ne\r\n$19\r\n0.10000000000000001\r\n$1\r\nb\r\n$3\r\n1.5\r\n$1\r\na\r\n$2\r\n10\r\n",
                "$1\r\nd\r\n$2\r\n16\r\n$1\r\nc\r\n$4\r\n1000\r\n",
                "*4\r\n$1\r\na\r\n$2\r\n10\r\n$1\r\nd\r\n$2\r\n16\r\n",
                "-ERR min or max is not a float\r\n",
                "*0\r\n",
                "*3\r\n$1\r\nb\r\n$1\r\na\r\n$1\r\nd\r\n",
                "*0\r\n",
                "-ERR value is not an integer or out of range\r\n",
                "-ERR syntax error\r\n-ERR syntax error\r\n",
                "-ERR min or max is not a float\r\n",
                "*0\r\n",
                ":2\r\n:3\r\n:0\r\n",
            )
        );
    }
}
