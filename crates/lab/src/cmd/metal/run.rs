//! `granule metal run`: build the image, boot it under QEMU's software
//! emulation on `--cores` CPUs, and print what its serial console reported
//! as records (machine record first, like every command): each core's
//! `metal_pingpong` line, or with `--experiment ipc` / `scale` the `ipc` and
//! `scale` records the hosted experiments write, made from those lines
//! (`derive.rs`) and marked with the platform they ran on.
//!
//! QEMU's TCG emulates every instruction, and its CPUs are host threads
//! sharing the host's CPUs: the cycles per round trip it reports mean
//! nothing, and the command says so. What the run does check is behaviour:
//! every core's pair made its round trips with every reply right, the
//! kernel's invariants held (at the end, or after every entry with
//! `--check every`), and the image reported one record per core and regime.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;
use serde_json::{Map, Value};

use super::record::MetalPingpongRecord;
use super::{cargo, command_line, derive, qemu, Check, Experiment, ExperimentArgs, ALL, MAX_CORES, MAX_ROUNDS};
use crate::machine::Machine;
use crate::output::{emit, Format, Record};
use crate::progress;
use crate::typed::read_records;

/// What every run under QEMU says about its timings.
pub const TIMINGS: &str = "timings under QEMU's software emulation (TCG) mean nothing \
     (every cycle, round-trip and per-second figure here, `platform: qemu-tcg`): this run checks behaviour \
     only. Real numbers come from real hardware (`granule metal image` makes a bootable ISO).";

/// Options of `granule metal run`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub common: crate::cmd::Common,
    /// The kernel's regime, or all (rtm needs Intel
    /// RTM, which TCG does not emulate: the image refuses it there).
    #[arg(long, default_value = "all", value_parser = super::regime_parser())]
    pub regime: String,
    /// Emulated CPUs (QEMU -smp), one ping-pong pair on each, 1..=16.
    #[arg(long, default_value_t = 2, value_parser = crate::bounds::int::<usize>(1, MAX_CORES))]
    pub cores: usize,
    /// Round trips per core, 1..=10^9.
    #[arg(long, default_value_t = 1000, value_parser = crate::bounds::int::<u64>(1, MAX_ROUNDS))]
    pub rounds: u64,
    /// When the image runs the kernel's invariant checker.
    #[arg(long, value_enum, default_value_t = Check::End)]
    pub check: Check,
    /// Give up on the boot after this many seconds, building the image
    /// not counted (0 < s ≤ 3600).
    #[arg(long, default_value_t = 600.0, value_parser = crate::bounds::seconds())]
    pub timeout: f64,
    /// Also write the serial console's whole log (every line the image
    /// printed, failed runs too) to FILE.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub experiment: ExperimentArgs,
}

/// Whether a serial line is a `metal_pingpong` record.
fn is_record(line: &str) -> bool {
    line.starts_with(&format!("{{\"record\":\"{}\"", MetalPingpongRecord::KIND))
}

/// The `metal_pingpong` records of a serial log, each read into its struct
/// (a line that does not read is an error naming it).
pub fn records(serial: &[String]) -> Result<Vec<MetalPingpongRecord>> {
    let mut parsed: Vec<(usize, Map<String, Value>)> = Vec::new();
    for (i, line) in serial.iter().enumerate().filter(|(_, l)| is_record(l)) {
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(m)) => parsed.push((i + 1, m)),
            _ => bail!("serial console line {}: not a JSON record: {line}", i + 1),
        }
    }
    let read = read_records::<MetalPingpongRecord>("serial console line", parsed.iter().map(|(n, m)| (*n, m)))?;
    Ok(read.into_iter().map(|(_, r)| r).collect())
}

/// Run `granule metal run`.
pub fn run(a: &Args) -> Result<()> {
    let qemu_version = qemu::version()?;
    let image = cargo::build()?;
    let cmdline = command_line(&a.regime, a.rounds, Some(a.cores), Some(a.check)) + &a.experiment.words();
    let regimes: Vec<&str> = if a.regime == "all" { ALL.to_vec() } else { vec![a.regime.as_str()] };
    let runs = a.experiment.runs as usize;
    let (per_regime, what) = match a.experiment.experiment {
        Experiment::Pingpong => (a.cores, format!("{} cores", a.cores)),
        Experiment::Ipc => (runs, format!("{runs} runs on core 0")),
        Experiment::Scale => (runs * a.cores, format!("{runs} runs × {} cores", a.cores)),
    };
    let expected = regimes.len() * per_regime;
    let machine = Machine::detect();
    eprintln!("granule: booting it under {qemu_version} (TCG, -smp {}) with `{cmdline}`", a.cores);
    eprintln!("granule: {TIMINGS}");
    let pb = progress::bar(expected as u64, "metal");
    pb.set_message("booting");
    let ended = qemu::boot(&image, a.cores, &cmdline, Duration::from_secs_f64(a.timeout), |line| {
        if is_record(line) {
            pb.inc(1);
        } else if let Some(status) = line.strip_prefix("granule-metal: ") {
            pb.set_message(status.to_string());
        }
    })?;
    pb.finish_and_clear();
    if let Some(path) = &a.out {
        let log: String = ended.serial.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(path, log).with_context(|| format!("--out {}: writing the serial log", path.display()))?;
        eprintln!("granule: the serial log is in {}", path.display());
    }
    outcome(&ended, a.timeout)?;
    let read = records(&ended.serial)?;
    if read.len() != expected {
        bail!(
            "the image passed but reported {} metal_pingpong records, not {expected} ({what} × {}): \
             the serial log (--out FILE) has them all",
            read.len(),
            regimes.join(", ")
        );
    }
    let mut out = vec![machine.record()];
    match a.experiment.experiment {
        Experiment::Pingpong => out.extend(read.iter().map(Record::to_map)),
        Experiment::Ipc => out.extend(derive::ipc(&read).iter().map(Record::to_map)),
        Experiment::Scale => out.extend(derive::scale(&read).iter().map(Record::to_map)),
    }
    let extra = if a.common.format == Format::Table { format!("Note: {TIMINGS}\n") } else { String::new() };
    emit(a.common.format, &out, &extra)?;
    Ok(())
}

