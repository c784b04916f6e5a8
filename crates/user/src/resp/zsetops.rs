//! Sorted-set algebra: `ZUNION`, `ZINTER`, `ZDIFF`, their `…STORE`
//! forms, and `ZINTERCARD`.
//!
//! One parser and one evaluator serve all seven, as Redis's
//! `zunionInterDiffGenericCommand` does, so the checks come in Redis's
//! order: the key count (`ERR at least 1 input key is needed for '…'
//! command`, `ERR syntax error` if fewer keys follow), every key's type,
//! then the options (`WEIGHTS` and `AGGREGATE SUM|MIN|MAX` for union and
//! intersection, `WITHSCORES` for the replying forms, `LIMIT` for
//! `ZINTERCARD`). The arithmetic is Redis's too: a weighted score that is
//! NaN (`0 * inf`) counts as 0, so does a sum that is NaN (`inf + -inf`),
//! and inputs are taken smallest first (which fixes the order in which
//! sums are added). Results are sorted sets, so replies come in score
//! order, ties by member bytes; a `…STORE` whose result is empty deletes
//! its destination.
//!
//! Plain sets are accepted as inputs too, every member scoring 1, as in
//! Redis.

use std::borrow::Cow;
use std::collections::HashMap;

use super::command::{NOT_INTEGER, SYNTAX, WRONGTYPE};
use super::encode::{write_error, write_integer};
use super::number::{parse_f64, parse_i64};
use super::set::{Member, Set};
use super::store::{Store, Ttl, Value};
use super::table::{spec, Flags, Spec, KEY1};
use super::zset::{Score, ZSet};
use super::zsets::Scored;

const R: Flags = Flags::READONLY.or(Flags::MOVABLE_KEYS);
const WD: Flags = Flags::WRITE.or(Flags::DENYOOM).or(Flags::MOVABLE_KEYS);
const NO_FIXED_KEYS: (i32, i32, i32) = (0, 0, 0);

/// The set-algebra commands.
pub(crate) const COMMANDS: &[Spec] = &[
    spec("zunionstore", -4, WD, KEY1, |s, c| s.zsetop(c.args, Op::Union, Output::Store, c.now, c.out)),
    spec("zinterstore", -4, WD, KEY1, |s, c| s.zsetop(c.args, Op::Inter, Output::Store, c.now, c.out)),
    spec("zdiffstore", -4, WD, KEY1, |s, c| s.zsetop(c.args, Op::Diff, Output::Store, c.now, c.out)),
    spec("zunion", -3, R, NO_FIXED_KEYS, |s, c| s.zsetop(c.args, Op::Union, Output::Reply, c.now, c.out)),
    spec("zinter", -3, R, NO_FIXED_KEYS, |s, c| s.zsetop(c.args, Op::Inter, Output::Reply, c.now, c.out)),
    spec("zdiff", -3, R, NO_FIXED_KEYS, |s, c| s.zsetop(c.args, Op::Diff, Output::Reply, c.now, c.out)),
    spec("zintercard", -3, R, NO_FIXED_KEYS, |s, c| s.zsetop(c.args, Op::Inter, Output::Count, c.now, c.out)),
];

/// The operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Union,
    Inter,
    Diff,
}

/// What becomes of the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Output {
    /// Stored at the first argument (`…STORE`), its size replied.
    Store,
    /// Replied (`ZUNION`, `ZINTER`, `ZDIFF`).
    Reply,
    /// Only counted (`ZINTERCARD`).
    Count,
}

/// How scores of one member in several inputs combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

impl Aggregate {
    /// Redis's `zunionInterAggregate`.
    fn apply(self, target: &mut f64, value: f64) {
        match self {
            Aggregate::Sum => {
                *target += value;
                if target.is_nan() {
                    *target = 0.0;
                }
            }
            Aggregate::Min => *target = if value < *target { value } else { *target },
            Aggregate::Max => *target = if value > *target { value } else { *target },
        }
    }
}

