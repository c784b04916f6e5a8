//! The page may not contradict its data: recorded results go in, the page
//! comes out, and every prediction it states at a core count this machine
//! measured is held against the measurement, recomputed here from the raw
//! records (the model solved directly, not through the page's code). Where
//! the prediction misses, the page must say the model does not describe
//! this machine there. And every number a figure plots is the field of
//! the `results.jsonl` line it names.
//!
//! Two inputs: this project's real 2-core run (a virtual AMD EPYC, where two
//! cores with the big lock fall below one at delay 0), and a synthetic
//! 16-core machine whose service time jumps at a socket boundary (8 cores).

use std::path::Path;

use granule_model::Repairman;
use serde_json::{Map, Value};

use super::frontier::{self, MIN_SPREAD};
use super::records::testing::{rec, scale_point};
use super::records::Records;
use super::results_file::read_results;
use super::{build_figures, build_page};
use crate::output::record;

/// The real 2-core run.
const REAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/epyc-2core/results.jsonl");

/// The page's text without its tags (what a reader reads).
fn text(page: &str) -> String {
    let mut out = String::new();
    let mut tag = false;
    for c in page.chars() {
        match c {
            '<' => tag = true,
            '>' => {
                tag = false;
                out.push(' ');
            }
            _ if !tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
}

/// `1234` as the page writes it: `1,234`.
fn grouped(n: u64) -> String {
    super::units::count(n)
}

/// Every measured big-lock efficiency at more than one core, held against
/// the band recomputed from the `service_band` record; returns how many
/// points were checked and how many the page flagged.
fn check(rs: &Records) -> (usize, usize) {
    let f = frontier::compute(rs);
    let figs = build_figures(rs, &f);
    let page = text(&build_page(rs, &f, &figs));
    let band = rs.service_band.iter().find(|r| r.regime == "bkl").expect("a band");
    let (s_lo, s_hi, h1) = (band.service_lo, band.service_hi, band.one_core_hold);
    let (d_at, a_at) = (&band.think_delays, &band.think_cycles);
    let per_trip = band.locks_per_round_trip;
    let think = |d: f64| d_at.iter().position(|x| *x == d).map_or(band.think_base + d / per_trip, |i| a_at[i]);
    // Medians and ranges of the measured points.
    let mut pts: std::collections::BTreeMap<(u64, usize), Vec<f64>> = Default::default();
    for r in rs.scale.of("scale").filter(|r| r.regime == "bkl") {
        pts.entry((r.delay_cycles, r.cores)).or_default().push(r.round_trips_per_sec);
    }
    let med = |v: &[f64]| crate::stats::median(v).expect("a point has runs");
    let spread = |v: &[f64]| {
        let (lo, hi) = v.iter().fold((f64::MAX, 0.0f64), |(a, b), x| (a.min(*x), b.max(*x)));
        ((hi - lo) / 2.0 / med(v)).max(MIN_SPREAD)
    };
    let (mut checked, mut flagged) = (0, 0);
    for (&(d, n), xs) in pts.iter().filter(|(k, _)| k.1 > 1) {
        let Some(one) = pts.get(&(d, 1)) else { continue };
        let measured = med(xs) / (n as f64 * med(one));
        let tol = spread(xs) + spread(one);
        let a = think(d as f64);
        let e = |s: f64| Repairman::new(n, s, a).unwrap().solve().throughput * (a + h1) / n as f64;
        let (lo, hi) = (e(s_hi), e(s_lo));
        assert!(lo <= hi + 1e-12, "the band is ordered: {lo} {hi}");
        checked += 1;
        let phrase = format!("does not describe this machine at {} cycles on {n} cores", grouped(d));
        if measured * (1.0 + tol) < lo || measured * (1.0 - tol) > hi {
            flagged += 1;
            assert!(page.contains(&phrase), "delay {d}, {n} cores: measured {measured:.3} outside {lo:.3}–{hi:.3}");
        } else {
            assert!(!page.contains(&phrase), "delay {d}, {n} cores: measured {measured:.3} inside {lo:.3}–{hi:.3}");
        }
    }
    // The headline's measured claim: 90 % held on every measured core
    // count at its delay.
    let head = "When system calls are at least ";
    if let Some(at) = page.find(head) {
        let rest = &page[at + head.len()..];
        let d: u64 = rest.split(' ').next().unwrap().replace(',', "").parse().unwrap();
        for (&(pd, n), xs) in pts.iter().filter(|(k, _)| k.0 == d && k.1 > 1) {
            let e = med(xs) / (n as f64 * med(&pts[&(pd, 1)]));
            assert!(e >= 0.9, "the headline says 90 % at {d} cycles, {n} cores measured {e:.3}");
        }
        // And no smaller measured delay held it.
        for (&(pd, _), _) in pts.iter().filter(|(k, _)| k.0 < d) {
            let held = pts
                .iter()
                .filter(|(k, _)| k.0 == pd && k.1 > 1)
                .all(|(k, xs)| med(xs) / (k.1 as f64 * med(&pts[&(pd, 1)])) >= 0.9);
            assert!(!held, "90 % already held at {pd} cycles, below the headline's {d}");
        }
    }
    // No fit is quoted unless model fit marked it determined.
    for r in rs.model_fit.of("model_fit") {
        if !r.quoted {
            assert!(!page.contains("least-squares fit over the measured core counts agrees"), "an unquoted fit quoted");
        }
    }
    (checked, flagged)
}

#[test]
fn the_real_two_core_page_agrees_with_its_data_or_says_where_not() {
    let r = read_results(Path::new(REAL)).unwrap();
    assert!(r.skipped.is_empty(), "{:?}", r.skipped);
    let (checked, _) = check(&r.view().unwrap());
    assert!(checked >= 4, "every delay's 2-core point is checked ({checked})");
}

#[test]
fn every_number_the_real_pages_figures_plot_is_the_field_they_name() {
    let r = read_results(Path::new(REAL)).unwrap();
    let rs = r.view().unwrap();
    let figs = build_figures(&rs, &frontier::compute(&rs));
    assert_eq!(figs.len(), 9);
    let mut checked = 0;
    for f in &figs {
        for s in &f.sources {
            let v = r.records[s.line - 1].get(&s.field).and_then(Value::as_f64);
            assert_eq!(v, Some(s.value), "{}: line {} field {}", f.id, s.line, s.field);
            checked += 1;
        }
    }
    assert!(checked > 500, "{checked}");
}

/// A synthetic 16-core, two-socket machine: the big lock's service time
/// is 300 cycles within the first socket (cores 1–8) and 600 beyond it.
fn sixteen_cores() -> Vec<Map<String, Value>> {
    let ghz = 2.0;
    let (h1, a0) = (200.0, 100.0);
    let cores = [1usize, 2, 3, 4, 6, 8, 12, 16];
    let hold = |n: usize| {
        if n == 1 {
            h1
        } else if n <= 8 {
            250.0
        } else {
            450.0
        }
    };
    let handoff = |n: usize| {
        if n == 1 {
            0.0
        } else if n <= 8 {
            50.0
        } else {
            150.0
        }
    };
    let mut m = record("machine");
    m.insert("cores".into(), 16.into());
    m.insert("tsc_ghz".into(), ghz.into());
    let holds: Vec<(usize, f64, f64)> = cores.iter().map(|n| (*n, hold(*n), handoff(*n))).collect();
    let delays = [0u64, 1000, 4000, 16000];
    let think: Vec<(f64, f64)> = delays.iter().map(|d| (*d as f64, a0 + *d as f64 / 2.0)).collect();
    let mut all = vec![
        m,
        rec("fit_input", "model_fit", &[("tsc_ghz", ghz.into()), ("locks_per_round_trip", 2.0.into())]),
        super::band::testing::band_record(&holds, &think, a0),
    ];
    for d in delays {
        let a = a0 + d as f64 / 2.0;
        for &n in &cores {
            let s = hold(n) + handoff(n);
            let x = Repairman::new(n, s, a).unwrap().solve().throughput;
            // Two runs 2 % apart around the model's value, but for one
            // point the model cannot describe: 16 cores at delay 0, both
            // runs at under a third of the model's value.
            let runs = if d == 0 && n == 16 { [0.3 * 1.01; 2] } else { [0.99, 1.01] };
            for k in runs {
                all.push(scale_point("bkl", d, n as u64, k * x * ghz * 1e9 / 2.0));
            }
            let f1 = ghz * 1e9 / (2.0 * (a + 260.0));
            all.push(scale_point("fine", d, n as u64, n as f64 * f1));
        }
    }
    all
}

#[test]
fn a_sixteen_core_two_socket_page_agrees_with_its_data_or_says_where_not() {
    let (checked, flagged) = check(&Records::new(&sixteen_cores()));
    assert_eq!(checked, 4 * 7, "every delay × every core count above one");
    assert!(flagged >= 1, "the impossible point is flagged");
}
