//! The sorted-set commands on members and scores: `ZADD`, `ZINCRBY`,
//! `ZREM`, `ZCARD`, `ZSCORE`, `ZMSCORE`, `ZRANK`, `ZREVRANK`, `ZCOUNT`,
//! `ZLEXCOUNT`, `ZPOPMIN`, `ZPOPMAX` and `ZRANDMEMBER` (the range commands
//! are in `zrange.rs`, the set algebra in `zsetops.rs`).
//!
//! Each follows its Redis 7.0 counterpart in `t_zset.c`: arguments are
//! validated in full (option conflicts, every score) before the key is
//! looked up, a missing key reads as an empty set, a set emptied by a
//! removal is deleted, and a key of another type answers `WRONGTYPE`.
//! Replies that pair members with scores are flat in RESP2 and, where
//! Redis nests them in RESP3, arrays of `[member, score]` ([`Scored`]).
//!
//! Costs: `ZADD`, `ZINCRBY`, `ZREM`, `ZSCORE` and the pops are O(log n) per
//! member, as in Redis. The order is a B-tree without subtree sizes, so
//! `ZRANK` and the counts walk: `ZRANK` is O(min(rank, n - rank)) and
//! `ZCOUNT`/`ZLEXCOUNT` O(log n + m) for m members counted, where Redis's
//! skip list answers in O(log n).

use super::command::{NOT_FLOAT, SYNTAX, WRONGTYPE};
use super::encode::{write_array_header, write_bulk, write_double, write_error, write_integer, write_null, Protocol};
use super::number::{parse_f64, parse_i64, parse_score_bound, ScoreBound};
use super::random::{parse_random_count, Draw};
use super::store::{Store, Ttl, Value};
use super::table::{spec, Flags, Spec, KEY1};
use super::zset::{AddOutcome, LexBound, Score, ZSet};

const R: Flags = Flags::READONLY;
const RF: Flags = Flags::READONLY.or(Flags::FAST);
const WF: Flags = Flags::WRITE.or(Flags::FAST);
const WDF: Flags = Flags::WRITE.or(Flags::DENYOOM).or(Flags::FAST);

/// The sorted-set commands on members and scores.
pub(crate) const COMMANDS: &[Spec] = &[
    spec("zadd", -4, WDF, KEY1, |s, c| s.cmd_zadd(c.args, c.now, c.out)),
    spec("zincrby", 4, WDF, KEY1, |s, c| {
        let flags = ZAddFlags { incr: true, ..ZAddFlags::default() };
        s.zadd(c.args[1], flags, &c.args[2..], c.now, c.out)
    }),
    spec("zrem", -3, WF, KEY1, |s, c| s.cmd_zrem(c.args, c.now, c.out)),
    spec("zcard", 2, RF, KEY1, |s, c| s.cmd_zcard(c.args[1], c.now, c.out)),
    spec("zscore", 3, RF, KEY1, |s, c| s.cmd_zscore(c.args[1], c.args[2], c.now, c.out)),
    spec("zmscore", -3, RF, KEY1, |s, c| s.cmd_zmscore(c.args, c.now, c.out)),
    spec("zrank", 3, RF, KEY1, |s, c| s.cmd_zrank(c.args[1], c.args[2], false, c.now, c.out)),
    spec("zrevrank", 3, RF, KEY1, |s, c| s.cmd_zrank(c.args[1], c.args[2], true, c.now, c.out)),
    spec("zcount", 4, RF, KEY1, |s, c| s.cmd_zcount(c.args, c.now, c.out)),
    spec("zlexcount", 4, RF, KEY1, |s, c| s.cmd_zlexcount(c.args, c.now, c.out)),
    spec("zpopmin", -2, WF, KEY1, |s, c| s.cmd_zpop(c.args, false, c.now, c.out)),
    spec("zpopmax", -2, WF, KEY1, |s, c| s.cmd_zpop(c.args, true, c.now, c.out)),
    spec("zrandmember", -2, R, KEY1, |s, c| s.cmd_zrandmember(c.args, c.now, c.out)),
];

