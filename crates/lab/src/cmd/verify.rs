//! `granule verify`: random concurrent programs under every regime, checked
//! for kernel invariants, message conservation, linearizability of small
//! histories against a sequential oracle, and single-core determinism. The
//! engine is the test platform's (`granule_verify`, `docs/verify.md`); this
//! is its command line, progress bar and records.
//!
//! Program `n` of a run is generated from seed `--seed + n`, so any one is
//! reproduced with `--seed <its seed> --programs 1`. A violation is reported
//! on stderr with that command and a minimised program, and is a
//! `verify_violation` record beside the others; the command then fails
//! (exit status 1) after printing its records.

pub(crate) mod records;

use std::borrow::Cow;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use clap::Args as ClapArgs;
use serde_json::{Map, Value};

use granule_verify::driver::RunOptions;
use granule_verify::generate::generate;
use granule_verify::program::{Program, Shape};
use granule_verify::regimes::{kind, Kind, REGIMES};
use granule_verify::shrink::{shrink, Budget};
use granule_verify::{check_program, still_fails, Check, Finding, Options, Stats};

use self::records::{VerifyRecord, VerifySummaryRecord, VerifyViolationRecord};
use crate::machine::Machine;
use crate::output::{emit, Record};
use crate::progress;
use crate::regimes::{runnable, select_from};

/// Options of `granule verify`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Regimes to verify (comma-separated), or all (`none` runs the
    /// single-core programs only).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "all",
        value_parser = crate::regimes::parser(REGIMES, &[], true)
    )]
    pub regimes: Vec<String>,
    /// Cores of the concurrent programs (single-core programs use one),
    /// 1..=8. More cores than CPUs is allowed here: every run is bounded by
    /// --run-seconds, and preempted cores widen the interleavings checked.
    #[arg(long, default_value_t = 2, value_parser = crate::bounds::int::<usize>(1, MAX_CORES as u64))]
    pub cores: usize,
    /// Programs to generate and check, 1..=10^9.
    #[arg(long, default_value_t = 200, value_parser = crate::bounds::int::<u64>(1, 1_000_000_000))]
    pub programs: u64,
    /// Seed of the first program (program `n` uses `seed + n`, wrapping),
    /// any 64-bit unsigned integer.
    #[arg(long, default_value_t = 1, value_parser = crate::bounds::any_u64)]
    pub seed: u64,
    /// Widen race windows: random delays, ticks and preemption points in
    /// every core, and the regimes' own fault injection (forced RTM aborts,
    /// delays while object locks are held) where they have it.
    #[arg(long)]
    pub fault_injection: bool,
    /// Wall-time bound of one run, in seconds (0 < s ≤ 3600).
    #[arg(long, default_value_t = 10.0, value_parser = crate::bounds::seconds())]
    pub run_seconds: f64,
    /// Minimise at most this many failing programs (the others are only
    /// reported with their seed), 0..=1000.
    #[arg(long, default_value_t = 3, value_parser = crate::bounds::int::<usize>(0, 1000))]
    pub shrink: usize,
    /// Print every program and every run's history (each system call with
    /// its real-time interval and result) on stderr.
    #[arg(long)]
    pub dump: bool,
    /// Test the checker: drop one received message from every run's log.
    #[arg(long, hide = true)]
    pub inject_bug: bool,
}

/// Most cores a verified program may have (one OS thread each).
const MAX_CORES: usize = 8;

/// `--regimes` validated: `all`, or known names without duplicates.
fn selected(names: &[String]) -> Result<Vec<&'static str>> {
    select_from(REGIMES, names)
}

/// Run `granule verify`.
pub fn run(a: &Args) -> Result<()> {
    let wanted = selected(&a.regimes)?;
    let mut skipped = Vec::new();
    let regimes = runnable(&wanted, &mut skipped);
    for rec in &skipped {
        let field = |f: &str| rec.get(f).and_then(Value::as_str).unwrap_or("?").to_string();
        eprintln!("skipped {}: {}", field("regime"), field("reason"));
    }
    if regimes.is_empty() {
        bail!("none of the selected regimes can run on this machine");
    }
    // Bounded by its parser (bounds::seconds).
    let wall = Duration::from_secs_f64(a.run_seconds);
    let opts = Options {
        run: RunOptions { fault_injection: a.fault_injection, wall },
        inject_bug: a.inject_bug,
        dump: a.dump,
    };
    let machine = Machine::detect();
    let started = Instant::now();
    let mut totals: Vec<Stats> = vec![Stats::default(); regimes.len()];
    // Small, single-core, large.
    let mut shapes = [0u64; 3];
    let (mut failing, mut shrunk, mut stopped) = (0u64, 0usize, None);
    let mut violations = Vec::new();
    let pb = progress::bar(a.programs, "verify");
    for n in 0..a.programs {
        let seed = a.seed.wrapping_add(n);
        let prog = generate(seed, a.cores);
        shapes[match prog.shape {
            Shape::Small => 0,
            Shape::SingleCore => 1,
            Shape::Large => 2,
        }] += 1;
        pb.set_message(format!("seed {seed}"));
        let res = check_program(&prog, &regimes, &opts);
        for (r, s) in &res.stats {
            if let Some(i) = regimes.iter().position(|x| x == r) {
                totals[i].add(s);
            }
        }
        if !res.findings.is_empty() {
            failing += 1;
            let minimise = shrunk < a.shrink && !res.hung;
            shrunk += minimise as usize;
            let again = reproduce(a, &prog, &res.findings);
            violations.extend(res.findings.iter().map(|f| violation_record(&prog, f, &again).to_map()));
            pb.suspend(|| report(&prog, &res.findings, &again, minimise, &opts));
        }
        if res.hung {
            stopped = Some(seed);
            break;
        }
        pb.inc(1);
    }
    pb.finish_and_clear();

    let mut records = vec![machine.record()];
    records.extend(skipped);
    for (r, s) in regimes.iter().zip(&totals) {
        records.push(regime_record(r, s));
    }
    records.extend(violations);
    let sum = VerifySummaryRecord {
        seed: a.seed,
        cores: a.cores,
        programs: shapes.iter().sum(),
        small_programs: shapes[0],
        single_core_programs: shapes[1],
        large_programs: shapes[2],
        fault_injection: a.fault_injection,
        failing_programs: failing,
        violations: totals.iter().map(|s| s.violations).sum(),
        seconds: started.elapsed().as_secs_f64(),
    };
    records.push(sum.to_map());
    emit(a.common.format, &records, "")?;
    if let Some(seed) = stopped {
        bail!("program seed {seed}: a core never returned from the kernel; verification stopped there");
    }
    if failing > 0 {
        bail!("{failing} program(s) violated a check (reported above)");
    }
    Ok(())
}

