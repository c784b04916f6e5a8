//! The hosted experiments' records from the image's lines: `ipc` (one per
//! regime, over its runs) and `scale` (one per regime and run), made from
//! the `metal_pingpong` lines of `experiment=ipc` and `experiment=scale`,
//! each saying the platform it ran on. Fields the image cannot measure
//! (the atomics per call, the cost of an `xchg`) are null.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::record::MetalPingpongRecord;
use crate::cmd::ipc::records::IpcRecord;
use crate::cmd::scale::records::ScaleRecord;
use crate::stats::summarize;

/// The platform a line names, kept for the derived records.
fn platform(r: &MetalPingpongRecord) -> Cow<'static, str> {
    Cow::Owned(r.platform.clone())
}

/// Seconds of `cycles` at the line's counter rate (0 without one).
fn seconds(r: &MetalPingpongRecord, cycles: u64) -> f64 {
    r.tsc_hz.filter(|&hz| hz > 0).map_or(0.0, |hz| cycles as f64 / hz as f64)
}

/// One `ipc` record per regime (in the order first seen) over its runs'
/// cycles per round trip, with `ratio_to_none` and `extra_cycles_per_call`
/// where `none` ran too.
pub fn ipc(lines: &[MetalPingpongRecord]) -> Vec<IpcRecord> {
    let mut order: Vec<&str> = Vec::new();
    let mut runs: BTreeMap<&str, Vec<&MetalPingpongRecord>> = BTreeMap::new();
    for r in lines {
        if !order.contains(&r.regime.as_str()) {
            order.push(&r.regime);
        }
        runs.entry(&r.regime).or_default().push(r);
    }
    let cycles = |regime: &str| runs[regime].iter().map(|r| r.cycles_per_round_trip).collect::<Vec<f64>>();
    let none = runs.contains_key("none").then(|| summarize(&cycles("none")).mean);
    order
        .iter()
        .map(|&regime| {
            let s = summarize(&cycles(regime));
            let first = runs[regime][0];
            let ns_per_cycle = seconds(first, 1) * 1e9;
            IpcRecord {
                regime: Cow::Owned(regime.to_string()),
                profiled: false,
                runs: runs[regime].len(),
                words: 1,
                round_trip_cycles_mean: s.mean,
                round_trip_cycles_std: s.std,
                round_trip_cycles_median: s.median,
                round_trip_cycles_min: s.min,
                round_trip_ns_mean: s.mean * ns_per_cycle,
                round_trip_ns_std: s.std * ns_per_cycle,
                ratio_to_none: none.map(|n| s.mean / n),
                extra_cycles_per_call: none.map(|n| (s.mean - n) / 2.0),
                xchg_cycles: None,
                extra_per_xchg: None,
                atomics_per_call: None,
                atomics_source: None,
                xchg_per_call: None,
                xadd_per_call: None,
                cmpxchg_per_call: None,
                cmpxchg16b_per_call: None,
                transactions_per_call: None,
                atomic_floor_cycles: None,
                target_max_extra_cycles: None,
                meets_target: None,
                platform: Some(platform(first)),
            }
        })
        .collect()
}

