//! The records: one `serve_bench_setup`, one `serve_bench` per (round,
//! server, test, pipeline) and one `serve_vs_redis` per (test, pipeline)
//! comparing the two servers' medians over the rounds.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

use super::servers::Kind;
use crate::output::Record;
use crate::stats::median;

/// `serve_bench_setup`: the two servers and how the load was laid out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    /// The regime `granule serve` runs.
    pub regime: Cow<'static, str>,
    /// Port of `granule serve` on 127.0.0.1.
    pub granule_port: u16,
    /// Port of `redis-server` on 127.0.0.1.
    pub redis_port: u16,
    /// `redis-server --version`.
    pub redis_version: String,
    /// Requests per redis-benchmark run at depth 1 (`-n`).
    pub requests: u64,
    /// Requests per redis-benchmark run at the other depths (`-n`).
    pub requests_pipelined: u64,
    /// Parallel connections of redis-benchmark (`-c`).
    pub clients: u64,
    /// Rounds.
    pub rounds: u64,
    /// The CPU the servers are pinned to, or how they are not.
    pub server_cpu: String,
    /// The CPUs redis-benchmark is pinned to (comma-separated), or
    /// `unpinned`.
    pub benchmark_cpus: String,
    /// How the servers' CPU time is read (their process's CPU-time clock,
    /// or `/proc/<pid>/stat`'s ticks where it cannot be read).
    pub server_cpu_time: String,
}

impl Record for Setup {
    const KIND: &'static str = "serve_bench_setup";
}

/// `serve_bench`: one redis-benchmark run against one server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServeBenchRecord<'a> {
    /// Round, from 1.
    pub round: u64,
    /// `granule` or `redis`.
    pub server: Cow<'static, str>,
    /// The redis-benchmark test.
    pub test: Cow<'a, str>,
    /// Pipeline depth (`-P`).
    pub pipeline: u64,
    /// 1 if this server ran first for this (test, pipeline) in its round,
    /// else 2.
    pub order: u64,
    /// Requests of the run (`-n`).
    pub requests: u64,
    /// Requests per second, as redis-benchmark reports it.
    pub requests_per_sec: f64,
    /// CPU time of the server process over the run (user + system, all
    /// threads), seconds, read as the setup's `server_cpu_time` says.
    pub server_cpu_s: f64,
    /// Requests per second of server CPU time; null when none was
    /// charged.
    pub requests_per_cpu_s: Option<f64>,
    /// CPU time of redis-benchmark itself over the run (utime + stime),
    /// seconds.
    pub load_cpu_s: f64,
    /// `load_cpu_s` over the run's wall-clock time: redis-benchmark's share
    /// of the one CPU its single thread can use. Near 1 the load generator,
    /// not the server, set the requests per second.
    pub load_cpu_share: Option<f64>,
}

impl Record for ServeBenchRecord<'_> {
    const KIND: &'static str = "serve_bench";
}

/// `serve_vs_redis`: the two servers' medians over the rounds for one
/// (test, pipeline); a figure is null where a server has none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServeVsRedis<'a> {
    /// The redis-benchmark test.
    pub test: Cow<'a, str>,
    /// Pipeline depth (`-P`).
    pub pipeline: u64,
    /// The regime `granule serve` runs.
    pub regime: Cow<'a, str>,
    /// Rounds measured on both servers.
    pub rounds: u64,
    /// `granule serve`'s median requests per second.
    pub granule_requests_per_sec: Option<f64>,
    /// `redis-server`'s median requests per second.
    pub redis_requests_per_sec: Option<f64>,
    /// `granule_requests_per_sec / redis_requests_per_sec`.
    pub ratio_rps: Option<f64>,
    /// `granule serve`'s median requests per server CPU-second.
    pub granule_requests_per_cpu_s: Option<f64>,
    /// `redis-server`'s median requests per server CPU-second.
    pub redis_requests_per_cpu_s: Option<f64>,
    /// `granule_requests_per_cpu_s / redis_requests_per_cpu_s`.
    pub ratio_xput: Option<f64>,
    /// Median over the rounds of each round's own `granule / redis`
    /// requests per second (the two runs of a round are back to back, so
    /// the VM's drift between rounds cancels in each).
    #[serde(default)]
    pub paired_ratio_rps: Option<f64>,
    /// Median over the rounds of each round's own `granule / redis`
    /// requests per server CPU-second.
    #[serde(default)]
    pub paired_ratio_xput: Option<f64>,
    /// Lowest of those per-round requests-per-CPU-second ratios.
    #[serde(default)]
    pub paired_ratio_xput_min: Option<f64>,
    /// Highest of those per-round requests-per-CPU-second ratios.
    #[serde(default)]
    pub paired_ratio_xput_max: Option<f64>,
    /// Median share of its CPU redis-benchmark used against `granule serve`.
    pub granule_load_cpu_share: Option<f64>,
    /// Median share of its CPU redis-benchmark used against `redis-server`.
    pub redis_load_cpu_share: Option<f64>,
    /// Both ratios are at least 1.
    pub meets_target: bool,
}