fn regime_record(r: &str, s: &Stats) -> Map<String, Value> {
    let how = match kind(r) {
        Some(Kind::SingleCoreOnly) => "single-core programs, every entry",
        Some(Kind::StopsWorld) => "every entry",
        Some(Kind::Quiescent) => "quiescent points",
        None => "",
    };
    VerifyRecord::new(r, how, s).to_map()
}

/// The name of a program's shape in reports and records.
fn shape_name(s: Shape) -> &'static str {
    match s {
        Shape::Small => "small",
        Shape::SingleCore => "single-core",
        Shape::Large => "large",
    }
}

/// The command that runs `prog` alone under the regimes of its `findings`.
fn reproduce(a: &Args, prog: &Program, findings: &[Finding]) -> String {
    let mut regimes: Vec<&str> = findings.iter().flat_map(|f| f.reference.into_iter().chain([f.regime])).collect();
    regimes.dedup();
    format!(
        "granule verify --regimes {} --cores {} --seed {} --programs 1{}{}",
        regimes.join(","),
        a.cores,
        prog.seed,
        if a.fault_injection { " --fault-injection" } else { "" },
        if a.inject_bug { " --inject-bug" } else { "" }
    )
}

/// The record of one violation `f` of `prog`, which `again` reproduces.
fn violation_record(prog: &Program, f: &Finding, again: &str) -> VerifyViolationRecord {
    VerifyViolationRecord {
        seed: prog.seed,
        cores: prog.cores,
        shape: Cow::Borrowed(shape_name(prog.shape)),
        regime: f.regime.to_owned(),
        reference: f.reference.map(str::to_owned),
        check: Cow::Borrowed(f.violation.check.name()),
        detail: f.violation.detail.clone(),
        reproduce: again.to_owned(),
    }
}

/// Print a failing program's report on stderr: every violation, the command
/// `again` that reproduces it, and (if `minimise`) the smallest program
/// found that still fails the first violation's check.
fn report(prog: &Program, findings: &[Finding], again: &str, minimise: bool, opts: &Options) {
    let first = &findings[0];
    eprintln!(
        "granule verify: VIOLATION in program seed {} ({} core{}, {}):",
        prog.seed,
        prog.cores,
        if prog.cores == 1 { "" } else { "s" },
        shape_name(prog.shape)
    );
    for f in findings {
        eprintln!("  under {}: {}", f.regime, f.violation);
    }
    eprintln!("  reproduce: {again}");
    let shown = if minimise && first.violation.check != Check::Crash {
        let check = first.violation.check;
        let reference = first.reference;
        let budget = Budget { candidates: 150, time: Duration::from_secs(30) };
        let s = shrink(prog, budget, |p| still_fails(p, first.regime, reference, check, opts, 3));
        eprintln!(
            "  minimal reproduction ({} thread(s) / {} operation(s) shrunk to {} / {} in {} tries; still fails \
             `{}` under {}):",
            prog.threads.len(),
            prog.total_ops(),
            s.program.threads.len(),
            s.program.total_ops(),
            s.tried,
            check.name(),
            first.regime
        );
        s.program
    } else {
        eprintln!("  program:");
        prog.clone()
    };
    for line in shown.to_string().lines() {
        eprintln!("    {line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_regime_has_a_kind_and_selection_works() {
        for r in REGIMES {
            assert!(kind(r).is_some());
        }
        assert_eq!(selected(&["all".into()]).unwrap(), REGIMES);
        assert_eq!(selected(&["bkl".into(), "bkl".into()]).unwrap(), ["bkl"]);
        let e = selected(&["nope".into()]).unwrap_err().to_string();
        assert!(e.contains("unknown regime `nope`") && e.contains("bkl-mcs"), "{e}");
    }
}
