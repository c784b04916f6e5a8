//! `granule suite`: the main job — measure this machine, fit the model,
//! predict larger machines, and write a report (see `crate::suite`).

use std::borrow::Cow;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;
use serde::{Deserialize, Serialize};

use crate::machine::Machine;
use crate::output::{json_lines, Record};
use crate::suite::plan::{measurement_steps, Profile};
use crate::suite::records::Records;
use crate::suite::run::{run_step, StepRun};
use crate::suite::{fit_step, frontier_sim, simulate_steps, verdict, write_step};

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

/// Run `granule suite`.
pub fn run(a: &Args) -> Result<()> {
    let profile = a.profile();
    crate::regimes::selected(&a.regimes)?;
    let exe = std::env::current_exe().context("cannot find the granule binary to run the experiments")?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("cannot create {}", a.out.display()))?;
    let machine = Machine::detect();
    let command = std::iter::once("granule".to_string()).chain(std::env::args().skip(1)).collect::<Vec<_>>().join(" ");
    let steps = measurement_steps(profile, machine.cores, &a.regimes.join(","));
    let fit = fit_step(&a.out);
    // The simulations (planned once the fit is known) take about 10 s.
    let total: f64 = steps.iter().chain([&fit]).map(|s| s.estimate_s).sum::<f64>() + 10.0;
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
        write_step(&a.out, &machine_record, &r)?;
        estimated += step.estimate_s;
        pb.set_position((estimated * 10.0) as u64);
        if step.name == "model_fit" {
            queue.extend(simulate_steps(profile, &r.records, &a.out, machine.cores));
            queue.extend(frontier_sim::steps(profile, &Records::new(&r.records)));
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
    for s in &done {
        records.extend(s.records.iter().cloned());
    }
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
    let records = written.records;
    let rs = Records::new(&records);
    let (figs, frontier) = crate::suite::results_file::write_report(&a.out, &records)?;
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