impl Record for ServeVsRedis<'_> {
    const KIND: &'static str = "serve_vs_redis";
}

/// One measured run.
#[derive(Clone, Debug)]
pub struct Sample {
    pub round: u64,
    pub server: Kind,
    pub test: String,
    pub pipeline: u64,
    /// 1 if this server ran first for this (test, pipeline) in its round,
    /// else 2.
    pub order: u64,
    pub requests: u64,
    pub requests_per_sec: f64,
    pub server_cpu_s: f64,
    /// redis-benchmark's own CPU time over the run, seconds.
    pub load_cpu_s: f64,
    /// The run's wall-clock time, seconds.
    pub wall_s: f64,
}

impl Sample {
    /// Requests per second of server CPU time; none when none was
    /// charged.
    pub fn requests_per_cpu_s(&self) -> Option<f64> {
        (self.server_cpu_s > 0.0).then(|| self.requests as f64 / self.server_cpu_s)
    }

    /// redis-benchmark's share of its CPU over the run; none for a run
    /// that took no measurable time.
    pub fn load_cpu_share(&self) -> Option<f64> {
        (self.wall_s > 0.0).then(|| self.load_cpu_s / self.wall_s)
    }

    /// The `serve_bench` record.
    pub fn record(&self) -> ServeBenchRecord<'_> {
        ServeBenchRecord {
            round: self.round,
            server: Cow::Borrowed(self.server.name()),
            test: Cow::Borrowed(&self.test),
            pipeline: self.pipeline,
            order: self.order,
            requests: self.requests,
            requests_per_sec: self.requests_per_sec,
            server_cpu_s: self.server_cpu_s,
            requests_per_cpu_s: self.requests_per_cpu_s(),
            load_cpu_s: self.load_cpu_s,
            load_cpu_share: self.load_cpu_share(),
        }
    }
}

/// `a / b`, none unless both are known and `b` positive.
fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// The `serve_vs_redis` record of (`test`, `pipeline`) over `samples`.
pub fn compare<'a>(samples: &[Sample], regime: &'a str, test: &'a str, pipeline: u64) -> ServeVsRedis<'a> {
    let of = |kind: Kind| samples.iter().filter(move |s| s.server == kind && s.test == test && s.pipeline == pipeline);
    let rps = |kind: Kind| median(&of(kind).map(|s| s.requests_per_sec).collect::<Vec<_>>());
    let xput = |kind: Kind| median(&of(kind).filter_map(Sample::requests_per_cpu_s).collect::<Vec<_>>());
    let (g_rps, r_rps) = (rps(Kind::Granule), rps(Kind::Redis));
    let (g_xput, r_xput) = (xput(Kind::Granule), xput(Kind::Redis));
    let load = |kind: Kind| median(&of(kind).filter_map(Sample::load_cpu_share).collect::<Vec<_>>());
    let ratio_rps = ratio(g_rps, r_rps);
    let ratio_xput = ratio(g_xput, r_xput);
    // Per round that measured both servers, its granule run and its Redis run.
    let pairs: Vec<(&Sample, &Sample)> =
        of(Kind::Granule).filter_map(|g| Some((g, of(Kind::Redis).find(|r| r.round == g.round)?))).collect();
    let paired_rps: Vec<f64> =
        pairs.iter().filter_map(|(g, r)| ratio(Some(g.requests_per_sec), Some(r.requests_per_sec))).collect();
    let paired_xput: Vec<f64> =
        pairs.iter().filter_map(|(g, r)| ratio(g.requests_per_cpu_s(), r.requests_per_cpu_s())).collect();
    ServeVsRedis {
        test: Cow::Borrowed(test),
        pipeline,
        regime: Cow::Borrowed(regime),
        rounds: of(Kind::Granule).count().min(of(Kind::Redis).count()) as u64,
        granule_requests_per_sec: g_rps,
        redis_requests_per_sec: r_rps,
        ratio_rps,
        granule_requests_per_cpu_s: g_xput,
        redis_requests_per_cpu_s: r_xput,
        ratio_xput,
        paired_ratio_rps: median(&paired_rps),
        paired_ratio_xput: median(&paired_xput),
        paired_ratio_xput_min: paired_xput.iter().copied().reduce(f64::min),
        paired_ratio_xput_max: paired_xput.iter().copied().reduce(f64::max),
        granule_load_cpu_share: load(Kind::Granule),
        redis_load_cpu_share: load(Kind::Redis),
        meets_target: ratio_rps.is_some_and(|x| x >= 1.0) && ratio_xput.is_some_and(|x| x >= 1.0),
    }
}

/// The share of its CPU above which redis-benchmark is taken to have set
/// a run's pace.
pub const LOAD_BOUND: f64 = 0.9;

