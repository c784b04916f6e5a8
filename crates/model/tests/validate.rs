//! The simulator against the analytic model: exponential think times, a FIFO
//! lock, no hand-off cost, 1..=32 cores, fixed seed. Both must agree within
//! 2 % — for constant service against the exact M/D/1//n solution, and for
//! exponential service against the seeds' M/M/1//n formula.

use granule_model::{validate, ServiceLaw, Validation};

#[test]
fn simulator_agrees_with_the_analytic_model_within_two_percent() {
    let v = Validation { completions: 100_000, ..Validation::default() };
    assert_eq!(v.cores, (1..=32).collect::<Vec<_>>());
    let rows = validate(&v).unwrap();
    assert_eq!(rows.len(), 64);
    for r in &rows {
        assert!(r.within, "{r:?}");
        assert!(r.rel_error.abs() <= 0.02, "{r:?}");
        // The interval is honest: the analytic value is inside a generous
        // multiple of it.
        assert!((r.simulated - r.analytic).abs() <= 4.0 * r.ci95.unwrap() + 1e-3 * r.analytic, "{r:?}");
        assert!((r.simulated_queue - r.analytic_queue).abs() <= 0.05 * r.analytic_queue + 0.02, "{r:?}");
    }
}

#[test]
fn the_seeds_formula_misses_constant_service_near_the_knee() {
    // What the comparison shows about the seeds' model: exact for
    // exponential service, a few per cent low for a constant critical
    // section around the knee (n* = 11 here), exact again at 1 core and far
    // past the knee.
    let v = Validation { cores: vec![1, 11, 32], completions: 20_000, ..Validation::default() };
    let rows = validate(&v).unwrap();
    let row = |n: usize, law| rows.iter().find(|r| r.cores == n && r.law == law).unwrap();
    for n in [1, 11, 32] {
        assert!(row(n, ServiceLaw::Exponential).seeds_rel_error.abs() < 1e-9);
    }
    assert!(row(1, ServiceLaw::Constant).seeds_rel_error.abs() < 1e-9);
    assert!(row(11, ServiceLaw::Constant).seeds_rel_error < -0.03, "{:?}", row(11, ServiceLaw::Constant));
    assert!(row(32, ServiceLaw::Constant).seeds_rel_error.abs() < 1e-3);
}

#[test]
fn a_tolerance_too_tight_for_the_noise_fails_rows() {
    // The check can fail: with few completions, a tolerance far below the
    // simulation's noise is missed somewhere.
    let v = Validation { completions: 2_000, tolerance: 1e-6, ..Validation::default() };
    let rows = validate(&v).unwrap();
    assert!(rows.iter().any(|r| !r.within));
    assert!(validate(&Validation { cores: vec![], ..Validation::default() }).is_err());
    assert!(validate(&Validation { s: 0.0, ..Validation::default() }).is_err());
}
