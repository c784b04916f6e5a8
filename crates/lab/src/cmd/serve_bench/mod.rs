//! `granule serve-bench`: `granule serve` against `redis-server`, side by
//! side in one invocation, both driven by `redis-benchmark`.
//!
//! The target: requests per second and requests per server
//! CPU-second (Xput) of `granule serve --regime bkl` at least those of
//! `redis-server` on the same machine, under `redis-benchmark -c 50
//! -n 200000` for SET and GET and the default run's list, set, sorted-set
//! and MSET tests, with and without `-P 16`. This machine's speed
//! drifts over minutes, so both servers are measured in the same
//! invocation, each (test, pipeline) point on both back to back, the server
//! that goes first alternating from round to round, and compared by their
//! medians over the rounds.
//!
//! **Processes.** Both servers start once, as children on free ports of
//! 127.0.0.1 ([`servers`]): `granule serve` of this executable, and
//! `redis-server` without persistence. `granule serve` pins its core 0
//! (where its far side polls the sockets) to the first CPU this process may
//! use; `redis-server` is pinned to the same CPU and `redis-benchmark` to the others when
//! `taskset` is installed and there are other CPUs, so that each server
//! has one CPU and never shares it with the load. Every child is stopped
//! and reaped on every way out ([`child`]): `granule serve` by `SIGINT`
//! (its clean shutdown), killed if it does not exit in time; it also stops
//! by itself (`--seconds`) after the longest this benchmark may take.
//!
//! **Runs** ([`bench`]): one `redis-benchmark` per (round, pipeline, test,
//! server), one test each so that the server CPU time read around it is
//! that test's. Records ([`summary`]): `serve_bench` per run, then
//! `serve_vs_redis` per (test, pipeline).

mod bench;
mod child;
mod servers;
pub(crate) mod summary;

use std::borrow::Cow;
use std::path::Path;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args as ClapArgs;
use serde_json::{Map, Value};

use self::bench::Bench;
use self::servers::{Kind, Server};
use self::summary::{Sample, Setup};
use crate::cmd::kv::linux::{on_path, redis_server, taskset, version};
use crate::machine::Machine;
use crate::output::{emit, Format, Record};
use crate::progress;
use crate::regimes::REGIMES;

/// Options of `granule serve-bench`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// The regime `granule serve` runs.
    #[arg(long, default_value = "bkl", value_parser = crate::regimes::parser(crate::regimes::REGIMES, &["none"], false))]
    pub regime: String,
    /// Rounds, 1..=100: every (test, pipeline) runs once on each server per
    /// round.
    #[arg(long, default_value_t = 3, value_parser = crate::bounds::int::<u64>(1, MAX_ROUNDS))]
    pub rounds: u64,
    /// Requests per redis-benchmark run without pipelining (`-n` at
    /// `-P 1`), 1..=10^8.
    #[arg(long, default_value_t = 200_000, value_parser = crate::bounds::int::<u64>(1, MAX_REQUESTS))]
    pub requests: u64,
    /// Requests per pipelined redis-benchmark run (`-n` at every depth
    /// above 1), 1..=10^8: more than at depth 1, so that a pipelined run,
    /// served ten times faster, still lasts about a second.
    #[arg(long, default_value_t = 1_000_000, value_parser = crate::bounds::int::<u64>(1, MAX_REQUESTS))]
    pub requests_pipelined: u64,
    /// Parallel connections of redis-benchmark (`-c`), 1..=10000.
    #[arg(long, default_value_t = 50, value_parser = crate::bounds::int::<u64>(1, MAX_CLIENTS))]
    pub clients: u64,
    /// Pipeline depths (`-P`), comma-separated, each 1..=1000.
    #[arg(long, value_delimiter = ',', default_value = "1,16", value_parser = crate::bounds::int::<u64>(1, MAX_PIPELINE))]
    pub pipeline: Vec<u64>,
    /// redis-benchmark tests (`-t`), comma-separated, one run each: any of
    /// its default run's tests (ping_inline, ping_mbulk, set, get, incr,
    /// lpush, rpush, lpop, rpop, sadd, hset, spop, zadd, zpopmin,
    /// lrange_100, lrange_300, lrange_500, lrange_600, mset).
    #[arg(long, value_delimiter = ',', default_value = "set,get,lpush,sadd,lrange_100,zpopmin,mset")]
    pub tests: Vec<String>,
}

