//! `granule suite`: the main job — measure this machine, fit the model,
//! predict larger machines, and write a report (see `crate::suite`).

use std::borrow::Cow;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::machine::Machine;
use crate::output::{json_lines, Record};
use crate::suite::plan::{Plan, Profile, KERNEL_MAX_CORES};
use crate::suite::records::Records;
use crate::suite::run::{run_step, StepRun};
use crate::suite::{fit_step, frontier_sim, simulate_steps, verdict, write_step};
use crate::topology::Topology;

/// What a smoke run says on the console before its conclusions, as its page
/// does.
pub const SMOKE_WARNING: &str =
    "Smoke profile: tiny durations for testing; the numbers mean nothing and so do the conclusions below.";

/// Options of `granule suite`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    /// Short windows and few runs (the default): a few minutes on 2 cores.
    #[arg(long, conflicts_with_all = ["full", "smoke"])]
    pub quick: bool,
    /// The seeds' protocol: 16 × 1 s IPC runs; 2 s warm-up + 1 s samples at
    /// every delay from 500 to 32000 cycles.
    #[arg(long, conflicts_with = "smoke")]
    pub full: bool,
    /// Tiny durations, for tests: checks that everything runs; the numbers
    /// mean nothing.
    #[arg(long)]
    pub smoke: bool,
    /// Directory for the report (created if missing; files in it are replaced).
    #[arg(long, default_value = "report")]
    pub out: PathBuf,
    /// Regimes for `ipc`, `scale` and `kv` (comma-separated), or all.
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = crate::regimes::parser(crate::regimes::REGIMES, &[], true))]
    pub regimes: Vec<String>,
    /// Print the steps, each one's estimated time and the total, and run
    /// nothing.
    #[arg(long)]
    pub plan: bool,
    /// With --plan: plan for a machine of this many CPUs (1..=4096) instead
    /// of this one (one socket per 64 CPUs, one LLC domain per 16, no SMT).
    #[arg(long, requires = "plan", value_parser = crate::bounds::int::<usize>(1, 4096))]
    pub cpus: Option<usize>,
}

impl Args {
    fn profile(&self) -> Profile {
        if self.full {
            Profile::Full
        } else if self.smoke {
            Profile::Smoke
        } else {
            Profile::Quick
        }
    }
}

/// `suite`: how the suite ran; the second record of `results.jsonl`, after
/// the machine record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteRecord<'a> {
    /// `quick`, `full` or `smoke`.
    pub profile: Cow<'static, str>,
    /// The suite's command line.
    pub command: Cow<'a, str>,
    /// Wall-clock time of the whole suite, seconds.
    pub seconds: f64,
    /// The command line of every step, in the order they ran.
    pub steps: Vec<String>,
    /// Their names (each step's records carry it as `experiment`).
    pub step_names: Vec<String>,
    /// The wall-clock seconds each took.
    pub step_seconds: Vec<f64>,
}

impl Record for SuiteRecord<'_> {
    const KIND: &'static str = "suite";
}

/// `s` seconds as `3 min 05 s`.
fn minutes(s: f64) -> String {
    let s = s.round() as u64;
    if s < 60 {
        format!("{s} s")
    } else {
        format!("{} min {:02} s", s / 60, s % 60)
    }
}

