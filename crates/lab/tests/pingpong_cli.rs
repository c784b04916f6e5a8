//! `granule ipc` and `granule scale` run end to end with tiny durations and
//! print well-formed records. Behaviour only, never timings.

mod common;

use common::{granule, of_kind, records};

#[test]
fn ipc_json_has_one_record_per_regime_with_ratios_to_none() {
    let (ok, out, err) = granule(&["ipc", "--runs", "2", "--seconds", "0.02", "--warmup", "0.01", "--format", "json"]);
    assert!(ok, "granule ipc failed: {err}");
    let rs = records(&out);
    assert_eq!(rs[0]["record"], "machine");
    let ipc = of_kind(&rs, "ipc");
    let regimes: Vec<&str> = ipc.iter().map(|r| r["regime"].as_str().unwrap()).collect();
    let skipped: Vec<&str> = of_kind(&rs, "regime_skipped").iter().map(|r| r["regime"].as_str().unwrap()).collect();
    // `all` (the default): every regime either ran or was skipped with a reason.
    let mut all: Vec<&str> = regimes.iter().chain(&skipped).copied().collect();
    all.sort_unstable();
    assert_eq!(all, ["bkl", "bkl-mcs", "bkl-ticket", "fine", "lockfree", "none", "rtm"]);
    assert!(regimes.starts_with(&["none", "bkl", "bkl-ticket", "bkl-mcs", "fine"]), "{regimes:?}");
    for r in of_kind(&rs, "regime_skipped") {
        assert!(r["reason"].as_str().is_some_and(|x| x.contains("RTM")), "{r}");
    }
    for r in &ipc {
        assert_eq!(r["runs"], 2);
        // Atomics were counted for every regime (none: zero).
        assert!(r["atomics_per_call"].as_f64().is_some_and(|x| x >= 0.0), "{r}");
        assert!(r["meets_target"].is_boolean(), "{r}");
        for f in ["round_trip_cycles_mean", "round_trip_cycles_std", "round_trip_ns_mean", "ratio_to_none"] {
            assert!(r[f].as_f64().is_some_and(|x| x >= 0.0), "{f} in {r}");
        }
        assert!(r["round_trip_cycles_mean"].as_f64().unwrap() > 0.0);
        assert!(r["extra_cycles_per_call"].is_number());
    }
    assert_eq!(ipc[0]["ratio_to_none"].as_f64(), Some(1.0));
    assert_eq!(ipc[0]["atomics_per_call"].as_f64(), Some(0.0));
    // The big CLH lock: one xchg per call; fine: the read side (its core's
    // lock, which holds the current thread) plus the endpoint's and the
    // reply object's locks (the partner is held with them), one lock xadd
    // each (timer ticks add a few more).
    let bkl = ipc.iter().find(|r| r["regime"] == "bkl").unwrap();
    assert!((bkl["xchg_per_call"].as_f64().unwrap() - 1.0).abs() < 0.1, "{bkl}");
    let fine = ipc.iter().find(|r| r["regime"] == "fine").unwrap();
    assert!((fine["xadd_per_call"].as_f64().unwrap() - 3.0).abs() < 0.1, "{fine}");
    // lockfree: per call the gate's lock add, counted with the lock xadds
    // (timer ticks add a few more), and two lock cmpxchg on the endpoint,
    // link and reply words.
    let lf = ipc.iter().find(|r| r["regime"] == "lockfree").unwrap();
    assert!((lf["cmpxchg_per_call"].as_f64().unwrap() - 2.0).abs() < 0.1, "{lf}");
    assert!(lf["xadd_per_call"].as_f64().unwrap() >= 1.0, "{lf}");
    // No management entry (its `SeqCst` store of the gate's flag, an xchg)
    // on the ping-pong path.
    assert!(lf["xchg_per_call"].as_f64().unwrap() < 0.01, "{lf}");
}

#[test]
fn ipc_profile_prints_the_lock_profile() {
    let (ok, out, err) =
        granule(&["ipc", "--regimes", "none,bkl", "--runs", "1", "--seconds", "0.02", "--warmup", "0", "--lock-stats"]);
    assert!(ok, "granule ipc --lock-stats failed: {err}");
    assert!(out.contains("== lock profile: bkl"), "{out}");
    assert!(out.contains("wait_max") && out.contains("cnt_lock"), "{out}");
    let (ok, out, err) = granule(&[
        "ipc",
        "--regimes",
        "bkl",
        "--runs",
        "1",
        "--seconds",
        "0.02",
        "--warmup",
        "0",
        "--lock-stats",
        "--format",
        "json",
    ]);
    assert!(ok, "{err}");
    let rs = records(&out);
    let prof = of_kind(&rs, "lock_profile");
    assert!(!prof.is_empty());
    assert!(prof.iter().any(|p| p["acquisitions"].as_u64().unwrap() > 0));
}

