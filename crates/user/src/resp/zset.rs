//! Sorted sets: members ordered by (score, member).
//!
//! Redis keeps a skip list for order and a dictionary for member lookups;
//! here a `BTreeSet<(Score, member)>` is the order and a `HashMap` from
//! member to score the lookup. Ties in score are broken by the member's
//! bytes (memcmp order), exactly as Redis does, so range replies match its
//! order byte for byte.
//!
//! Scores are `f64` without NaN. [`Score`] is the total order over them that
//! the tree needs: it refuses NaN at construction, so the float comparison
//! it relies on is total, and it stores `-0` as `0` (Redis replies `0` for a
//! member added with score `-0`).

use std::cmp::Ordering;
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

    /// Members in order with scores between `min` and `max` (each bound
    /// inclusive or exclusive), lowest first.
    pub fn range_by_score(&self, min: ScoreBound, max: ScoreBound) -> impl Iterator<Item = (Score, &[u8])> + '_ {
        // A NaN bound (never produced by the parser) selects nothing.
        let low = Score::new(min.value).unwrap_or(Score(f64::INFINITY));
        let high = Score::new(max.value).unwrap_or(Score(f64::NEG_INFINITY));
        let start = (Bound::Included((low, Vec::new())), Bound::Unbounded);
        self.order
            .range(start)
            .skip_while(move |(score, _)| min.exclusive && *score == low)
            .take_while(move |(score, _)| if max.exclusive { *score < high } else { *score <= high })
            .map(|(score, member)| (*score, member.as_slice()))
    }

    /// All members in order.
    pub fn iter(&self) -> impl Iterator<Item = (Score, &[u8])> + '_ {
        self.order.iter().map(|(score, member)| (*score, member.as_slice()))
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
        set.range_by_score(min, max).map(|(_, m)| m).collect()
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
}