/// The error of a run that did not pass, in one line.
fn outcome(ended: &qemu::Ended, timeout: f64) -> Result<()> {
    let last = ended.serial.iter().rev().find(|l| !l.trim().is_empty()).map_or("nothing", |l| l.as_str());
    if ended.timed_out {
        bail!(
            "the image did not finish within --timeout {timeout} s under QEMU (emulation is slow: fewer --rounds or \
             --cores, --check end, or a longer --timeout); the last serial line: {last}"
        );
    }
    match ended.status {
        Some(qemu::PASSED) => Ok(()),
        Some(qemu::FAILED) => {
            let why = qemu::failure_lines(&ended.serial);
            let why = if why.is_empty() { "it printed no reason".to_string() } else { why.join(" | ") };
            bail!("the image failed under QEMU (exit status {}): {why}", qemu::FAILED)
        }
        status => {
            let said = ended.stderr.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
            let status = status.map_or("killed by a signal".to_string(), |s| format!("exit status {s}"));
            bail!(
                "{} stopped without the image's verdict ({status}): {}; the last serial line: {last}",
                qemu::QEMU,
                if said.is_empty() { "it printed nothing on stderr" } else { &said }
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(status: Option<i32>, serial: &str) -> qemu::Ended {
        qemu::Ended {
            status,
            timed_out: false,
            serial: serial.lines().map(String::from).collect(),
            stderr: String::new(),
        }
    }

    const LINE: &str = r#"{"record":"metal_pingpong","platform":"qemu-tcg","regime":"bkl","threads":"user","cores":2,"core":1,"round_trips":100,"cycles_per_round_trip":232621081.0,"ipis":1,"ticks":3}"#;

    #[test]
    fn a_serial_record_reads_into_its_struct_and_writes_back_the_same_line() {
        let log = format!("granule-metal: 2 cores running on qemu-tcg\n{LINE}\ngranule-metal: passed\n");
        let rs = records(&ended(Some(33), &log).serial).unwrap();
        assert_eq!(rs.len(), 1);
        assert_eq!((rs[0].regime.as_str(), rs[0].core, rs[0].round_trips), ("bkl", 1, 100));
        assert_eq!(crate::output::json_lines(&[rs[0].to_map()]), format!("{LINE}\n"));
    }

    #[test]
    fn a_record_that_does_not_read_names_its_line_and_field() {
        let log = format!("banner\n{}\n", LINE.replace("\"core\":1", "\"core\":\"one\""));
        let e = records(&ended(Some(33), &log).serial).unwrap_err().to_string();
        assert!(e.contains("serial console line:2") && e.contains("`core`"), "{e}");
    }

    #[test]
    fn failures_are_one_line_with_the_images_reason() {
        let e = outcome(&ended(Some(3), "granule-metal: regime rtm refused: no RTM\ngranule-metal: FAILED\n"), 60.0);
        assert_eq!(
            e.unwrap_err().to_string(),
            "the image failed under QEMU (exit status 3): regime rtm refused: no RTM"
        );
        let mut t = ended(None, "granule-metal: 2 cores running on qemu-tcg\n");
        t.timed_out = true;
        let e = outcome(&t, 5.0).unwrap_err().to_string();
        assert!(e.contains("within --timeout 5 s") && e.ends_with("granule-metal: 2 cores running on qemu-tcg"), "{e}");
        let mut q = ended(Some(1), "");
        q.stderr = "qemu-system-x86_64: -smp 99: too many\n".into();
        let e = outcome(&q, 5.0).unwrap_err().to_string();
        assert!(e.contains("(exit status 1): qemu-system-x86_64: -smp 99: too many"), "{e}");
        assert!(outcome(&ended(Some(33), ""), 5.0).is_ok());
    }
}
