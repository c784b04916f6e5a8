//! `granule ipc --instructions`: the kernel's instructions per IPC round
//! trip, per regime, counted by valgrind's callgrind.
//!
//! The kernel's `roundtrip` example (`crates/kernel/examples/roundtrip.rs`)
//! drives a client and a server on one core straight through the kernel
//! (`Call` + `ReplyRecv` per round trip, no platform, no context switch).
//! Each regime runs under callgrind twice, for `--instr-short` and
//! `--instr-long` round trips:
//!
//! ```sh
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/roundtrip N REGIME
//! ```
//!
//! and the instructions per round trip are the difference of the two totals
//! (the `Collected :` line valgrind prints) over the difference of the round
//! trips, `(Ir(3000) − Ir(1000)) / 2000` by default: loading, boot, set-up
//! and printing are the same in both runs and cancel. Each regime is also
//! compared with `none` counted in the same invocation (the extra per call
//! is half the extra per round trip: a round trip is two system calls).
//!
//! Why instructions: callgrind executes the program on a simulated CPU, so
//! its count repeats to the instruction whatever the machine is doing,
//! while cycles on a shared VM drift from run to run by more than the
//! differences between the regimes. Instructions are not time (a cache miss
//! or an atomic costs more than an add); `granule ipc` without this flag
//! times the regimes. `rtm` is not in the example (nor does callgrind run
//! transactions), so it is skipped with a `regime_skipped` record. Without
//! valgrind the command fails, saying to install it: it never makes a
//! number up.

mod callgrind;
mod example;
pub(crate) mod record;

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args as ClapArgs;

use self::record::{compare_to_none, Count, IpcInstructionsRecord};
use crate::machine::Machine;
use crate::output::{emit, Format, Record};
use crate::progress;
use crate::regimes::{selected, RegimeSkipped};

/// The regimes the `roundtrip` example can run, in the registry's order:
/// every experiment regime but `rtm`.
pub const EXAMPLE_REGIMES: &[&str] =
    &crate::regimes::without::<{ crate::regimes::REGIMES.len() - 1 }>(crate::regimes::REGIMES, &["rtm"]);

/// Most round trips of one callgrind run (a million take about 20 s).
const MAX_ITERATIONS: u64 = 1_000_000;

/// The options of `granule ipc --instructions`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Options {
    /// Instead of the timed runs, count each regime's instructions per
    /// kernel-only round trip with valgrind's callgrind (the kernel's
    /// `roundtrip` example; needs valgrind).
    #[arg(long, conflicts_with_all = ["runs", "seconds", "warmup", "words", "lock_stats"])]
    pub instructions: bool,
    /// With --instructions: the `roundtrip` example to run (default: the one
    /// beside granule, target/release/examples/roundtrip, else built with
    /// cargo).
    #[arg(long, value_name = "PATH", requires = "instructions")]
    pub roundtrip_bin: Option<PathBuf>,
    /// With --instructions: round trips of the short run, 1..=1000000.
    #[arg(long, value_name = "N", default_value_t = 1000, requires = "instructions",
          value_parser = crate::bounds::int::<u64>(1, MAX_ITERATIONS))]
    pub instr_short: u64,
    /// With --instructions: round trips of the long run, 1..=1000000, more
    /// than --instr-short.
    #[arg(long, value_name = "N", default_value_t = 3000, requires = "instructions",
          value_parser = crate::bounds::int::<u64>(1, MAX_ITERATIONS))]
    pub instr_long: u64,
}

impl Record for IpcInstructionsRecord {
    const KIND: &'static str = "ipc_instructions";
}

/// Run `granule ipc --instructions`.
pub fn run(a: &super::Args) -> Result<()> {
    let o = &a.instructions;
    let (short, long) = (o.instr_short, o.instr_long);
    if long <= short {
        bail!("--instr-long ({long}) must be more than --instr-short ({short})");
    }
    let m = Machine::detect();
    let mut records = vec![m.record()];
    let mut regimes = Vec::new();
    for regime in selected(&a.regimes)? {
        if EXAMPLE_REGIMES.contains(&regime) {
            regimes.push(regime);
        } else {
            let reason = format!("the roundtrip example has no {regime} regime");
            records.push(RegimeSkipped { regime: Cow::Borrowed(regime), reason }.to_map());
        }
    }
    if regimes.is_empty() {
        bail!("none of the selected regimes is in the roundtrip example ({})", EXAMPLE_REGIMES.join(", "));
    }
    let valgrind = callgrind::valgrind_version()?;
    let bin = example::locate(o.roundtrip_bin.as_deref())?;
    let totals = count(&bin, &regimes, short, long)?;
    let mut rows = Vec::with_capacity(regimes.len());
    for (&regime, (ir_short, ir_long)) in regimes.iter().zip(totals) {
        let r = IpcInstructionsRecord::new(
            regime,
            Count { round_trips: short, ir: ir_short },
            Count { round_trips: long, ir: ir_long },
        )
        .ok_or_else(|| {
            anyhow!("{regime}: callgrind counted fewer instructions for {long} round trips ({ir_long}) than for {short} ({ir_short})")
        })?;
        rows.push(r);
    }
    compare_to_none(&mut rows);
    let extra = if a.common.format == Format::Table {
        table(&rows, short, long) + &format!("example: {}; {valgrind}\n", bin.display())
    } else {
        records.extend(rows.iter().map(Record::to_map));
        String::new()
    };
    emit(a.common.format, &records, &extra)?;
    Ok(())
}