/// One input: a sorted set, a set (every member scoring 1), or nothing
/// (a missing key).
#[derive(Clone, Copy, Debug)]
enum Source<'a> {
    Missing,
    ZSet(&'a ZSet),
    Set(&'a Set),
}

impl<'a> Source<'a> {
    fn len(self) -> usize {
        match self {
            Source::Missing => 0,
            Source::ZSet(set) => set.len(),
            Source::Set(set) => set.len(),
        }
    }

    fn score(self, member: &[u8]) -> Option<f64> {
        match self {
            Source::Missing => None,
            Source::ZSet(set) => set.score(member).map(Score::get),
            Source::Set(set) => set.contains(member).then_some(1.0),
        }
    }

    /// Every member and its score (an integer set's members are spelled
    /// out, so they are owned).
    fn iter(self) -> Box<dyn Iterator<Item = (f64, Cow<'a, [u8]>)> + 'a> {
        match self {
            Source::Missing => Box::new(std::iter::empty()),
            Source::ZSet(set) => Box::new(set.iter().map(|(score, member)| (score.get(), Cow::Borrowed(member)))),
            Source::Set(set) => Box::new(set.iter().map(|member| match member {
                Member::Bytes(bytes) => (1.0, Cow::Borrowed(bytes)),
                Member::Int(_) => (1.0, Cow::Owned(member.to_vec())),
            })),
        }
    }
}

/// A result member with its score.
type Weighed<'a> = (f64, Cow<'a, [u8]>);

/// The parsed options.
#[derive(Clone, Debug)]
struct Options {
    weights: Vec<f64>,
    aggregate: Aggregate,
    with_scores: bool,
    /// `ZINTERCARD`'s limit, 0 for none.
    limit: u64,
}

/// Parses the options after the keys (`count` keys).
fn parse_options(rest: &[&[u8]], count: usize, op: Op, output: Output) -> Result<Options, &'static [u8]> {
    let mut options = Options { weights: vec![1.0; count], aggregate: Aggregate::Sum, with_scores: false, limit: 0 };
    let combines = op != Op::Diff && output != Output::Count;
    let mut i = 0;
    while i < rest.len() {
        let (option, remaining) = (rest[i], rest.len() - i);
        if combines && remaining > count && option.eq_ignore_ascii_case(b"WEIGHTS") {
            for (weight, text) in options.weights.iter_mut().zip(&rest[i + 1..]) {
                *weight = parse_f64(text).ok_or(&b"ERR weight value is not a float"[..])?;
            }
            i += 1 + count;
        } else if combines && remaining >= 2 && option.eq_ignore_ascii_case(b"AGGREGATE") {
            let name = rest[i + 1];
            options.aggregate = if name.eq_ignore_ascii_case(b"SUM") {
                Aggregate::Sum
            } else if name.eq_ignore_ascii_case(b"MIN") {
                Aggregate::Min
            } else if name.eq_ignore_ascii_case(b"MAX") {
                Aggregate::Max
            } else {
                return Err(SYNTAX);
            };
            i += 2;
        } else if output == Output::Reply && option.eq_ignore_ascii_case(b"WITHSCORES") {
            options.with_scores = true;
            i += 1;
        } else if output == Output::Count && remaining >= 2 && option.eq_ignore_ascii_case(b"LIMIT") {
            let limit = parse_i64(rest[i + 1]).filter(|&limit| limit >= 0);
            options.limit = limit.ok_or(&b"ERR LIMIT can't be negative"[..])? as u64;
            i += 2;
        } else {
            return Err(SYNTAX);
        }
    }
    Ok(options)
}

/// The result of an operation: members with their scores, in no order
/// (and, for `ZINTERCARD`, only how many there are).
fn evaluate<'a>(sources: &mut [(Source<'a>, f64)], op: Op, options: &Options) -> (Vec<Weighed<'a>>, u64) {
    // The weighted score of one input, NaN counting as 0.
    let weighted = |score: f64, weight: f64| {
        let value = score * weight;
        if value.is_nan() {
            0.0
        } else {
            value
        }
    };
    let mut result = Vec::new();
    let mut count = 0u64;
    if op != Op::Diff {
        sources.sort_by_key(|(source, _)| source.len());
    }
    let Some(&(first, first_weight)) = sources.first() else {
        return (result, count);
    };
    match op {
        Op::Inter => {
            'members: for (score, member) in first.iter() {
                let mut total = weighted(score, first_weight);
                for &(other, weight) in &sources[1..] {
                    match other.score(&member) {
                        Some(score) => options.aggregate.apply(&mut total, score * weight),
                        None => continue 'members,
                    }
                }
                count += 1;
                result.push((total, member));
                if options.limit != 0 && count >= options.limit {
                    break;
                }
            }
        }
        Op::Union => {
            let mut totals: HashMap<Cow<'a, [u8]>, f64> =
                HashMap::with_capacity(sources.last().map_or(0, |s| s.0.len()));
            for &(source, weight) in sources.iter() {
                for (score, member) in source.iter() {
                    let score = weighted(score, weight);
                    match totals.get_mut(&member) {
                        Some(total) => options.aggregate.apply(total, score),
                        None => {
                            totals.insert(member, score);
                        }
                    }
                }
            }
            result = totals.into_iter().map(|(member, score)| (score, member)).collect();
            count = result.len() as u64;
        }
        Op::Diff => {
            result = first
                .iter()
                .filter(|(_, member)| sources[1..].iter().all(|(s, _)| s.score(member).is_none()))
                .collect();
            count = result.len() as u64;
        }
    }
    (result, count)
}

