//! `granule ipc --instructions` end to end: where valgrind is installed,
//! every regime of the kernel's `roundtrip` example reports a positive
//! instruction count per round trip, and the JSON Lines and CSV it prints
//! read back through the record type that wrote them; everywhere, its
//! refusals are one clear line. Instruction counts only, never timings.

#[allow(dead_code)]
mod common;
#[allow(dead_code)]
#[path = "../src/csv.rs"]
mod csv;
#[allow(dead_code)]
#[path = "../src/cmd/ipc/instructions/record.rs"]
mod record;

use std::process::Command;

use common::{granule, of_kind, records};
use record::IpcInstructionsRecord;
use serde_json::{Map, Value};

/// The regimes of the `roundtrip` example, in its order.
const EXAMPLE_REGIMES: [&str; 6] = ["none", "bkl", "bkl-ticket", "bkl-mcs", "fine", "lockfree"];

/// Whether `valgrind` runs here; if not, says the test is skipped.
fn valgrind_or_skip(test: &str) -> bool {
    let ok = Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("{test}: skipped, valgrind is not installed (Debian package `valgrind`)");
    }
    ok
}

/// The checks every record must pass: a plausible count that is the
/// arithmetic of its two totals, and its difference to `none`'s.
fn check(rs: &[IpcInstructionsRecord], short: u64, long: u64) {
    let none = rs.iter().find(|r| r.regime == "none").map(|r| r.instructions_per_round_trip);
    for r in rs {
        let per = r.instructions_per_round_trip;
        assert!(per > 0.0 && per < 100_000.0, "{r:?}");
        assert_eq!((r.iterations_short, r.iterations_long), (short, long), "{r:?}");
        assert!(r.ir_long > r.ir_short && r.ir_short > 0, "{r:?}");
        assert_eq!(per, (r.ir_long - r.ir_short) as f64 / (long - short) as f64, "{r:?}");
        let extra = none.map(|n| per - n);
        assert_eq!(r.extra_instructions_over_none, extra, "{r:?}");
        assert_eq!(r.extra_instructions_per_call, extra.map(|e| e / 2.0), "{r:?}");
    }
}

#[test]
fn every_regime_counts_instructions_and_reads_back() {
    if !valgrind_or_skip("every_regime_counts_instructions_and_reads_back") {
        return;
    }
    let (ok, out, err) = granule(&["ipc", "--instructions", "--format", "json"]);
    assert!(ok, "granule ipc --instructions failed: {err}");
    let rs = records(&out);
    assert_eq!(rs[0]["record"], "machine");
    let skipped: Vec<&Value> = of_kind(&rs, "regime_skipped");
    assert_eq!(skipped.len(), 1, "{out}");
    assert_eq!(skipped[0]["regime"], "rtm");
    let counted: Vec<IpcInstructionsRecord> = of_kind(&rs, "ipc_instructions")
        .into_iter()
        .map(|r| serde_json::from_value(r.clone()).unwrap_or_else(|e| panic!("{r} does not read back: {e}")))
        .collect();
    let regimes: Vec<&str> = counted.iter().map(|r| r.regime.as_str()).collect();
    assert_eq!(regimes, EXAMPLE_REGIMES);
    check(&counted, 1000, 3000);
    assert_eq!(counted[0].extra_instructions_over_none, Some(0.0));

    // CSV, other run lengths: the ipc_instructions block reads back too.
    let (ok, out, err) = granule(&[
        "ipc",
        "--instructions",
        "--regimes",
        "bkl,none",
        "--instr-short",
        "200",
        "--instr-long",
        "700",
        "--format",
        "csv",
    ]);
    assert!(ok, "granule ipc --instructions --format csv failed: {err}");
    let block: Vec<&str> = out
        .split("\n\n")
        .find(|b| b.lines().nth(1).is_some_and(|l| l.starts_with("ipc_instructions,")))
        .map_or_else(|| panic!("no ipc_instructions block in {out}"), |b| b.lines().collect());
    let header = csv::split(block[0]);
    let counted: Vec<IpcInstructionsRecord> = block[1..]
        .iter()
        .map(|line| {
            let row: Map<String, Value> =
                header.iter().cloned().zip(csv::split(line).iter().map(|c| csv::value(c))).collect();
            serde_json::from_value(Value::Object(row)).unwrap_or_else(|e| panic!("{line} does not read back: {e}"))
        })
        .collect();
    let regimes: Vec<&str> = counted.iter().map(|r| r.regime.as_str()).collect();
    assert_eq!(regimes, ["bkl", "none"]);
    check(&counted, 200, 700);
}

#[test]
fn refusals_are_one_clear_line() {
    let refused = |args: &[&str], path: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_granule"));
        cmd.args(args);
        if let Some(p) = path {
            cmd.env("PATH", p);
        }
        let out = cmd.output().expect("run granule");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success(), "granule {args:?} succeeded");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("granule: error: "), "{err}");
        err
    };
    // No valgrind on PATH: say to install it, and print no number.
    let err = refused(&["ipc", "--instructions"], Some("/nonexistent/granule-no-valgrind"));
    assert!(err.contains("valgrind is not on PATH") && err.contains("apt-get install valgrind"), "{err}");
    let err = refused(&["ipc", "--instructions", "--instr-short", "3000", "--instr-long", "3000"], None);
    assert!(err.contains("--instr-long (3000) must be more than --instr-short (3000)"), "{err}");
    let err = refused(&["ipc", "--instructions", "--regimes", "rtm"], None);
    assert!(err.contains("none of the selected regimes is in the roundtrip example"), "{err}");
    let err = refused(&["ipc", "--instr-long", "5000"], None);
    assert!(err.contains("--instructions"), "{err}");
    let err = refused(&["ipc", "--instructions", "--runs", "3"], None);
    assert!(err.contains("--instructions") && err.contains("--runs"), "{err}");
    if valgrind_or_skip("refusals_are_one_clear_line (--roundtrip-bin)") {
        let err = refused(&["ipc", "--instructions", "--roundtrip-bin", "/nonexistent/granule-roundtrip"], None);
        assert!(err.contains("--roundtrip-bin /nonexistent/granule-roundtrip: no such file"), "{err}");
    }
}
