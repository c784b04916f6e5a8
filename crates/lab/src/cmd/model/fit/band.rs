//! The service-time band (seed `001` §4 and Figure 4b): the seeds did not
//! fit the model's service time to two or three points; they measured the
//! big lock's hold time with instrumentation at each core count (164 cycles
//! on one core, 323 to 613 with four or more) and drew the model for the
//! smallest and the largest as bounds. `granule model fit` does the same
//! from its input's `lock_hold` records (`granule scale --hold-times`):
//!
//! * the service time on `n` cores is the profiled hold time there plus,
//!   from two cores on, one hand-off: the one-way cache-line transfer
//!   between the cores used, the median of `granule info`'s `core_latency`
//!   records among the first `n` CPUs it measured (`--latency-input`);
//! * the think time per acquisition at a delay is what one core's measured
//!   round trip leaves outside the lock: cycles per acquisition less the
//!   one-core hold time, measured at each delay measured on one core, and
//!   `a₀ + D / L` beyond (`a₀` from the smallest delay measured);
//! * the band is the model between the smallest and the largest service
//!   time measured (`service_lo`, `service_hi`).
//!
//! One `service_band` record per big-lock regime with hold times.

use serde::{Deserialize, Serialize};

use super::{Hold, Obs, Units};
use crate::output::Record;
use crate::stats::median;

/// `service_band`: the measured service times the prediction is drawn
/// between, and the think times it uses (cycles per lock acquisition).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServiceBand {
    /// The regime.
    pub regime: String,
    /// The core counts with a profiled hold time, ascending.
    pub cores: Vec<usize>,
    /// The profiled hold time per acquisition at each (profiler included).
    pub hold_cycles: Vec<f64>,
    /// The hand-off charged at each: 0 on one core, else the cores'
    /// one-way cache-line transfer.
    pub handoff_cycles: Vec<f64>,
    /// Hold plus hand-off: the service time at each.
    pub service_cycles: Vec<f64>,
    /// The smallest service time, and where it was measured.
    pub service_lo: f64,
    /// The cores of `service_lo`.
    pub service_lo_cores: usize,
    /// The largest service time.
    pub service_hi: f64,
    /// The cores of `service_hi`.
    pub service_hi_cores: usize,
    /// The one-core hold time (the think times are measured against it).
    pub one_core_hold: f64,
    /// Delays (cycles per round trip) measured on one core.
    pub think_delays: Vec<f64>,
    /// Think time per acquisition at each: one core's cycles per
    /// acquisition less `one_core_hold` (never below 0).
    pub think_cycles: Vec<f64>,
    /// Think time per acquisition beyond the imposed delay (`a₀`): at other
    /// delays the think time is `a₀ + D / locks_per_round_trip`.
    pub think_base: f64,
    /// Lock acquisitions per round trip.
    pub locks_per_round_trip: f64,
    /// Where the hand-off came from.
    pub handoff_source: String,
}

impl Record for ServiceBand {
    const KIND: &'static str = "service_band";
}

/// One-way transfer latencies between CPUs, from `core_latency` records in
/// the order `granule info` measured them: `(from, to, cycles)`.
pub type Latencies = [(usize, usize, f64)];

/// The median one-way latency among the first `n` CPUs named in `lat`
/// (in order of first appearance); `None` with fewer than two.
pub fn handoff(lat: &Latencies, n: usize) -> Option<f64> {
    let mut cpus: Vec<usize> = Vec::new();
    for &(a, b, _) in lat {
        for c in [a, b] {
            if !cpus.contains(&c) {
                cpus.push(c);
            }
        }
    }
    cpus.truncate(n);
    let pairs: Vec<f64> =
        lat.iter().filter(|(a, b, c)| cpus.contains(a) && cpus.contains(b) && c.is_finite()).map(|p| p.2).collect();
    median(&pairs)
}

