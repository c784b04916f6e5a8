//! YCSB's skewed number generators: Zipfian, scrambled Zipfian and skewed-latest.
//!
//! These are YCSB's `site.ycsb.generator` classes (`com.yahoo.ycsb.generator`
//! before 0.15) reproduced operation for operation, quirks included, so that a
//! key popularity measured here is the one YCSB would produce:
//!
//! * [`Zipfian`] is Gray et al.'s inversion ("Quickly Generating
//!   Billion-Record Synthetic Databases", SIGMOD 1994). With
//!   `zetaₙ = Σ_{i=1..n} 1/i^θ`, `α = 1/(1−θ)` and
//!   `η = (1 − (2/n)^{1−θ}) / (1 − ζ₂/zetaₙ)`, a uniform `u ∈ [0, 1)` gives
//!   item 0 if `u·zetaₙ < 1`, item 1 if `u·zetaₙ < 1 + 0.5^θ`, and otherwise
//!   `⌊n·(η·u − η + 1)^α⌋`. The first two items are exact (probabilities
//!   `1/zetaₙ` and `0.5^θ/zetaₙ`); the rest follow a continuous approximation
//!   of the tail, 15 % heavy on the third item for n = 100 and light on the
//!   last ones. When asked for more items than it was built for, it extends
//!   `zetaₙ` incrementally but — as YCSB does — keeps the `2/n` of `η` at the
//!   item count it was built with.
//! * [`ScrambledZipfian`] draws from a Zipfian over
//!   [`ScrambledZipfian::ITEM_COUNT`] + 1 items (YCSB passes `ITEM_COUNT` as
//!   an *inclusive* maximum) with the precomputed
//!   [`ScrambledZipfian::ZETAN`], and scatters the ranks over the key space
//!   with [`fnvhash64`]. Since YCSB 0.15 `ITEM_COUNT` reads 10¹⁶ while
//!   `ZETAN` is still the zeta of 10¹⁰ items; we keep the consistent pair of
//!   the original (10¹⁰ and its zeta), under which the hottest key has
//!   probability `1/ZETAN` either way.
//! * [`SkewedLatest`] (the `latest` distribution) returns `last − z` with `z`
//!   Zipfian over `last` items: the most recently inserted keys are the
//!   most popular.
//!
//! The generators draw their uniform numbers from the caller's [`Rng`], so one
//! seeded generator per client makes a run reproducible.

use rand::Rng;

/// YCSB's `ZipfianGenerator.ZIPFIAN_CONSTANT`: θ of every Zipfian here.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

/// FNV-1a offset basis, 64 bits (YCSB's `Utils.FNV_OFFSET_BASIS_64`).
const FNV_OFFSET_BASIS_64: i64 = 0xCBF2_9CE4_8422_2325_u64 as i64;
/// FNV prime, 64 bits (YCSB's `Utils.FNV_PRIME_64`).
const FNV_PRIME_64: i64 = 1_099_511_628_211;

/// YCSB's `Utils.fnvhash64`: FNV-1a over the eight bytes of `val`, low byte
/// first, then `Math.abs`, in Java `long` arithmetic (wrapping multiply,
/// arithmetic shift, and `abs(Long.MIN_VALUE) == Long.MIN_VALUE`).
#[must_use]
pub fn fnvhash64(mut val: i64) -> i64 {
    let mut hashval = FNV_OFFSET_BASIS_64;
    for _ in 0..8 {
        let octet = val & 0xff;
        val >>= 8;
        hashval ^= octet;
        hashval = hashval.wrapping_mul(FNV_PRIME_64);
    }
    hashval.wrapping_abs()
}

