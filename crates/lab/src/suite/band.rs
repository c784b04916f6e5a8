//! The prediction the seeds' way: the machine-repairman model drawn between
//! the smallest and the largest service time measured on this machine
//! (`model fit`'s `service_band` record for `bkl`), so every predicted
//! number is a range. Efficiencies are relative to the measured one-core
//! throughput: `E(n) = X(n) / (n · X₁)` with `X₁ = 1 / (a + h₁)`, `a` the
//! think time one core's measurement left outside the lock and `h₁` its
//! profiled hold time, so the band at `n` cores is `[E(n; s_hi), E(n; s_lo)]`.

use granule_model::Repairman;

use super::lock_model::{MAX_CORES, MAX_TIME};
use super::records::Records;

/// The measured service-time band of the big lock, cycles per acquisition.
#[derive(Clone, Debug, PartialEq)]
pub struct Band {
    /// The smallest service time measured, and on how many cores.
    pub lo: (f64, usize),
    /// The largest, and on how many cores.
    pub hi: (f64, usize),
    /// The one-core hold time.
    pub one_core_hold: f64,
    /// The profiled hold times at the measured core counts (hand-off not
    /// included: the simulator charges its own).
    pub holds: Vec<f64>,
    /// Think time per acquisition at the delays measured on one core.
    pub think_at: Vec<(f64, f64)>,
    /// Think time beyond the delay elsewhere.
    pub think_base: f64,
    /// Lock acquisitions per round trip.
    pub locks_per_round_trip: f64,
    /// The `service_band` record's line.
    pub line: usize,
}

/// A range `(low, high)` of a predicted quantity.
pub type Range<T> = (T, T);

impl Band {
    /// The `bkl` band of a suite's records (`None` without one, or with
    /// times that are not positive numbers of a sane size).
    pub fn of(rs: &Records) -> Option<Self> {
        let r = rs.service_band.iter().find(|b| b.regime == "bkl")?;
        let line = r.line;
        let sane = |v: f64| v.is_finite() && (0.0..=MAX_TIME).contains(&v);
        let ok = sane(r.service_lo)
            && sane(r.service_hi)
            && r.service_lo > 0.0
            && r.service_hi >= r.service_lo
            && sane(r.one_core_hold)
            && r.one_core_hold > 0.0
            && sane(r.think_base)
            && r.locks_per_round_trip.is_finite()
            && r.locks_per_round_trip > 0.0;
        if !ok {
            return None;
        }
        let holds = r
            .cores
            .iter()
            .zip(&r.hold_cycles)
            .zip(r.handoff_cycles.iter().chain(std::iter::repeat(&0.0)))
            .filter(|((c, h), x)| **c >= 1 && sane(**h) && sane(**x))
            .map(|((_, h), _)| *h)
            .collect();
        let think_at = r
            .think_delays
            .iter()
            .zip(&r.think_cycles)
            .filter(|(d, a)| sane(**d) && sane(**a))
            .map(|(d, a)| (*d, *a))
            .collect();
        Some(Self {
            lo: (r.service_lo, r.service_lo_cores.max(1)),
            hi: (r.service_hi, r.service_hi_cores.max(1)),
            one_core_hold: r.one_core_hold,
            holds,
            think_at,
            think_base: r.think_base,
            locks_per_round_trip: r.locks_per_round_trip,
            line,
        })
    }

    /// Think time per acquisition at `delay` cycles per round trip: as
    /// measured on one core where it was, else the base plus the delay's
    /// share.
    pub fn think(&self, delay: f64) -> f64 {
        self.think_at
            .iter()
            .find(|(d, _)| *d == delay)
            .map_or(self.think_base + delay / self.locks_per_round_trip, |(_, a)| *a)
    }

    /// The model's efficiency on `n` cores at `delay` with service time `s`,
    /// relative to one core's measured throughput (one core: 1).
    pub fn efficiency_with(&self, s: f64, n: usize, delay: f64) -> Option<f64> {
        if n <= 1 {
            return Some(1.0);
        }
        let a = self.think(delay);
        let x = Repairman::new(n, s, a.max(f64::MIN_POSITIVE)).ok()?.solve().throughput;
        let x1 = 1.0 / (a + self.one_core_hold);
        let e = x / (n as f64 * x1);
        e.is_finite().then_some(e)
    }

    /// The band of efficiencies on `n` cores at `delay`: `(low, high)`.
    pub fn efficiency(&self, n: usize, delay: f64) -> Option<Range<f64>> {
        Some((self.efficiency_with(self.hi.0, n, delay)?, self.efficiency_with(self.lo.0, n, delay)?))
    }

    /// The predicted throughput band on `n` cores at `delay`, round trips
    /// per second at `hz` cycles per second.
    pub fn round_trips_per_sec(&self, n: usize, delay: f64, hz: f64) -> Option<Range<f64>> {
        let (lo, hi) = self.efficiency(n, delay)?;
        let one = hz / ((self.think(delay) + self.one_core_hold) * self.locks_per_round_trip);
        Some((lo * n as f64 * one, hi * n as f64 * one))
    }

