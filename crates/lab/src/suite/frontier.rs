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

use super::lock_model::held;
pub use super::lock_model::{Model, DELAYS, MAX_CORES, MAX_MEASURED_DELAYS, MAX_TIME, THRESHOLDS};
use super::records::{Rec, Records};
use crate::fields::Fields;
use crate::stats::median;

/// The seeds' own answers (seed `001` §5.1.2–5.1.3, 28-thread two-socket
/// Xeon): `(delay, cores, what)`.
pub const SEED_POINTS: [(u64, usize, &str); 4] = [
    (1000, 7, "knee near 7 cores at 1,000 cycles"),
    (2000, 7, "knee near 7 cores at 2,000 cycles"),
    (4000, 14, "4,000 cycles scale to 14 cores (one socket)"),
    (16000, 28, "16,000 cycles scale to both sockets (28)"),
];

/// A measured point: (regime, delay, cores).
type Key = (String, u64, usize);

/// Medians of `round_trips_per_sec` per (regime, delay, cores), with the
/// lines of the records behind each.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    points: BTreeMap<Key, (f64, Vec<usize>)>,
}

impl Measured {
    /// The `scale` records' medians.
    pub fn of(rs: &Records<'_>) -> Self {
        let mut raw: BTreeMap<Key, (Vec<f64>, Vec<usize>)> = BTreeMap::new();
        for r in rs.of("scale", "scale") {
            let (Some(g), Some(d), Some(c), Some(t)) =
                (r.str("regime"), r.num("delay_cycles"), r.num("cores"), r.num("round_trips_per_sec"))
            else {
                continue;
            };
            if !(t.is_finite() && t > 0.0 && c >= 1.0 && c <= MAX_CORES as f64 && (0.0..=MAX_TIME).contains(&d)) {
                continue;
            }
            let e = raw.entry((g.to_string(), d as u64, c as usize)).or_default();
            e.0.push(t);
            e.1.push(r.line);
        }
        let points = raw.into_iter().filter_map(|(k, (t, l))| Some((k, (median(&t)?, l)))).collect();
        Self { points }
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
    /// From the fitted model, per threshold ([`MAX_CORES`] means "at
    /// least that").
    pub predicted: [Option<usize>; 2],
    /// From the simulator on the seeds' two-socket x86, per threshold, with
    /// whether it held to its last core (`super::frontier_sim`).
    pub simulated: Option<super::lock_model::Held>,
    /// The lines of the simulation records behind `simulated`.
    pub simulated_lines: Vec<usize>,
    /// From the model and the measured single-core costs: the first core
    /// count at which `fine` overtakes `bkl` (`None`: not up to
    /// [`MAX_CORES`], or not computable).
    pub crossover: Option<usize>,
    /// `fine`'s one-core throughput over `bkl`'s at this delay.
    pub fine_over_bkl_one_core: Option<f64>,
    /// `fine` over `bkl` measured at the most cores measured, if both were.
    pub fine_over_bkl_measured: Option<(usize, f64)>,
    /// The lines of every record this row rests on.
    pub lines: Vec<usize>,
    /// The lines the crossover rests on: the one-core costs and the fit.
    pub crossover_lines: Vec<usize>,
}

/// The whole answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Frontier {
    /// One row per delay, ascending.
    pub rows: Vec<FrontierRow>,
    /// The fitted model, if the suite fitted one.
    pub model: Option<Model>,
    /// `bkl`'s and `fine`'s cycles per round trip on one core at delay 0.
    pub single_core_cycles: [Option<f64>; 2],
}

/// The TSC frequency the suite measured, in Hz, and the line it is from
/// (the fit's input, else the machine record).
pub fn tsc_hz(rs: &Records<'_>) -> Option<(f64, usize)> {
    let ok = |r: Rec<'_>| r.num("tsc_ghz").filter(|g| g.is_finite() && *g > 0.0 && *g < 1e3).map(|g| (g * 1e9, r.line));
    rs.of("model_fit", "fit_input").into_iter().find_map(ok).or_else(|| rs.machine().and_then(ok))
}

