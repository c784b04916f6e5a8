//! Sorted sets: members ordered by (score, member).
//!
//! Redis keeps a skip list for order and a dictionary for member lookups;
//! here a `BTreeSet<(Score, member)>` is the order and a `HashMap` from
//! member to score the lookup. Ties in score are broken by the member's
//! bytes (memcmp order), exactly as Redis does, so range replies match its
//! order byte for byte.
//!
//! Adding, removing, finding a score and popping either end take O(log n),
//! as in Redis. The tree keeps no subtree sizes, so what Redis's skip list
//! answers by rank in O(log n) is found here by walking from the nearer
//! end: [`ZSet::rank`] and [`ZSet::nth`] take O(min(rank, n - rank)),
//! starting a range at a rank likewise, and counting a range O(log n + m)
//! for m members in it.
//!
//! Scores are `f64` without NaN. [`Score`] is the total order over them that
//! the tree needs: it refuses NaN at construction, so the float comparison
//! it relies on is total, and it stores `-0` as `0`, as Redis's compact
//! encoding does (sets of at most 128 members of at most 64 bytes); a Redis
//! set kept in a skip list remembers the sign and answers `-0`.

use std::cmp::Ordering;
use std::collections::btree_set::Range;
use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;

use super::number::ScoreBound;

/// A sorted-set score: a float that is not NaN, ordered numerically.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score(f64);

impl Score {
    /// The score `value`, or `None` for NaN. `-0` becomes `0`.
    pub fn new(value: f64) -> Option<Score> {
        if value.is_nan() {
            None
        } else {
            Some(Score(value + 0.0))
        }
    }

    /// The score as a float.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        // Both are non-NaN (checked in `new`), so the comparison is total.
        self.0.partial_cmp(&other.0).unwrap_or(Ordering::Equal)
    }
}

/// What [`ZSet::add`] did to a member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddOutcome {
    /// The member was new.
    Added,
    /// The member existed and its score changed.
    Updated,
    /// The member existed with this very score.
    Unchanged,
}

/// A sorted set.
#[derive(Clone, Debug, Default)]
pub struct ZSet {
    scores: HashMap<Vec<u8>, Score>,
    order: BTreeSet<(Score, Vec<u8>)>,
}