/// `granule suite --plan`: the steps, their estimates and the total.
fn print_plan(a: &Args, profile: Profile) -> Result<()> {
    let (topology, whose) = match a.cpus {
        Some(n) => (Topology::synthetic(n), format!("a machine of {n} CPUs (synthetic topology)")),
        None => (Topology::detect().clone(), "this machine".to_string()),
    };
    let plan = Plan::new(profile, &topology, &a.regimes.join(","), a.cpus.is_some());
    let mut out = format!("granule suite ({}) planned for {whose}\n", profile.name());
    out.push_str(&format!("  topology: {}\n", topology.describe()));
    for u in &topology.unknown {
        out.push_str(&format!("  assumed: {u}\n"));
    }
    if topology.cpus() > KERNEL_MAX_CORES {
        out.push_str(&format!(
            "  the hosted kernel runs at most {KERNEL_MAX_CORES} cores: measured up to {KERNEL_MAX_CORES}, \
             predicted beyond\n"
        ));
    }
    let counts = plan.counts.iter().map(usize::to_string).collect::<Vec<_>>().join(", ");
    out.push_str(&format!("  core counts: {counts}\n\n"));
    for s in &plan.steps {
        out.push_str(&format!("{:>10}  {}\n", minutes(s.estimate_s), s.command_line()));
    }
    out.push_str(&format!(
        "{:>10}  model fit and simulations (planned once the measurements are in)\n",
        minutes(plan.model_s)
    ));
    out.push_str(&format!(
        "\ntotal: about {} ({:.0} s), by the plan's own estimates; nothing was run\n",
        minutes(plan.total_s()),
        plan.total_s()
    ));
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(out.as_bytes()).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e).context("printing the plan"),
        _ => Ok(()),
    }
}

/// The records of the parts of one sweep (`earlier`, then `last`), in
/// order, without the repeats of the later parts (each part says which
/// regimes it skipped and why).
fn merged_records(earlier: &[StepRun], last: &StepRun) -> Vec<Map<String, Value>> {
    let mut out: Vec<Map<String, Value>> = Vec::new();
    for (i, part) in earlier.iter().chain([last]).enumerate() {
        let before = out.len();
        for r in &part.records {
            if i == 0 || !out[..before].contains(r) {
                out.push(r.clone());
            }
        }
    }
    out
}

/// Every step's records, in order, the parts of one sweep merged.
fn all_records(done: &[StepRun]) -> Vec<Map<String, Value>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < done.len() {
        let parts = done[i..].iter().take_while(|d| d.step.name == done[i].step.name).count();
        let (earlier, last) = (&done[i..i + parts - 1], &done[i + parts - 1]);
        out.extend(merged_records(earlier, last));
        i += parts;
    }
    out
}

