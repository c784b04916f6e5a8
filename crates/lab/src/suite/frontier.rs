//! The answer to the suite's question: for each mean delay between system
//! calls, up to how many cores one big lock is good enough, and from how
//! many cores fine-grained locking pays (seed `001` §5.1.3).
//!
//! **Good enough** is the big lock's *scaling efficiency*
//! `E(n) = X(n) / (n · X(1))`: its throughput on `n` cores over `n` times
//! its own throughput on one, i.e. the share of the lock-free ideal
//! (perfect scaling, nobody waiting) it delivers. The single-core price of
//! the lock is left to the crossover below, so the frontier isolates
//! contention. Three sources, never mixed:
//! - **measured**, from the `scale` records (medians of the runs): the
//!   largest measured core count up to which every measured `E` holds the
//!   threshold; when all of them do, the machine ran out of cores first
//!   and the figure is a lower bound ("at least 2");
//! - **simulated**, where the topology is known: the discrete-event
//!   simulator on the seeds' two-socket x86 ([`super::frontier_sim`]);
//! - **predicted**, from the machine-repairman model with the service time
//!   `s` and think time `a` the suite's fit found (`model_fit`, cycles per
//!   lock acquisition): think time `a + D / L` at delay `D` (`L` locks per
//!   round trip, `fit_input`), `E(n)` from [`granule_model::Repairman`],
//!   scanned up to [`MAX_CORES`].
//!
//! **The crossover.** Fine-grained locking costs more per call but shares no
//! lock, so it scales like the ideal: `n · F(1)`. The big lock delivers
//! `n · B(1) · E(n)`. Fine-grained locking overtakes it at the first `n`
//! where `E(n) < F(1)/B(1) = (c_B + D)/(c_F + D)`, with `c` each regime's
//! measured cycles per round trip on one core at delay 0 (the smallest
//! measured delay, less that delay, when 0 was not measured). The seeds
//! assume the same: fine-grained locking "can be expected to scale
//! perfectly" on disjoint objects.

use std::collections::BTreeMap;

pub use super::band::{Band, Range};
use super::lock_model::held;
pub use super::lock_model::{Model, DELAYS, MAX_CORES, MAX_MEASURED_DELAYS, MAX_TIME, THRESHOLDS};
use super::records::Records;
use crate::stats::median;

/// The seeds' own answers (seed `001` §5.1.2–5.1.3, 28-thread two-socket
/// Xeon): `(delay, cores, what)`.
pub const SEED_POINTS: [(u64, usize, &str); 4] = [
    (1000, 7, "knee near 7 cores at 1,000 cycles"),
    (2000, 7, "knee near 7 cores at 2,000 cycles"),
    (4000, 14, "4,000 cycles scale to 14 cores (one socket)"),
    (16000, 28, "16,000 cycles scale to both sockets (28)"),
];

/// The least relative spread a measured point is given: 5 %.
pub const MIN_SPREAD: f64 = 0.05;

/// A measured point: (regime, delay, cores).
type Key = (String, u64, usize);

/// Medians of `round_trips_per_sec` per (regime, delay, cores), with the
/// lines of the records behind each.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    points: BTreeMap<Key, (f64, Vec<usize>)>,
    /// The smallest and largest run of each point.
    ranges: BTreeMap<Key, (f64, f64)>,
}

impl Measured {
    /// The `scale` records' medians.
    pub fn of(rs: &Records) -> Self {
        let mut raw: BTreeMap<Key, (Vec<f64>, Vec<usize>)> = BTreeMap::new();
        for r in rs.scale.of("scale") {
            let (d, c, t) = (r.delay_cycles, r.cores, r.round_trips_per_sec);
            if !(t.is_finite() && t > 0.0 && (1..=MAX_CORES).contains(&c) && (0.0..=MAX_TIME).contains(&(d as f64))) {
                continue;
            }
            let e = raw.entry((r.regime.to_string(), d, c)).or_default();
            e.0.push(t);
            e.1.push(r.line);
        }
        let ranges = raw
            .iter()
            .map(|(k, (t, _))| {
                (k.clone(), (t.iter().copied().fold(f64::MAX, f64::min), t.iter().copied().fold(0.0, f64::max)))
            })
            .collect();
        let points = raw.into_iter().filter_map(|(k, (t, l))| Some((k, (median(&t)?, l)))).collect();
        Self { points, ranges }
    }