/// The key holds another type.
pub(crate) struct WrongType;

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

/// How a reply lists members with or without their scores: RESP2 (and
/// RESP3 where Redis keeps it flat) interleaves them, RESP3 pairs them in
/// two-element arrays.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scored {
    with_scores: bool,
    nested: bool,
    protocol: Protocol,
}

impl Scored {
    /// Members only, or with scores as Redis's range replies list them.
    pub(crate) fn new(with_scores: bool, protocol: Protocol) -> Scored {
        Scored { with_scores, nested: with_scores && protocol == Protocol::Resp3, protocol }
    }

    /// Members with scores, flat in both protocols (`ZPOPMIN` without a
    /// count, `BZPOPMIN`).
    pub(crate) fn flat(protocol: Protocol) -> Scored {
        Scored { with_scores: true, nested: false, protocol }
    }

    /// The header of a reply of `count` members.
    pub(crate) fn header(self, out: &mut Vec<u8>, count: usize) {
        write_array_header(out, if self.with_scores && !self.nested { count * 2 } else { count });
    }

    /// One member (and its score).
    pub(crate) fn item(self, out: &mut Vec<u8>, member: &[u8], score: f64) {
        if self.nested {
            write_array_header(out, 2);
        }
        write_bulk(out, member);
        if self.with_scores {
            write_double(out, score, self.protocol);
        }
    }

    /// A whole reply.
    pub(crate) fn write(self, out: &mut Vec<u8>, items: &[(Score, &[u8])]) {
        self.header(out, items.len());
        for &(score, member) in items {
            self.item(out, member, score.get());
        }
    }
}

/// Parses a score range (`ZRANGEBYSCORE`'s min and max).
pub(crate) fn parse_score_range(min: &[u8], max: &[u8]) -> Result<(ScoreBound, ScoreBound), &'static [u8]> {
    match (parse_score_bound(min), parse_score_bound(max)) {
        (Some(min), Some(max)) => Ok((min, max)),
        _ => Err(b"ERR min or max is not a float"),
    }
}

/// Parses a lexicographic range (`ZRANGEBYLEX`'s min and max).
pub(crate) fn parse_lex_range<'a>(min: &'a [u8], max: &'a [u8]) -> Result<(LexBound<'a>, LexBound<'a>), &'static [u8]> {
    match (LexBound::parse(min), LexBound::parse(max)) {
        (Some(min), Some(max)) => Ok((min, max)),
        _ => Err(b"ERR min or max not valid string range item"),
    }
}

impl Store {
    /// The sorted set at `key` for reading: `Ok(None)` if missing.
    pub(crate) fn zset_for_read(&mut self, key: &[u8], now: u64) -> Result<Option<&ZSet>, WrongType> {
        match self.get(key, now) {
            None => Ok(None),
            Some(Value::ZSet(set)) => Ok(Some(set)),
            Some(_) => Err(WrongType),
        }
    }

    /// The sorted set at `key` for changing: `Ok(None)` if missing.
    pub(crate) fn zset_for_write(&mut self, key: &[u8], now: u64) -> Result<Option<&mut ZSet>, WrongType> {
        match self.get_mut(key, now) {
            None => Ok(None),
            Some(Value::ZSet(set)) => Ok(Some(set)),
            Some(_) => Err(WrongType),
        }
    }

    /// Deletes `key` if it holds an empty sorted set.
    pub(crate) fn drop_if_empty(&mut self, key: &[u8], now: u64) {
        if matches!(self.peek(key, now), Some(Value::ZSet(set)) if set.is_empty()) {
            self.remove(key, now);
        }
    }

    /// `ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]`.
    fn cmd_zadd(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
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
        self.zadd(args[1], flags, &args[first..], now, out);
    }

