//! The sorted-set range commands: `ZRANGE` with Redis 6.2's full syntax
//! (`BYSCORE`, `BYLEX`, `REV`, `LIMIT offset count`, `WITHSCORES`),
//! `ZRANGESTORE`, the older `ZREVRANGE`, `ZRANGEBYSCORE`,
//! `ZREVRANGEBYSCORE`, `ZRANGEBYLEX` and `ZREVRANGEBYLEX`, and the
//! `ZREMRANGEBYRANK`, `ZREMRANGEBYSCORE` and `ZREMRANGEBYLEX` removals.
//!
//! All the range reads share one parser and one walk, as in Redis's
//! `zrangeGenericCommand`, so their option conflicts and error texts are
//! Redis's: options are read first (each command accepts the ones its
//! syntax has, `REV`, `BYSCORE` and `BYLEX` at most once; anything else is
//! `ERR syntax error`), then the conflicts (`LIMIT` needs `BYSCORE` or
//! `BYLEX`, `WITHSCORES` refuses `BYLEX`), then the range itself, and only
//! then the key. A reversed score or lex range
//! is given as max, min. `LIMIT` skips `offset` members and returns at most
//! `count` (all when negative; nothing when the offset is negative).
//!
//! Costs: a score range starts in O(log n); a rank range starts in
//! O(min(start, n - start)) (the tree has no subtree sizes, see
//! `zset.rs`); a lex range starts in O(log n) when all scores are equal and
//! otherwise scans as Redis's small sets do.

use super::command::{NOT_INTEGER, SYNTAX, WRONGTYPE};
use super::encode::{write_error, write_integer};
use super::number::{parse_i64, ScoreBound};
use super::store::{Store, Ttl, Value};
use super::table::{spec, Flags, Spec, KEY1};
use super::zset::{LexBound, Score, ZSet};
use super::zsets::{parse_lex_range, parse_score_range, Scored, WrongType};

const R: Flags = Flags::READONLY;
const W: Flags = Flags::WRITE;
const WD: Flags = Flags::WRITE.or(Flags::DENYOOM);

/// The range commands.
pub(crate) const COMMANDS: &[Spec] = &[
    spec("zrange", -4, R, KEY1, |s, c| s.zrange(c.args, Query::ZRANGE, c.now, c.out)),
    spec("zrangestore", -5, WD, (1, 2, 1), |s, c| s.zrange(c.args, Query::ZRANGESTORE, c.now, c.out)),
    spec("zrevrange", -4, R, KEY1, |s, c| s.zrange(c.args, Query::fixed(Kind::Rank, true), c.now, c.out)),
    spec("zrangebyscore", -4, R, KEY1, |s, c| s.zrange(c.args, Query::fixed(Kind::Score, false), c.now, c.out)),
    spec("zrevrangebyscore", -4, R, KEY1, |s, c| s.zrange(c.args, Query::fixed(Kind::Score, true), c.now, c.out)),
    spec("zrangebylex", -4, R, KEY1, |s, c| s.zrange(c.args, Query::fixed(Kind::Lex, false), c.now, c.out)),
    spec("zrevrangebylex", -4, R, KEY1, |s, c| s.zrange(c.args, Query::fixed(Kind::Lex, true), c.now, c.out)),
    spec("zremrangebyrank", 4, W, KEY1, |s, c| s.zremrange(c.args, Kind::Rank, c.now, c.out)),
    spec("zremrangebyscore", 4, W, KEY1, |s, c| s.zremrange(c.args, Kind::Score, c.now, c.out)),
    spec("zremrangebylex", 4, W, KEY1, |s, c| s.zremrange(c.args, Kind::Lex, c.now, c.out)),
];

/// What a range counts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Positions (0-based, negative from the end).
    Rank,
    /// Scores.
    Score,
    /// Members' bytes.
    Lex,
}

/// Which range command runs: its kind and direction when the command fixes
/// them (`None`: options choose), and whether it stores its result.
#[derive(Clone, Copy, Debug)]
struct Query {
    kind: Option<Kind>,
    reverse: Option<bool>,
    store: bool,
}

impl Query {
    const ZRANGE: Query = Query { kind: None, reverse: None, store: false };
    const ZRANGESTORE: Query = Query { kind: None, reverse: None, store: true };

    const fn fixed(kind: Kind, reverse: bool) -> Query {
        Query { kind: Some(kind), reverse: Some(reverse), store: false }
    }
}

