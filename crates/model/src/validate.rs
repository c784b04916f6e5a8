//! The simulator checked against the analytic model, where both must agree:
//! exponential think times, one FIFO lock, no hand-off cost.
//!
//! For every core count and service law the simulated throughput is compared
//! with the exact analytic throughput for that law ([`FiniteSource`]: the
//! seeds' M/M/1//n for exponential service, M/D/1//n for constant service).
//! The seeds' formula is reported beside it for both laws, so the size of its
//! error for a constant critical section can be seen. A row passes when the
//! relative error is within the tolerance.

use crate::analytic::{FiniteSource, Repairman};
use crate::dist::{Dist, ServiceLaw};
use crate::error::{positive, Error};
use crate::sim::{simulate, Config, LockKind};
use crate::topology::Topology;

/// What to compare.
#[derive(Clone, Debug, PartialEq)]
pub struct Validation {
    /// Mean service time.
    pub s: f64,
    /// Mean (exponential) think time.
    pub a: f64,
    /// Core counts.
    pub cores: Vec<usize>,
    /// Service laws to simulate.
    pub laws: Vec<ServiceLaw>,
    /// Measured completions per simulation (10 % more are discarded first).
    pub completions: u64,
    /// Seed of every simulation.
    pub seed: u64,
    /// Largest relative error that passes.
    pub tolerance: f64,
}

impl Default for Validation {
    /// `s` = 100, `a` = 1000 (knee at 11 cores), 1..=32 cores, constant and
    /// exponential service, 200 000 completions, seed 1, 2 %.
    fn default() -> Self {
        Self {
            s: 100.0,
            a: 1000.0,
            cores: (1..=32).collect(),
            laws: vec![ServiceLaw::Constant, ServiceLaw::Exponential],
            completions: 200_000,
            seed: 1,
            tolerance: 0.02,
        }
    }
}

/// One comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Cores.
    pub cores: usize,
    /// The simulated service law.
    pub law: ServiceLaw,
    /// The exact analytic throughput for this law.
    pub analytic: f64,
    /// The seeds' M/M/1//n throughput (exact only for exponential service).
    pub seeds_model: f64,
    /// The simulated throughput.
    pub simulated: f64,
    /// Half-width of the simulated throughput's 95 % interval.
    pub ci95: Option<f64>,
    /// `(simulated − analytic)/analytic`.
    pub rel_error: f64,
    /// `(seeds_model − analytic)/analytic`: what the seeds' formula misses.
    pub seeds_rel_error: f64,
    /// The analytic mean number of cores waiting or holding.
    pub analytic_queue: f64,
    /// The simulated mean number of cores waiting or holding.
    pub simulated_queue: f64,
    /// `|rel_error| ≤ tolerance`.
    pub within: bool,
}

/// Run the comparison.
pub fn validate(v: &Validation) -> Result<Vec<Row>, Error> {
    positive("s", v.s)?;
    positive("a", v.a)?;
    positive("the tolerance", v.tolerance)?;
    let n_max = v.cores.iter().copied().max().unwrap_or(0);
    if n_max == 0 {
        return Err(Error::Invalid("validation needs core counts ≥ 1".into()));
    }
    let topo = Topology::uniform(n_max, 0.0)?;
    let mut rows = Vec::with_capacity(v.cores.len() * v.laws.len());
    for &law in &v.laws {
        for &n in &v.cores {
            let exact = FiniteSource::new(n, v.s, v.a, law)?.solve();
            let seeds = Repairman::new(n, v.s, v.a)?.solve().throughput;
            let mut cfg = Config::new(n, Dist::exponential(v.a)?, Dist::of_law(law, v.s)?, LockKind::Queue);
            cfg.completions = v.completions;
            cfg.warmup = v.completions / 10;
            cfg.seed = v.seed;
            let o = simulate(&cfg, &topo)?;
            let rel = (o.throughput - exact.throughput) / exact.throughput;
            rows.push(Row {
                cores: n,
                law,
                analytic: exact.throughput,
                seeds_model: seeds,
                simulated: o.throughput,
                ci95: o.throughput_ci95,
                rel_error: rel,
                seeds_rel_error: (seeds - exact.throughput) / exact.throughput,
                analytic_queue: exact.queue_length,
                simulated_queue: o.queue_length,
                within: rel.abs() <= v.tolerance,
            });
        }
    }
    Ok(rows)
}
