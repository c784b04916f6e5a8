//! The `granule` commands run end to end with tiny durations and print
//! well-formed records: JSON Lines with the machine record first, CSV blocks,
//! and clear errors for bad options. Behaviour only, never timings.

mod common;

use common::{granule, of_kind, records};

#[test]
fn locks_json_has_machine_first_and_every_requested_measurement() {
    let (ok, out, err) = granule(&[
        "locks",
        "--locks",
        "ttas,clh,parking-lot,elided-clh",
        "--threads",
        "1,2",
        "--seconds",
        "0.02",
        "--runs",
        "1",
        "--pairs",
        "1000",
        "--format",
        "json",
    ]);
    assert!(ok, "granule locks failed: {err}");
    let rs = records(&out);
    assert_eq!(rs[0]["record"], "machine");
    assert!(rs[0]["cpu_model"].is_string() && rs[0]["tsc_ghz"].as_f64().unwrap() > 0.0);
    let unc = of_kind(&rs, "lock_uncontended");
    let con = of_kind(&rs, "lock_contended");
    let skipped = of_kind(&rs, "lock_skipped");
    let measured_elided = unc.iter().any(|r| r["lock"] == "elided-clh");
    assert_eq!(measured_elided, skipped.is_empty(), "elided-clh is either measured or skipped with a reason");
    let n = if measured_elided { 4 } else { 3 };
    assert_eq!(unc.len(), n);
    assert_eq!(con.len(), 2 * n, "one contended record per lock and thread count");
    for r in &unc {
        assert!(r["cycles_per_pair"].as_f64().unwrap() > 0.0);
        assert!(r["ratio_to_parking_lot"].is_number());
    }
    for r in &con {
        assert!(r["acquisitions_per_sec"].as_f64().unwrap() > 0.0);
        assert!([1, 2].contains(&r["threads"].as_u64().unwrap()));
    }
    for r in &skipped {
        assert!(r["reason"].as_str().unwrap().contains("RTM"));
    }
}

#[test]
fn quaject_prints_every_table_1_row() {
    let (ok, out, err) = granule(&["quaject", "--iterations", "200", "--runs", "1", "--format", "json"]);
    assert!(ok, "granule quaject failed: {err}");
    let rs = records(&out);
    assert_eq!(rs[0]["record"], "machine");
    let rows = of_kind(&rs, "quaject");
    for op in [
        "increment counter",
        "linked-list insert",
        "linked-list delete",
        "circular-queue insert",
        "circular-queue delete",
        "stack push",
        "stack pop",
    ] {
        let r = rows.iter().find(|r| r["operation"] == op).unwrap_or_else(|| panic!("missing row {op}"));
        assert_eq!(r["retries_per_op"].as_f64(), Some(1.0), "{op}: the 1-retry column retried exactly once");
        for col in ["nosync_cycles", "opt0_cycles", "opt1_cycles"] {
            assert!(r[col].is_number(), "{op}: {col}");
        }
        // A ratio is null only when its denominator, noise-corrected, is
        // below half a cycle (too small to divide by); otherwise a number.
        for (col, denominator) in [("opt0_over_nosync", "nosync_cycles"), ("opt1_over_opt0", "opt0_cycles")] {
            // (Fields are rounded to 2 decimals, so exactly 0.5 may go either way.)
            let d = r[denominator].as_f64().unwrap();
            if d != 0.5 {
                assert_eq!(r[col].is_number(), d > 0.5, "{op}: {col} with {denominator} = {d}");
            }
        }
    }
}

#[test]
fn info_reports_atomic_costs() {
    let (ok, out, err) = granule(&["info", "--samples", "1", "--format", "json"]);
    assert!(ok, "granule info failed: {err}");
    let rs = records(&out);
    assert_eq!(rs[0]["record"], "machine");
    let costs = of_kind(&rs, "atomic_cost");
    for insn in ["xchg", "lock xadd", "lock cmpxchg", "lock cmpxchg16b", "xbegin; xend"] {
        assert!(costs.iter().any(|c| c["instruction"] == insn), "missing {insn}");
    }
}

#[test]
fn csv_has_a_header_per_record_kind() {
    let (ok, out, err) = granule(&[
        "locks",
        "--locks",
        "ticket",
        "--threads",
        "1",
        "--seconds",
        "0.01",
        "--runs",
        "1",
        "--pairs",
        "100",
        "--format",
        "csv",
    ]);
    assert!(ok, "{err}");
    let headers: Vec<&str> = out.lines().filter(|l| l.starts_with("record,")).collect();
    assert_eq!(headers.len(), 3, "machine, lock_uncontended, lock_contended: {out}");
    assert!(headers[1].contains("cycles_per_pair"));
}

#[test]
fn bad_options_fail_with_a_clear_message() {
    let (ok, _, err) = granule(&["locks", "--locks", "nonsense"]);
    assert!(!ok);
    assert!(err.contains("unknown lock `nonsense`") && err.contains("known locks"), "{err}");
    assert!(!err.contains("backtrace"), "errors are one line, not a backtrace: {err}");
    let (ok, _, err) = granule(&["locks", "--threads", "0"]);
    assert!(!ok);
    assert!(err.contains("--threads"), "{err}");
}

#[test]
fn granule_alone_says_where_to_start_and_succeeds() {
    let (ok, out, err) = granule(&[]);
    assert!(ok, "exit status: {err}");
    for what in
        ["granule suite", "cargo run --release -- suite", "report/index.html", "results.jsonl", "granule --help"]
    {
        assert!(out.contains(what), "no {what:?} in: {out}");
    }
    assert!(out.lines().count() <= 20, "a short start, not the help: {out}");
}

#[test]
fn help_lists_suite_first_and_report_next() {
    let (ok, out, err) = granule(&["--help"]);
    assert!(ok, "{err}");
    let commands: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(commands.get(..2), Some(&["suite", "report"][..]), "{out}");
}

#[test]
fn the_lock_profiler_option_is_lock_stats_not_profile() {
    for command in ["ipc", "scale", "kv"] {
        let (ok, out, _) = granule(&[command, "--help"]);
        assert!(ok);
        assert!(out.contains("--lock-stats"), "{command}: {out}");
        assert!(!out.contains("--profile"), "{command}: {out}");
        let (ok, _, err) = granule(&[command, "--profile"]);
        assert!(!ok && err.contains("--profile"), "{command}: {err}");
    }
}