impl ZSet {
    /// An empty sorted set.
    pub fn new() -> Self {
        ZSet::default()
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.scores.len()
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    /// The score of `member`.
    pub fn score(&self, member: &[u8]) -> Option<Score> {
        self.scores.get(member).copied()
    }

    /// Sets `member`'s score, adding the member if new.
    pub fn add(&mut self, member: &[u8], score: Score) -> AddOutcome {
        match self.scores.get_mut(member) {
            Some(old) if *old == score => AddOutcome::Unchanged,
            Some(old) => {
                let previous = std::mem::replace(old, score);
                let mut key = (previous, Vec::new());
                key.1.extend_from_slice(member);
                self.order.remove(&key);
                key.0 = score;
                self.order.insert(key);
                AddOutcome::Updated
            }
            None => {
                self.scores.insert(member.to_vec(), score);
                self.order.insert((score, member.to_vec()));
                AddOutcome::Added
            }
        }
    }

    /// Removes `member`; whether it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self.scores.remove_entry(member) {
            Some((owned, score)) => {
                self.order.remove(&(score, owned));
                true
            }
            None => false,
        }
    }

    /// Removes and returns the lowest member (the highest when `highest`):
    /// O(log n).
    pub fn pop(&mut self, highest: bool) -> Option<(Score, Vec<u8>)> {
        let (score, member) = if highest { self.order.pop_last() } else { self.order.pop_first() }?;
        self.scores.remove(&member);
        Some((score, member))
    }

    /// The 0-based rank of `member` in ascending order. The tree keeps no
    /// subtree sizes, so this counts: the members below and the members
    /// from it up are counted in lockstep, O(min(rank, n - rank)).
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        let key = (self.score(member)?, member.to_vec());
        let mut below = self.order.range(..&key);
        let mut from = self.order.range(&key..);
        let mut steps = 0;
        loop {
            if below.next_back().is_none() {
                return Some(steps);
            }
            if from.next().is_none() {
                return Some(self.len() - steps);
            }
            steps += 1;
        }
    }

    /// The member of 0-based ascending rank `rank`, reached from the
    /// nearer end: O(min(rank, n - rank)).
    fn at_rank(&self, rank: usize) -> Option<&(Score, Vec<u8>)> {
        if rank >= self.len() {
            None
        } else if rank <= self.len() / 2 {
            self.order.iter().nth(rank)
        } else {
            self.order.iter().nth_back(self.len() - 1 - rank)
        }
    }

    /// The member of 0-based ascending rank `rank` and its score:
    /// O(min(rank, n - rank)).
    pub fn nth(&self, rank: usize) -> Option<(Score, &[u8])> {
        self.at_rank(rank).map(view)
    }

    /// Members from ascending rank `rank` on, upwards (or downwards when
    /// `downwards`); empty past the end. Finding the start is
    /// O(min(rank, n - rank)), each step after it O(1) amortised.
    pub fn from_rank(&self, rank: usize, downwards: bool) -> impl Iterator<Item = (Score, &[u8])> + '_ {
        let range = match self.at_rank(rank) {
            Some(start) if downwards => self.order.range((Bound::Unbounded, Bound::Included(start))),
            Some(start) => self.order.range((Bound::Included(start), Bound::Unbounded)),
            None => self.order.range((Bound::Included(&EMPTY_KEY), Bound::Excluded(&EMPTY_KEY))),
        };
        Walk { range, downwards }.map(view)
    }

    /// Members with scores between `min` and `max` (each bound inclusive
    /// or exclusive), lowest first (highest first when `downwards`).
    /// Finding the first is O(log n).
    pub fn range_by_score(
        &self,
        min: ScoreBound,
        max: ScoreBound,
        downwards: bool,
    ) -> impl Iterator<Item = (Score, &[u8])> + '_ {
        // Keys `(score, "")` sort before every member of that score: the
        // range runs from the first key at or above `low` to the first key
        // at or above `high`, both adjusted for exclusive ends.
        let low = if min.exclusive { next_up(min.value) } else { Some(min.value) };
        let high = if max.exclusive { Some(max.value) } else { next_up(max.value) };
        let low = low.and_then(Score::new).map(|score| (score, Vec::new()));
        let high = high.and_then(Score::new).map(|score| (score, Vec::new()));
        let range = match (low, high) {
            (Some(low), Some(high)) if low < high => self.order.range(low..high),
            (Some(low), None) if min.value <= max.value => self.order.range(low..),
            _ => self.order.range((Bound::Included(&EMPTY_KEY), Bound::Excluded(&EMPTY_KEY))),
        };
        Walk { range, downwards }.map(view)
    }

    /// Members from the first in the lexicographic range `min`..`max`
    /// onwards (from the last in it backwards when `downwards`), walked as
    /// Redis walks a small sorted set: nothing if the range is empty, if
    /// the last member is below `min` or the first above `max`; otherwise
    /// from the first member at or above `min` (at or below `max`), which
    /// must itself be inside. The caller stops when a member leaves the
    /// range. With all scores equal (the only case Redis defines) the start
    /// is found in O(log n); otherwise by a scan, as Redis's listpacks do.
    pub fn from_lex<'s>(
        &'s self,
        min: LexBound<'s>,
        max: LexBound<'s>,
        downwards: bool,
    ) -> Box<dyn Iterator<Item = (Score, &'s [u8])> + 's> {
        let (Some(first), Some(last)) = (self.order.first(), self.order.last()) else {
            return Box::new(std::iter::empty());
        };
        if min.above(&max) || !min.admits_from_below(&last.1) || !max.admits_from_above(&first.1) {
            return Box::new(std::iter::empty());
        }
        if first.0 == last.0 {
            let key = |bytes: &[u8]| (first.0, bytes.to_vec());
            let range = if downwards {
                let high = match max {
                    LexBound::Min => return Box::new(std::iter::empty()),
                    LexBound::Max => Bound::Unbounded,
                    LexBound::Inclusive(bytes) => Bound::Included(key(bytes)),
                    LexBound::Exclusive(bytes) => Bound::Excluded(key(bytes)),
                };
                self.order.range((Bound::Unbounded, high))
            } else {
                let low = match min {
                    LexBound::Max => return Box::new(std::iter::empty()),
                    LexBound::Min => Bound::Unbounded,
                    LexBound::Inclusive(bytes) => Bound::Included(key(bytes)),
                    LexBound::Exclusive(bytes) => Bound::Excluded(key(bytes)),
                };
                self.order.range((low, Bound::Unbounded))
            };
            let mut walk = Walk { range, downwards }.map(view).peekable();
            let inside = walk.peek().is_some_and(|&(_, member)| {
                if downwards {
                    min.admits_from_below(member)
                } else {
                    max.admits_from_above(member)
                }
            });
            return if inside { Box::new(walk) } else { Box::new(std::iter::empty()) };
        }
        let walk = Walk { range: self.order.range::<(Score, Vec<u8>), _>(..), downwards }.map(view);
        let mut walk = walk
            .skip_while(
                move |&(_, member)| {
                    if downwards {
                        !max.admits_from_above(member)
                    } else {
                        !min.admits_from_below(member)
                    }
                },
            )
            .peekable();
        let inside = walk.peek().is_some_and(|&(_, member)| {
            if downwards {
                min.admits_from_below(member)
            } else {
                max.admits_from_above(member)
            }
        });
        if inside {
            Box::new(walk)
        } else {
            Box::new(std::iter::empty())
        }
    }

    /// All members in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (Score, &[u8])> + '_ {
        self.order.iter().map(view)
    }
}