    /// `ZADD` after its options, and `ZINCRBY key increment member`.
    fn zadd(&mut self, key: &[u8], flags: ZAddFlags, pairs: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
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
        let exists = match self.zset_for_write(key, now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(set) => set.is_some(),
        };
        if !exists {
            if flags.xx {
                return zadd_reply(out, protocol, flags, 0, None);
            }
            self.insert(key, Value::ZSet(ZSet::new()), Ttl::Clear, now);
        }
        let Ok(Some(set)) = self.zset_for_write(key, now) else {
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
                    self.drop_if_empty(key, now);
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
            // As Redis, a ZADD that added and updated nothing is no change.
            self.unchanged(key);
        }
        zadd_reply(out, protocol, flags, changed, last_score);
    }

    fn cmd_zrem(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let removed = match self.zset_for_write(args[1], now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(None) => 0,
            Ok(Some(set)) => args[2..].iter().filter(|member| set.remove(member)).count(),
        };
        if removed == 0 {
            self.unchanged(args[1]);
        }
        self.drop_if_empty(args[1], now);
        write_integer(out, removed as i64);
    }

    fn cmd_zcard(&mut self, key: &[u8], now: u64, out: &mut Vec<u8>) {
        match self.zset_for_read(key, now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(set) => write_integer(out, set.map_or(0, ZSet::len) as i64),
        }
    }

    fn cmd_zscore(&mut self, key: &[u8], member: &[u8], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        match self.zset_for_read(key, now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(set) => match set.and_then(|set| set.score(member)) {
                Some(score) => write_double(out, score.get(), protocol),
                None => write_null(out, protocol),
            },
        }
    }

    /// `ZMSCORE key member [member ...]`: a score or null for each.
    fn cmd_zmscore(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        let Ok(set) = self.zset_for_read(args[1], now) else {
            return write_error(out, WRONGTYPE);
        };
        write_array_header(out, args.len() - 2);
        for member in &args[2..] {
            match set.and_then(|set| set.score(member)) {
                Some(score) => write_double(out, score.get(), protocol),
                None => write_null(out, protocol),
            }
        }
    }

    /// `ZRANK key member` and `ZREVRANK` (Redis 7.0 has no `WITHSCORE`).
    fn cmd_zrank(&mut self, key: &[u8], member: &[u8], reverse: bool, now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        let set = match self.zset_for_read(key, now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(None) => return write_null(out, protocol),
            Ok(Some(set)) => set,
        };
        match set.rank(member) {
            Some(rank) if reverse => write_integer(out, (set.len() - 1 - rank) as i64),
            Some(rank) => write_integer(out, rank as i64),
            None => write_null(out, protocol),
        }
    }

    /// `ZCOUNT key min max`.
    fn cmd_zcount(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let (min, max) = match parse_score_range(args[2], args[3]) {
            Ok(range) => range,
            Err(message) => return write_error(out, message),
        };
        match self.zset_for_read(args[1], now) {
            Err(WrongType) => write_error(out, WRONGTYPE),
            Ok(set) => write_integer(out, set.map_or(0, |set| set.range_by_score(min, max, false).count()) as i64),
        }
    }

    /// `ZLEXCOUNT key min max`.
    fn cmd_zlexcount(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let (min, max) = match parse_lex_range(args[2], args[3]) {
            Ok(range) => range,
            Err(message) => return write_error(out, message),
        };
        let count = match self.zset_for_read(args[1], now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(None) => 0,
            Ok(Some(set)) => set.from_lex(min, max, false).take_while(|(_, m)| max.admits_from_above(m)).count(),
        };
        write_integer(out, count as i64);
    }

    /// `ZPOPMIN key [count]` and `ZPOPMAX`: O(log n) per member.
    fn cmd_zpop(&mut self, args: &[&[u8]], highest: bool, now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        if args.len() > 3 {
            return write_error(out, SYNTAX);
        }
        // Redis gives the range error for anything but a count >= 0.
        let count = match args.get(2).map(|text| parse_i64(text)) {
            None => None,
            Some(Some(count)) if count >= 0 => Some(count),
            Some(_) => return write_error(out, b"ERR value is out of range, must be positive"),
        };
        let set = match self.zset_for_write(args[1], now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(None) => return write_array_header(out, 0),
            Ok(Some(set)) => set,
        };
        let wanted = usize::try_from(count.unwrap_or(1)).unwrap_or(usize::MAX).min(set.len());
        let scored = if count.is_some() { Scored::new(true, protocol) } else { Scored::flat(protocol) };
        scored.header(out, wanted);
        for _ in 0..wanted {
            if let Some((score, member)) = set.pop(highest) {
                scored.item(out, &member, score.get());
            }
        }
        if wanted == 0 {
            // A count of 0 pops nothing: the key's watchers are left alone.
            self.unchanged(args[1]);
        }
        self.drop_if_empty(args[1], now);
    }

