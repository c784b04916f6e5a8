//! What `granule suite` runs: the experiments of each profile, as command
//! lines of this same binary.
//!
//! Every step is an ordinary `granule` command, so the report can name the
//! exact command that produced each record and anyone can rerun one step on
//! its own. The model steps need numbers from earlier steps (the measured
//! scaling curves, the latency matrix), so they are planned after those ran
//! (see `suite::model_steps`).
//!
//! **Core counts.** Each profile measures a geometric set of core counts
//! ([`GEOMETRIC_CORES`] up to the machine's CPUs), the machine's CPUs, and
//! every count at which the fill order completes a last-level-cache domain or
//! a socket (see `crate::topology`), at most the kernel's
//! [`KERNEL_MAX_CORES`]. Up to [`LOW_CORES`] cores the scaling sweep runs
//! every delay of the profile; beyond, fewer. The KV benchmark runs every
//! series at 1 and 2 cores and only the main series (`bkl`, `fine`,
//! `lockfree`, Linux) beyond. A sweep whose counts are split this way is two
//! steps of one name; the suite writes their records into one file.
//!
//! **Estimates.** Every step carries an estimate of its wall-clock time from
//! the cost model in [`cost`], calibrated on a 2-core AMD EPYC VM; `granule
//! suite --plan` prints them.

mod cost;

use crate::topology::Topology;

use self::cost::PROCESS_S;

/// How long and how carefully the suite measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Profile {
    /// Short windows and few runs: under 3 minutes on a 2-core machine,
    /// under 8 on any machine.
    Quick,
    /// The seeds' protocol: 16 × 1 s IPC runs; 2 s warm-up and 1 s samples
    /// at every delay from 500 to 32000 cycles (up to 8 cores; four delays
    /// beyond); YCSB workloads A and C over 32000 records per server, 3 runs
    /// of 5 s. Under 45 minutes on any machine.
    Full,
    /// Tiny durations for tests and smoke checks; the numbers mean nothing.
    Smoke,
}

impl Profile {
    /// The name used in records and the report.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Full => "full",
            Profile::Smoke => "smoke",
        }
    }
}

/// One experiment: a `granule` command line (without `--format`).
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Short name: the experiment's key in records and file names.
    pub name: String,
    /// What the progress bar says while it runs.
    pub label: String,
    /// The arguments after `granule`.
    pub args: Vec<String>,
    /// Estimated seconds (for the progress bar's time left).
    pub estimate_s: f64,
}

impl Step {
    /// A step running `granule <args…>`.
    pub fn new(name: &str, label: &str, args: &[&str], estimate_s: f64) -> Self {
        Self { name: name.into(), label: label.into(), args: args.iter().map(|s| s.to_string()).collect(), estimate_s }
    }

    /// The command line, as a person would type it.
    pub fn command_line(&self) -> String {
        std::iter::once("granule").chain(self.args.iter().map(String::as_str)).collect::<Vec<_>>().join(" ")
    }
}

/// The geometric series of core counts the profiles measure (those up to the
/// machine's CPUs).
pub const GEOMETRIC_CORES: [usize; 16] = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256];

/// The most cores the hosted kernel runs (its core sets are 64-bit masks):
/// a larger machine is measured up to this many, and predicted beyond.
pub const KERNEL_MAX_CORES: usize = granule_hosted::granule_kernel::abi::MAX_CORES;

/// Up to this many cores the scaling sweep runs every delay of the profile
/// (quick and smoke; see [`low_cores`]).
pub const LOW_CORES: usize = 8;

/// Up to how many cores the scaling sweep of profile `p` runs every delay:
/// [`LOW_CORES`], or 4 for the full profile, whose eight delays with the
/// seeds' 2 s warm-up cost 3 s a point.
pub fn low_cores(p: Profile) -> usize {
    match p {
        Profile::Full => 4,
        Profile::Quick | Profile::Smoke => LOW_CORES,
    }
}