/// The redis-benchmark tests allowed: its default run's, each printing one
/// result. An `lrange_*` run first fills its list with as many `LPUSH`es
/// as it has requests (redis-benchmark does that itself), and the server
/// CPU time read around the run covers both, on either server alike.
const TESTS: &[&str] = &[
    "ping_inline",
    "ping_mbulk",
    "set",
    "get",
    "incr",
    "lpush",
    "rpush",
    "lpop",
    "rpop",
    "sadd",
    "hset",
    "spop",
    "zadd",
    "zpopmin",
    "lrange_100",
    "lrange_300",
    "lrange_500",
    "lrange_600",
    "mset",
];
/// Most `--rounds`.
const MAX_ROUNDS: u64 = 100;
/// Most `--requests`.
const MAX_REQUESTS: u64 = 100_000_000;
/// Most `--clients` (`granule serve` accepts 10 000 by default).
const MAX_CLIENTS: u64 = 10_000;
/// Deepest `--pipeline`.
const MAX_PIPELINE: u64 = 1000;
/// Longest one run may take: this, plus [`RUN_PER_REQUEST`] per request
/// (a floor of 2000 requests per second).
const RUN_BASE: Duration = Duration::from_secs(30);
/// See [`RUN_BASE`].
const RUN_PER_REQUEST: Duration = Duration::from_micros(500);
/// Longest `granule serve` is told to live (its own limit).
const MAX_LIFETIME: Duration = Duration::from_secs(365 * 24 * 3600);
/// How to install what is missing.
const INSTALL: &str = "serve-bench needs redis-server and redis-benchmark (Debian/Ubuntu: `apt-get install \
                       redis-server redis-tools`)";

/// The validated options.
#[derive(Clone, Debug)]
struct Settings {
    regime: &'static str,
    rounds: u64,
    requests: u64,
    requests_pipelined: u64,
    clients: u64,
    pipelines: Vec<u64>,
    tests: Vec<&'static str>,
}

impl Settings {
    fn new(a: &Args) -> Result<Self> {
        let name = a.regime.trim();
        let Some(&regime) = REGIMES.iter().find(|r| **r == name) else {
            bail!("unknown regime `{name}`; known regimes: {}", REGIMES[1..].join(", "));
        };
        if regime == "none" {
            bail!("regime none cannot serve: the KV system's cores share the driver's notifications");
        }
        // --rounds, --requests, --clients and each depth are bounded by their
        // parsers.
        let mut pipelines = Vec::new();
        for &p in &a.pipeline {
            if !pipelines.contains(&p) {
                pipelines.push(p);
            }
        }
        if pipelines.is_empty() {
            bail!("--pipeline needs at least one depth, e.g. 1,16");
        }
        let mut tests = Vec::new();
        for t in &a.tests {
            let t = t.trim().to_ascii_lowercase();
            let Some(&known) = TESTS.iter().find(|k| **k == t) else {
                if t == "ping" {
                    bail!("--tests ping runs two redis-benchmark tests at once; name one: ping_inline or ping_mbulk");
                }
                bail!("unknown or unsupported test `{t}`; --tests takes {}", TESTS.join(", "));
            };
            if !tests.contains(&known) {
                tests.push(known);
            }
        }
        if tests.is_empty() {
            bail!("--tests needs at least one of {}", TESTS.join(", "));
        }
        Ok(Self {
            regime,
            rounds: a.rounds,
            requests: a.requests,
            requests_pipelined: a.requests_pipelined,
            clients: a.clients,
            pipelines,
            tests,
        })
    }

    /// Requests of one run at depth `pipeline` (`-n`).
    fn requests_at(&self, pipeline: u64) -> u64 {
        if pipeline > 1 {
            self.requests_pipelined
        } else {
            self.requests
        }
    }

    /// redis-benchmark runs in all.
    fn runs(&self) -> u64 {
        self.rounds * self.pipelines.len() as u64 * self.tests.len() as u64 * 2
    }
}

/// Both servers; dropping it stops `granule serve` first, then
/// `redis-server`.
#[derive(Debug)]
struct Pair {
    granule: Server,
    redis: Server,
}

