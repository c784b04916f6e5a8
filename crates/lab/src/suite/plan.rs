//! What `granule suite` runs: the experiments of each profile, as command
//! lines of this same binary.
//!
//! Every step is an ordinary `granule` command, so the report can name the
//! exact command that produced each record and anyone can rerun one step on
//! its own. The model steps need numbers from earlier steps (the measured
//! scaling curves, the latency matrix), so they are planned after those ran
//! (see `suite::model_steps`).

/// How long and how carefully the suite measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Profile {
    /// Short windows and few runs: minutes on a 2-core machine.
    Quick,
    /// The seeds' protocol: 16 × 1 s IPC runs; 2 s warm-up and 1 s samples
    /// at every delay from 500 to 32000 cycles; YCSB workloads A–F over
    /// 32000 records, 3 runs of 5 s.
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

/// The delays (cycles) the scaling sweep uses in a profile.
pub fn delays(p: Profile) -> Vec<u64> {
    match p {
        Profile::Quick => vec![0, 1000, 4000, 16000],
        Profile::Full => vec![0, 500, 1000, 2000, 4000, 8000, 16000, 32000],
        Profile::Smoke => vec![0, 4000],
    }
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
    /// `scale`: warm-up, seconds.
    scale: [&'static str; 2],
    /// `kv`: workloads, records per server, seconds, warm-up, runs.
    kv: [&'static str; 5],
    /// The most cores `kv` measures (the machine's CPUs if fewer).
    kv_cores: usize,
    /// `subsystems`: seconds, warm-up, runs, workers.
    subsystems: [&'static str; 4],
    /// Estimated seconds of one subsystems point (boot, warm-up, window).
    subsystems_point_s: f64,
    /// Estimated seconds of info, locks, quaject and the profiled run.
    fixed_s: [f64; 4],
    /// Estimated seconds of one ipc run and of one scale point.
    ipc_run_s: f64,
    scale_point_s: f64,
    /// Estimated seconds of one kv point (boot, load, warm-up, window).
    kv_point_s: f64,
}

fn knobs(p: Profile) -> Knobs {
    match p {
        Profile::Quick => Knobs {
            info: &["info", "--samples", "9", "--round-trips", "500"],
            locks: &["locks", "--seconds", "0.15", "--runs", "3"],
            quaject: &["quaject", "--runs", "5"],
            synthesis: ["3", "200", "0.3"],
            ipc: ["8", "0.25", "0.1"],
            profile: ["0.2", "0.05"],
            scale: ["0.3", "0.5"],
            kv: ["a,c", "32000", "1", "0.5", "1"],
            kv_cores: usize::MAX,
            subsystems: ["0.3", "0.1", "3", "4"],
            subsystems_point_s: 0.6,
            fixed_s: [3.0, 10.0, 1.0, 3.0],
            ipc_run_s: 0.4,
            scale_point_s: 0.9,
            kv_point_s: 2.8,
        },
        Profile::Full => Knobs {
            info: &["info"],
            locks: &["locks"],
            quaject: &["quaject"],
            synthesis: ["5", "1000", "1"],
            ipc: ["16", "1", "0.2"],
            profile: ["1", "0.2"],
            scale: ["2", "1"],
            kv: ["a,c", "32000", "5", "1", "3"],
            kv_cores: usize::MAX,
            subsystems: ["1", "0.2", "5", "4"],
            subsystems_point_s: 1.5,
            fixed_s: [10.0, 40.0, 2.0, 6.0],
            ipc_run_s: 1.3,
            scale_point_s: 3.1,
            kv_point_s: 8.0,
        },
        Profile::Smoke => Knobs {
            info: &["info", "--samples", "3", "--round-trips", "50", "--pair-budget", "0.1"],
            locks: &["locks", "--locks", "clh,ticket", "--seconds", "0.02", "--runs", "1", "--pairs", "2000"],
            quaject: &["quaject", "--runs", "1", "--iterations", "2000"],
            synthesis: ["1", "10", "0.02"],
            ipc: ["2", "0.02", "0.01"],
            profile: ["0.02", "0.01"],
            scale: ["0.01", "0.03"],
            kv: ["a", "200", "0.1", "0", "1"],
            kv_cores: 2,
            subsystems: ["0.03", "0", "1", "2"],
            subsystems_point_s: 0.1,
            fixed_s: [0.5, 1.0, 0.5, 1.0],
            ipc_run_s: 0.05,
            scale_point_s: 0.1,
            kv_point_s: 0.15,
        },
    }
}

/// The measurement steps of profile `p` on a machine with `cpus` CPUs, for
/// the regimes `regimes` (a comma-separated list, or `all`).
pub fn measurement_steps(p: Profile, cpus: usize, regimes: &str) -> Vec<Step> {
    let k = knobs(p);
    let cores = format!("1..{}", cpus.max(1));
    let delays = delays(p).iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    // The profiled run shows the lock regimes' profiler tables.
    let profiled = "bkl,fine,rtm";
    // Regimes for the time estimates (`all` = 7, of which rtm may be skipped).
    let n_regimes = if regimes == "all" { 6.0 } else { regimes.split(',').count() as f64 };
    let n_points = n_regimes * delays.split(',').count() as f64 * cpus.max(1) as f64;
    let [ipc_runs, ipc_seconds, ipc_warmup] = k.ipc;
    let [prof_seconds, prof_warmup] = k.profile;
    let [scale_warmup, scale_seconds] = k.scale;
    let runs: f64 = ipc_runs.parse().unwrap_or(1.0);
    let [kv_workloads, kv_records, kv_seconds, kv_warmup, kv_runs] = k.kv;
    let kv_cores = cpus.clamp(1, k.kv_cores);
    let kv_cores_arg = format!("1..{kv_cores}");
    // `none` cannot run the KV system; Linux is one more series.
    let kv_series = if regimes == "all" { 5.0 } else { regimes.split(',').filter(|r| *r != "none").count() as f64 };
    let kv_points =
        (kv_series + 1.0) * kv_workloads.split(',').count() as f64 * kv_cores as f64 * kv_runs.parse().unwrap_or(1.0);
    // The subsystem study runs where the subsystems can be shared (not
    // `none`), at the most cores, with every policy.
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
    let [sub_seconds, sub_warmup, sub_runs, sub_workers] = k.subsystems;
    let [syn_runs, syn_iterations, syn_contended] = k.synthesis;
    let sub_points = sub_regimes.split(',').count() as f64 * 4.0 * sub_runs.parse().unwrap_or(1.0);
    vec![
        Step::new("info", "machine limits", k.info, k.fixed_s[0]),
        Step::new("locks", "lock costs", k.locks, k.fixed_s[1]),
        Step::new("quaject", "Synthesis table", k.quaject, k.fixed_s[2]),
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
            n_regimes
                * syn_runs.parse().unwrap_or(1.0)
                * (syn_iterations.parse().unwrap_or(1.0) * 2e-4 + 4.0 * (syn_contended.parse().unwrap_or(0.0) + 0.3))
                + 0.5,
        ),
        Step::new(
            "ipc",
            "single-core IPC",
            &["ipc", "--regimes", regimes, "--runs", ipc_runs, "--seconds", ipc_seconds, "--warmup", ipc_warmup],
            n_regimes * runs * k.ipc_run_s + 2.0,
        ),
        Step::new(
            "ipc_profile",
            "lock profiles",
            &[
                "ipc",
                "--regimes",
                profiled,
                "--lock-stats",
                "--runs",
                "1",
                "--seconds",
                prof_seconds,
                "--warmup",
                prof_warmup,
            ],
            k.fixed_s[3],
        ),
        Step::new(
            "scale",
            "multicore ping-pong",
            &[
                "scale",
                "--regimes",
                regimes,
                "--cores",
                &cores,
                "--delays",
                &delays,
                "--warmup",
                scale_warmup,
                "--seconds",
                scale_seconds,
                "--hold-times",
            ],
            n_points * k.scale_point_s,
        ),
        Step::new(
            "kv",
            "KV macrobenchmark",
            &[
                "kv",
                "--regimes",
                regimes,
                "--cores",
                &kv_cores_arg,
                "--workload",
                kv_workloads,
                "--records",
                kv_records,
                "--seconds",
                kv_seconds,
                "--warmup",
                kv_warmup,
                "--runs",
                kv_runs,
                "--linux",
            ],
            kv_points * k.kv_point_s + kv_series * 0.3 + 1.0,
        ),
        Step::new(
            "subsystems",
            "subsystem locking",
            &[
                "subsystems",
                "--regimes",
                &sub_regimes,
                "--cores",
                &kv_cores.to_string(),
                "--seconds",
                sub_seconds,
                "--warmup",
                sub_warmup,
                "--runs",
                sub_runs,
                "--workers",
                sub_workers,
            ],
            sub_points * k.subsystems_point_s + 1.0,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_runs_the_same_experiments() {
        for p in [Profile::Quick, Profile::Full, Profile::Smoke] {
            let names: Vec<String> = measurement_steps(p, 2, "all").into_iter().map(|s| s.name).collect();
            assert_eq!(
                names,
                ["info", "locks", "quaject", "synthesis", "ipc", "ipc_profile", "scale", "kv", "subsystems"],
                "{p:?}"
            );
        }
    }

    #[test]
    fn full_follows_the_seeds_protocol() {
        let steps = measurement_steps(Profile::Full, 4, "all");
        let scale = steps.iter().find(|s| s.name == "scale").unwrap().command_line();
        assert!(scale.contains("--cores 1..4"), "{scale}");
        assert!(scale.contains("--delays 0,500,1000,2000,4000,8000,16000,32000"), "{scale}");
        assert!(scale.contains("--warmup 2 --seconds 1"), "{scale}");
        let ipc = steps.iter().find(|s| s.name == "ipc").unwrap().command_line();
        assert!(ipc.contains("--runs 16 --seconds 1"), "{ipc}");
        let kv = steps.iter().find(|s| s.name == "kv").unwrap().command_line();
        assert!(kv.contains("--cores 1..4 --workload a,c --records 32000"), "{kv}");
        assert!(kv.contains("--seconds 5") && kv.contains("--runs 3") && kv.ends_with("--linux"), "{kv}");
    }

    #[test]
    fn smoke_kv_is_tiny_and_on_at_most_two_cores() {
        let kv = |cpus| {
            let steps = measurement_steps(Profile::Smoke, cpus, "all");
            steps.into_iter().find(|s| s.name == "kv").unwrap().command_line()
        };
        assert_eq!(
            kv(8),
            "granule kv --regimes all --cores 1..2 --workload a --records 200 --seconds 0.1 --warmup 0 --runs 1 --linux"
        );
        assert!(kv(1).contains("--cores 1..1"), "{}", kv(1));
        let sub = measurement_steps(Profile::Smoke, 8, "none,fine").pop().unwrap().command_line();
        assert_eq!(
            sub, "granule subsystems --regimes fine --cores 2 --seconds 0.03 --warmup 0 --runs 1 --workers 2",
            "the subsystem study skips none and stays on two cores"
        );
    }
}
