//! One `redis-benchmark` run against one server, with the server's CPU
//! time read around it.
//!
//! `redis-benchmark -h 127.0.0.1 -p PORT -c C -n N -t TEST -P D --csv`: one
//! test per invocation, so that the CPU time charged to the server between
//! the two readings is that test's. The server's CPU time is its process's
//! CPU-time clock, all threads, in nanoseconds ([`crate::cmd::kv::cpu_time`]). The
//! load generator's own CPU time is read in ticks of 10 ms (utime + stime),
//! as this process's reaped children's (the servers
//! are never reaped during a run): `redis-benchmark` is one thread, so its
//! share of one CPU near 1 says the run measured the load generator as much
//! as the server. The run is bounded: a
//! `redis-benchmark` that cannot reach its server spins forever, so it is
//! killed when the server exits, at its deadline, or at Ctrl-C.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};

use super::child::{interrupted, last_line, Child, Stop};
use super::servers::Server;
use crate::cmd::kv::linux::{reaped_children_ticks, USER_HZ};

/// How often a running benchmark is polled.
const POLL: Duration = Duration::from_millis(5);

/// How every run is made.
#[derive(Clone, Debug)]
pub struct Bench {
    /// The `redis-benchmark` executable.
    pub program: PathBuf,
    /// `taskset` and the CPU list to run it on, if pinned.
    pub pin: Option<(PathBuf, String)>,
    /// `-c`.
    pub clients: u64,
    /// Longest one run may take.
    pub timeout: Duration,
}

/// What one run measured.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    /// As `redis-benchmark` reports it.
    pub requests_per_sec: f64,
    /// CPU time charged to the server over the run, seconds.
    pub server_cpu_s: f64,
    /// CPU time of `redis-benchmark` itself over the run, seconds.
    pub load_cpu_s: f64,
    /// Wall-clock time from starting `redis-benchmark` to reaping it,
    /// seconds.
    pub wall_s: f64,
}

impl Bench {
    /// The command line of one run of `requests` against `port`.
    fn command(&self, port: u16, test: &str, pipeline: u64, requests: u64) -> Command {
        let mut c = match &self.pin {
            Some((taskset, cpus)) => {
                let mut c = Command::new(taskset);
                c.arg("-c").arg(cpus).arg(&self.program);
                c
            }
            None => Command::new(&self.program),
        };
        c.args(["-h", "127.0.0.1", "-p", &port.to_string()])
            .args(["-c", &self.clients.to_string(), "-n", &requests.to_string()])
            .args(["-t", test, "-P", &pipeline.to_string(), "--csv"]);
        c
    }

    /// Run test `test` at pipeline depth `pipeline` against `server`,
    /// `requests` requests.
    pub fn run(&self, server: &mut Server, test: &str, pipeline: u64, requests: u64) -> Result<Measured> {
        let what = format!("redis-benchmark -t {test} -P {pipeline} against {}", server.kind.name());
        let before = server.cpu.read_s()?;
        let load_before = reaped_children_ticks()?;
        let started = Instant::now();
        let mut bench = Child::spawn(
            "redis-benchmark",
            &mut self.command(server.port, test, pipeline, requests),
            true,
            Stop::Kill,
        )?;
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            if let Some(s) = bench.exited()? {
                break s;
            }
            if let Some(s) = server.child.exited()? {
                bench.stop();
                let why = server.child.last_error_line();
                bail!("{} exited ({s}) during {what}{}", server.child.name(), colon(&why));
            }
            if interrupted() {
                bail!("interrupted during {what}");
            }
            if Instant::now() >= deadline {
                bench.stop();
                bail!("{what} did not finish within {:?}", self.timeout);
            }
            std::thread::sleep(POLL);
        };
        let wall_s = started.elapsed().as_secs_f64();
        let after = server.cpu.read_s()?;
        let load_after = reaped_children_ticks()?;
        let (out, err) = bench.output();
        if !status.success() {
            let line = last_line(if err.trim().is_empty() { &out } else { &err });
            bail!("{what} failed ({status}){}", colon(line));
        }
        let requests_per_sec = requests_per_sec(&out, test).ok_or_else(|| {
            anyhow!(
                "{what} printed no {} result{}",
                test.to_ascii_uppercase(),
                colon(last_line(&format!("{out}\n{err}")))
            )
        })?;
        Ok(Measured {
            requests_per_sec,
            server_cpu_s: (after - before).max(0.0),
            load_cpu_s: load_after.saturating_sub(load_before) as f64 / USER_HZ,
            wall_s,
        })
    }
}

/// `: text`, or nothing when `text` is empty.
fn colon(text: &str) -> String {
    if text.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", text.trim())
    }
}

/// The requests per second `redis-benchmark` printed for `test`, in either
/// of its formats: `--csv` (`"SET","84245.99",…`, with a header line since
/// Redis 7) or `-q` (`SET: 84245.99 requests per second, …`). Test names
/// match case-insensitively, on their first word (`MSET (10 keys)`).
pub fn requests_per_sec(text: &str, test: &str) -> Option<f64> {
    let want = test.to_ascii_uppercase();
    let named = |name: &str| name.split_whitespace().next().is_some_and(|w| w.eq_ignore_ascii_case(&want));
    let positive = |x: &str| x.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0);
    for line in text.split(['\n', '\r']) {
        let fields: Vec<&str> = line.split(',').map(|f| f.trim().trim_matches('"')).collect();
        if fields.len() >= 2 && named(fields[0]) {
            if let Some(v) = positive(fields[1]) {
                return Some(v);
            }
        }
        if let Some((name, rest)) = line.split_once(':') {
            if named(name) && rest.contains("requests per second") {
                if let Some(v) = rest.split_whitespace().next().and_then(positive) {
                    return Some(v);
                }
            }
        }
    }
    None
}

/// Whether `program` runs (`--version`); the error says how to install it.
pub fn check(program: &Path) -> Result<(), String> {
    let out = Command::new(program).arg("--version").output();
    match out {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!("{} --version failed ({})", program.display(), o.status)),
        Err(e) => Err(format!("{} does not run ({e})", program.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_header() {
        let out = "\"test\",\"rps\",\"avg_latency_ms\"\n\"SET\",\"434782.59\",\"1.421\"\n";
        assert_eq!(requests_per_sec(out, "set"), Some(434782.59));
        assert_eq!(requests_per_sec(out, "get"), None);
    }

    #[test]
    fn csv_without_header_and_other_tests() {
        let out = "\"PING_INLINE\",\"100.5\"\n\"PING_MBULK\",\"200.25\"\n\"MSET (10 keys)\",\"7\"\n";
        assert_eq!(requests_per_sec(out, "ping_mbulk"), Some(200.25));
        assert_eq!(requests_per_sec(out, "PING_INLINE"), Some(100.5));
        assert_eq!(requests_per_sec(out, "mset"), Some(7.0));
    }

    #[test]
    fn quiet_format_after_progress() {
        let out = "GET: rps=0.0 (overall: 0.0) avg_msec=-nan\rGET: rps=44338.6 (overall: 44162.7)\r\
                   GET: 43572.98 requests per second, p50=0.735 msec\n";
        assert_eq!(requests_per_sec(out, "get"), Some(43572.98));
    }

    #[test]
    fn nothing_useful() {
        assert_eq!(requests_per_sec("", "set"), None);
        assert_eq!(requests_per_sec("\"SET\",\"0\"\n\"SET\",\"nan\"\n", "set"), None);
        assert_eq!(requests_per_sec("Could not connect to Redis at 127.0.0.1:1: Connection refused", "set"), None);
    }
}