    /// The most cores (up to [`MAX_CORES`]) keeping efficiency `threshold`
    /// at `delay`, with the longest and with the shortest service time.
    pub fn frontier(&self, delay: f64, threshold: f64) -> Option<Range<usize>> {
        let at = |s: f64| most_cores(|n| self.efficiency_with(s, n, delay).is_some_and(|e| e >= threshold));
        Some((at(self.hi.0)?, at(self.lo.0)?))
    }

    /// From how many cores a regime that scales perfectly and delivers
    /// `ratio` of the big lock's one-core throughput overtakes it: the
    /// range over the band (`None` at an end: not up to [`MAX_CORES`]).
    pub fn crossover(&self, delay: f64, ratio: f64) -> Range<Option<usize>> {
        let at = |s: f64| {
            if ratio >= 1.0 {
                return Some(1);
            }
            match most_cores(|n| self.efficiency_with(s, n, delay).is_some_and(|e| e >= ratio))? {
                n if n >= MAX_CORES => None,
                n => Some(n + 1),
            }
        };
        (at(self.hi.0), at(self.lo.0))
    }
}

/// The most cores `n` in `1..=MAX_CORES` for which `ok(n)` holds, `ok`
/// being true at 1 and monotone (true then false).
fn most_cores(ok: impl Fn(usize) -> bool) -> Option<usize> {
    if !ok(1) {
        return None;
    }
    let (mut lo, mut hi) = (1, MAX_CORES);
    if ok(hi) {
        return Some(hi);
    }
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

#[cfg(test)]
pub mod testing {
    //! A `service_band` record for tests.
    use serde_json::{Map, Value};

    use crate::suite::records::testing::rec;

    /// The band record of holds `(cores, hold, hand-off)`, one-core think
    /// times `(delay, think)` and base think time.
    pub fn band_record(holds: &[(usize, f64, f64)], think: &[(f64, f64)], base: f64) -> Map<String, Value> {
        let service: Vec<f64> = holds.iter().map(|h| h.1 + h.2).collect();
        let lo = (0..holds.len()).min_by(|a, b| service[*a].total_cmp(&service[*b])).unwrap();
        let hi = (0..holds.len()).max_by(|a, b| service[*a].total_cmp(&service[*b])).unwrap();
        let one = holds.iter().find(|h| h.0 == 1).unwrap().1;
        rec(
            "service_band",
            "model_fit",
            &[
                ("regime", "bkl".into()),
                ("cores", holds.iter().map(|h| h.0).collect::<Vec<_>>().into()),
                ("hold_cycles", holds.iter().map(|h| h.1).collect::<Vec<_>>().into()),
                ("handoff_cycles", holds.iter().map(|h| h.2).collect::<Vec<_>>().into()),
                ("service_cycles", service.clone().into()),
                ("service_lo", service[lo].into()),
                ("service_lo_cores", holds[lo].0.into()),
                ("service_hi", service[hi].into()),
                ("service_hi_cores", holds[hi].0.into()),
                ("one_core_hold", one.into()),
                ("think_delays", think.iter().map(|t| t.0).collect::<Vec<_>>().into()),
                ("think_cycles", think.iter().map(|t| t.1).collect::<Vec<_>>().into()),
                ("think_base", base.into()),
                ("locks_per_round_trip", 2.0.into()),
                ("handoff_source", "test".into()),
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::testing::band_record;
    use super::*;
    use crate::output::record;

    #[test]
    fn the_band_brackets_the_efficiency_between_the_service_times() {
        let all = vec![record("machine"), band_record(&[(1, 218.0, 0.0), (2, 323.0, 140.0)], &[(0.0, 56.0)], 56.0)];
        let b = Band::of(&Records::new(&all)).unwrap();
        assert_eq!((b.lo, b.hi), ((218.0, 1), (463.0, 2)));
        // Delay 0, two cores: saturated either way, E = (1/s) / (2 / 274).
        let (lo, hi) = b.efficiency(2, 0.0).unwrap();
        assert!((lo - 274.0 / (2.0 * 463.0)).abs() < 0.02, "{lo}");
        assert!(hi > lo && hi < 0.7, "{hi}");
        // Measured think where measured, base plus delay share elsewhere.
        assert_eq!(b.think(0.0), 56.0);
        assert_eq!(b.think(4000.0), 2056.0);
        let (f_lo, f_hi) = b.frontier(4000.0, 0.9).unwrap();
        assert!(f_lo >= 1 && f_hi > f_lo, "{f_lo}..{f_hi}");
        let (c_lo, c_hi) = b.crossover(4000.0, 0.8);
        assert!(c_lo.unwrap() <= c_hi.unwrap());
        assert_eq!(b.crossover(0.0, 1.5), (Some(1), Some(1)));
        assert_eq!(b.efficiency(1, 0.0), Some((1.0, 1.0)));
    }

    #[test]
    fn no_band_without_a_record_or_with_nonsense() {
        assert!(Band::of(&Records::new(&[record("machine")])).is_none());
        let mut bad = band_record(&[(1, 218.0, 0.0)], &[(0.0, 56.0)], 56.0);
        bad.insert("service_lo".into(), (-1.0).into());
        assert!(Band::of(&Records::new(&[bad])).is_none());
    }
}
