//! `granule serve-bench` end to end: a tiny invocation against real
//! `redis-server` and `redis-benchmark` where both are installed (skipped
//! otherwise), and its option checks. Behaviour only, never timings or
//! ratios.

#[allow(dead_code)]
mod common;

use std::process::{Command, Stdio};

use common::{granule, of_kind, records};

/// Whether `program --version` runs.
fn installed(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn tiny_run_has_every_record_with_positive_numbers() {
    let server = std::env::var("GRANULE_REDIS_SERVER").ok().filter(|s| !s.is_empty());
    let missing: Vec<&str> = [server.as_deref().unwrap_or("redis-server"), "redis-benchmark"]
        .into_iter()
        .filter(|p| !installed(p))
        .collect();
    if !missing.is_empty() {
        eprintln!("skipped: {} not installed (apt-get install redis-server redis-tools)", missing.join(" and "));
        return;
    }
    let (ok, out, err) = granule(&[
        "serve-bench",
        "--rounds",
        "1",
        "--requests",
        "2000",
        "--requests-pipelined",
        "3000",
        "--pipeline",
        "1,16",
        "--format",
        "json",
    ]);
    assert!(ok, "granule serve-bench failed: {err}");
    let rs = records(&out);
    assert_eq!(rs[0]["record"], "machine");
    let setup = of_kind(&rs, "serve_bench_setup");
    assert_eq!(setup.len(), 1);
    assert_eq!(setup[0]["regime"], "bkl");
    assert_eq!(setup[0]["requests"], 2000);
    assert_eq!(setup[0]["requests_pipelined"], 3000);
    // Linux lets a process read its children's CPU-time clocks.
    assert_eq!(setup[0]["server_cpu_time"], "process CPU-time clock (ns)", "{}", setup[0]);
    for port in ["granule_port", "redis_port"] {
        assert!(setup[0][port].as_u64().is_some_and(|p| p > 0 && p != 6379), "{port} in {}", setup[0]);
    }

    let runs = of_kind(&rs, "serve_bench");
    // The default tests: 1 round × 2 pipelines × 7 tests × 2 servers.
    let tests = ["set", "get", "lpush", "sadd", "lrange_100", "zpopmin", "mset"];
    assert_eq!(runs.len(), 28, "{out}");
    for server in ["granule", "redis"] {
        for test in tests {
            for pipeline in [1, 16] {
                let n = runs
                    .iter()
                    .filter(|r| r["server"] == server && r["test"] == test && r["pipeline"] == pipeline)
                    .count();
                assert_eq!(n, 1, "{server} {test} -P {pipeline}");
            }
        }
    }
    for r in &runs {
        assert_eq!(r["round"], 1);
        assert!(r["order"] == 1 || r["order"] == 2, "{r}");
        assert_eq!(r["requests"], if r["pipeline"] == 1 { 2000 } else { 3000 }, "{r}");
        assert!(r["requests_per_sec"].as_f64().is_some_and(|x| x > 0.0), "{r}");
        assert!(r["server_cpu_s"].as_f64().is_some_and(|x| x >= 0.0), "{r}");
        // None when the run was charged no CPU time.
        let xput = &r["requests_per_cpu_s"];
        assert!(xput.is_null() || xput.as_f64().is_some_and(|x| x > 0.0), "{r}");
        // redis-benchmark did work (its CPU time, in 10 ms ticks, may round
        // to nothing on a short run) and cannot have used more than its
        // one thread's CPU over the run's wall time (`load_cpu_s / share`),
        // with room for two ticks of rounding (a run of a few milliseconds
        // can be charged 30 ms).
        let cpu = r["load_cpu_s"].as_f64().expect("load_cpu_s");
        let share = r["load_cpu_share"].as_f64().expect("load_cpu_share");
        assert!(cpu >= 0.0 && share >= 0.0, "{r}");
        let wall = if share > 0.0 { cpu / share } else { f64::INFINITY };
        assert!(cpu <= wall * 1.1 + 0.02 + 1e-9, "{r}");
    }

    let summary = of_kind(&rs, "serve_vs_redis");
    assert_eq!(summary.len(), 14, "{out}");
    for s in &summary {
        assert_eq!(s["rounds"], 1);
        for f in ["granule_requests_per_sec", "redis_requests_per_sec", "ratio_rps"] {
            assert!(s[f].as_f64().is_some_and(|x| x > 0.0), "{f} in {s}");
        }
        for f in ["granule_load_cpu_share", "redis_load_cpu_share"] {
            assert!(s[f].as_f64().is_some_and(|x| x >= 0.0), "{f} in {s}");
        }
        for f in ["granule_requests_per_cpu_s", "redis_requests_per_cpu_s", "ratio_xput"] {
            assert!(s[f].is_null() || s[f].as_f64().is_some_and(|x| x > 0.0), "{f} in {s}");
        }
        assert!(s["meets_target"].is_boolean(), "{s}");
    }
}

#[test]
fn bad_options_are_one_line_errors() {
    for (args, says) in [
        (&["--rounds", "0"][..], "--rounds"),
        (&["--requests", "0"][..], "--requests"),
        (&["--requests-pipelined", "0"][..], "--requests-pipelined"),
        (&["--clients", "10001"][..], "--clients"),
        (&["--pipeline", "0"][..], "--pipeline"),
        (&["--tests", "xadd"][..], "xadd"),
        (&["--tests", "ping"][..], "ping_mbulk"),
        (&["--regime", "none"][..], "none"),
    ] {
        let mut all = vec!["serve-bench"];
        all.extend_from_slice(args);
        let (ok, out, err) = granule(&all);
        assert!(!ok, "{all:?} succeeded: {out}");
        assert!(out.is_empty(), "{all:?} printed records: {out}");
        assert!(err.contains(says) && err.trim().lines().count() == 1, "{all:?}: {err}");
    }
}