/// Run `granule suite`.
pub fn run(a: &Args) -> Result<()> {
    let profile = a.profile();
    crate::regimes::selected(&a.regimes)?;
    if a.plan {
        return print_plan(a, profile);
    }
    let exe = std::env::current_exe().context("cannot find the granule binary to run the experiments")?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("cannot create {}", a.out.display()))?;
    let machine = Machine::detect();
    let command = std::iter::once("granule".to_string()).chain(std::env::args().skip(1)).collect::<Vec<_>>().join(" ");
    let plan = Plan::new(profile, &machine.topology, &a.regimes.join(","), false);
    let total = plan.total_s();
    let steps = plan.steps;
    let fit = fit_step(&a.out);
    let pb = crate::progress::bar((total * 10.0).ceil() as u64, "suite");
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    let t0 = Instant::now();
    let mut done: Vec<StepRun> = Vec::new();
    let mut machine_record = machine.record();
    let mut estimated = 0.0;
    let mut queue: std::collections::VecDeque<_> = steps.into_iter().chain([fit]).collect();
    while let Some(step) = queue.pop_front() {
        pb.set_message(format!("{} — {}", step.label, step.command_line()));
        let r = run_step(&exe, &step)?;
        if step.name == "info" {
            if let Some(m) = &r.machine {
                machine_record = m.clone();
            }
        }
        // A sweep planned as several steps of one name (see `suite::plan`)
        // is written as one file.
        let parts = done.iter().rev().take_while(|d| d.step.name == r.step.name).count();
        if parts == 0 {
            write_step(&a.out, &machine_record, &r)?;
        } else {
            let mut merged = r.clone();
            merged.records = merged_records(&done[done.len() - parts..], &r);
            write_step(&a.out, &machine_record, &merged)?;
        }
        estimated += step.estimate_s;
        pb.set_position((estimated * 10.0) as u64);
        if step.name == "model_fit" {
            // As `model_fit.jsonl` holds them: the machine record first.
            let written: Vec<_> = std::iter::once(machine_record.clone()).chain(r.records.iter().cloned()).collect();
            let fit = Records::read(&a.out.join("model_fit.jsonl").display().to_string(), &written)?;
            queue.extend(simulate_steps(profile, &fit, &a.out, machine.cores));
            queue.extend(frontier_sim::steps(profile, &fit));
        }
        done.push(r);
    }
    pb.finish_and_clear();

    let suite = SuiteRecord {
        profile: Cow::Borrowed(profile.name()),
        command: Cow::Borrowed(&command),
        seconds: t0.elapsed().as_secs_f64(),
        steps: done.iter().map(|s| s.step.command_line()).collect(),
        step_names: done.iter().map(|s| s.step.name.clone()).collect(),
        step_seconds: done.iter().map(|s| s.seconds).collect(),
    };
    let mut records = vec![machine_record, suite.to_map()];
    records.extend(all_records(&done));
    std::fs::write(a.out.join("results.jsonl"), json_lines(&records)).context("writing results.jsonl")?;
    let mut commands =
        format!("# granule suite ({}), {}\n{command}\n\n# its steps\n", profile.name(), env!("CARGO_PKG_VERSION"));
    for s in &done {
        commands.push_str(&s.step.command_line());
        commands.push('\n');
    }
    std::fs::write(a.out.join("commands.txt"), commands).context("writing commands.txt")?;
    // The page is drawn from results.jsonl as written, exactly as `granule
    // report` draws it again later.
    let written = crate::suite::results_file::read_results(&a.out.join("results.jsonl"))?;
    let rs = written.view()?;
    let (figs, frontier) = crate::suite::results_file::write_report(&a.out, &rs)?;
    let index = a.out.join("index.html");
    if figs == 0 {
        bail!("the suite produced no figure: see {}", a.out.join("results.jsonl").display());
    }

    // One screen for the terminal.
    println!(
        "granule suite ({}) in {:.0} s on {} ({} cores)\n",
        profile.name(),
        t0.elapsed().as_secs_f64(),
        machine.cpu_model,
        machine.cores
    );
    if matches!(profile, Profile::Smoke) {
        println!("  {SMOKE_WARNING}\n");
    }
    for f in verdict::verdict(&rs, &frontier) {
        println!("  - {}", f.text);
    }
    println!("\n  (the detailed findings, figures and tables are in the report)");
    println!("\nreport: {}", index.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::plan::Step;

    fn part(name: &str, records: &[(&str, u64)]) -> StepRun {
        let records = records
            .iter()
            .map(|(kind, cores)| {
                let mut m = Map::new();
                m.insert("record".into(), Value::from(*kind));
                m.insert("experiment".into(), Value::from(name));
                m.insert("cores".into(), Value::from(*cores));
                m
            })
            .collect();
        StepRun { step: Step::new(name, name, &[name], 1.0), records, machine: None, seconds: 1.0 }
    }

    #[test]
    fn the_parts_of_one_sweep_are_written_as_one_without_repeats() {
        let done = [
            part("ipc", &[("ipc", 1), ("ipc", 1)]),
            part("scale", &[("regime_skipped", 0), ("scale", 1), ("scale", 2)]),
            part("scale", &[("regime_skipped", 0), ("scale", 12)]),
            part("kv", &[("kv", 1)]),
        ];
        let kinds: Vec<(String, u64)> = all_records(&done)
            .iter()
            .map(|r| (r["record"].as_str().unwrap().to_string(), r["cores"].as_u64().unwrap()))
            .collect();
        let want =
            [("ipc", 1), ("ipc", 1), ("regime_skipped", 0), ("scale", 1), ("scale", 2), ("scale", 12), ("kv", 1)];
        assert_eq!(kinds, want.map(|(k, c)| (k.to_string(), c)), "a step's own repeats stay; a later part's go");
        assert_eq!(merged_records(&done[1..2], &done[2]).len(), 4);
    }
}
