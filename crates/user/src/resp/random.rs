//! The store's source of randomness (`SPOP`, `SRANDMEMBER`).
//!
//! Redis draws random members from its own generator; so does the store:
//! one small, fast generator per store, seeded once with a fixed value when
//! the store is made, never from the clock. A store is therefore
//! deterministic — the same commands give the same replies — while clients
//! still see members drawn uniformly, which is all Redis promises.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The seed of every store's generator.
const SEED: u64 = 0x5eed_0f5e_7ab1_e5ed;

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
}