/// A parsed range.
#[derive(Clone, Copy, Debug)]
enum Range<'a> {
    Rank(i64, i64),
    Score(ScoreBound, ScoreBound),
    Lex(LexBound<'a>, LexBound<'a>),
}

/// Parses a range of `kind` from its two ends.
fn parse_range<'a>(kind: Kind, min: &'a [u8], max: &'a [u8]) -> Result<Range<'a>, &'static [u8]> {
    match kind {
        Kind::Rank => match (parse_i64(min), parse_i64(max)) {
            (Some(start), Some(stop)) => Ok(Range::Rank(start, stop)),
            _ => Err(NOT_INTEGER),
        },
        Kind::Score => parse_score_range(min, max).map(|(min, max)| Range::Score(min, max)),
        Kind::Lex => parse_lex_range(min, max).map(|(min, max)| Range::Lex(min, max)),
    }
}

/// Redis's clamping of a rank range `start..=stop` over `len` members:
/// the first rank and the number of members, or `None` if empty.
pub(crate) fn clamp_ranks(start: i64, stop: i64, len: usize) -> Option<(usize, usize)> {
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let start = if start < 0 { start.saturating_add(len) } else { start }.max(0);
    let stop = if stop < 0 { stop.saturating_add(len) } else { stop };
    if start > stop || start >= len {
        return None;
    }
    let stop = stop.min(len - 1);
    Some((start as usize, (stop - start + 1) as usize))
}

/// The members a range selects, in reply order (`offset` and `limit` as
/// `LIMIT` gives them; only score and lex ranges have them).
fn select<'s>(set: &'s ZSet, range: Range<'s>, reverse: bool, offset: i64, limit: i64) -> Vec<(Score, &'s [u8])> {
    // A negative offset walks off the end in Redis: nothing.
    let skip = usize::try_from(offset).unwrap_or(usize::MAX);
    let take = usize::try_from(limit).unwrap_or(usize::MAX);
    match range {
        Range::Rank(start, stop) => match clamp_ranks(start, stop, set.len()) {
            None => Vec::new(),
            Some((start, count)) if reverse => set.from_rank(set.len() - 1 - start, true).take(count).collect(),
            Some((start, count)) => set.from_rank(start, false).take(count).collect(),
        },
        Range::Score(min, max) => set.range_by_score(min, max, reverse).skip(skip).take(take).collect(),
        Range::Lex(min, max) => set
            .from_lex(min, max, reverse)
            .skip(skip)
            .take_while(
                |&(_, member)| {
                    if reverse {
                        min.admits_from_below(member)
                    } else {
                        max.admits_from_above(member)
                    }
                },
            )
            .take(take)
            .collect(),
    }
}

