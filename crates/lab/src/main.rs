//! `granule`: the experiments on kernel locking, as commands.
//!
//! Every command measures, prints a human table by default, and with
//! `--format json|csv` prints machine-readable records headed by a machine
//! record. See the README for each command's usage.

use clap::error::ErrorKind;
use clap::{Parser, Subcommand};

mod bounds;
mod cmd;
mod csv;
mod fields;
mod input;
mod limits;
mod machine;
mod output;
mod pin;
mod plot;
mod progress;
mod regimes;
mod stats;
mod suite;
mod topology;
mod typed;

/// Measure how coarse kernel locking can be.
#[derive(Debug, Parser)]
#[command(name = "granule", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

/// What `granule` alone prints: where a new user starts.
const START_HERE: &str = "\
granule: how coarse can kernel locking be on this machine?

Start here:
    granule suite          (from a checkout: cargo run --release -- suite)

It runs every experiment on this machine (a few minutes with the default
quick profile), draws the lock model from what it measured and writes an
HTML report with its data beside it:
    ./report/index.html     the report: open it in a browser
    ./report/results.jsonl  every measurement, one JSON record a line
(--out DIR writes them to DIR instead.)

Every other command, and each one's options: granule --help
";

#[derive(Debug, Subcommand)]
enum Command {
    /// The main job: every experiment on this machine, the model fitted to
    /// them, predictions for larger machines, and an HTML report.
    Suite(cmd::suite::Args),
    /// The suite's report again from results.jsonl files, without running
    /// anything; several files: one page comparing the machines.
    Report(cmd::report::Args),
    /// This machine's physical limits: CPU, cores, TSC frequency, RTM,
    /// core-to-core cache-line latency and the cost of atomic instructions.
    Info(cmd::info::Args),
    /// Uncontended and contended cost of every lock, with std, parking_lot
    /// and spin mutexes as baselines in the same run.
    Locks(cmd::locks::Args),
    /// The Synthesis Table 1: lock-free objects with no sync, 0 and 1 retry.
    Quaject(cmd::quaject::Args),
    /// The Synthesis kernel's Tables 2-4 (context switch, thread and memory
    /// operations) under every regime, beside the seed's 68030 figures.
    Synthesis(cmd::synthesis::Args),
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
    /// The FreeBSD subsystem study (seed 003): a build load on the sysctl
    /// registry and the kernel log under each locking policy and regime,
    /// with throughput and the lock profiler's tables.
    Subsystems(cmd::subsystems::Args),
    /// Random concurrent programs under every regime, checked for kernel
    /// invariants, message conservation, linearizability and determinism.
    Verify(cmd::verify::Args),
    /// Serve the KV system on the kernel to real Redis clients over TCP on
    /// 127.0.0.1.
    #[command(after_help = "Commands served: strings, hashes, lists, sets and sorted sets; keys, expiry and \
                            SCAN in 16 databases; MULTI/EXEC with WATCH; pub/sub; and the connection and \
                            server commands clients send (HELLO, CLIENT, INFO, COMMAND, CONFIG). \
                            `redis-cli -p PORT COMMAND LIST` lists every one; docs/serve.md says where they \
                            differ from Redis 7.0. Scripting (EVAL, FUNCTION) is not supported.")]
    Serve(cmd::serve::Args),
    /// `granule serve` against redis-server, side by side, both driven by
    /// redis-benchmark: requests per second and per server CPU-second.
    ServeBench(cmd::serve_bench::Args),
    /// The queueing model of a big lock: predict, fit measurements,
    /// simulate lock hand-off on a topology, validate the simulator.
    Model(cmd::model::Args),
    /// The kernel on bare-metal x86-64: boot it under QEMU (a functional
    /// check, timings meaningless) or make a GRUB ISO for real hardware.
    Metal(cmd::metal::Args),
}

/// A usage error in one line: clap's message without its blank lines, usage
/// block and `--help` tip (the caller prints the tip once, on the same line).
fn one_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let mut parts: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if !line.is_empty() {
            parts.push(line.strip_prefix("error: ").unwrap_or(line));
        }
    }
    parts.join(" ")
}

fn main() -> std::process::ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
            _ => {
                eprintln!("granule: error: {} (see --help)", one_line(&e));
                return std::process::ExitCode::from(2);
            }
        },
    };
    let Some(command) = &cli.command else {
        print!("{START_HERE}");
        return std::process::ExitCode::SUCCESS;
    };
    pin::place_kernel_cores();
    let result = match command {
        Command::Suite(a) => cmd::suite::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Info(a) => cmd::info::run(a),
        Command::Locks(a) => cmd::locks::run(a),
        Command::Quaject(a) => cmd::quaject::run(a),
        Command::Ipc(a) => cmd::ipc::run(a),
        Command::Synthesis(a) => cmd::synthesis::run(a),
        Command::Scale(a) => cmd::scale::run(a),
        Command::Kv(a) => cmd::kv::run(a),
        Command::Subsystems(a) => cmd::subsystems::run(a),
        Command::Verify(a) => cmd::verify::run(a),
        Command::Serve(a) => cmd::serve::run(a),
        Command::ServeBench(a) => cmd::serve_bench::run(a),
        Command::Model(a) => cmd::model::run(a),
        Command::Metal(a) => cmd::metal::run(a),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // `{:#}` prints the whole context chain, never a backtrace; a
            // message quoting a child's output is folded onto the same line.
            let chain = format!("{e:#}");
            let line: Vec<&str> = chain.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            eprintln!("granule: error: {}", line.join(" "));
            std::process::ExitCode::FAILURE
        }
    }
}
