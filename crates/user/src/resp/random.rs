//! The store's source of randomness (`SPOP`, `SRANDMEMBER`, `HRANDFIELD`,
//! `ZRANDMEMBER`).
//!
//! Redis draws random members from its own generator; so does the store:
//! one small, fast generator per store, seeded once with a fixed value when
//! the store is made, never from the clock. A store is therefore
//! deterministic — the same commands give the same replies — while clients
//! still see members drawn uniformly, which is all Redis promises.
//!
//! `HRANDFIELD` and `ZRANDMEMBER` share their count's rules
//! ([`parse_random_count`], [`Draw::of`]): a negative count asks for that
//! many independent draws (repeats allowed, in random order), a positive
//! one for that many distinct elements (the whole collection, in its order,
//! if it has no more).

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::command::{NOT_INTEGER, SYNTAX};
use super::number::parse_i64;

/// The seed of every store's generator.
const SEED: u64 = 0x5eed_0f5e_7ab1_e5ed;

/// Most bytes of a reply of independent draws (a negative count): Redis
/// would keep writing (gigabytes for a count of -2^40); the store refuses.
pub(crate) const MAX_REPEATED_REPLY: usize = 1 << 30;

/// A store's random number generator.
#[derive(Clone, Debug)]
pub(crate) struct Random(SmallRng);

impl Default for Random {
    fn default() -> Self {
        Random(SmallRng::seed_from_u64(SEED))
    }
}

impl Random {
    /// A uniform index below `len` (which must not be 0).
    pub(crate) fn below(&mut self, len: usize) -> usize {
        self.0.gen_range(0..len)
    }

    /// `amount` distinct uniform indices below `len` (`amount <= len`), in
    /// random order.
    pub(crate) fn distinct_below(&mut self, len: usize, amount: usize) -> rand::seq::index::IndexVec {
        rand::seq::index::sample(&mut self.0, len, amount)
    }

    /// Whether `draws` draws below `len` make a reply of at most
    /// [`MAX_REPEATED_REPLY`] bytes, `size_of` giving each element's share.
    /// It draws with a copy of the generator, so the real draws that follow
    /// are the ones measured; it stops as soon as the bound is passed.
    pub(crate) fn draws_fit(&self, len: usize, draws: u64, size_of: impl Fn(usize) -> usize) -> bool {
        let mut trial = self.clone();
        let mut bytes = 0usize;
        for _ in 0..draws {
            bytes = bytes.saturating_add(size_of(trial.below(len)));
            if bytes > MAX_REPEATED_REPLY {
                return false;
            }
        }
        true
    }
}

/// Checks `HRANDFIELD`'s and `ZRANDMEMBER`'s count and option as Redis
/// does: an integer other than `i64::MIN`, at most one option, spelled
/// `name`, and with the option a count within ±`i64::MAX / 2`.
pub(crate) fn parse_random_count(text: &[u8], options: &[&[u8]], name: &[u8]) -> Result<i64, &'static [u8]> {
    let count = parse_i64(text).ok_or(NOT_INTEGER)?;
    if count == i64::MIN {
        return Err(b"ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
    }
    if let Some(option) = options.first() {
        if options.len() > 1 || !option.eq_ignore_ascii_case(name) {
            return Err(SYNTAX);
        }
        if !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&count) {
            return Err(b"ERR value is out of range");
        }
    }
    Ok(count)
}

/// What a random count asks of a collection of `len` elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Draw {
    /// Nothing (a count of 0, an empty or missing collection).
    Nothing,
    /// Every element, in the collection's order.
    All,
    /// This many distinct elements.
    Distinct(usize),
    /// This many independent draws (a negative count, or 1).
    Repeated(u64),
}

impl Draw {
    /// The draw `count` asks of `len` elements.
    pub(crate) fn of(count: i64, len: usize) -> Draw {
        if len == 0 || count == 0 {
            Draw::Nothing
        } else if count < 0 || count == 1 {
            Draw::Repeated(count.unsigned_abs())
        } else {
            match usize::try_from(count) {
                Ok(count) if count < len => Draw::Distinct(count),
                _ => Draw::All,
            }
        }
    }

    /// How many elements the reply has.
    pub(crate) fn len(self, len: usize) -> usize {
        match self {
            Draw::Nothing => 0,
            Draw::All => len,
            Draw::Distinct(count) => count,
            // Bounded by `draws_fit` before a reply is written.
            Draw::Repeated(count) => usize::try_from(count).unwrap_or(usize::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_in_range_repeatable_and_distinct_when_asked() {
        let (mut a, mut b) = (Random::default(), Random::default());
        for len in 1..50 {
            let (x, y) = (a.below(len), b.below(len));
            assert_eq!(x, y);
            assert!(x < len);
        }
        let mut picked: Vec<usize> = a.distinct_below(100, 60).into_vec();
        assert!(picked.iter().all(|&i| i < 100));
        picked.sort_unstable();
        picked.dedup();
        assert_eq!(picked.len(), 60);
    }

    #[test]
    fn counts_ask_for_redis_draws() {
        assert_eq!(Draw::of(0, 5), Draw::Nothing);
        assert_eq!(Draw::of(3, 0), Draw::Nothing);
        assert_eq!(Draw::of(1, 5), Draw::Repeated(1));
        assert_eq!(Draw::of(-7, 5), Draw::Repeated(7));
        assert_eq!(Draw::of(3, 5), Draw::Distinct(3));
        assert_eq!(Draw::of(5, 5), Draw::All);
        assert_eq!(Draw::of(i64::MAX, 5), Draw::All);
        let random = Random::default();
        assert!(random.draws_fit(3, 1000, |_| 100));
        assert!(!random.draws_fit(3, u64::MAX, |_| 100));
        assert_eq!(parse_random_count(b"5", &[], b"WITHSCORES"), Ok(5));
        assert_eq!(parse_random_count(b"5", &[b"withscores"], b"WITHSCORES"), Ok(5));
        assert_eq!(parse_random_count(b"5", &[b"x"], b"WITHSCORES"), Err(SYNTAX));
        assert_eq!(parse_random_count(b"x", &[], b"WITHSCORES"), Err(NOT_INTEGER));
    }
}