/// The frontier and crossover of a suite's records.
pub fn compute(rs: &Records<'_>) -> Frontier {
    let model = Model::of(rs);
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
            let predicted = THRESHOLDS.map(|t| model.and_then(|k| k.frontier(delay as f64, t)));
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
            let crossover = model.zip(ratio).and_then(|(k, r)| k.crossover(delay as f64, r));
            if let Some(k) = &model {
                crossover_lines.extend(k.lines());
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
                lines,
                crossover_lines,
            }
        })
        .collect();
    Frontier { rows, model, single_core_cycles: [bkl_c.map(|c| c.0), fine_c.map(|c| c.0)] }
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
    use crate::suite::records::testing::{rec, scale_point};
    use serde_json::{Map, Value};

    /// The seeds' formula written out directly (no log space): `X(n)`.
    fn closed_form(n: usize, s: f64, a: f64) -> f64 {
        let rho = s / a;
        let mut term = 1.0;
        let mut sum = 1.0;
        for k in 1..=n {
            term *= rho * (n - k + 1) as f64;
            sum += term;
        }
        (1.0 - 1.0 / sum) / s
    }

    fn fit(s: f64, a: f64) -> Vec<Map<String, Value>> {
        vec![
            record("machine"),
            rec("fit_input", "model_fit", &[("tsc_ghz", 2.0.into()), ("locks_per_round_trip", 2.0.into())]),
            rec(
                "model_fit",
                "model_fit",
                &[("regime", "bkl".into()), ("scope", "all delays".into()), ("s", s.into()), ("a", a.into())],
            ),
        ]
    }

    #[test]
    fn the_predicted_frontier_is_the_closed_form_one() {
        let (s, a) = (300.0, 100.0);
        let all = fit(s, a);
        let model = Model::of(&Records::new(&all)).unwrap();
        assert_eq!(model.line, 3);
        for delay in [0.0, 500.0, 4000.0, 16000.0] {
            let think = a + delay / 2.0;
            let e = |n: usize| closed_form(n, s, think) / (n as f64 * closed_form(1, s, think));
            for t in THRESHOLDS {
                let expect = (1..=200).take_while(|n| e(*n) >= t).last().unwrap();
                assert_eq!(model.frontier(delay, t), Some(expect), "delay {delay}, threshold {t}");
            }
        }
        // At delay 4000 (think 2100) the 90 % frontier: by hand, E(2) =
        // X(2)/(2 X(1)) with ρ = 1/7: P0 = 1/(1 + 2/7 + 2/49) = 49/65,
        // X(2) = (16/65)/300, X(1) = 1/2400, so E(2) = 0.9846.
        let e2 = model.efficiency(2, 4000.0).unwrap();
        assert!((e2 - (16.0 / 65.0 / 300.0) / (2.0 / 2400.0)).abs() < 1e-12, "{e2}");
    }

    #[test]
    fn the_crossover_is_where_the_efficiency_drops_below_the_cost_ratio() {
        let all = fit(300.0, 100.0);
        let model = Model::of(&Records::new(&all)).unwrap();
        let (s, think) = (300.0, 100.0 + 4000.0 / 2.0);
        let e = |n: usize| closed_form(n, s, think) / (n as f64 * closed_form(1, s, think));
        let ratio = 0.8;
        let first = (1..=200).find(|n| e(*n) < ratio).unwrap();
        assert_eq!(model.crossover(4000.0, ratio), Some(first));
        assert_eq!(model.crossover(4000.0, 1.2), Some(1), "fine cheaper on one core wins at once");
        // A ratio the big lock keeps up to the model's limit: no crossover.
        assert_eq!(model.crossover(1e12, 0.01), None);
    }

    #[test]
    fn the_suite_records_give_both_frontiers_and_the_crossover() {
        let mut all = fit(300.0, 100.0);
        // 2 GHz. bkl: 400 cycles per round trip on one core at delay 0;
        // fine 500. At delay 0 two cores give 1.2× one core (60 %); at
        // 4000, 1.9× (95 %).
        let p = scale_point;
        let b0 = 2e9 / 400.0;
        let b4 = 2e9 / 4400.0;
        all.extend([
            p("bkl", 0, 1, b0),
            p("bkl", 0, 2, 1.2 * b0),
            p("fine", 0, 1, 2e9 / 500.0),
            p("fine", 0, 2, 2.0 * 2e9 / 500.0),
            p("bkl", 4000, 1, b4),
            p("bkl", 4000, 2, 1.9 * b4),
        ]);
        let f = compute(&Records::new(&all));
        assert_eq!(f.single_core_cycles[0].map(f64::round), Some(400.0));
        assert_eq!(f.single_core_cycles[1].map(f64::round), Some(500.0));
        let row = |d: u64| f.rows.iter().find(|r| r.delay == d).unwrap();
        let m0 = row(0).measured.as_ref().unwrap();
        assert_eq!((m0.most_cores, m0.cores, m0.at_least), (2, [1, 2], [false, true]));
        let m4 = row(4000).measured.as_ref().unwrap();
        assert_eq!((m4.cores, m4.at_least), ([2, 2], [true, true]));
        assert!(row(500).measured.is_none(), "not measured there");
        assert_eq!(row(0).fine_over_bkl_measured.map(|(c, r)| (c, (r * 100.0).round())), Some((2, 133.0)));
        let model = f.model.unwrap();
        for r in &f.rows {
            assert_eq!(r.predicted[0], model.frontier(r.delay as f64, 0.9));
            let ratio = (400.0 + r.delay as f64) / (500.0 + r.delay as f64);
            assert!((r.fine_over_bkl_one_core.unwrap() - ratio).abs() < 1e-9);
            assert_eq!(r.crossover, model.crossover(r.delay as f64, ratio));
            assert!(r.lines.contains(&3), "the fit's line");
        }
        // Delays ascend: the measured 0 first, then the seeds' sweep.
        let delays: Vec<u64> = f.rows.iter().map(|r| r.delay).collect();
        assert_eq!(delays, [0, 500, 1000, 2000, 4000, 8000, 16000, 32000]);
    }

    #[test]
    fn without_a_fit_only_the_measurements_speak() {
        let all = vec![record("machine")];
        let f = compute(&Records::new(&all));
        assert!(f.model.is_none());
        assert!(f.rows.iter().all(|r| r.predicted == [None, None]
            && r.crossover.is_none()
            && r.measured.is_none()
            && r.simulated.is_none()));
    }
}
