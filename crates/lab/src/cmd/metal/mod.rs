//! `granule metal`: the kernel on bare-metal x86-64 (`crates/metal`,
//! `docs/metal.md`) from the lab's command line.
//!
//! * `run` builds the image as the source tree stands (cargo, into
//!   `target/metal`), boots it under QEMU's software emulation (TCG) on
//!   `--cores` emulated CPUs, reads its serial console, and prints the
//!   `metal_pingpong` lines it wrote as records, like every other command.
//!   The run checks behaviour (every reply, the kernel's invariants); its
//!   timings mean nothing, and it says so.
//! * `image` builds the image and a GRUB rescue ISO whose menu entry boots
//!   it with the chosen command line, for real hardware, where the numbers
//!   mean something.
//!
//! The image's command line (`crates/metal/src/experiment.rs`) is
//! `regime=… rounds=… cores=… check=every|end`; [`command_line`] writes it.

mod cargo;
mod derive;
mod iso;
mod qemu;
pub(crate) mod record;
mod run;

use anyhow::Result;
use clap::{Args as ClapArgs, Subcommand, ValueEnum};

use self::record::MetalPingpongRecord;
use crate::output::Record;

/// Options of `granule metal`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    pub command: MetalCommand,
}

/// The `granule metal` subcommands.
#[derive(Clone, Debug, Subcommand)]
pub enum MetalCommand {
    /// Build the bare-metal image and boot it under QEMU (TCG, -smp N): one
    /// ping-pong pair per core under each regime, every reply checked,
    /// `metal_pingpong` records. A functional check: timings under QEMU's
    /// emulation mean nothing.
    Run(run::Args),
    /// Build the bare-metal image and a GRUB rescue ISO that boots it with
    /// this command line, to run on real hardware (results on the serial
    /// port).
    Image(iso::Args),
}

/// Run `granule metal …`.
pub fn run(a: &Args) -> Result<()> {
    match &a.command {
        MetalCommand::Run(a) => run::run(a),
        MetalCommand::Image(a) => iso::run(a),
    }
}

impl Record for MetalPingpongRecord {
    const KIND: &'static str = "metal_pingpong";
}

/// The most cores the image starts (`crates/metal`'s `MAX_CORES`).
pub const MAX_CORES: u64 = 16;

/// The most round trips per core any command line asks for.
pub const MAX_ROUNDS: u64 = 1_000_000_000;

/// The regimes the image runs for `regime=all`, in its order: every
/// experiment regime but `rtm`, which needs Intel RTM and is only run when
/// named.
pub const ALL: &[&str] =
    &crate::regimes::without::<{ crate::regimes::REGIMES.len() - 1 }>(crate::regimes::REGIMES, &["rtm"]);

/// The value parser of `--regime`: one regime of
/// [`crate::regimes::REGIMES`], each listed with its line from
/// [`crate::regimes::HELP`], or `all` ([`ALL`]: every one but `rtm`).
pub fn regime_parser() -> clap::builder::PossibleValuesParser {
    let about = |name: &str| crate::regimes::HELP.iter().find(|(n, _)| *n == name).map_or("", |(_, a)| *a);
    let values = crate::regimes::REGIMES
        .iter()
        .map(|&n| clap::builder::PossibleValue::new(n).help(about(n)))
        .chain([clap::builder::PossibleValue::new("all").help("every regime above but rtm, one after another")]);
    clap::builder::PossibleValuesParser::new(values)
}

/// When the image runs the kernel's invariant checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Check {
    /// After every kernel entry (on more than one core under the lock
    /// regimes only: `none` and `lockfree` do not exclude a checker).
    Every,
    /// Once at the end of each regime's run.
    End,
}

impl Check {
    /// The word on the image's command line.
    pub fn word(self) -> &'static str {
        match self {
            Check::Every => "every",
            Check::End => "end",
        }
    }
}

/// What the image runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Experiment {
    /// The image's own ping-pong pair on every core, replies checked:
    /// `metal_pingpong` records.
    Pingpong,
    /// granule-user's ping-pong (the program `granule ipc` runs) on core 0,
    /// `--runs` fresh kernels per regime: `ipc` records.
    Ipc,
    /// granule-user's ping-pong on every core, the servers busy `--delay`
    /// cycles (mean) between calls, `--runs` per regime: `scale` records.
    Scale,
}

/// Which experiment the image runs, and its repetitions and delay.
#[derive(Clone, Debug, ClapArgs)]
pub struct ExperimentArgs {
    /// The experiment.
    #[arg(long, value_enum, default_value_t = Experiment::Pingpong)]
    pub experiment: Experiment,
    /// `ipc` and `scale`: runs per regime, each on a freshly booted kernel,
    /// 1..=100.
    #[arg(long, default_value_t = 3, value_parser = crate::bounds::int::<u64>(1, 100))]
    pub runs: u64,
    /// `scale`: the servers' mean exponential delay between calls, cycles,
    /// 0..=10^9.
    #[arg(long, default_value_t = 0, value_parser = crate::bounds::int::<u64>(0, 1_000_000_000))]
    pub delay: u64,
}

impl ExperimentArgs {
    /// The image's command-line words for it (none for `pingpong`, the
    /// image's default).
    pub fn words(&self) -> String {
        match self.experiment {
            Experiment::Pingpong => String::new(),
            Experiment::Ipc => format!(" experiment=ipc runs={}", self.runs),
            Experiment::Scale => format!(" experiment=scale runs={} delay={}", self.runs, self.delay),
        }
    }
}

/// The image's command line: `regime=… rounds=…`, then `cores=…` and
/// `check=…` where given (the image's defaults: every core the ACPI tables
/// list, at most 16; the checker at the end).
pub fn command_line(regime: &str, rounds: u64, cores: Option<usize>, check: Option<Check>) -> String {
    let mut line = format!("regime={regime} rounds={rounds}");
    if let Some(c) = cores {
        line.push_str(&format!(" cores={c}"));
    }
    if let Some(c) = check {
        line.push_str(&format!(" check={}", c.word()));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_the_images_list() {
        let image = include_str!("../../../../metal/src/experiment.rs");
        let list = ALL.iter().map(|r| format!("{r:?}")).collect::<Vec<_>>().join(", ");
        let line = format!("const ALL: [&str; {}] = [{list}];", ALL.len());
        assert!(image.contains(&line), "crates/metal/src/experiment.rs has no `{line}`");
    }

    #[test]
    fn the_command_line_has_what_was_given() {
        assert_eq!(command_line("all", 10_000, None, None), "regime=all rounds=10000");
        assert_eq!(command_line("bkl", 50, Some(2), Some(Check::Every)), "regime=bkl rounds=50 cores=2 check=every");
        assert_eq!(command_line("rtm", 1, None, Some(Check::End)), "regime=rtm rounds=1 check=end");
    }
}
