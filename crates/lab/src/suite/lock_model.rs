//! The frontier's shared constants and the least-squares fit of the big
//! lock as the page may quote it: the service time `s` and think time `a`
//! of the suite's joint `bkl` fit, only where `model fit` marked it
//! determined (at least four core counts, R² ≥ 0.9). The prediction itself
//! is the measured band (`band.rs`). A leaf shared by the analytic frontier
//! (`frontier.rs`), the band and the simulated frontier (`frontier_sim.rs`).

use super::records::Records;

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

/// The `(regime, scope)` of every fit `model fit` marked determined enough
/// to quote (`quoted`): the only fits the page may draw or quote.
pub fn quoted_fits(rs: &Records) -> Vec<(&str, &str)> {
    rs.model_fit.of("model_fit").filter(|r| r.quoted).map(|r| (&*r.key.regime, &*r.key.scope)).collect()
}

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
    /// fit that did not converge, that `model fit` did not mark `quoted`
    /// (too few core counts, or R² below 0.9), or whose times are not
    /// positive numbers of a sane size, is no model.
    pub fn of(rs: &Records) -> Option<Self> {
        let input = rs.fit_input.of("model_fit").next();
        let l = input.and_then(|r| r.locks_per_round_trip).filter(|l| l.is_finite() && *l > 0.0);
        let fit = rs.model_fit.of("model_fit").find(|r| r.key.regime == "bkl" && r.key.scope == "all delays")?;
        // Only a fit determined enough to quote (`model fit` checks the
        // number of core counts and R²): the prediction itself is the band.
        if !fit.converged || !fit.quoted {
            return None;
        }
        let (s, a) = (fit.s, fit.a);
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
