//! The store's random numbers, for the commands that answer with random
//! elements (`HRANDFIELD`, `ZRANDMEMBER`).
//!
//! One small fast generator per store, seeded once with a constant: the
//! store never reads a clock or the operating system, so a run is
//! reproducible (Redis seeds from the time and `/dev/urandom`, which no
//! client can tell apart from this). What clients can tell is the shape of
//! the answers, and that follows Redis ([`parse_random_count`], [`pick`]): a
//! negative count asks for that many independent picks (repeats allowed, in
//! random order), a positive one for that many distinct elements (the whole
//! collection if it has no more).

use std::collections::HashSet;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::command::{NOT_INTEGER, SYNTAX};
use super::number::parse_i64;

/// The generator's seed.
const SEED: u64 = 0x6772_616e_756c_6521;

/// Most picks with repeats one reply may ask for: Redis would write as
/// many as asked (gigabytes for a count of -2^40); here larger counts are
/// refused with `ERR value is out of range`.
pub(crate) const MAX_REPEATED_PICKS: u64 = 1 << 20;

/// A store's random number generator.
#[derive(Clone, Debug)]
pub(crate) struct Random(SmallRng);

impl Default for Random {
    fn default() -> Self {
        Random(SmallRng::seed_from_u64(SEED))
    }
}

impl Random {
    /// A uniformly random index below `len`, which must be positive.
    pub(crate) fn index(&mut self, len: usize) -> usize {
        self.0.gen_range(0..len)
    }

    /// `count` distinct indices below `len` (`count < len`), in random
    /// order: a partial shuffle when they are most of the range, rejection
    /// sampling when they are few (at most 1.5 draws each on average).
    pub(crate) fn distinct(&mut self, len: usize, count: usize) -> Vec<usize> {
        debug_assert!(count < len);
        if count.saturating_mul(3) > len {
            let mut all: Vec<usize> = (0..len).collect();
            for i in 0..count {
                let j = self.0.gen_range(i..len);
                all.swap(i, j);
            }
            all.truncate(count);
            return all;
        }
        let mut seen = HashSet::with_capacity(count);
        let mut picked = Vec::with_capacity(count);
        while picked.len() < count {
            let index = self.index(len);
            if seen.insert(index) {
                picked.push(index);
            }
        }
        picked
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

/// Which of `len` elements a count picks, by index: `count` independent
/// picks if negative (or 1), else `count` distinct ones (all of them, in
/// order, when there are no more).
pub(crate) fn pick(random: &mut Random, len: usize, count: i64) -> Result<Vec<usize>, &'static [u8]> {
    if len == 0 || count == 0 {
        return Ok(Vec::new());
    }
    if count < 0 || count == 1 {
        if count.unsigned_abs() > MAX_REPEATED_PICKS {
            return Err(b"ERR value is out of range");
        }
        return Ok((0..count.unsigned_abs()).map(|_| random.index(len)).collect());
    }
    match usize::try_from(count) {
        Ok(count) if count < len => Ok(random.distinct(len, count)),
        _ => Ok((0..len).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_indices_are_distinct_and_in_range() {
        let mut random = Random::default();
        for (len, count) in [(10, 9), (10, 1), (1000, 10), (1000, 400), (2, 1)] {
            let picked = random.distinct(len, count);
            assert_eq!(picked.len(), count);
            assert!(picked.iter().all(|&i| i < len));
            assert_eq!(picked.iter().collect::<HashSet<_>>().len(), count);
        }
    }

    #[test]
    fn every_index_comes_up() {
        let mut random = Random::default();
        let mut seen = [false; 8];
        for _ in 0..1000 {
            seen[random.index(8)] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
}
