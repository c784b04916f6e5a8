//! `granule`: the experiments on kernel locking, as commands.
//!
//! Every command measures, prints a human table by default, and with
//! `--format json|csv` prints machine-readable records headed by a machine
//! record. See the README for each command's usage.

use clap::{Parser, Subcommand};

mod cmd;
mod limits;
mod machine;
mod output;
mod pin;
mod plot;
mod progress;
mod regimes;
mod stats;
mod suite;
mod verify;

/// Measure how coarse kernel locking can be.
#[derive(Debug, Parser)]
#[command(name = "granule", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// This machine's physical limits: CPU, cores, TSC frequency, RTM,
    /// core-to-core cache-line latency and the cost of atomic instructions.
    Info(cmd::info::Args),
    /// Uncontended and contended cost of every lock, with std, parking_lot
    /// and spin mutexes as baselines in the same run.
    Locks(cmd::locks::Args),
    /// The Synthesis Table 1: lock-free objects with no sync, 0 and 1 retry.
    Quaject(cmd::quaject::Args),
    /// Single-core IPC ping-pong: round-trip cost of every kernel regime and
    /// its overhead over `none`.
    Ipc(cmd::ipc::Args),
    /// Multicore ping-pong: one independent pair per core, total round trips
    /// per second and utilisation for each regime, core count and delay.
    Scale(cmd::scale::Args),
    /// The seeds' Redis/YCSB macrobenchmark on the kernel (driver, network
    /// stacks, KV servers, load clients) per regime, beside real Redis on
    /// Linux with --linux.
    Kv(cmd::kv::Args),
    /// Random concurrent programs under every regime, checked for kernel
    /// invariants, message conservation, linearizability and determinism.
    Verify(cmd::verify::Args),
    /// Serve the KV system on the kernel to real Redis clients over TCP on
    /// 127.0.0.1.
    Serve(cmd::serve::Args),
    /// `granule serve` against redis-server, side by side, both driven by
    /// redis-benchmark: requests per second and per server CPU-second.
    ServeBench(cmd::serve_bench::Args),
    /// The queueing model of a big lock: predict, fit measurements,
    /// simulate lock hand-off on a topology, validate the simulator.
    Model(cmd::model::Args),
    /// The main job: every experiment on this machine, the model fitted to
    /// them, predictions for larger machines, and an HTML report.
    Suite(cmd::suite::Args),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Info(a) => cmd::info::run(a),
        Command::Locks(a) => cmd::locks::run(a),
        Command::Quaject(a) => cmd::quaject::run(a),
        Command::Ipc(a) => cmd::ipc::run(a),
        Command::Scale(a) => cmd::scale::run(a),
        Command::Kv(a) => cmd::kv::run(a),
        Command::Verify(a) => cmd::verify::run(a),
        Command::Serve(a) => cmd::serve::run(a),
        Command::ServeBench(a) => cmd::serve_bench::run(a),
        Command::Model(a) => cmd::model::run(a),
        Command::Suite(a) => cmd::suite::run(a),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // `{:#}` prints the whole context chain on one line, never a backtrace.
            eprintln!("granule: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