#[test]
fn scale_csv_and_json_cover_every_point() {
    let (ok, out, err) = granule(&[
        "scale",
        "--regimes",
        "none,bkl,fine",
        "--cores",
        "1..2",
        "--delays",
        "0,1000",
        "--warmup",
        "0.01",
        "--seconds",
        "0.02",
        "--format",
        "json",
    ]);
    assert!(ok, "granule scale failed: {err}");
    let rs = records(&out);
    assert_eq!(rs[0]["record"], "machine");
    let pts = of_kind(&rs, "scale");
    assert_eq!(pts.len(), 3 * 2 * 2, "regimes x cores x delays");
    for p in &pts {
        assert!(p["round_trips_per_sec"].as_f64().unwrap() > 0.0);
        let u = p["utilisation"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&u), "{p}");
        assert_eq!(p["run"], 1);
        assert!([1, 2].contains(&p["cores"].as_u64().unwrap()));
        assert!([0, 1000].contains(&p["delay_cycles"].as_u64().unwrap()));
    }
    // One speedup per regime and delay (2 cores over 1), each with none's.
    let sp = of_kind(&rs, "scale_speedup");
    assert_eq!(sp.len(), 3 * 2, "regimes x delays");
    for s in &sp {
        assert_eq!(s["cores"], 2, "{s}");
        let rate = |k: &str| s[k].as_f64().unwrap();
        let speedup = rate("round_trips_per_sec") / rate("one_core_round_trips_per_sec");
        assert!((rate("speedup") - speedup).abs() < 1e-9 * speedup, "{s}");
        let none = sp.iter().find(|n| n["regime"] == "none" && n["delay_cycles"] == s["delay_cycles"]).unwrap();
        assert_eq!(s["none_speedup"], none["speedup"], "{s}");
        assert!((rate("of_none") - rate("speedup") / rate("none_speedup")).abs() < 1e-9, "{s}");
    }
    let (ok, out, err) = granule(&[
        "scale",
        "--regimes",
        "bkl-mcs",
        "--cores",
        "2",
        "--delays",
        "500",
        "--warmup",
        "0",
        "--seconds",
        "0.02",
        "--format",
        "csv",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("record,regime,cores,delay_cycles,run,round_trips_per_sec"), "{out}");
}

#[test]
fn scale_profile_reports_what_the_profiler_saw() {
    let (ok, out, err) = granule(&[
        "scale",
        "--regimes",
        "none,bkl,rtm",
        "--cores",
        "1",
        "--delays",
        "0",
        "--warmup",
        "0",
        "--seconds",
        "0.02",
        "--lock-stats",
        "--format",
        "json",
    ]);
    assert!(ok, "granule scale --lock-stats failed: {err}");
    let rs = records(&out);
    for p in of_kind(&rs, "scale") {
        match p["regime"].as_str().unwrap() {
            "none" => assert_eq!(p["profiled"], false, "{p}"),
            "bkl" => {
                assert_eq!(p["profiled"], true, "{p}");
                assert!(p["lock_acquisitions"].as_u64().unwrap() > 0, "{p}");
                // A lock, not a transaction: no abort rate.
                assert_eq!(p["transactions"], 0, "{p}");
                assert!(p["abort_rate"].is_null(), "{p}");
            }
            // Where RTM works: transactions, and a rate that is a fraction.
            "rtm" => {
                assert!(p["transactions"].as_u64().unwrap() > 0, "{p}");
                assert!(p["abort_rate"].as_f64().is_some_and(|r| (0.0..=1.0).contains(&r)), "{p}");
            }
            other => panic!("unexpected regime {other}"),
        }
    }
}

#[test]
fn bad_options_fail_with_a_clear_message() {
    let (ok, _, err) = granule(&["ipc", "--regimes", "coarse", "--runs", "1", "--seconds", "0.01"]);
    assert!(!ok);
    assert!(err.contains("invalid value 'coarse' for '--regimes") && err.contains("lockfree"), "{err}");
    // `rtm` runs where RTM works, and is refused with the reason elsewhere.
    let (ok, out, err) =
        granule(&["ipc", "--regimes", "rtm", "--runs", "1", "--seconds", "0.01", "--warmup", "0", "--format", "json"]);
    if ok {
        assert_eq!(of_kind(&records(&out), "ipc")[0]["regime"], "rtm");
    } else {
        assert!(err.contains("none of the selected regimes can run"), "{err}");
    }
    let (ok, _, err) = granule(&["scale", "--cores", "0..2", "--seconds", "0.01"]);
    assert!(!ok);
    assert!(err.contains("expected counts in 1..=64"), "{err}");
}