/// The KV benchmark's main series: every other kernel regime is measured at
/// 1 and 2 cores only (Linux runs wherever the kernel does).
pub const KV_MAIN: [&str; 3] = ["bkl", "fine", "lockfree"];

/// The core counts measured on a machine of topology `t`: the geometric
/// series, the machine's CPUs and every LLC domain and socket boundary of
/// its fill order, each at most the machine's CPUs and the kernel's
/// [`KERNEL_MAX_CORES`]; ascending.
pub fn core_counts(t: &Topology) -> Vec<usize> {
    let cap = t.cpus().clamp(1, KERNEL_MAX_CORES);
    let mut out: Vec<usize> = GEOMETRIC_CORES
        .iter()
        .copied()
        .chain([cap])
        .chain(t.boundaries.counts())
        .filter(|&c| (1..=cap).contains(&c))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The delays (cycles) the scaling sweep uses in a profile, up to
/// [`low_cores`] cores.
pub fn delays(p: Profile) -> Vec<u64> {
    match p {
        Profile::Quick => vec![0, 1000, 4000, 16000],
        Profile::Full => vec![0, 500, 1000, 2000, 4000, 8000, 16000, 32000],
        Profile::Smoke => vec![0, 4000],
    }
}

/// The delays beyond [`low_cores`] cores: the back-to-back case and the
/// delays where a big lock can still scale.
pub fn delays_beyond(p: Profile) -> Vec<u64> {
    match p {
        Profile::Quick | Profile::Full => vec![0, 4000, 16000],
        Profile::Smoke => vec![0, 4000],
    }
}

/// The core counts `kv` measures beyond 2 (main series only): the largest.
fn kv_beyond(counts: &[usize]) -> Vec<usize> {
    counts.last().copied().filter(|&m| m > 2).into_iter().collect()
}

/// The options that differ between profiles.
struct Knobs {
    info: &'static [&'static str],
    locks: &'static [&'static str],
    quaject: &'static [&'static str],
    /// `synthesis`: runs, iterations, contended seconds.
    synthesis: [&'static str; 3],
    /// `ipc`: runs, seconds, warm-up.
    ipc: [&'static str; 3],
    /// The profiled `ipc` run: seconds, warm-up.
    profile: [&'static str; 2],
    /// `scale`: warm-up, seconds; and beyond [`low_cores`] cores.
    scale: [&'static str; 2],
    scale_beyond: [&'static str; 2],
    /// `kv`: workloads, records per server, seconds, warm-up, runs.
    kv: [&'static str; 5],
    /// The most cores `kv` and `subsystems` measure (the machine's if fewer).
    kv_cores: usize,
    /// `subsystems`: seconds, warm-up, runs, workers.
    subsystems: [&'static str; 4],
    /// Estimated seconds of info, locks and quaject beyond starting the
    /// process (fixed work: 8 CPUs at most in the latency matrix, 1 and 2
    /// threads per lock).
    fixed_s: [f64; 3],
}

fn knobs(p: Profile) -> Knobs {
    match p {
        Profile::Quick => Knobs {
            info: &["info", "--samples", "9", "--round-trips", "500"],
            locks: &["locks", "--seconds", "0.15", "--runs", "3"],
            quaject: &["quaject", "--runs", "5"],
            synthesis: ["3", "200", "0.15"],
            ipc: ["6", "0.2", "0.05"],
            profile: ["0.2", "0.05"],
            scale: ["0.2", "0.4"],
            scale_beyond: ["0.2", "0.4"],
            kv: ["a,c", "32000", "0.4", "0.2", "1"],
            kv_cores: usize::MAX,
            subsystems: ["0.3", "0.1", "3", "4"],
            fixed_s: [2.0, 10.0, 0.5],
        },
        Profile::Full => Knobs {
            info: &["info"],
            locks: &["locks"],
            quaject: &["quaject"],
            synthesis: ["5", "1000", "1"],
            ipc: ["16", "1", "0.2"],
            profile: ["1", "0.2"],
            scale: ["2", "1"],
            scale_beyond: ["1", "1"],
            kv: ["a,c", "32000", "5", "1", "3"],
            kv_cores: usize::MAX,
            subsystems: ["1", "0.2", "5", "4"],
            fixed_s: [8.0, 40.0, 2.0],
        },
        Profile::Smoke => Knobs {
            info: &["info", "--samples", "3", "--round-trips", "50", "--pair-budget", "0.1"],
            locks: &["locks", "--locks", "clh,ticket", "--seconds", "0.02", "--runs", "1", "--pairs", "2000"],
            quaject: &["quaject", "--runs", "1", "--iterations", "2000"],
            synthesis: ["1", "10", "0.02"],
            ipc: ["2", "0.02", "0.01"],
            profile: ["0.02", "0.01"],
            scale: ["0.01", "0.03"],
            scale_beyond: ["0.01", "0.03"],
            kv: ["a", "200", "0.1", "0", "1"],
            kv_cores: 2,
            subsystems: ["0.03", "0", "1", "2"],
            fixed_s: [0.3, 1.0, 0.3],
        },
    }
}

/// A number from the knobs (they are literals above).
fn num(s: &str) -> f64 {
    s.parse().unwrap_or(1.0)
}

/// A list of core counts as `--cores` takes it: `1..N` when it is every
/// count from 1, else comma-separated.
pub fn cores_arg(counts: &[usize]) -> String {
    match counts {
        [1, .., last] if counts.iter().copied().eq(1..=*last) => format!("1..{last}"),
        [1] => "1..1".into(),
        _ => counts.iter().map(usize::to_string).collect::<Vec<_>>().join(","),
    }
}

fn join<T: ToString>(v: &[T]) -> String {
    v.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

/// The regimes of `list` (comma-separated, or `all`) that will run: the
/// registry's regimes that can run here, or, planning for another machine
/// (`anywhere`), all of them.
pub fn regimes_to_run(list: &str, anywhere: bool) -> Vec<&'static str> {
    let wanted: Vec<&'static str> = if list == "all" {
        crate::regimes::REGIMES.to_vec()
    } else {
        crate::regimes::REGIMES.iter().copied().filter(|r| list.split(',').any(|w| w.trim() == *r)).collect()
    };
    wanted.into_iter().filter(|r| anywhere || crate::regimes::unavailable(r).is_none()).collect()
}

/// The measurement steps of profile `p` on a machine of topology `t`, for
/// the regimes `regimes` (a comma-separated list, or `all`) of which
/// `running` will run (see [`regimes_to_run`]; the estimates count them).
pub fn measurement_steps(p: Profile, t: &Topology, regimes: &str, running: &[&str]) -> Vec<Step> {
    let k = knobs(p);
    let counts = core_counts(t);
    let n_regimes = running.len().max(1) as f64;
    let with = |names: &[&str]| running.iter().filter(|r| names.contains(r)).count() as f64;
    let two_core_regimes = (running.len() - with(&["none"]) as usize) as f64;
    let [ipc_runs, ipc_seconds, ipc_warmup] = k.ipc;
    let [prof_seconds, prof_warmup] = k.profile;
    let [syn_runs, syn_iterations, syn_contended] = k.synthesis;
    let mut steps = vec![
        Step::new("info", "machine limits", k.info, PROCESS_S + k.fixed_s[0]),
        Step::new("locks", "lock costs", k.locks, PROCESS_S + k.fixed_s[1]),
        Step::new("quaject", "Synthesis table", k.quaject, PROCESS_S + k.fixed_s[2]),
        Step::new(
            "synthesis",
            "Synthesis tables 2-4",
            &[
                "synthesis",
                "--regimes",
                regimes,
                "--runs",
                syn_runs,
                "--iterations",
                syn_iterations,
                "--contended-seconds",
                syn_contended,
            ],
            PROCESS_S
                + cost::synthesis_s(
                    n_regimes,
                    two_core_regimes,
                    num(syn_runs),
                    num(syn_iterations),
                    num(syn_contended),
                ),
        ),
        Step::new(
            "ipc",
            "single-core IPC",
            &["ipc", "--regimes", regimes, "--runs", ipc_runs, "--seconds", ipc_seconds, "--warmup", ipc_warmup],
            // Each regime also runs one short profiled counting run.
            PROCESS_S + n_regimes * (num(ipc_runs) * cost::point_s(1, num(ipc_warmup), num(ipc_seconds)) + 0.2),
        ),
    ];
    let profiled = ["bkl", "fine", "rtm"];
    steps.push(Step::new(
        "ipc_profile",
        "lock profiles",
        &[
            "ipc",
            "--regimes",
            &profiled.join(","),
            "--lock-stats",
            "--runs",
            "1",
            "--seconds",
            prof_seconds,
            "--warmup",
            prof_warmup,
        ],
        PROCESS_S + with(&profiled).max(1.0) * (cost::point_s(1, num(prof_warmup), num(prof_seconds)) + 0.2),
    ));
    steps.extend(scale_steps(p, &k, &counts, regimes, n_regimes));
    steps.extend(kv_steps(&k, &counts, regimes, running));
    steps.push(subsystems_step(&k, &counts, regimes));
    steps
}

/// Seconds of `scale --hold-times`: one profiled run (at most 0.2 s warm-up
/// and 0.3 s window) per big-lock regime and core count.
fn hold_times_s(regimes: &str, cores: &[usize]) -> f64 {
    let big = if regimes == "all" {
        crate::regimes::BIG_LOCK_REGIMES.len()
    } else {
        regimes.split(',').filter(|r| crate::regimes::BIG_LOCK_REGIMES.contains(r)).count()
    };
    big as f64 * cores.iter().map(|&n| cost::point_s(n, 0.2, 0.3)).sum::<f64>()
}

/// The scaling sweep: every delay up to [`low_cores`] cores, fewer beyond
/// (a second step of the same name), each with the big lock's hold times.
fn scale_steps(p: Profile, k: &Knobs, counts: &[usize], regimes: &str, n_regimes: f64) -> Vec<Step> {
    let (low, high): (Vec<usize>, Vec<usize>) = counts.iter().partition(|&&c| c <= low_cores(p));
    [(low, delays(p), k.scale), (high, delays_beyond(p), k.scale_beyond)]
        .into_iter()
        .filter(|(cores, _, _)| !cores.is_empty())
        .map(|(cores, delays, [warmup, seconds])| {
            let points: f64 = cores.iter().map(|&n| cost::point_s(n, num(warmup), num(seconds))).sum();
            Step::new(
                "scale",
                "multicore ping-pong",
                &[
                    "scale",
                    "--regimes",
                    regimes,
                    "--cores",
                    &cores_arg(&cores),
                    "--delays",
                    &join(&delays),
                    "--warmup",
                    warmup,
                    "--seconds",
                    seconds,
                    "--hold-times",
                ],
                PROCESS_S + n_regimes * delays.len() as f64 * points + hold_times_s(regimes, &cores),
            )
        })
        .collect()
}

/// The KV benchmark: every series at 1 and 2 cores, the main series beyond
/// (a second step of the same name).
fn kv_steps(k: &Knobs, counts: &[usize], regimes: &str, running: &[&str]) -> Vec<Step> {
    let [workloads, records, seconds, warmup, runs] = k.kv;
    let cap = k.kv_cores;
    let low: Vec<usize> = counts.iter().copied().filter(|&c| c <= 2.min(cap)).collect();
    let high: Vec<usize> = kv_beyond(counts).into_iter().filter(|&c| c <= cap).collect();
    let all_series: Vec<&str> = running.iter().copied().filter(|r| *r != "none").collect();
    let main: Vec<&str> = all_series.iter().copied().filter(|r| KV_MAIN.contains(r)).collect();
    let main_arg = if main.is_empty() { regimes.to_string() } else { main.join(",") };
    let n_work = workloads.split(',').count() as f64 * num(runs);
    [(low, regimes.to_string(), all_series.len()), (high, main_arg, main.len().max(1))]
        .into_iter()
        .filter(|(cores, _, _)| !cores.is_empty())
        .map(|(cores, series, n_series)| {
            let (rec, w, s) = (num(records), num(warmup), num(seconds));
            let per_workload: f64 = cores
                .iter()
                .map(|&n| n_series as f64 * cost::kv_point_s(n, rec, w, s) + cost::kv_linux_point_s(n, rec, w, s))
                .sum();
            Step::new(
                "kv",
                "KV macrobenchmark",
                &[
                    "kv",
                    "--regimes",
                    &series,
                    "--cores",
                    &cores_arg(&cores),
                    "--workload",
                    workloads,
                    "--records",
                    records,
                    "--seconds",
                    seconds,
                    "--warmup",
                    warmup,
                    "--runs",
                    runs,
                    "--linux",
                ],
                PROCESS_S + cost::kv_entry_costs_s(n_series as f64) + n_work * per_workload,
            )
        })
        .collect()
}

/// The subsystem study: where the subsystems can be shared (not `none`), at
/// the most cores measured, with every policy.
fn subsystems_step(k: &Knobs, counts: &[usize], regimes: &str) -> Step {
    let sub_regimes = match regimes {
        "all" => "bkl,fine,lockfree".to_string(),
        list => {
            let kept: Vec<&str> = list.split(',').filter(|r| *r != "none").collect();
            if kept.is_empty() {
                "bkl".to_string()
            } else {
                kept.join(",")
            }
        }
    };
    let n_sub = sub_regimes.split(',').count() as f64;
    let cores = counts.last().copied().unwrap_or(1).min(k.kv_cores);
    let [seconds, warmup, runs, workers] = k.subsystems;
    let points = n_sub * 4.0 * num(runs);
    Step::new(
        "subsystems",
        "subsystem locking",
        &[
            "subsystems",
            "--regimes",
            &sub_regimes,
            "--cores",
            &cores.to_string(),
            "--seconds",
            seconds,
            "--warmup",
            warmup,
            "--runs",
            runs,
            "--workers",
            workers,
        ],
        PROCESS_S + points * cost::point_s(cores, num(warmup), num(seconds)),
    )
}

/// Estimated seconds of what runs after the measurements: the model fit,
/// the simulations of the seeds' machines and of this one (on all of its
/// CPUs), and the frontier simulations.
pub fn model_phase_s(cpus: usize) -> f64 {
    12.0 + 0.02 * cpus as f64
}

/// A plan: the measurement steps and the estimated total, model phase
/// included.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The core counts measured.
    pub counts: Vec<usize>,
    /// The measurement steps, in order.
    pub steps: Vec<Step>,
    /// Estimated seconds of the model fit and simulations.
    pub model_s: f64,
}

impl Plan {
    /// The plan of profile `p` for topology `t` and regimes `regimes`
    /// (`anywhere`: planning for another machine, so every regime counts).
    pub fn new(p: Profile, t: &Topology, regimes: &str, anywhere: bool) -> Self {
        let running = regimes_to_run(regimes, anywhere);
        Self {
            counts: core_counts(t),
            steps: measurement_steps(p, t, regimes, &running),
            model_s: model_phase_s(t.cpus()),
        }
    }

    /// Estimated seconds of the whole suite.
    pub fn total_s(&self) -> f64 {
        self.steps.iter().map(|s| s.estimate_s).sum::<f64>() + self.model_s
    }
}

#[cfg(test)]
mod tests;