    /// The relative spread of `regime`'s point at `delay` on `cores`: half
    /// the range of its runs over their median, at least [`MIN_SPREAD`]
    /// (a single run says nothing of its noise; this machine's runs differ
    /// by about that much).
    pub fn spread(&self, regime: &str, delay: u64, cores: usize) -> f64 {
        let key = (regime.to_string(), delay, cores);
        match (self.points.get(&key), self.ranges.get(&key)) {
            (Some((m, _)), Some((lo, hi))) if *m > 0.0 => ((hi - lo) / 2.0 / m).max(MIN_SPREAD),
            _ => MIN_SPREAD,
        }
    }

    /// The median throughput of `regime` at `delay` on `cores`, and its lines.
    pub fn at(&self, regime: &str, delay: u64, cores: usize) -> Option<(f64, &[usize])> {
        self.points.get(&(regime.to_string(), delay, cores)).map(|(t, l)| (*t, l.as_slice()))
    }

    /// The delays measured for `regime`, ascending.
    pub fn delays(&self, regime: &str) -> Vec<u64> {
        let mut d: Vec<u64> = self.points.keys().filter(|k| k.0 == regime).map(|k| k.1).collect();
        d.dedup();
        d
    }

    /// The core counts measured for `regime` at `delay`, ascending.
    pub fn cores(&self, regime: &str, delay: u64) -> Vec<usize> {
        self.points.keys().filter(|k| k.0 == regime && k.1 == delay).map(|k| k.2).collect()
    }

    /// Cycles per round trip of `regime` on one core at delay 0 (from the
    /// smallest measured delay, less that delay), with its lines.
    pub fn single_core_cycles(&self, regime: &str, tsc_hz: f64) -> Option<(f64, Vec<usize>)> {
        let d = *self.delays(regime).iter().find(|d| self.at(regime, **d, 1).is_some())?;
        let (t, lines) = self.at(regime, d, 1)?;
        let c = tsc_hz / t - d as f64;
        (c.is_finite() && c > 0.0).then(|| (c, lines.to_vec()))
    }
}

/// What was measured of the big lock at one delay.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasuredFrontier {
    /// The most cores measured.
    pub most_cores: usize,
    /// The efficiency at the most cores measured.
    pub efficiency_at_most: f64,
    /// Per threshold: the largest measured core count up to which every
    /// measured efficiency holds it.
    pub cores: [usize; 2],
    /// Per threshold: whether it held on every measured core count (so
    /// `cores` is a lower bound: the machine ran out of cores).
    pub at_least: [bool; 2],
    /// The lines of the records used.
    pub lines: Vec<usize>,
}

/// One delay's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct FrontierRow {
    /// Mean delay between system calls, cycles per round trip.
    pub delay: u64,
    /// From the measurements, where `bkl` was measured at this delay on
    /// more than one core.
    pub measured: Option<MeasuredFrontier>,
    /// From the model's band (longest, shortest service time), per
    /// threshold ([`MAX_CORES`] means "at least that").
    pub predicted: [Option<Range<usize>>; 2],
    /// From the simulator on the seeds' two-socket x86 with the longest and
    /// the shortest hold time measured: the 90 % frontier of each, and
    /// whether it held to the last core simulated (`super::frontier_sim`).
    pub simulated: Option<super::frontier_sim::Simulated>,
    /// The lines of the simulation records behind `simulated`.
    pub simulated_lines: Vec<usize>,
    /// From the band and the measured single-core costs: the first core
    /// count at which `fine` overtakes `bkl`, per end of the band (`None`:
    /// not up to [`MAX_CORES`]); `None` if not computable.
    pub crossover: Option<Range<Option<usize>>>,
    /// `fine`'s one-core throughput over `bkl`'s at this delay.
    pub fine_over_bkl_one_core: Option<f64>,
    /// `fine` over `bkl` measured at the most cores measured, if both were.
    pub fine_over_bkl_measured: Option<(usize, f64)>,
    /// The band against every measurement at this delay.
    pub checks: Vec<Check>,
    /// The lines of every record this row rests on.
    pub lines: Vec<usize>,
    /// The lines the crossover rests on: the one-core costs and the band.
    pub crossover_lines: Vec<usize>,
}