impl Pair {
    fn get(&mut self, kind: Kind) -> &mut Server {
        match kind {
            Kind::Granule => &mut self.granule,
            Kind::Redis => &mut self.redis,
        }
    }
}

/// Run `granule serve-bench`.
pub fn run(a: &Args) -> Result<()> {
    let s = Settings::new(a)?;
    let redis_path = redis_server().map_err(|why| anyhow!("{why}; {INSTALL}"))?;
    let redis_version = version(&redis_path).map_err(|why| anyhow!("{why}; {INSTALL}"))?;
    let program = on_path(Path::new("redis-benchmark"))
        .ok_or_else(|| anyhow!("redis-benchmark is not installed (not on PATH); {INSTALL}"))?;
    bench::check(&program).map_err(|why| anyhow!("{why}; {INSTALL}"))?;
    child::catch_interrupts()?;
    let m = Machine::detect();

    // One CPU for the servers (the first, where `granule serve` puts its
    // core 0), the others for the load.
    let cpus: Vec<usize> = crate::pin::cpus().into_iter().map(|c| c.id).collect();
    let server_cpu = cpus.first().copied();
    let redis_pin = server_cpu.and_then(|c| taskset(c).map(|t| (t, c)));
    let load_cpus = cpus.get(1..).unwrap_or_default();
    let bench_pin = load_cpus.first().and_then(|&c| taskset(c)).map(|t| {
        let list: Vec<String> = load_cpus.iter().map(ToString::to_string).collect();
        (t, list.join(","))
    });

    let most = s.pipelines.iter().map(|&p| s.requests_at(p)).max().unwrap_or(1);
    let timeout = RUN_BASE + RUN_PER_REQUEST.saturating_mul(u32::try_from(most).unwrap_or(u32::MAX));
    let lifetime = servers::GRANULE_READY
        .saturating_add(timeout.saturating_mul(u32::try_from(s.runs()).unwrap_or(u32::MAX)))
        .saturating_add(Duration::from_secs(120))
        .min(MAX_LIFETIME);
    let granule = servers::granule(s.regime, lifetime, &[])?;
    let redis = servers::redis(&redis_path, redis_pin.as_ref().map(|(t, c)| (t.as_path(), *c)), &[granule.port])?;
    let mut pair = Pair { granule, redis };

    let setup = Setup {
        regime: Cow::Borrowed(s.regime),
        granule_port: pair.granule.port,
        redis_port: pair.redis.port,
        redis_version,
        requests: s.requests,
        requests_pipelined: s.requests_pipelined,
        clients: s.clients,
        rounds: s.rounds,
        server_cpu: match (server_cpu, &redis_pin) {
            (Some(c), Some(_)) => c.to_string(),
            (Some(c), None) => format!("granule {c}, redis unpinned"),
            _ => "unpinned".into(),
        },
        benchmark_cpus: bench_pin.as_ref().map_or("unpinned".to_string(), |(_, l)| l.clone()),
        server_cpu_time: server_cpu_time(&pair),
    };

    let bench = Bench { program, pin: bench_pin, clients: s.clients, timeout };
    let pb = progress::bar(s.runs(), "serve");
    let measured = measure(&s, &bench, &mut pair, &pb);
    pb.finish_and_clear();
    let samples = measured?;

    // The clean shutdown of `granule serve`, then Redis.
    let Pair { mut granule, redis } = pair;
    match granule.child.stop() {
        Some(st) if st.success() => {}
        st => eprintln!(
            "granule serve-bench: warning: granule serve did not stop cleanly ({}){}",
            st.map_or("not reaped".to_string(), |st| st.to_string()),
            Some(granule.child.last_error_line()).filter(|l| !l.is_empty()).map_or(String::new(), |l| format!(": {l}"))
        ),
    }
    drop(redis);

    let mut records: Vec<Map<String, Value>> = vec![m.record(), setup.to_map()];
    records.extend(samples.iter().map(|s| s.record().to_map()));
    let mut compared = Vec::new();
    for &p in &s.pipelines {
        for &t in &s.tests {
            compared.push(summary::compare(&samples, s.regime, t, p));
        }
    }
    records.extend(compared.iter().map(Record::to_map));
    let met = compared.iter().filter(|r| r.meets_target).count();
    let mut note = String::new();
    if a.common.format == Format::Table {
        note.push_str(&format!(
            "requests_per_sec: as redis-benchmark reports it; server_cpu_s: the server process's CPU time over the run \
             (all threads; read as serve_bench_setup's server_cpu_time says); requests_per_cpu_s: requests / \
             server_cpu_s (empty when none was charged); order 1: that server ran first in its round (the first alternates); \
             load_cpu_share: redis-benchmark's own CPU time over the run's wall time (its one thread can use one CPU).\n\
             serve_vs_redis: medians over the rounds, ratios granule / redis; meets_target: both ratios >= 1.0. Target \
             met on {met} of {} (test, pipeline) points. paired_ratio_*: the median (and the range) of each round's \
             own ratio, its two runs back to back: the machine's drift between rounds cancels there.\n",
            s.pipelines.len() * s.tests.len()
        ));
        if let Some(bound) = summary::load_bound(&compared) {
            note.push_str(&bound);
        }
    }
    emit(a.common.format, &records, &note)?;
    Ok(())
}

