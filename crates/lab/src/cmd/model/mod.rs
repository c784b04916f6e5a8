//! `granule model`: the queueing model of a big lock (crate
//! `granule-model`) as commands.
//!
//! * `predict` — the seeds' machine-repairman model (or its exact
//!   constant-service variant) for a service time, a think time and a range
//!   of cores;
//! * `fit` — least squares of the model to measured throughput (`granule
//!   scale` output, or any `cores, throughput` records);
//! * `simulate` — the discrete-event simulator: a lock kind on a topology
//!   of core-to-core latencies;
//! * `validate` — the simulator against the analytic model where both must
//!   agree, exiting non-zero beyond the tolerance.
//!
//! Times are in cycles (any unit works if used consistently); throughput is
//! critical sections per cycle, and per second with `--ghz`.

pub mod fit;
pub mod predict;
pub mod simulate;
pub mod validate;

use anyhow::Result;
use clap::{Args as ClapArgs, Subcommand, ValueEnum};
use granule_model::ServiceLaw;

/// Options of `granule model`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    pub command: ModelCommand,
}

/// The `granule model` subcommands.
#[derive(Clone, Debug, Subcommand)]
pub enum ModelCommand {
    /// Throughput, lock utilisation and queue length predicted by the
    /// machine-repairman model for 1..N cores, and the knee n* = 1 + a/s.
    Predict(predict::Args),
    /// Fit the model's service time s and think time a to measured
    /// throughput (granule scale JSON Lines or CSV, or cores/throughput
    /// records); R², residuals, standard errors, predicted knee.
    Fit(fit::Args),
    /// Discrete-event simulation of n cores sharing a lock (clh, ticket,
    /// fine, rtm) on a topology of core-to-core hand-off latencies.
    Simulate(simulate::Args),
    /// The simulator against the analytic model (exponential think times,
    /// FIFO lock, no hand-off): both columns and the relative error; exits
    /// non-zero beyond the tolerance.
    Validate(validate::Args),
}

/// Run `granule model …`.
pub fn run(a: &Args) -> Result<()> {
    match &a.command {
        ModelCommand::Predict(a) => predict::run(a),
        ModelCommand::Fit(a) => fit::run(a),
        ModelCommand::Simulate(a) => simulate::run(a),
        ModelCommand::Validate(a) => validate::run(a),
    }
}

/// Most cores any model command computes (the analytic model is exact far
/// beyond; the simulator is bounded by its topology).
pub const MAX_MODEL_CORES: usize = 4096;

/// Most critical sections one simulated point measures.
pub const MAX_COMPLETIONS: u64 = 100_000_000;

/// A service-time law on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Law {
    /// Exponential (the seeds' M/M/1//n).
    Exp,
    /// Constant (M/D/1//n).
    Const,
}

impl From<Law> for ServiceLaw {
    fn from(l: Law) -> Self {
        match l {
            Law::Exp => ServiceLaw::Exponential,
            Law::Const => ServiceLaw::Constant,
        }
    }
}
