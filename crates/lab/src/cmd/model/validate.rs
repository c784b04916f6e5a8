//! `granule model validate`: the simulator against the analytic model where
//! the two must agree — exponential user delays, one FIFO lock, zero
//! hand-off cost — for every core count and service law, with a fixed seed.
//!
//! Per (service law, cores) one `model_validate` record: the exact analytic
//! throughput for that law (`analytic`: M/M/1//n for exp, M/D/1//n for
//! const), the simulated one with its 95 % interval, their relative error,
//! and the seeds' M/M/1//n formula with its own error against the exact
//! value (zero for exp; for a constant critical section it shows what the
//! seeds' formula misses). A `model_validate_summary` record closes; the
//! command exits non-zero if any row is beyond `--tolerance`.

use std::borrow::Cow;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args as ClapArgs;
use granule_model::{validate, Row, ServiceLaw, Validation};
use serde::{Deserialize, Serialize};

use super::Law;
use crate::bounds::Counts;
use crate::machine::Machine;
use crate::output::{emit, Record};
use crate::plot::{Chart, Figure, Series};

/// Options of `granule model validate`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub common: crate::cmd::Common,
    /// Mean service time s (cycles, 0 < s ≤ 10^12).
    #[arg(long, default_value_t = 100.0, value_parser = crate::bounds::positive_cycles())]
    pub service: f64,
    /// Mean (exponential) user delay a (cycles, 0 < a ≤ 10^12).
    #[arg(long, default_value_t = 1000.0, value_parser = crate::bounds::positive_cycles())]
    pub delay: f64,
    /// Core counts: a range `1..N` or a list, each 1..=4096.
    #[arg(long, default_value = "1..32", value_parser = crate::bounds::counts(super::MAX_MODEL_CORES))]
    pub cores: Counts,
    /// Service laws to simulate (comma-separated): const, exp.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "const,exp")]
    pub service_dist: Vec<Law>,
    /// Critical sections measured per simulation, 1000..=10^8.
    #[arg(long, default_value_t = 200_000, value_parser = crate::bounds::int::<u64>(1000, super::MAX_COMPLETIONS))]
    pub completions: u64,
    /// Seed of every simulation (any 64-bit unsigned integer).
    #[arg(long, default_value_t = 1, value_parser = crate::bounds::any_u64)]
    pub seed: u64,
    /// Largest relative error that passes (0 < e ≤ 1).
    #[arg(long, default_value_t = 0.02, value_parser = crate::bounds::real(crate::bounds::Low::Open(0.0), 1.0, "a relative error"))]
    pub tolerance: f64,
    /// Write an SVG plot (analytic lines, simulated dots) to this file.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

/// Run `granule model validate`.
pub fn run(a: &Args) -> Result<()> {
    // Every number is bounded by its parser; the core list is checked here.
    let v = Validation {
        s: a.service,
        a: a.delay,
        cores: a.cores.0.clone(),
        laws: a.service_dist.iter().map(|&l| l.into()).collect(),
        completions: a.completions,
        seed: a.seed,
        tolerance: a.tolerance,
    };
    let rows = validate(&v)?;
    let mut records = vec![Machine::detect().record()];
    records.extend(rows.iter().map(|r| ValidateRecord::from(r).to_map()));
    let failed = rows.iter().filter(|r| !r.within).count();
    let worst = rows.iter().map(|r| r.rel_error.abs()).fold(0.0, f64::max);
    let sum = ValidateSummary {
        service: v.s,
        delay: v.a,
        rows: rows.len(),
        failed,
        max_abs_rel_error: worst,
        tolerance: v.tolerance,
        seed: v.seed,
        completions: v.completions,
        passed: failed == 0,
    };
    records.push(sum.to_map());
    if let Some(path) = &a.plot {
        let mut chart = Chart {
            title: format!("simulator vs analytic model: s = {}, a = {}, no hand-off", v.s, v.a),
            x_label: "cores".into(),
            y_label: "critical sections per cycle".into(),
            series: Vec::new(),
        };
        for (i, &law) in v.laws.iter().enumerate() {
            let of = |f: fn(&granule_model::Row) -> f64| {
                rows.iter().filter(|r| r.law == law).map(|r| (r.cores as f64, f(r))).collect::<Vec<_>>()
            };
            chart.series.push(Series {
                style: 0,
                label: format!("{} analytic", law.name()),
                points: of(|r| r.analytic),
                line: true,
                colour: i,
            });
            chart.series.push(Series {
                style: 0,
                label: format!("{} simulated", law.name()),
                points: of(|r| r.simulated),
                line: false,
                colour: i,
            });
        }
        if v.laws.contains(&ServiceLaw::Constant) {
            let seeds = rows.iter().filter(|r| r.law == ServiceLaw::Constant).map(|r| (r.cores as f64, r.seeds_model));
            chart.series.push(Series {
                style: 0,
                label: "seeds' M/M/1//n".into(),
                points: seeds.collect(),
                line: true,
                colour: 7,
            });
        }
        Figure { charts: vec![chart] }.write(path)?;
    }
    emit(a.common.format, &records, "")?;
    if failed > 0 {
        bail!("{failed} of {} comparisons beyond the tolerance {} (worst {:.4})", rows.len(), v.tolerance, worst);
    }
    Ok(())
}

/// `model_validate`: the simulator against the exact analytic model for
/// one (service law, cores). Throughput is critical sections per cycle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValidateRecord {
    /// Service-time law: `exp` or `const`.
    pub service_dist: Cow<'static, str>,
    /// Cores.
    pub cores: usize,
    /// The exact analytic throughput for the law.
    pub analytic: f64,
    /// The simulated throughput.
    pub simulated: f64,
    /// Half-width of its 95 % interval (null if unknown).
    pub ci95: Option<f64>,
    /// `(simulated − analytic)/analytic`.
    pub rel_error: f64,
    /// `|rel_error| ≤ --tolerance`.
    pub within: bool,
    /// The seeds' M/M/1//n throughput.
    pub seeds_model: f64,
    /// `(seeds_model − analytic)/analytic`.
    pub seeds_rel_error: f64,
    /// Analytic mean cores waiting or holding.
    pub analytic_queue: f64,
    /// Simulated mean cores waiting or holding.
    pub simulated_queue: f64,
}

impl Record for ValidateRecord {
    const KIND: &'static str = "model_validate";
}

impl From<&Row> for ValidateRecord {
    fn from(r: &Row) -> Self {
        Self {
            service_dist: Cow::Borrowed(r.law.name()),
            cores: r.cores,
            analytic: r.analytic,
            simulated: r.simulated,
            ci95: r.ci95,
            rel_error: r.rel_error,
            within: r.within,
            seeds_model: r.seeds_model,
            seeds_rel_error: r.seeds_rel_error,
            analytic_queue: r.analytic_queue,
            simulated_queue: r.simulated_queue,
        }
    }
}

/// `model_validate_summary`: the whole comparison, closing the output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValidateSummary {
    /// Mean service time s, cycles.
    pub service: f64,
    /// Mean user delay a, cycles.
    pub delay: f64,
    /// Comparisons (`model_validate` records).
    pub rows: usize,
    /// Of which beyond the tolerance.
    pub failed: usize,
    /// The largest `|rel_error|`.
    pub max_abs_rel_error: f64,
    /// Largest relative error that passes.
    pub tolerance: f64,
    /// Seed of every simulation.
    pub seed: u64,
    /// Critical sections measured per simulation.
    pub completions: u64,
    /// No comparison failed.
    pub passed: bool,
}

impl Record for ValidateSummary {
    const KIND: &'static str = "model_validate_summary";
}