impl Store {
    /// Every set-algebra command.
    fn zsetop(&mut self, args: &[&[u8]], op: Op, output: Output, now: u64, out: &mut Vec<u8>) {
        let protocol = self.protocol;
        let count_at = if output == Output::Store { 2 } else { 1 };
        let Some(count) = parse_i64(args[count_at]) else {
            return write_error(out, NOT_INTEGER);
        };
        if count < 1 {
            let name = String::from_utf8_lossy(args[0]).to_ascii_lowercase();
            let message = format!("ERR at least 1 input key is needed for '{name}' command");
            return write_error(out, message.as_bytes());
        }
        let keys_start = count_at + 1;
        let count = match usize::try_from(count) {
            Ok(count) if count <= args.len() - keys_start => count,
            _ => return write_error(out, SYNTAX),
        };
        let keys = &args[keys_start..keys_start + count];
        // Each key is looked up (expiring it, counting the read) and its
        // type checked before the options are read, as in Redis.
        for key in keys {
            match self.get(key, now) {
                None | Some(Value::ZSet(_) | Value::Set(_)) => {}
                Some(_) => return write_error(out, WRONGTYPE),
            }
        }
        let options = match parse_options(&args[keys_start + count..], count, op, output) {
            Ok(options) => options,
            Err(message) => return write_error(out, message),
        };
        let mut sources: Vec<(Source<'_>, f64)> = keys
            .iter()
            .zip(&options.weights)
            .map(|(key, &weight)| match self.peek(key, now) {
                Some(Value::ZSet(set)) => (Source::ZSet(set), weight),
                Some(Value::Set(set)) => (Source::Set(set), weight),
                _ => (Source::Missing, weight),
            })
            .collect();
        let (mut result, found) = evaluate(&mut sources, op, &options);
        match output {
            Output::Count => write_integer(out, found as i64),
            Output::Reply => {
                // Sorted as a sorted set orders them (a zero's sign kept,
                // as Redis's unstored results keep it).
                result.sort_by(|a, b| {
                    a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal).then_with(|| a.1.cmp(&b.1))
                });
                let scored = Scored::new(options.with_scores, protocol);
                scored.header(out, result.len());
                for (score, member) in result {
                    scored.item(out, &member, score);
                }
            }
            Output::Store => {
                let mut set = ZSet::new();
                for (score, member) in result {
                    if let Some(score) = Score::new(score) {
                        set.add(&member, score);
                    }
                }
                let destination = args[1];
                write_integer(out, set.len() as i64);
                if set.is_empty() {
                    self.remove(destination, now);
                } else {
                    self.insert(destination, Value::ZSet(set), Ttl::Clear, now);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::resp::testing::run;

    #[test]
    fn aggregation_follows_redis() {
        let mut target = f64::INFINITY;
        Aggregate::Sum.apply(&mut target, f64::NEG_INFINITY);
        assert_eq!(target, 0.0);
        let mut target = 1.0;
        Aggregate::Min.apply(&mut target, f64::NAN);
        assert_eq!(target, 1.0);
        Aggregate::Max.apply(&mut target, 3.0);
        assert_eq!(target, 3.0);
    }

    #[test]
    fn union_inter_diff() {
        let mut store = Store::new();
        let replies = run(
            &mut store,
            &[
                "ZADD a 1 x 2 y",
                "ZADD b 10 y 20 z",
                "ZUNION 2 a b WITHSCORES",
                "ZINTER 2 a b AGGREGATE MAX",
                "ZDIFF 2 a b WITHSCORES",
                "ZINTERCARD 2 a b LIMIT 1",
                "ZUNIONSTORE d 2 a b WEIGHTS 2 1",
                "ZRANGE d 0 -1 WITHSCORES",
                "ZINTERSTORE d 2 a nokey",
                "EXISTS d",
                "ZUNION 0 a",
                "ZUNION 3 a b",
                "ZUNION 1 a WEIGHTS x",
                "ZDIFF 2 a b WEIGHTS 1 1",
                "ZINTERCARD 1 a LIMIT -1",
                "SET s v",
                "ZUNION 2 a s BAD",
            ],
        );
        assert_eq!(
            replies,
            concat!(
                ":2\r\n:2\r\n",
                "*6\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$2\r\n12\r\n$1\r\nz\r\n$2\r\n20\r\n",
                "*1\r\n$1\r\ny\r\n",
                "*2\r\n$1\r\nx\r\n$1\r\n1\r\n",
                ":1\r\n",
                ":3\r\n",
                "*6\r\n$1\r\nx\r\n$1\r\n2\r\n$1\r\ny\r\n$2\r\n14\r\n$1\r\nz\r\n$2\r\n20\r\n",
                ":0\r\n:0\r\n",
                "-ERR at least 1 input key is needed for 'zunion' command\r\n",
                "-ERR syntax error\r\n",
                "-ERR weight value is not a float\r\n",
                "-ERR syntax error\r\n",
                "-ERR LIMIT can't be negative\r\n",
                "+OK\r\n",
                "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
            )
        );
    }
}