    /// `ZRANDMEMBER key [count [WITHSCORES]]`.
    fn cmd_zrandmember(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        let options = match args.get(2) {
            None => None,
            Some(count) => match parse_random_count(count, &args[3..], b"WITHSCORES") {
                Ok(count) => Some((count, args.len() == 4)),
                Err(message) => return write_error(out, message),
            },
        };
        let len = match self.zset_for_read(args[1], now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(None) if options.is_none() => return write_null(out, protocol),
            Ok(set) => set.map_or(0, ZSet::len),
        };
        let (Some(Value::ZSet(set)), random) = self.get_mut_and_random(args[1], now) else {
            return write_array_header(out, 0);
        };
        let set = &*set;
        let Some((count, with_scores)) = options else {
            if let Some((_, member)) = set.nth(random.below(len)) {
                write_bulk(out, member);
            }
            return;
        };
        let draw = Draw::of(count, len);
        // Redis walks sorted sets from the top: a whole set comes back
        // highest first.
        let members: Vec<(Score, &[u8])> = if draw == Draw::Nothing { Vec::new() } else { set.iter().rev().collect() };
        if let Draw::Repeated(draws) = draw {
            if !random.draws_fit(len, draws, |i| members[i].1.len() + 64) {
                return write_error(out, b"ERR ZRANDMEMBER reply would be too large");
            }
        }
        let scored = Scored::new(with_scores, protocol);
        scored.header(out, draw.len(len));
        let mut write = |index: usize| {
            let (score, member) = members[index];
            scored.item(out, member, score.get());
        };
        match draw {
            Draw::Nothing => {}
            Draw::All => (0..len).for_each(&mut write),
            Draw::Distinct(count) => random.distinct_below(len, count).into_iter().for_each(&mut write),
            Draw::Repeated(draws) => (0..draws).for_each(|_| write(random.below(len))),
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

    use crate::resp::testing::run;

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
    fn ranks_counts_and_pops() {
        let mut store = Store::new();
        let replies = run(
            &mut store,
            &[
                "ZADD z 1 a 2 b 3 c 4 d",
                "ZRANK z c",
                "ZREVRANK z c",
                "ZRANK z q",
                "ZRANK nokey a",
                "ZCOUNT z (1 3",
                "ZCOUNT z x 3",
                "ZLEXCOUNT z - +",
                "ZLEXCOUNT z a +",
                "ZINCRBY z 1.5 a",
                "ZMSCORE z a q",
                "ZPOPMIN z",
                "ZPOPMAX z 2",
                "ZPOPMIN z -1",
                "ZPOPMIN z 0",
                "ZPOPMIN z 5",
                "EXISTS z",
                "ZPOPMIN z 1 2",
            ],
        );
        assert_eq!(
            replies,
            concat!(
                ":4\r\n:2\r\n:1\r\n$-1\r\n$-1\r\n:2\r\n",
                "-ERR min or max is not a float\r\n",
                ":4\r\n",
                "-ERR min or max not valid string range item\r\n",
                "$3\r\n2.5\r\n",
                "*2\r\n$3\r\n2.5\r\n$-1\r\n",
                "*2\r\n$1\r\nb\r\n$1\r\n2\r\n",
                "*4\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\nc\r\n$1\r\n3\r\n",
                "-ERR value is out of range, must be positive\r\n",
                "*0\r\n",
                "*2\r\n$1\r\na\r\n$3\r\n2.5\r\n",
                ":0\r\n",
                "-ERR syntax error\r\n",
            )
        );
    }
}