/// One `scale` record per regime and run (in the order first seen): the
/// cores' rates summed, each core's busy fraction of its own window.
pub fn scale(lines: &[MetalPingpongRecord]) -> Vec<ScaleRecord> {
    let mut points: Vec<((String, usize), Vec<&MetalPingpongRecord>)> = Vec::new();
    for r in lines {
        let key = (r.regime.clone(), r.run.unwrap_or(1));
        match points.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => points.push((key, vec![r])),
        }
    }
    points
        .into_iter()
        .map(|((regime, run), mut cores)| {
            cores.sort_by_key(|r| r.core);
            let window = |r: &MetalPingpongRecord| r.window_cycles.unwrap_or(0);
            let rate: f64 = cores
                .iter()
                .map(|r| {
                    let s = seconds(r, window(r));
                    if s > 0.0 {
                        r.round_trips as f64 / s
                    } else {
                        0.0
                    }
                })
                .sum();
            let busy: Vec<f64> = cores
                .iter()
                .map(|r| match window(r) {
                    0 => 0.0,
                    w => 1.0 - r.idle_cycles.unwrap_or(0).min(w) as f64 / w as f64,
                })
                .collect();
            let util = busy.iter().sum::<f64>() / busy.len().max(1) as f64;
            let n = cores.len();
            let widest = cores.iter().map(|r| seconds(r, window(r))).fold(0.0, f64::max);
            ScaleRecord {
                regime: Cow::Owned(regime),
                cores: n,
                delay_cycles: cores[0].delay_cycles.unwrap_or(0),
                run,
                round_trips_per_sec: rate,
                per_core_per_sec: rate / n.max(1) as f64,
                utilisation: util,
                utilisation_per_core: busy.iter().map(|u| format!("{u:.3}")).collect::<Vec<_>>().join(" "),
                xput: if util > 0.0 { rate / util } else { 0.0 },
                window_s: widest,
                profiled: None,
                profile: None,
                platform: Some(platform(cores[0])),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(regime: &str, core: usize, run: usize, cycles: f64, window: u64, idle: u64) -> MetalPingpongRecord {
        MetalPingpongRecord {
            platform: "qemu-tcg".into(),
            regime: regime.into(),
            threads: "user".into(),
            cores: 2,
            core,
            round_trips: 1000,
            cycles_per_round_trip: cycles,
            ipis: 0,
            ticks: 0,
            experiment: Some("scale".into()),
            program: Some("granule-user".into()),
            run: Some(run),
            delay_cycles: Some(500),
            window_cycles: Some(window),
            idle_cycles: Some(idle),
            tsc_hz: Some(1_000_000_000),
        }
    }

    #[test]
    fn ipc_records_summarise_each_regimes_runs_against_none() {
        let lines = [
            line("none", 0, 1, 200.0, 0, 0),
            line("none", 0, 2, 300.0, 0, 0),
            line("bkl", 0, 1, 400.0, 0, 0),
            line("bkl", 0, 2, 600.0, 0, 0),
        ];
        let rs = ipc(&lines);
        assert_eq!(rs.len(), 2);
        assert_eq!((rs[1].regime.as_ref(), rs[1].runs, rs[1].round_trip_cycles_mean), ("bkl", 2, 500.0));
        assert_eq!((rs[1].round_trip_cycles_min, rs[1].round_trip_cycles_median), (400.0, 500.0));
        assert_eq!(rs[1].ratio_to_none, Some(2.0));
        assert_eq!(rs[1].extra_cycles_per_call, Some(125.0));
        // 1 GHz: a cycle is a nanosecond.
        assert_eq!(rs[1].round_trip_ns_mean, 500.0);
        assert_eq!(rs[1].platform.as_deref(), Some("qemu-tcg"));
        assert_eq!(rs[1].xchg_cycles, None);
    }

    #[test]
    fn scale_records_sum_the_cores_rates_and_busy_fractions_per_run() {
        let lines = [
            line("bkl", 0, 1, 0.0, 1_000_000, 0),
            line("bkl", 1, 1, 0.0, 2_000_000, 1_000_000),
            line("bkl", 0, 2, 0.0, 1_000_000, 0),
            line("bkl", 1, 2, 0.0, 1_000_000, 0),
        ];
        let rs = scale(&lines);
        assert_eq!(rs.len(), 2);
        // 1000 round trips in 1 ms, and 1000 in 2 ms: 1.5 million per second.
        assert_eq!((rs[0].cores, rs[0].run, rs[0].round_trips_per_sec), (2, 1, 1_500_000.0));
        assert_eq!(rs[0].utilisation_per_core, "1.000 0.500");
        assert_eq!(rs[0].utilisation, 0.75);
        assert_eq!(rs[0].window_s, 0.002);
        assert_eq!((rs[1].run, rs[1].round_trips_per_sec, rs[1].delay_cycles), (2, 2_000_000.0, 500));
        assert_eq!(rs[1].platform.as_deref(), Some("qemu-tcg"));
    }
}