/// A note naming the (test, pipeline) points where redis-benchmark's median
/// share of its CPU was at least [`LOAD_BOUND`] against both servers; none
/// if there is no such point.
pub fn load_bound(compared: &[ServeVsRedis<'_>]) -> Option<String> {
    let bound = |x: Option<f64>| x.is_some_and(|x| x >= LOAD_BOUND);
    let points: Vec<String> = compared
        .iter()
        .filter(|r| bound(r.granule_load_cpu_share) && bound(r.redis_load_cpu_share))
        .map(|r| format!("{} -P {}", r.test, r.pipeline))
        .collect();
    (!points.is_empty()).then(|| {
        format!(
            "redis-benchmark used at least {:.0} % of its CPU against both servers at {}: there the requests per \
             second measure the load generator as much as either server, and ratio_rps stays near 1 whatever the \
             servers cost (ratio_xput compares them).\n",
            LOAD_BOUND * 100.0,
            points.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(server: Kind, round: u64, rps: f64, cpu: f64) -> Sample {
        Sample {
            round,
            server,
            test: "set".into(),
            pipeline: 1,
            order: 1,
            requests: 1000,
            requests_per_sec: rps,
            server_cpu_s: cpu,
            load_cpu_s: 0.5 * round as f64,
            wall_s: 2.0,
        }
    }

    #[test]
    fn comparison_of_medians() {
        let s = vec![
            sample(Kind::Granule, 1, 200.0, 0.5),
            sample(Kind::Granule, 2, 100.0, 1.0),
            sample(Kind::Granule, 3, 300.0, 0.0),
            sample(Kind::Redis, 1, 100.0, 1.0),
            sample(Kind::Redis, 2, 100.0, 1.0),
            sample(Kind::Redis, 3, 100.0, 2.0),
        ];
        let r = compare(&s, "bkl", "set", 1);
        assert_eq!(r.ratio_rps, Some(2.0));
        // Granule: 2000 and 1000 requests per CPU-second (the run charged
        // no CPU time has none): median 1500; Redis: 1000.
        assert_eq!(r.granule_requests_per_cpu_s, Some(1500.0));
        assert_eq!(r.ratio_xput, Some(1.5));
        assert!(r.meets_target);
        assert_eq!(r.rounds, 3);
        // The load generator used 0.5, 1.0 and 1.5 s of CPU over 2 s runs.
        assert_eq!(r.granule_load_cpu_share, Some(0.5));
        assert_eq!(r.redis_load_cpu_share, Some(0.5));
        // Round by round: requests/s 2, 1 and 3 times Redis's; per
        // CPU-second 2 and 1 (round 3's granule run has none).
        assert_eq!(r.paired_ratio_rps, Some(2.0));
        assert_eq!(r.paired_ratio_xput, Some(1.5));
        assert_eq!((r.paired_ratio_xput_min, r.paired_ratio_xput_max), (Some(1.0), Some(2.0)));
        let none = compare(&s, "bkl", "get", 1);
        assert!(none.ratio_rps.is_none());
        assert!(none.paired_ratio_rps.is_none() && none.paired_ratio_xput_min.is_none());
        assert!(!none.meets_target);
        let m = sample(Kind::Redis, 1, 1.0, 0.0).record().to_map();
        assert_eq!(m["requests_per_cpu_s"], serde_json::Value::Null, "{m:?}");
        assert_eq!(m["load_cpu_share"], serde_json::json!(0.25), "{m:?}");
        // Both servers' runs used 1.0 s of 2 s: no load-bound point; at
        // 1.9 s of 2 s against both, one.
        assert_eq!(load_bound(std::slice::from_ref(&r)), None);
        let busy: Vec<Sample> = s
            .iter()
            .cloned()
            .map(|mut x| {
                x.load_cpu_s = 1.9;
                x
            })
            .collect();
        let note = load_bound(&[compare(&busy, "bkl", "set", 1)]).unwrap();
        assert!(note.contains("at set -P 1:"), "{note}");
        let mut instant = sample(Kind::Redis, 1, 1.0, 0.0);
        instant.wall_s = 0.0;
        assert_eq!(instant.record().to_map()["load_cpu_share"], serde_json::Value::Null);
    }

    #[test]
    fn paired_ratios_cancel_the_drift_between_rounds() {
        // The machine ran twice as fast in round 2 for both servers: the
        // ratio of the medians reads 0.90 (95 against 105, granule's median
        // taking in its unpaired round 4 too), while granule was ahead in
        // two of the three rounds themselves.
        let s = vec![
            sample(Kind::Granule, 1, 100.0, 1.0),
            sample(Kind::Redis, 1, 95.0, 1.0),
            sample(Kind::Granule, 2, 210.0, 1.0),
            sample(Kind::Redis, 2, 200.0, 1.0),
            sample(Kind::Granule, 3, 90.0, 1.0),
            sample(Kind::Redis, 3, 105.0, 1.0),
            // A round Redis never ran is not paired.
            sample(Kind::Granule, 4, 1.0, 1.0),
        ];
        let r = compare(&s, "bkl", "set", 1);
        assert_eq!(r.ratio_rps, Some(95.0 / 105.0));
        assert_eq!(r.paired_ratio_rps, Some(210.0 / 200.0));
        // 1000 requests per 1 s of CPU time in every run.
        assert_eq!(r.paired_ratio_xput, Some(1.0));
        assert_eq!((r.paired_ratio_xput_min, r.paired_ratio_xput_max), (Some(1.0), Some(1.0)));
    }
}