/// What a check compares.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Checked {
    /// The big lock's efficiency on `cores`: measured against the band.
    Efficiency,
    /// `fine` over `bkl` on `cores`: which one is faster, measured against
    /// the band's crossover.
    Crossover,
}

/// A prediction at a core count this machine measured, held against the
/// measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// What is compared.
    pub what: Checked,
    /// Cores.
    pub cores: usize,
    /// The measured value (efficiency, or fine ÷ bkl).
    pub measured: f64,
    /// Its relative spread ([`Measured::spread`]).
    pub spread: f64,
    /// The band's range of the value (for a crossover: 1 where the band
    /// says fine is ahead on these cores at both ends, 0 where behind at
    /// both, 0–1 where the band straddles them).
    pub predicted: Range<f64>,
    /// Whether the measurement, give or take its spread, is in the range.
    pub agrees: bool,
    /// The records behind the measurement.
    pub lines: Vec<usize>,
}

/// The whole answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Frontier {
    /// One row per delay, ascending.
    pub rows: Vec<FrontierRow>,
    /// The measured service-time band the predictions are drawn from.
    pub band: Option<Band>,
    /// A least-squares fit of the model, where it is determined enough to
    /// quote (`model_fit` says `quoted`).
    pub fit: Option<Model>,
    /// `bkl`'s and `fine`'s cycles per round trip on one core at delay 0.
    pub single_core_cycles: [Option<f64>; 2],
}

impl Frontier {
    /// Every check that disagrees, with its delay.
    pub fn disagreements(&self) -> Vec<(u64, &Check)> {
        self.rows.iter().flat_map(|r| r.checks.iter().filter(|c| !c.agrees).map(move |c| (r.delay, c))).collect()
    }
}

/// The TSC frequency the suite measured, in Hz, and the line it is from
/// (the fit's input, else the machine record).
pub fn tsc_hz(rs: &Records) -> Option<(f64, usize)> {
    let ok =
        |ghz: Option<f64>, line: usize| ghz.filter(|g| g.is_finite() && *g > 0.0 && *g < 1e3).map(|g| (g * 1e9, line));
    rs.fit_input
        .of("model_fit")
        .find_map(|r| ok(r.tsc_ghz, r.line))
        .or_else(|| rs.machine.as_ref().and_then(|m| ok(Some(m.tsc_ghz), m.line)))
}

/// The frontier and crossover of a suite's records.
pub fn compute(rs: &Records) -> Frontier {
    let band = Band::of(rs);
    let fit = Model::of(rs);
    let m = Measured::of(rs);
    let hz = tsc_hz(rs);
    let cost = |g: &str| {
        hz.and_then(|(hz, line)| {
            let (c, mut lines) = m.single_core_cycles(g, hz)?;
            lines.push(line);
            Some((c, lines))
        })
    };
    let (bkl_c, fine_c) = (cost("bkl"), cost("fine"));
    let mut delays: Vec<u64> = DELAYS.to_vec();
    delays.extend(m.delays("bkl").into_iter().take(MAX_MEASURED_DELAYS));
    delays.sort_unstable();
    delays.dedup();
    let rows = delays
        .into_iter()
        .map(|delay| {
            let mut lines = Vec::new();
            let measured = measured_frontier(&m, delay);
            if let Some(f) = &measured {
                lines.extend(f.lines.iter().copied());
            }
            let predicted = THRESHOLDS.map(|t| band.as_ref().and_then(|b| b.frontier(delay as f64, t)));
            let (simulated, simulated_lines) = match super::frontier_sim::frontier(rs, delay) {
                Some((f, l)) => (Some(f), l),
                None => (None, Vec::new()),
            };
            lines.extend(simulated_lines.iter().copied());
            let mut crossover_lines = Vec::new();
            let ratio = match (&bkl_c, &fine_c) {
                (Some((b, bl)), Some((f, fl))) => {
                    crossover_lines.extend(bl.iter().chain(fl).copied());
                    Some((b + delay as f64) / (f + delay as f64))
                }
                _ => None,
            };
            let crossover = band.as_ref().zip(ratio).map(|(b, r)| b.crossover(delay as f64, r));
            if let Some(b) = &band {
                crossover_lines.push(b.line);
                lines.push(b.line);
            }
            crossover_lines.sort_unstable();
            crossover_lines.dedup();
            lines.extend(crossover_lines.iter().copied());
            let fine_over_bkl_measured = m.cores("bkl", delay).into_iter().rfind(|c| *c > 1).and_then(|c| {
                let (b, bl) = m.at("bkl", delay, c)?;
                let (f, fl) = m.at("fine", delay, c)?;
                lines.extend(bl.iter().chain(fl).copied());
                Some((c, f / b))
            });
            let checks = band.as_ref().map_or(Vec::new(), |b| checks(b, &m, delay, crossover));
            lines.sort_unstable();
            lines.dedup();
            FrontierRow {
                delay,
                measured,
                predicted,
                simulated,
                simulated_lines,
                crossover,
                fine_over_bkl_one_core: ratio,
                fine_over_bkl_measured,
                checks,
                lines,
                crossover_lines,
            }
        })
        .collect();
    Frontier { rows, band, fit, single_core_cycles: [bkl_c.map(|c| c.0), fine_c.map(|c| c.0)] }
}

