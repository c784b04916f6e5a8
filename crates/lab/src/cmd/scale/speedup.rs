//! `scale_speedup`: what more cores bought each regime, read from the
//! `scale` points of the same invocation.
//!
//! For every regime, delay and core count above one, the median round
//! trips per second over the runs against the same regime's median on one
//! core. `none`'s speedup at the same point, where it was measured, sits
//! beside it: `none` takes no lock and its pairs share nothing, so its
//! speedup is what this machine's cores give a kernel path with no
//! synchronisation at all (on a VM, less than the core count), and
//! `of_none` says how much of that a regime keeps.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::records::ScaleRecord;
use crate::output::Record;
use crate::stats::median;

/// `scale_speedup`: one (regime, delay, cores) point above one core.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScaleSpeedup<'a> {
    /// The regime.
    pub regime: Cow<'a, str>,
    /// Mean of the servers' exponential delay, cycles.
    pub delay_cycles: u64,
    /// Cores, one ping-pong pair each.
    pub cores: usize,
    /// Runs the medians are taken over (at this core count).
    pub runs: usize,
    /// Median round trips of all pairs per second on `cores` cores.
    pub round_trips_per_sec: f64,
    /// The same regime's median on one core.
    pub one_core_round_trips_per_sec: f64,
    /// `round_trips_per_sec / one_core_round_trips_per_sec`.
    pub speedup: f64,
    /// `none`'s speedup at this delay and core count in the same
    /// invocation; null where `none` was not measured.
    pub none_speedup: Option<f64>,
    /// `speedup / none_speedup`: the share of the lock-free ideal this
    /// machine shows that the regime keeps; null without `none`.
    pub of_none: Option<f64>,
}

impl Record for ScaleSpeedup<'_> {
    const KIND: &'static str = "scale_speedup";
}

/// The speedups of `points` (one `scale` record per regime, cores, delay
/// and run), in the order their regimes, delays and core counts first
/// appear; none for a regime and delay without a one-core point.
pub fn speedups(points: &[ScaleRecord]) -> Vec<ScaleSpeedup<'static>> {
    let mut keys: Vec<(&str, u64, usize)> = Vec::new();
    for p in points {
        let k = (p.regime.as_ref(), p.delay_cycles, p.cores);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let rates = |regime: &str, delay: u64, cores: usize| -> Vec<f64> {
        points
            .iter()
            .filter(|p| p.regime == regime && p.delay_cycles == delay && p.cores == cores)
            .map(|p| p.round_trips_per_sec)
            .collect()
    };
    let speedup = |regime: &str, delay: u64, cores: usize| -> Option<(usize, f64, f64)> {
        let at = rates(regime, delay, cores);
        let (n, one) = (median(&at)?, median(&rates(regime, delay, 1))?);
        (one > 0.0).then_some((at.len(), n, one))
    };
    let mut out = Vec::new();
    for &(regime, delay, cores) in keys.iter().filter(|k| k.2 > 1) {
        let Some((runs, n, one)) = speedup(regime, delay, cores) else { continue };
        let none_speedup = speedup("none", delay, cores).map(|(_, n, one)| n / one);
        let s = n / one;
        out.push(ScaleSpeedup {
            regime: Cow::Owned(regime.to_string()),
            delay_cycles: delay,
            cores,
            runs,
            round_trips_per_sec: n,
            one_core_round_trips_per_sec: one,
            speedup: s,
            none_speedup,
            of_none: none_speedup.filter(|&x| x > 0.0).map(|x| s / x),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(regime: &'static str, cores: usize, delay: u64, run: usize, rate: f64) -> ScaleRecord {
        ScaleRecord {
            regime: Cow::Borrowed(regime),
            cores,
            delay_cycles: delay,
            run,
            round_trips_per_sec: rate,
            ..ScaleRecord::default()
        }
    }

    #[test]
    fn medians_over_runs_against_one_core_and_none() {
        let pts = vec![
            point("none", 1, 0, 1, 10.0),
            point("fine", 1, 0, 1, 8.0),
            point("none", 2, 0, 1, 19.0),
            point("fine", 2, 0, 1, 12.0),
            point("none", 1, 0, 2, 10.0),
            point("fine", 1, 0, 2, 8.0),
            point("none", 2, 0, 2, 17.0),
            point("fine", 2, 0, 2, 16.0),
            point("none", 1, 0, 3, 12.0),
            point("fine", 1, 0, 3, 4.0),
            point("none", 2, 0, 3, 18.0),
            point("fine", 2, 0, 3, 14.0),
        ];
        let s = speedups(&pts);
        assert_eq!(s.len(), 2);
        let none = &s[0];
        assert_eq!((none.regime.as_ref(), none.cores, none.runs), ("none", 2, 3));
        assert_eq!((none.round_trips_per_sec, none.one_core_round_trips_per_sec), (18.0, 10.0));
        assert!((none.speedup - 1.8).abs() < 1e-12);
        assert_eq!(none.of_none, Some(1.0));
        let fine = &s[1];
        assert_eq!((fine.round_trips_per_sec, fine.one_core_round_trips_per_sec), (14.0, 8.0));
        assert!((fine.speedup - 1.75).abs() < 1e-12);
        assert!((fine.none_speedup.unwrap() - 1.8).abs() < 1e-12);
        assert!((fine.of_none.unwrap() - 1.75 / 1.8).abs() < 1e-12);
    }

    #[test]
    fn points_without_one_core_or_none_say_so() {
        let pts = vec![
            point("bkl", 2, 0, 1, 5.0),
            point("bkl", 1, 500, 1, 4.0),
            point("bkl", 2, 500, 1, 6.0),
            point("bkl", 4, 500, 1, 7.0),
        ];
        let s = speedups(&pts);
        // Delay 0 has no one-core point: nothing for it.
        assert_eq!(s.iter().map(|r| (r.delay_cycles, r.cores)).collect::<Vec<_>>(), [(500, 2), (500, 4)]);
        assert!(s.iter().all(|r| r.none_speedup.is_none() && r.of_none.is_none()));
        assert!((s[1].speedup - 1.75).abs() < 1e-12);
    }

    #[test]
    fn one_core_only_gives_nothing() {
        assert!(speedups(&[point("fine", 1, 0, 1, 3.0)]).is_empty());
        assert!(speedups(&[]).is_empty());
    }
}