/// The band of `regime` from its hold times, the one-core measurements in
/// `obs` (model units: acquisitions per cycle) and the latencies; `None`
/// without a one-core hold time or a one-core measurement.
pub(super) fn band(
    regime: &str,
    holds: &[&Hold],
    obs: &[&Obs],
    units: Units,
    lat: Option<&Latencies>,
) -> Option<ServiceBand> {
    let Units::Scale { per_trip, .. } = units else { return None };
    let mut holds: Vec<(usize, f64)> = holds.iter().map(|h| (h.cores, h.cycles)).collect();
    holds.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    holds.dedup_by_key(|h| h.0);
    let one = holds.iter().find(|h| h.0 == 1)?.1;
    let mut delays: Vec<f64> = obs.iter().filter(|o| o.cores == 1).map(|o| o.delay).collect();
    delays.sort_by(f64::total_cmp);
    delays.dedup();
    let think: Vec<f64> = delays
        .iter()
        .filter_map(|d| {
            let xs: Vec<f64> = obs.iter().filter(|o| o.cores == 1 && o.delay == *d).map(|o| o.x).collect();
            Some((1.0 / median(&xs)? - one).max(0.0))
        })
        .collect();
    let (&d0, &a_d0) = (delays.first()?, think.first()?);
    let handoff_at = |n: usize| if n < 2 { Some(0.0) } else { lat.and_then(|l| handoff(l, n)) };
    let handoffs: Vec<f64> = holds.iter().map(|h| handoff_at(h.0).unwrap_or(0.0)).collect();
    let service: Vec<f64> = holds.iter().zip(&handoffs).map(|(h, x)| h.1 + x).collect();
    let lo = (0..service.len()).min_by(|a, b| service[*a].total_cmp(&service[*b]))?;
    let hi = (0..service.len()).max_by(|a, b| service[*a].total_cmp(&service[*b]))?;
    let source = match lat {
        Some(l) if holds.iter().any(|h| h.0 > 1 && handoff(l, h.0).is_some()) => {
            "median one-way cache-line latency among the cores used (granule info, core_latency)".to_string()
        }
        _ => "none: no core-to-core latencies in the input (--latency-input), hand-off taken as 0".to_string(),
    };
    Some(ServiceBand {
        regime: regime.to_string(),
        cores: holds.iter().map(|h| h.0).collect(),
        hold_cycles: holds.iter().map(|h| h.1).collect(),
        handoff_cycles: handoffs,
        service_lo: service[lo],
        service_lo_cores: holds[lo].0,
        service_hi: service[hi],
        service_hi_cores: holds[hi].0,
        service_cycles: service,
        one_core_hold: one,
        think_delays: delays,
        think_cycles: think,
        think_base: (a_d0 - d0 / per_trip).max(0.0),
        locks_per_round_trip: per_trip,
        handoff_source: source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hold(cores: usize, cycles: f64) -> Hold {
        Hold { regime: "bkl".into(), cores, cycles }
    }

    fn obs(delay: f64, cores: usize, x: f64) -> Obs {
        Obs { regime: "bkl".into(), delay, cores, x }
    }

    #[test]
    fn the_band_spans_the_measured_service_times_with_hand_offs() {
        let holds = [hold(2, 323.0), hold(1, 218.0)];
        // One core: 274 cycles per acquisition at delay 0, 2616 at 4000.
        let o = [obs(0.0, 1, 1.0 / 274.0), obs(4000.0, 1, 1.0 / 2616.0), obs(0.0, 2, 1.0 / 463.0)];
        let lat = [(0, 1, 140.0), (1, 0, 160.0)];
        let units = Units::Scale { ghz: 2.0, per_trip: 2.0 };
        let b =
            band("bkl", &holds.iter().collect::<Vec<_>>(), &o.iter().collect::<Vec<_>>(), units, Some(&lat)).unwrap();
        assert_eq!(b.cores, [1, 2]);
        assert_eq!(b.handoff_cycles, [0.0, 150.0]);
        assert_eq!((b.service_lo, b.service_lo_cores), (218.0, 1));
        assert_eq!((b.service_hi, b.service_hi_cores), (473.0, 2));
        assert_eq!(b.think_delays, [0.0, 4000.0]);
        assert!((b.think_cycles[0] - 56.0).abs() < 1e-9 && (b.think_cycles[1] - 2398.0).abs() < 1e-9);
        assert!((b.think_base - 56.0).abs() < 1e-9);
        assert!(b.handoff_source.starts_with("median"));
        // Without latencies the hand-off is 0, and the record says so.
        let b = band("bkl", &holds.iter().collect::<Vec<_>>(), &o.iter().collect::<Vec<_>>(), units, None).unwrap();
        assert_eq!(b.service_hi, 323.0);
        assert!(b.handoff_source.starts_with("none"));
        // No one-core hold, or generic units: no band.
        assert!(band("bkl", &[&holds[0]], &o.iter().collect::<Vec<_>>(), units, None).is_none());
        assert!(band("bkl", &[&holds[1]], &o.iter().collect::<Vec<_>>(), Units::Generic, None).is_none());
    }

    #[test]
    fn the_hand_off_is_the_median_among_the_first_cores() {
        let lat = [(0, 1, 100.0), (1, 0, 120.0), (0, 2, 400.0), (2, 0, 420.0), (1, 2, 410.0), (2, 1, 430.0)];
        assert_eq!(handoff(&lat, 2), Some(110.0));
        assert_eq!(handoff(&lat, 3), Some(405.0));
        assert_eq!(handoff(&lat, 1), None);
    }
}