/// `Σ_{i=st+1..n} 1/i^θ + initial`: YCSB's `zetastatic(st, n, theta, initialsum)`,
/// summed in the same order (so in the same floating-point result).
#[must_use]
pub fn zeta_from(st: u64, n: u64, theta: f64, initial: f64) -> f64 {
    let mut sum = initial;
    for i in st..n {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

/// `ζ(n, θ) = Σ_{i=1..n} 1/i^θ`.
#[must_use]
pub fn zeta(n: u64, theta: f64) -> f64 {
    zeta_from(0, n, theta, 0.0)
}

/// YCSB's `ZipfianGenerator`: item `base` most popular, then `base + 1`, …
#[derive(Clone, Debug)]
pub struct Zipfian {
    /// Item count at construction; stays in η (YCSB's `items`).
    items: u64,
    base: u64,
    theta: f64,
    zeta2theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    /// Item count `zetan` was summed over.
    count_for_zeta: u64,
}

impl Zipfian {
    /// Items `0..items`, θ = [`ZIPFIAN_CONSTANT`].
    #[must_use]
    pub fn new(items: u64) -> Self {
        Self::with_zetan(0, items, ZIPFIAN_CONSTANT, zeta(items, ZIPFIAN_CONSTANT))
    }

    /// Items `min..=max` (YCSB's inclusive bounds), θ = [`ZIPFIAN_CONSTANT`].
    #[must_use]
    pub fn with_range(min: u64, max: u64) -> Self {
        let items = max - min + 1;
        Self::with_zetan(min, items, ZIPFIAN_CONSTANT, zeta(items, ZIPFIAN_CONSTANT))
    }

    /// Items `base..base + items` with constant `theta` and a precomputed
    /// `zetan` (which must be `ζ(items, theta)` for the distribution to be
    /// the intended one).
    #[must_use]
    pub fn with_zetan(base: u64, items: u64, theta: f64, zetan: f64) -> Self {
        let zeta2theta = zeta(2, theta);
        let eta = Self::eta(items, theta, zeta2theta, zetan);
        Self { items, base, theta, zeta2theta, alpha: 1.0 / (1.0 - theta), zetan, eta, count_for_zeta: items }
    }

    fn eta(items: u64, theta: f64, zeta2theta: f64, zetan: f64) -> f64 {
        (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan)
    }

    /// The item count given at construction.
    #[must_use]
    pub fn items(&self) -> u64 {
        self.items
    }

    /// `ζ(n, θ)` for the item count last drawn over.
    #[must_use]
    pub fn zetan(&self) -> f64 {
        self.zetan
    }

    /// θ.
    #[must_use]
    pub fn theta(&self) -> f64 {
        self.theta
    }

    /// The next item (YCSB's `nextValue`).
    pub fn next<R: Rng + ?Sized>(&mut self, rng: &mut R) -> u64 {
        self.next_in(rng, self.items)
    }

    /// The next item among `itemcount` (YCSB's `nextLong(itemcount)`): a
    /// larger count extends `zetaₙ` by the new terms (and recomputes η with
    /// the construction-time item count, as YCSB does); a smaller one is
    /// ignored for `zetaₙ` (YCSB's default `allowitemcountdecrease = false`)
    /// but still scales the result.
    pub fn next_in<R: Rng + ?Sized>(&mut self, rng: &mut R, itemcount: u64) -> u64 {
        if itemcount > self.count_for_zeta {
            self.zetan = zeta_from(self.count_for_zeta, itemcount, self.theta, self.zetan);
            self.count_for_zeta = itemcount;
            self.eta = Self::eta(self.items, self.theta, self.zeta2theta, self.zetan);
        }
        let u: f64 = rng.gen();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        // Java's `(long)` cast: truncation, saturating, NaN to 0 — as `as`.
        let offset = (itemcount as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as i64;
        self.base + offset.max(0) as u64
    }
}

/// YCSB's `ScrambledZipfianGenerator`: Zipfian popularity, scattered over
/// `min..=max` by hashing the rank.
#[derive(Clone, Debug)]
pub struct ScrambledZipfian {
    min: u64,
    itemcount: u64,
    gen: Zipfian,
}

impl ScrambledZipfian {
    /// `ζ(ITEM_COUNT, 0.99)` as YCSB hard-codes it.
    pub const ZETAN: f64 = 26.469_028_201_783_02;
    /// Ranks drawn before scrambling (YCSB's `ITEM_COUNT`, before 0.15).
    pub const ITEM_COUNT: u64 = 10_000_000_000;

    /// Items `0..items`.
    #[must_use]
    pub fn new(items: u64) -> Self {
        Self::with_range(0, items - 1)
    }

    /// Items `min..=max` (YCSB's inclusive bounds).
    #[must_use]
    pub fn with_range(min: u64, max: u64) -> Self {
        let gen = Zipfian::with_zetan(0, Self::ITEM_COUNT + 1, ZIPFIAN_CONSTANT, Self::ZETAN);
        Self { min, itemcount: max - min + 1, gen }
    }

    /// Number of items scrambled over.
    #[must_use]
    pub fn item_count(&self) -> u64 {
        self.itemcount
    }

    /// The item rank `rank` (0 the most popular) maps to.
    #[must_use]
    pub fn item_of_rank(&self, rank: u64) -> u64 {
        // `rem_euclid` differs from Java's `%` only for a hash of
        // `Long.MIN_VALUE`, which no rank below 2⁶³ is known to produce.
        self.min + fnvhash64(rank as i64).rem_euclid(self.itemcount as i64) as u64
    }

    /// The next item.
    pub fn next<R: Rng + ?Sized>(&mut self, rng: &mut R) -> u64 {
        let rank = self.gen.next(rng);
        self.item_of_rank(rank)
    }
}

/// YCSB's `SkewedLatestGenerator`: `last − z`, `z` Zipfian over `last`
/// items, where `last` is the newest inserted item (the basis counter's
/// `lastValue()`), so items `1..=last` are drawn, newest most often.
#[derive(Clone, Debug)]
pub struct SkewedLatest {
    zipfian: Zipfian,
}

impl SkewedLatest {
    /// A generator whose basis counter stands at `last`.
    #[must_use]
    pub fn new(last: u64) -> Self {
        Self { zipfian: Zipfian::new(last) }
    }

    /// The next item, with the basis counter at `last` now.
    pub fn next<R: Rng + ?Sized>(&mut self, rng: &mut R, last: u64) -> u64 {
        last.saturating_sub(self.zipfian.next_in(rng, last))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn fnvhash64_matches_java() {
        // Computed by hand from `Utils.fnvhash64` in Java long arithmetic.
        assert_eq!(fnvhash64(0), 6_284_781_860_667_377_211);
        assert_eq!(fnvhash64(1), 8_517_097_267_634_966_620);
        assert_eq!(fnvhash64(2), 1_820_151_046_732_198_393);
        assert_eq!(fnvhash64(3), 4_052_466_453_699_787_802);
    }

    #[test]
    fn zeta_of_scrambled_item_count_is_ycsb_constant() {
        // The asymptotic form ζ(n, θ) ≈ n^{1−θ}/(1−θ) + ζ(θ), with the
        // Riemann ζ(0.99) = −99.423513, ties ZETAN to 10¹⁰ items: 10¹⁶ would
        // give 45.12.
        let approx = (ScrambledZipfian::ITEM_COUNT as f64).powf(0.01) / 0.01 - 99.423_513;
        assert!((approx - ScrambledZipfian::ZETAN).abs() < 1e-5, "{approx}");
    }

    #[test]
    fn first_two_items_exact_thresholds() {
        let mut z = Zipfian::new(10);
        let mut rng = SmallRng::seed_from_u64(1);
        for _ in 0..10_000 {
            assert!(z.next(&mut rng) < 10);
        }
        assert!((z.zetan() - zeta(10, 0.99)).abs() < 1e-12);
    }

    #[test]
    fn incremental_zeta_equals_direct_sum() {
        let mut z = Zipfian::new(100);
        let mut rng = SmallRng::seed_from_u64(2);
        for n in [150, 1000, 1001] {
            let v = z.next_in(&mut rng, n);
            assert!(v < n);
            assert!((z.zetan() - zeta(n, 0.99)).abs() < 1e-9);
        }
        // A smaller count keeps zeta but bounds the result.
        let before = z.zetan();
        for _ in 0..1000 {
            assert!(z.next_in(&mut rng, 50) < 50);
        }
        assert_eq!(z.zetan(), before);
    }

    #[test]
    fn skewed_latest_stays_in_range() {
        let mut g = SkewedLatest::new(999);
        let mut rng = SmallRng::seed_from_u64(3);
        for last in [999, 1000, 1500] {
            for _ in 0..10_000 {
                let v = g.next(&mut rng, last);
                assert!((1..=last).contains(&v), "{v} for last {last}");
            }
        }
    }
}