/// The band held against every measurement of `bkl` (and `fine` beside it)
/// at `delay` on more than one core.
fn checks(band: &Band, m: &Measured, delay: u64, crossover: Option<Range<Option<usize>>>) -> Vec<Check> {
    let mut out = Vec::new();
    let Some((one, one_lines)) = m.at("bkl", delay, 1) else { return out };
    for c in m.cores("bkl", delay).into_iter().filter(|c| *c > 1) {
        let Some((t, l)) = m.at("bkl", delay, c) else { continue };
        let Some(predicted) = band.efficiency(c, delay as f64) else { continue };
        let measured = t / (c as f64 * one);
        // The efficiency's spread: this point's and the one-core point's.
        let spread = m.spread("bkl", delay, c) + m.spread("bkl", delay, 1);
        let agrees = measured * (1.0 + spread) >= predicted.0 && measured * (1.0 - spread) <= predicted.1;
        let lines: Vec<usize> = one_lines.iter().chain(l).copied().collect();
        out.push(Check { what: Checked::Efficiency, cores: c, measured, spread, predicted, agrees, lines });
        // Which of fine and bkl is ahead here, against the band's crossover.
        let (Some((lo, hi)), Some((f, fl))) = (crossover, m.at("fine", delay, c)) else { continue };
        let ratio = f / t;
        let spread = m.spread("bkl", delay, c) + m.spread("fine", delay, c);
        // The band: fine ahead on c cores at an end iff its crossover ≤ c.
        let ahead = |x: Option<usize>| x.is_some_and(|x| x <= c);
        let predicted = (f64::from(u8::from(ahead(lo) && ahead(hi))), f64::from(u8::from(ahead(lo) || ahead(hi))));
        let agrees = if ratio > 1.0 + spread {
            predicted.1 == 1.0
        } else if ratio < 1.0 - spread {
            predicted.0 == 0.0
        } else {
            true
        };
        let lines = l.iter().chain(fl).copied().collect();
        out.push(Check { what: Checked::Crossover, cores: c, measured: ratio, spread, predicted, agrees, lines });
    }
    out
}