/// How both servers' CPU time is read: one name, or each server's.
fn server_cpu_time(pair: &Pair) -> String {
    let (g, r) = (pair.granule.cpu.name(), pair.redis.cpu.name());
    if g == r {
        g.to_string()
    } else {
        format!("granule: {g}; redis: {r}")
    }
}

/// Every run: per round, pipeline and test, both servers back to back,
/// `granule serve` first in odd rounds and `redis-server` first in even
/// ones.
fn measure(s: &Settings, bench: &Bench, pair: &mut Pair, pb: &indicatif::ProgressBar) -> Result<Vec<Sample>> {
    let mut samples = Vec::new();
    for round in 1..=s.rounds {
        let order = if round % 2 == 1 { [Kind::Granule, Kind::Redis] } else { [Kind::Redis, Kind::Granule] };
        for &pipeline in &s.pipelines {
            for &test in &s.tests {
                for (i, kind) in order.into_iter().enumerate() {
                    pb.set_message(format!("round {round} -P {pipeline} {test} {}", kind.name()));
                    let requests = s.requests_at(pipeline);
                    let r = bench
                        .run(pair.get(kind), test, pipeline, requests)
                        .with_context(|| format!("round {round}, pipeline {pipeline}, test {test}"))?;
                    samples.push(Sample {
                        round,
                        server: kind,
                        test: test.to_string(),
                        pipeline,
                        order: i as u64 + 1,
                        requests,
                        requests_per_sec: r.requests_per_sec,
                        server_cpu_s: r.server_cpu_s,
                        load_cpu_s: r.load_cpu_s,
                        wall_s: r.wall_s,
                    });
                    pb.inc(1);
                }
            }
        }
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(f: impl FnOnce(&mut Args)) -> Args {
        let mut a = Args {
            common: super::super::Common { format: Format::Json },
            regime: "bkl".into(),
            rounds: 3,
            requests: 200_000,
            requests_pipelined: 1_000_000,
            clients: 50,
            pipeline: vec![1, 16],
            tests: vec!["set".into(), "get".into()],
        };
        f(&mut a);
        a
    }

    #[test]
    fn defaults_are_valid() {
        let s = Settings::new(&args(|_| {})).expect("defaults");
        assert_eq!(s.tests, ["set", "get"]);
        assert_eq!(s.pipelines, [1, 16]);
        assert_eq!(s.runs(), 24);
        assert_eq!((s.requests_at(1), s.requests_at(16), s.requests_at(2)), (200_000, 1_000_000, 1_000_000));
    }

    #[test]
    fn options_are_checked() {
        // The numbers are bounded by their parsers (tests/cli_bounds.rs).
        for bad in [
            args(|a| a.pipeline = vec![]),
            args(|a| a.tests = vec!["xadd".into()]),
            args(|a| a.tests = vec!["ping".into()]),
            args(|a| a.tests = vec![]),
            args(|a| a.regime = "none".into()),
            args(|a| a.regime = "bogus".into()),
        ] {
            assert!(Settings::new(&bad).is_err(), "{bad:?}");
        }
        let s = Settings::new(&args(|a| a.tests = vec![" GET".into(), "get".into(), "ping_mbulk".into()])).unwrap();
        assert_eq!(s.tests, ["get", "ping_mbulk"]);
    }
}