/// Callgrind's instruction totals of every regime's short and long run, in
/// the order of `regimes`; as many runs at once as there are CPUs (the
/// counts do not depend on what else runs).
fn count(bin: &Path, regimes: &[&str], short: u64, long: u64) -> Result<Vec<(u64, u64)>> {
    let jobs: Vec<(&str, u64)> = regimes.iter().flat_map(|&r| [(r, short), (r, long)]).collect();
    let width = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pb = progress::bar(jobs.len() as u64, "ipc");
    pb.set_message("callgrind");
    let pb = &pb;
    let mut irs = Vec::with_capacity(jobs.len());
    for batch in jobs.chunks(width) {
        let done: Vec<Result<u64>> = std::thread::scope(|s| {
            let runs: Vec<_> = batch
                .iter()
                .map(|&(regime, n)| {
                    s.spawn(move || {
                        let ir = callgrind::instructions(bin, n, regime)
                            .with_context(|| format!("{regime}, {n} round trips"));
                        pb.inc(1);
                        ir
                    })
                })
                .collect();
            runs.into_iter()
                .map(|r| r.join().unwrap_or_else(|_| Err(anyhow!("a callgrind run's thread panicked"))))
                .collect()
        });
        for ir in done {
            irs.push(ir?);
        }
    }
    pb.finish_and_clear();
    Ok(irs.chunks_exact(2).map(|p| (p[0], p[1])).collect())
}

/// The human table: per regime the instructions per round trip, the extra
/// over `none` per round trip and per call, and the two totals.
fn table(rows: &[IpcInstructionsRecord], short: u64, long: u64) -> String {
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    let mut out = format!(
        "== instructions per kernel-only round trip (Call + ReplyRecv), callgrind: (Ir at {long} - Ir at {short}) / {} ==\n",
        long - short
    );
    out.push_str(&format!(
        "{:<12} {:>23} {:>15} {:>14} {:>14} {:>14}\n",
        "regime",
        "instructions/round trip",
        "extra over none",
        "extra per call",
        format!("Ir at {short}"),
        format!("Ir at {long}")
    ));
    for r in rows {
        out.push_str(&format!(
            "{:<12} {:>23.1} {:>15} {:>14} {:>14} {:>14}\n",
            r.regime,
            r.instructions_per_round_trip,
            opt(r.extra_instructions_over_none),
            opt(r.extra_instructions_per_call),
            r.ir_short,
            r.ir_long
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_shows_every_regime_against_none() {
        let rec = |regime, long_ir| {
            IpcInstructionsRecord::new(
                regime,
                Count { round_trips: 1000, ir: 5_000_000 },
                Count { round_trips: 3000, ir: long_ir },
            )
        };
        let mut rows: Vec<_> = [rec("none", 7_106_000), rec("bkl", 7_284_000)].into_iter().flatten().collect();
        compare_to_none(&mut rows);
        let t = table(&rows, 1000, 3000);
        assert!(t.contains("(Ir at 3000 - Ir at 1000) / 2000"), "{t}");
        let bkl = t.lines().find(|l| l.starts_with("bkl")).unwrap_or_default();
        let cells: Vec<&str> = bkl.split_whitespace().collect();
        assert_eq!(cells, ["bkl", "1142.0", "89.0", "44.5", "5000000", "7284000"], "{t}");
        let none = t.lines().find(|l| l.starts_with("none")).unwrap_or_default();
        assert!(none.contains("1053.0") && none.contains(" 0.0 "), "{t}");
        // Without none: dashes.
        let alone: Vec<_> = rec("bkl", 7_284_000).into_iter().collect();
        assert!(table(&alone, 1000, 3000).lines().any(|l| l.starts_with("bkl") && l.contains(" - ")));
    }

    #[test]
    fn the_example_regimes_are_the_registry_without_rtm() {
        // The regimes crates/kernel/examples/roundtrip.rs builds.
        assert_eq!(EXAMPLE_REGIMES, ["none", "bkl", "bkl-ticket", "bkl-mcs", "fine", "lockfree"]);
    }
}