/// The measured frontier of `bkl` at `delay`, if it was measured there on
/// one core and on more.
fn measured_frontier(m: &Measured, delay: u64) -> Option<MeasuredFrontier> {
    let (one, one_lines) = m.at("bkl", delay, 1)?;
    let cores: Vec<usize> = m.cores("bkl", delay).into_iter().filter(|c| *c > 1).collect();
    let most = *cores.last()?;
    let mut lines = one_lines.to_vec();
    let mut eff = Vec::new();
    for c in &cores {
        let (t, l) = m.at("bkl", delay, *c)?;
        lines.extend_from_slice(l);
        eff.push((*c, t / (*c as f64 * one)));
    }
    let [(c90, l90), (c50, l50)] = held(&eff);
    Some(MeasuredFrontier {
        most_cores: most,
        efficiency_at_most: eff.last().map_or(1.0, |e| e.1),
        cores: [c90, c50],
        at_least: [l90, l50],
        lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::record;
    use crate::suite::band::testing::band_record;
    use crate::suite::records::testing::{rec, scale_point};
    use serde_json::{Map, Value};

    /// A suite's model records: the band (one-core hold 200, two cores 300
    /// plus a 100-cycle hand-off, think 100 at delay 0) at 2 GHz.
    fn band() -> Vec<Map<String, Value>> {
        vec![
            record("machine"),
            rec("fit_input", "model_fit", &[("tsc_ghz", 2.0.into()), ("locks_per_round_trip", 2.0.into())]),
            band_record(&[(1, 200.0, 0.0), (2, 300.0, 100.0)], &[(0.0, 100.0)], 100.0),
        ]
    }

    #[test]
    fn the_suite_records_give_the_band_frontier_and_the_crossover() {
        let mut all = band();
        // bkl: 600 cycles per round trip on one core at delay 0 (300 per
        // acquisition = 100 think + 200 hold); fine 700. At delay 0 two
        // cores give 0.75× one core... measured 0.75 / 2 = 37.5 %.
        let p = scale_point;
        let b0 = 2e9 / 600.0;
        all.extend([
            p("bkl", 0, 1, b0),
            p("bkl", 0, 2, 0.75 * b0),
            p("fine", 0, 1, 2e9 / 700.0),
            p("fine", 0, 2, 2.0 * 2e9 / 700.0),
        ]);
        let f = compute(&Records::new(&all));
        let b = f.band.as_ref().unwrap();
        assert_eq!((b.lo, b.hi), ((200.0, 1), (400.0, 2)));
        assert_eq!(f.single_core_cycles[0].map(f64::round), Some(600.0));
        let row = |d: u64| f.rows.iter().find(|r| r.delay == d).unwrap();
        let m0 = row(0).measured.as_ref().unwrap();
        assert_eq!((m0.most_cores, m0.cores, m0.at_least), (2, [1, 1], [false, false]));
        // The band at two cores, delay 0: (1/400)/(2/300) = 37.5 % with
        // the longest service, more with the shortest: the measurement is
        // in it.
        let c = &row(0).checks[0];
        assert_eq!((c.what, c.cores), (Checked::Efficiency, 2));
        assert!((c.predicted.0 - 0.375).abs() < 0.01, "{:?}", c.predicted);
        assert!(c.agrees, "{c:?}");
        // fine ran ahead at two cores, and the band says so (its crossover
        // is at 2 cores or fewer at both ends).
        let x = &row(0).checks[1];
        assert_eq!(x.what, Checked::Crossover);
        assert!(x.measured > 1.0 && x.agrees, "{x:?}");
        for r in &f.rows {
            let p = r.predicted[0].unwrap();
            assert!(p.0 <= p.1, "{p:?}");
            assert_eq!(r.predicted[0], b.frontier(r.delay as f64, 0.9));
            assert!(r.lines.contains(&3), "the band's line");
        }
        let delays: Vec<u64> = f.rows.iter().map(|r| r.delay).collect();
        assert_eq!(delays, [0, 500, 1000, 2000, 4000, 8000, 16000, 32000]);
        assert!(f.disagreements().is_empty());
    }

    #[test]
    fn a_measurement_outside_the_band_is_a_disagreement() {
        let mut all = band();
        let b0 = 2e9 / 600.0;
        // Two cores at a tenth of one core: far below the band's 37.5 %.
        all.extend([scale_point("bkl", 0, 1, b0), scale_point("bkl", 0, 2, 0.2 * b0)]);
        let f = compute(&Records::new(&all));
        let d = f.disagreements();
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].0, d[0].1.cores), (0, 2));
        assert!((d[0].1.measured - 0.1).abs() < 1e-9);
    }

    #[test]
    fn without_a_band_only_the_measurements_speak() {
        let all = vec![record("machine")];
        let f = compute(&Records::new(&all));
        assert!(f.band.is_none() && f.fit.is_none());
        assert!(f.rows.iter().all(|r| r.predicted == [None, None]
            && r.crossover.is_none()
            && r.measured.is_none()
            && r.simulated.is_none()
            && r.checks.is_empty()));
    }

    #[test]
    fn a_fit_is_quoted_only_where_model_fit_marked_it() {
        let fit = |quoted: bool| {
            rec(
                "model_fit",
                "model_fit",
                &[
                    ("regime", "bkl".into()),
                    ("scope", "all delays".into()),
                    ("s", 300.0.into()),
                    ("a", 100.0.into()),
                    ("converged", true.into()),
                    ("quoted", quoted.into()),
                ],
            )
        };
        assert!(compute(&Records::new(&[fit(false)])).fit.is_none());
        assert_eq!(compute(&Records::new(&[fit(true)])).fit.map(|m| m.s), Some(300.0));
    }
}