/// An entry of the order as the iterators give it.
fn view((score, member): &(Score, Vec<u8>)) -> (Score, &[u8]) {
    (*score, member.as_slice())
}

/// A key no member has (an empty member): bounds of an empty range.
static EMPTY_KEY: (Score, Vec<u8>) = (Score(0.0), Vec::new());

/// A tree range walked in either direction.
struct Walk<'a> {
    range: Range<'a, (Score, Vec<u8>)>,
    downwards: bool,
}

impl<'a> Iterator for Walk<'a> {
    type Item = &'a (Score, Vec<u8>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.downwards {
            self.range.next_back()
        } else {
            self.range.next()
        }
    }
}

/// The smallest float above `value` (`None` above the largest finite one
/// and for infinity: nothing is above).
fn next_up(value: f64) -> Option<f64> {
    if value.is_nan() || value == f64::INFINITY {
        return None;
    }
    let next = if value == 0.0 {
        f64::from_bits(1)
    } else if value > 0.0 {
        f64::from_bits(value.to_bits() + 1)
    } else {
        f64::from_bits(value.to_bits() - 1)
    };
    Some(next)
}

/// One end of a lexicographic range (`ZRANGEBYLEX`): `-` and `+` are below
/// and above every member, `[x` includes `x`, `(x` excludes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LexBound<'a> {
    /// `-`: below everything.
    Min,
    /// `+`: above everything.
    Max,
    /// `[bytes`.
    Inclusive(&'a [u8]),
    /// `(bytes`.
    Exclusive(&'a [u8]),
}

impl<'a> LexBound<'a> {
    /// Parses a bound as Redis's `zslParseLexRangeItem` does (`+` and `-`
    /// may only be followed by a NUL byte, C's end of string).
    pub fn parse(text: &'a [u8]) -> Option<LexBound<'a>> {
        let alone = text.get(1).map_or(true, |&c| c == 0);
        match text.first()? {
            b'-' if alone => Some(LexBound::Min),
            b'+' if alone => Some(LexBound::Max),
            b'[' => Some(LexBound::Inclusive(&text[1..])),
            b'(' => Some(LexBound::Exclusive(&text[1..])),
            _ => None,
        }
    }

    /// Whether the bound excludes itself (`-`, `+` and `(x` do).
    fn exclusive(&self) -> bool {
        !matches!(self, LexBound::Inclusive(_))
    }

    /// Redis's `sdscmplex` of the two bounds' strings.
    fn compare(&self, other: &LexBound<'_>) -> Ordering {
        match (self, other) {
            (LexBound::Min, LexBound::Min) | (LexBound::Max, LexBound::Max) => Ordering::Equal,
            (LexBound::Min, _) | (_, LexBound::Max) => Ordering::Less,
            (LexBound::Max, _) | (_, LexBound::Min) => Ordering::Greater,
            (LexBound::Inclusive(a) | LexBound::Exclusive(a), LexBound::Inclusive(b) | LexBound::Exclusive(b)) => {
                a.cmp(b)
            }
        }
    }

    /// Whether a range from `self` to `max` is empty whatever the members.
    fn above(&self, max: &LexBound<'_>) -> bool {
        match self.compare(max) {
            Ordering::Greater => true,
            Ordering::Equal => self.exclusive() || max.exclusive(),
            Ordering::Less => false,
        }
    }

    /// `member` compared with the bound's string.
    fn order_of(&self, member: &[u8]) -> Ordering {
        match self {
            LexBound::Min => Ordering::Greater,
            LexBound::Max => Ordering::Less,
            LexBound::Inclusive(bytes) | LexBound::Exclusive(bytes) => member.cmp(bytes),
        }
    }

    /// Whether `member` satisfies the bound as a minimum.
    pub fn admits_from_below(&self, member: &[u8]) -> bool {
        match self.order_of(member) {
            Ordering::Greater => true,
            Ordering::Equal => !self.exclusive(),
            Ordering::Less => false,
        }
    }

    /// Whether `member` satisfies the bound as a maximum.
    pub fn admits_from_above(&self, member: &[u8]) -> bool {
        match self.order_of(member) {
            Ordering::Less => true,
            Ordering::Equal => !self.exclusive(),
            Ordering::Greater => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(value: f64) -> Score {
        Score::new(value).unwrap()
    }

    fn bound(value: f64, exclusive: bool) -> ScoreBound {
        ScoreBound { value, exclusive }
    }

    fn members(set: &ZSet, min: ScoreBound, max: ScoreBound) -> Vec<&[u8]> {
        set.range_by_score(min, max, false).map(|(_, m)| m).collect()
    }

    #[test]
    fn scores_refuse_nan_and_fold_negative_zero() {
        assert!(Score::new(f64::NAN).is_none());
        assert!(score(-0.0).get().is_sign_positive());
        assert!(score(f64::NEG_INFINITY) < score(-1e300));
    }

    #[test]
    fn order_is_score_then_member_bytes() {
        let mut set = ZSet::new();
        assert_eq!(set.add(b"b", score(1.0)), AddOutcome::Added);
        assert_eq!(set.add(b"a", score(1.0)), AddOutcome::Added);
        assert_eq!(set.add(b"c", score(0.5)), AddOutcome::Added);
        assert_eq!(set.add(b"c", score(0.5)), AddOutcome::Unchanged);
        assert_eq!(set.add(b"aa", score(1.0)), AddOutcome::Added);
        let all: Vec<_> = set.iter().map(|(_, m)| m).collect();
        assert_eq!(all, [&b"c"[..], b"a", b"aa", b"b"]);
        assert_eq!(set.add(b"c", score(2.0)), AddOutcome::Updated);
        let all: Vec<_> = set.iter().map(|(_, m)| m).collect();
        assert_eq!(all, [&b"a"[..], b"aa", b"b", b"c"]);
        assert_eq!(set.len(), 4);
        assert!(set.remove(b"aa"));
        assert!(!set.remove(b"aa"));
        assert_eq!(set.len(), 3);
        assert_eq!(set.iter().count(), 3);
    }

    #[test]
    fn ranges_honour_exclusive_bounds() {
        let mut set = ZSet::new();
        for (member, value) in [(&b"a"[..], 1.0), (b"b", 2.0), (b"c", 2.0), (b"d", 3.0), (b"e", f64::INFINITY)] {
            set.add(member, score(value));
        }
        assert_eq!(members(&set, bound(2.0, false), bound(3.0, false)), [&b"b"[..], b"c", b"d"]);
        assert_eq!(members(&set, bound(2.0, true), bound(3.0, false)), [&b"d"[..]]);
        assert_eq!(members(&set, bound(1.0, false), bound(3.0, true)), [&b"a"[..], b"b", b"c"]);
        assert_eq!(members(&set, bound(f64::NEG_INFINITY, false), bound(f64::INFINITY, false)).len(), 5);
        assert_eq!(members(&set, bound(f64::INFINITY, true), bound(f64::INFINITY, false)).len(), 0);
        assert_eq!(members(&set, bound(3.0, false), bound(1.0, false)).len(), 0);
    }

    #[test]
    fn descending_score_ranges_mirror_ascending_ones() {
        let mut set = ZSet::new();
        for (member, value) in [(&b"a"[..], 1.0), (b"b", 2.0), (b"c", 2.0), (b"d", 3.0), (b"e", f64::NEG_INFINITY)] {
            set.add(member, score(value));
        }
        let down: Vec<_> = set.range_by_score(bound(1.0, false), bound(2.0, false), true).map(|(_, m)| m).collect();
        assert_eq!(down, [&b"c"[..], b"b", b"a"]);
        let down: Vec<_> =
            set.range_by_score(bound(f64::NEG_INFINITY, true), bound(3.0, true), true).map(|(_, m)| m).collect();
        assert_eq!(down, [&b"c"[..], b"b", b"a"]);
        assert_eq!(members(&set, bound(f64::NEG_INFINITY, false), bound(f64::NEG_INFINITY, false)), [&b"e"[..]]);
        assert_eq!(members(&set, bound(2.0, true), bound(2.0, false)).len(), 0);
        assert_eq!(members(&set, bound(2.0, false), bound(2.0, true)).len(), 0);
        assert_eq!(members(&set, bound(-0.0, false), bound(0.0, false)).len(), 0);
    }

    #[test]
    fn ranks_and_pops() {
        let mut set = ZSet::new();
        for i in 0..100u32 {
            set.add(format!("m{i:03}").as_bytes(), score(f64::from(i)));
        }
        for i in [0usize, 1, 49, 50, 51, 98, 99] {
            let member = format!("m{i:03}");
            assert_eq!(set.rank(member.as_bytes()), Some(i));
            let up: Vec<_> = set.from_rank(i, false).map(|(s, _)| s.get() as usize).take(3).collect();
            assert_eq!(up, (i..(i + 3).min(100)).collect::<Vec<_>>());
            let down: Vec<_> = set.from_rank(i, true).map(|(s, _)| s.get() as usize).take(3).collect();
            assert_eq!(down, (i.saturating_sub(2)..=i).rev().collect::<Vec<_>>());
        }
        assert_eq!(set.rank(b"nope"), None);
        assert_eq!(set.from_rank(100, false).count(), 0);
        assert_eq!(set.pop(false), Some((score(0.0), b"m000".to_vec())));
        assert_eq!(set.pop(true), Some((score(99.0), b"m099".to_vec())));
        assert_eq!(set.len(), 98);
        assert_eq!(set.score(b"m000"), None);
    }

    fn lex(set: &ZSet, min: &str, max: &str, downwards: bool) -> Vec<String> {
        let (min, max) = (LexBound::parse(min.as_bytes()).unwrap(), LexBound::parse(max.as_bytes()).unwrap());
        set.from_lex(min, max, downwards)
            .take_while(|(_, m)| if downwards { min.admits_from_below(m) } else { max.admits_from_above(m) })
            .map(|(_, m)| String::from_utf8(m.to_vec()).unwrap())
            .collect()
    }

    #[test]
    fn lexicographic_ranges_follow_redis() {
        assert_eq!(LexBound::parse(b"-"), Some(LexBound::Min));
        assert_eq!(LexBound::parse(b"+\0x"), Some(LexBound::Max));
        assert_eq!(LexBound::parse(b"+x"), None);
        assert_eq!(LexBound::parse(b""), None);
        assert_eq!(LexBound::parse(b"a"), None);
        assert_eq!(LexBound::parse(b"("), Some(LexBound::Exclusive(b"")));
        let mut set = ZSet::new();
        for member in ["a", "b", "c", "d"] {
            set.add(member.as_bytes(), score(0.0));
        }
        assert_eq!(lex(&set, "-", "+", false), ["a", "b", "c", "d"]);
        assert_eq!(lex(&set, "[b", "(d", false), ["b", "c"]);
        assert_eq!(lex(&set, "(b", "[d", true), ["d", "c"]);
        assert_eq!(lex(&set, "[b", "[b", false), ["b"]);
        assert_eq!(lex(&set, "(b", "[b", false), Vec::<String>::new());
        assert_eq!(lex(&set, "+", "+", false), Vec::<String>::new());
        assert_eq!(lex(&set, "[e", "+", false), Vec::<String>::new());
        // Mixed scores: walked as a listpack is.
        set.add(b"b", score(5.0));
        assert_eq!(lex(&set, "[a", "[c", false), ["a", "c"]);
        // Downwards only the minimum is checked after the start, as in Redis.
        assert_eq!(lex(&set, "[a", "[c", true), ["b", "d", "c", "a"]);
    }
}
