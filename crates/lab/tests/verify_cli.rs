//! `granule verify` runs a bounded verification end to end: every regime
//! runs, every kind of check is exercised, the records say so, and a
//! deliberately broken log is caught and reported with a seed and a minimal
//! reproduction. Behaviour only, never timings.

mod common;

use common::{granule, of_kind, records};
use serde_json::Value;

fn field(r: &Value, f: &str) -> u64 {
    r[f].as_u64().unwrap_or_else(|| panic!("{f} in {r}"))
}

/// Run a bounded verification and check its records.
fn bounded(extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["verify", "--programs", "50", "--format", "json"];
    args.extend_from_slice(extra);
    let (ok, out, err) = granule(&args);
    assert!(ok, "granule verify failed: {err}");
    let rs = records(&out);
    assert_eq!(rs[0]["record"], "machine");
    let per = of_kind(&rs, "verify");
    let regimes: Vec<&str> = per.iter().map(|r| r["regime"].as_str().unwrap()).collect();
    let skipped: Vec<&str> = of_kind(&rs, "regime_skipped").iter().map(|r| r["regime"].as_str().unwrap()).collect();
    // `all` is every regime, in table order; only `rtm` may be skipped (no
    // RTM on this CPU), with its reason.
    let mut expected = vec!["none", "bkl", "bkl-ticket", "bkl-mcs", "fine", "rtm", "rtm-fallback", "lockfree"];
    expected.retain(|r| !skipped.contains(r));
    assert_eq!(regimes, expected);
    assert!(skipped.iter().all(|r| *r == "rtm"), "{skipped:?}");
    for r in &per {
        for f in ["programs", "syscalls", "invariant_checks", "messages_checked"] {
            assert!(field(r, f) > 0, "{f} in {r}");
        }
        assert!(field(r, "determinism_checks") > 0, "{r}");
        assert_eq!(field(r, "violations"), 0, "{r}");
        assert!(field(r, "invariant_checks") >= field(r, "syscalls"), "checked after every system call: {r}");
    }
    // `none` runs only the single-core programs; the lock regimes run all.
    let (none, bkl) = (per[0], per[1]);
    assert_eq!(field(bkl, "programs"), 50);
    assert!(field(none, "programs") < 50);
    let lin: u64 = per.iter().map(|r| field(r, "linearizability_checks")).sum();
    assert!(lin > 0, "some history was small enough for the linearizability check");
    assert!(per.iter().map(|r| field(r, "replies_checked")).sum::<u64>() > 0);
    let sum = of_kind(&rs, "verify_summary");
    assert_eq!(sum.len(), 1);
    assert_eq!(field(sum[0], "programs"), 50);
    assert_eq!(field(sum[0], "violations"), 0);
    assert_eq!(field(sum[0], "failing_programs"), 0);
    let shapes: u64 =
        ["small_programs", "single_core_programs", "large_programs"].iter().map(|f| field(sum[0], f)).sum();
    assert_eq!(shapes, 50);
    rs
}

#[test]
fn bounded_verification_passes_under_every_regime() {
    let rs = bounded(&[]);
    assert_eq!(of_kind(&rs, "verify_summary")[0]["fault_injection"], false);
}

#[test]
fn bounded_verification_passes_with_fault_injection() {
    let rs = bounded(&["--fault-injection", "--seed", "1000"]);
    assert_eq!(of_kind(&rs, "verify_summary")[0]["fault_injection"], true);
}

#[test]
fn a_broken_log_is_caught_with_seed_and_minimal_reproduction() {
    let (ok, out, err) =
        granule(&["verify", "--programs", "4", "--regimes", "bkl", "--inject-bug", "--format", "json"]);
    assert!(!ok, "a dropped message must fail verification: {err}");
    assert!(err.contains("VIOLATION in program seed"), "{err}");
    assert!(err.contains("[conservation]") && err.contains("received 0 times"), "{err}");
    assert!(err.contains("reproduce: granule verify --regimes bkl --cores 2 --seed "), "{err}");
    assert!(err.contains("--programs 1 --inject-bug"), "{err}");
    assert!(err.contains("minimal reproduction") && err.contains("thread t0"), "{err}");
    assert!(err.contains("granule: error:") && err.contains("violated a check"), "{err}");
    // The records are still printed, and count the violations.
    let rs = records(&out);
    assert!(field(of_kind(&rs, "verify")[0], "violations") > 0);
    assert!(field(of_kind(&rs, "verify_summary")[0], "failing_programs") > 0);
    // Each violation is a record too, with what stderr said.
    let v = of_kind(&rs, "verify_violation");
    assert!(!v.is_empty(), "{out}");
    assert_eq!(v[0]["regime"], "bkl");
    assert_eq!(v[0]["check"], "conservation");
    assert!(v[0]["detail"].as_str().unwrap().contains("received 0 times"), "{out}");
    let again = v[0]["reproduce"].as_str().unwrap();
    assert!(again.starts_with("granule verify --regimes bkl --cores 2 --seed ") && again.ends_with("--inject-bug"));
    assert!(err.contains(&format!("reproduce: {again}")), "{err}");
}

#[test]
fn single_core_verification_and_bad_options() {
    let (ok, out, err) =
        granule(&["verify", "--cores", "1", "--programs", "6", "--regimes", "none,bkl", "--format", "csv"]);
    assert!(ok, "{err}");
    let row = out.lines().find(|l| l.starts_with("verify,none,")).unwrap_or_else(|| panic!("{out}"));
    assert!(row.contains(",6,"), "every program is single-core, so `none` runs them all: {row}");
    let (ok, _, err) = granule(&["verify", "--regimes", "bkl,nonsense"]);
    assert!(!ok);
    assert!(err.contains("invalid value 'nonsense' for '--regimes") && err.contains("rtm-fallback"), "{err}");
    assert_eq!(err.lines().count(), 1, "one line, no backtrace: {err}");
    let (ok, _, err) = granule(&["verify", "--cores", "0"]);
    assert!(!ok && err.contains("--cores"), "{err}");
}