impl Store {
    /// Every range read: `ZRANGE`, `ZRANGESTORE` (the destination first),
    /// `ZREVRANGE`, `Z[REV]RANGEBYSCORE`, `Z[REV]RANGEBYLEX`.
    fn zrange(&mut self, args: &[&[u8]], query: Query, now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        let first = if query.store { 2 } else { 1 };
        let source = args[first];
        let (mut kind, mut reverse) = (query.kind, query.reverse);
        let (mut with_scores, mut offset, mut limit) = (false, 0i64, -1i64);
        let mut i = first + 3;
        while i < args.len() {
            let option = args[i];
            if !query.store && option.eq_ignore_ascii_case(b"WITHSCORES") {
                with_scores = true;
            } else if option.eq_ignore_ascii_case(b"LIMIT") && i + 2 < args.len() {
                match (parse_i64(args[i + 1]), parse_i64(args[i + 2])) {
                    (Some(o), Some(l)) => (offset, limit) = (o, l),
                    _ => return write_error(out, NOT_INTEGER),
                }
                i += 2;
            } else if reverse.is_none() && option.eq_ignore_ascii_case(b"REV") {
                reverse = Some(true);
            } else if kind.is_none() && option.eq_ignore_ascii_case(b"BYLEX") {
                kind = Some(Kind::Lex);
            } else if kind.is_none() && option.eq_ignore_ascii_case(b"BYSCORE") {
                kind = Some(Kind::Score);
            } else {
                return write_error(out, SYNTAX);
            }
            i += 1;
        }
        let kind = kind.unwrap_or(Kind::Rank);
        let reverse = reverse.unwrap_or(false);
        if limit != -1 && kind == Kind::Rank {
            return write_error(
                out,
                b"ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
            );
        }
        if with_scores && kind == Kind::Lex {
            return write_error(out, b"ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        }
        // Reversed score and lex ranges are written max, min.
        let (min, max) = match kind {
            Kind::Score | Kind::Lex if reverse => (args[first + 2], args[first + 1]),
            _ => (args[first + 1], args[first + 2]),
        };
        let range = match parse_range(kind, min, max) {
            Ok(range) => range,
            Err(message) => return write_error(out, message),
        };
        let set = match self.zset_for_read(source, now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(set) => set,
        };
        if !query.store {
            let selected = set.map_or_else(Vec::new, |set| select(set, range, reverse, offset, limit));
            return Scored::new(with_scores, protocol).write(out, &selected);
        }
        let mut result = ZSet::new();
        if let Some(set) = set {
            for (score, member) in select(set, range, reverse, offset, limit) {
                result.add(member, score);
            }
        }
        let destination = args[1];
        write_integer(out, result.len() as i64);
        if result.is_empty() {
            self.remove(destination, now);
        } else {
            self.insert(destination, Value::ZSet(result), Ttl::Clear, now);
        }
    }

    /// `ZREMRANGEBYRANK`, `ZREMRANGEBYSCORE`, `ZREMRANGEBYLEX key min max`.
    fn zremrange(&mut self, args: &[&[u8]], kind: Kind, now: u64, out: &mut Vec<u8>) {
        let range = match parse_range(kind, args[2], args[3]) {
            Ok(range) => range,
            Err(message) => return write_error(out, message),
        };
        let set = match self.zset_for_write(args[1], now) {
            Err(WrongType) => return write_error(out, WRONGTYPE),
            Ok(None) => return write_integer(out, 0),
            Ok(Some(set)) => set,
        };
        let doomed: Vec<Vec<u8>> =
            select(set, range, false, 0, -1).into_iter().map(|(_, member)| member.to_vec()).collect();
        for member in &doomed {
            set.remove(member);
        }
        if doomed.is_empty() {
            // Nothing removed, nothing changed (Redis signals only a
            // deletion): the key's watchers are left alone.
            self.unchanged(args[1]);
        }
        self.drop_if_empty(args[1], now);
        write_integer(out, doomed.len() as i64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::resp::testing::run;

    #[test]
    fn rank_clamping_follows_redis() {
        assert_eq!(clamp_ranks(0, -1, 5), Some((0, 5)));
        assert_eq!(clamp_ranks(-2, -1, 5), Some((3, 2)));
        assert_eq!(clamp_ranks(-100, 100, 5), Some((0, 5)));
        assert_eq!(clamp_ranks(3, 1, 5), None);
        assert_eq!(clamp_ranks(5, 10, 5), None);
        assert_eq!(clamp_ranks(0, -6, 5), None);
        assert_eq!(clamp_ranks(i64::MIN, i64::MAX, 5), Some((0, 5)));
        assert_eq!(clamp_ranks(0, 0, 0), None);
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

    #[test]
    fn zrange_options_and_store() {
        let mut store = Store::new();
        let replies = run(
            &mut store,
            &[
                "ZADD z 1 a 2 b 3 c 4 d",
                "ZRANGE z 0 -1",
                "ZRANGE z -2 -1 REV",
                "ZRANGE z (4 2 BYSCORE REV LIMIT 1 5",
                "ZRANGE z 0 1 LIMIT 0 1",
                "ZRANGE z 0 1 LIMIT 0 -1",
                "ZRANGE z - + BYLEX WITHSCORES",
                "ZREVRANGE z 0 0 REV",
                "ZRANGESTORE d z 1 2",
                "ZRANGE d 0 -1",
                "ZRANGESTORE d z 5 6",
                "EXISTS d",
                "ZRANGESTORE d z 0 1 WITHSCORES",
                "ZREMRANGEBYRANK z 0 1",
                "ZREMRANGEBYSCORE z 4 +inf",
                "ZREMRANGEBYLEX z - +",
                "EXISTS z",
            ],
        );
        assert_eq!(
            replies,
            concat!(
                ":4\r\n",
                "*4\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n",
                "*2\r\n$1\r\nb\r\n$1\r\na\r\n",
                "*1\r\n$1\r\nb\r\n",
                "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX\r\n",
                "*2\r\n$1\r\na\r\n$1\r\nb\r\n",
                "-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n",
                "-ERR syntax error\r\n",
                ":2\r\n*2\r\n$1\r\nb\r\n$1\r\nc\r\n",
                ":0\r\n:0\r\n",
                "-ERR syntax error\r\n",
                ":2\r\n:1\r\n:1\r\n:0\r\n",
            )
        );
    }
}
