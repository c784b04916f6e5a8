//! The big lock's fitted model as the frontier reads it (seed `001` §4):
//! the service time `s` and think time `a` of the suite's joint `bkl` fit,
//! the think time at each delay, the scaling efficiency
//! `E(n) = X(n) / (n · X(1))` of [`granule_model::Repairman`], and where it
//! crosses a threshold. A leaf shared by the analytic frontier
//! (`frontier.rs`) and the simulated one (`frontier_sim.rs`).

use granule_model::Repairman;

use super::records::Records;
use crate::fields::Fields;

/// The delays (cycles between system calls) the frontier is given for,
/// beside the delays measured: the seeds' sweep.
pub const DELAYS: [u64; 7] = [500, 1000, 2000, 4000, 8000, 16000, 32000];

/// The most cores the prediction scans (the model's own limit).
pub const MAX_CORES: usize = 4096;

/// The longest service or think time taken from a fit (cycles): `model
/// fit` refuses times past 10^12 anyway.
pub const MAX_TIME: f64 = 1e12;

/// The most measured delays a frontier has rows for (beyond the seeds'
/// sweep, the smallest ones).
pub const MAX_MEASURED_DELAYS: usize = 64;

/// The thresholds: share of the lock-free ideal the big lock must keep.
pub const THRESHOLDS: [f64; 2] = [0.9, 0.5];

/// The model the suite fitted to the big lock, in cycles per lock
/// acquisition.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    /// Service time (lock held per acquisition).
    pub s: f64,
    /// Think time per acquisition beyond the imposed delay.
    pub a: f64,
    /// Lock acquisitions per round trip (the imposed delay is per round trip).
    pub locks_per_round_trip: f64,
    /// The `model_fit` record's line.
    pub line: usize,
    /// The `fit_input` record's line (locks per round trip), if any.
    pub input_line: Option<usize>,
}

impl Model {
    /// The big lock's fitted model: the `bkl` joint fit over every delay
    /// (`scope` "all delays"), with the fit input's locks per round trip. A
    /// fit that did not converge, or whose times are not positive numbers of
    /// a sane size, is no model.
    pub fn of(rs: &Records<'_>) -> Option<Self> {
        let input = rs.of("model_fit", "fit_input").into_iter().next();
        let l = input.and_then(|r| r.num("locks_per_round_trip")).filter(|l| l.is_finite() && *l > 0.0);
        let fit = rs
            .of("model_fit", "model_fit")
            .into_iter()
            .find(|r| r.str("regime") == Some("bkl") && r.str("scope") == Some("all delays"))?;
        if fit.bool("converged") == Some(false) {
            return None;
        }
        let (s, a) = (fit.num("s")?, fit.num("a")?);
        let sane = |v: f64| v.is_finite() && v <= MAX_TIME;
        (sane(s) && s > 0.0 && sane(a) && a >= 0.0).then_some(Self {
            s,
            a,
            locks_per_round_trip: l.unwrap_or(1.0),
            line: fit.line,
            input_line: l.and(input.map(|r| r.line)),
        })
    }

    /// The lines of the records the model rests on.
    pub fn lines(&self) -> Vec<usize> {
        std::iter::once(self.line).chain(self.input_line).collect()
    }

    /// Think time per acquisition at `delay` cycles per round trip.
    pub fn think(&self, delay: f64) -> f64 {
        self.a + delay / self.locks_per_round_trip
    }

    /// The big lock's scaling efficiency on `n` cores at `delay`.
    pub fn efficiency(&self, n: usize, delay: f64) -> Option<f64> {
        let x = |n| Repairman::new(n, self.s, self.think(delay)).ok().map(|m| m.solve().throughput);
        Some(x(n)? / (n as f64 * x(1)?))
    }

    /// The most cores (up to [`MAX_CORES`]) at which the efficiency at
    /// `delay` is still at least `threshold`: `E` falls with `n`, so a
    /// binary search. `None` if even one core misses it (it cannot:
    /// `E(1) = 1`).
    pub fn frontier(&self, delay: f64, threshold: f64) -> Option<usize> {
        let ok = |n: usize| self.efficiency(n, delay).is_some_and(|e| e >= threshold);
        if !ok(1) {
            return None;
        }
        let (mut lo, mut hi) = (1, MAX_CORES);
        if ok(hi) {
            return Some(hi);
        }
        // ok(lo), !ok(hi)
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

    /// The first core count at which a regime that scales perfectly but
    /// delivers `ratio` of the big lock's one-core throughput overtakes it;
    /// `Some(1)` when `ratio ≥ 1`, `None` if not up to [`MAX_CORES`].
    pub fn crossover(&self, delay: f64, ratio: f64) -> Option<usize> {
        if ratio >= 1.0 {
            return Some(1);
        }
        // The big lock wins while E(n) ≥ ratio: the frontier at `ratio`.
        match self.frontier(delay, ratio)? {
            n if n >= MAX_CORES => None,
            n => Some(n + 1),
        }
    }
}

/// Per threshold of [`THRESHOLDS`]: the most cores, and whether that is a
/// lower bound (the cores ran out before the efficiency did).
pub type Held = [(usize, bool); 2];

/// The frontier of efficiencies `eff` — `(cores, E)`, cores ascending, one
/// core's `E = 1` implied — per threshold: the most cores up to which every
/// efficiency holds it (1 if none does), and whether that is the last
/// core count of `eff`. The measured and the simulated frontier both.
pub fn held(eff: &[(usize, f64)]) -> Held {
    let most = eff.last().map_or(1, |p| p.0);
    THRESHOLDS.map(|t| {
        let upto = eff.iter().take_while(|(_, e)| *e >= t).last().map_or(1, |(c, _)| *c);
        (upto, upto == most)
    })
}
