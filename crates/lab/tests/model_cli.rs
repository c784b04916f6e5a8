//! `granule model predict|fit|simulate|validate` and `granule scale --fit`
//! run end to end: well-formed records, values the model fixes exactly,
//! fits that recover the parameters their input was made from, and the
//! validation's exit status. Behaviour only, never timings.

mod common;

use std::path::PathBuf;

use common::{granule, of_kind, records};
use granule_model::Repairman;
use serde_json::Value;

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("granule-model-cli-{}-{name}", std::process::id()))
}

/// Run `granule ARGS --format json`, which must succeed: its records.
fn run_json(args: &[&str]) -> Vec<Value> {
    let (ok, out, err) = granule(&[args, &["--format", "json"]].concat());
    assert!(ok, "{args:?}: {err}");
    records(&out)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn predict_gives_the_models_values_and_a_plot() {
    let plot = temp("predict.svg");
    let rs = run_json(&[
        "model",
        "predict",
        "--service",
        "100",
        "--delay",
        "1000",
        "--cores",
        "1..4",
        "--ghz",
        "2",
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert_eq!(rs[0]["record"], "machine");
    let p = of_kind(&rs, "model_predict");
    assert_eq!(p.len(), 4);
    // One core: X = 1/(s + a), utilisation s/(s + a).
    assert!((f(&p[0]["throughput"]) - 1.0 / 1100.0).abs() < 1e-15);
    assert!((f(&p[0]["throughput_per_sec"]) - 2e9 / 1100.0).abs() < 1e-3);
    assert!((f(&p[0]["lock_utilisation"]) - 100.0 / 1100.0).abs() < 1e-12);
    for r in &p {
        let n = r["cores"].as_u64().unwrap() as usize;
        let m = Repairman::new(n, 100.0, 1000.0).unwrap().solve();
        assert!((f(&r["throughput"]) - m.throughput).abs() < 1e-15);
        assert!((f(&r["queue_length"]) - m.queue_length).abs() < 1e-12);
    }
    let knee = of_kind(&rs, "model_knee");
    assert_eq!(f(&knee[0]["knee_cores"]), 11.0);
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("<polyline"));
    let _ = std::fs::remove_file(plot);
}

#[test]
fn validate_passes_and_fails_by_its_tolerance() {
    let args = ["model", "validate", "--cores", "1..12", "--completions", "20000", "--format", "json"];
    let (ok, out, err) = granule(&args);
    assert!(ok, "{err}");
    let rs = records(&out);
    let rows = of_kind(&rs, "model_validate");
    assert_eq!(rows.len(), 24, "12 core counts × const and exp service");
    for r in &rows {
        assert_eq!(r["within"], true, "{r}");
        assert!(f(&r["rel_error"]).abs() <= 0.02);
    }
    let exp_seeds: Vec<f64> =
        rows.iter().filter(|r| r["service_dist"] == "exp").map(|r| f(&r["seeds_rel_error"])).collect();
    assert!(exp_seeds.iter().all(|e| e.abs() < 1e-9), "for exp service the seeds' model is the exact one");
    let sum = of_kind(&rs, "model_validate_summary");
    assert_eq!(sum[0]["passed"], true);
    // A tolerance below the simulation's noise must fail, with a reason.
    let (ok, out, err) = granule(&[&args[..], &["--tolerance", "1e-9"]].concat());
    assert!(!ok);
    assert!(err.contains("beyond the tolerance"), "{err}");
    assert_eq!(of_kind(&records(&out), "model_validate_summary")[0]["passed"], false);
}

#[test]
fn simulate_compares_locks_on_a_topology() {
    let plot = temp("simulate.svg");
    let rs = run_json(&[
        "model",
        "simulate",
        "--topology",
        "uniform:16:100",
        "--lock",
        "clh,ticket,fine,rtm",
        "--service",
        "200",
        "--delay",
        "2000",
        "--cores",
        "1,16",
        "--completions",
        "20000",
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert_eq!(of_kind(&rs, "topology")[0]["cores"], 16);
    let sims = of_kind(&rs, "model_simulate");
    assert_eq!(sims.len(), 8);
    let get = |lock: &str, n: u64| *sims.iter().find(|r| r["lock"] == lock && r["cores"] == n).unwrap();
    // Past the knee the ticket lock's hand-off grows with the waiters and
    // its throughput drops below the queue lock's; fine locks scale.
    assert!(f(&get("ticket", 16)["throughput"]) < 0.7 * f(&get("clh", 16)["throughput"]));
    assert!(f(&get("fine", 16)["throughput"]) > 10.0 * f(&get("fine", 1)["throughput"]));
    assert!(get("rtm", 16)["commits"].as_u64().unwrap() > 0);
    for r in &sims {
        assert!(f(&r["lock_utilisation"]) <= 1.0 + 1e-9 && f(&r["queue_length"]) >= 0.0, "{r}");
        assert!(r["throughput_per_sec"].is_null(), "uniform topologies have no clock rate");
    }
    assert!(std::fs::read_to_string(&plot).unwrap().contains("ticket"));
    let _ = std::fs::remove_file(plot);

    // this-machine from a recorded `granule info`.
    let info = temp("info.jsonl");
    std::fs::write(
        &info,
        "{\"record\":\"machine\",\"tsc_ghz\":3.0}\n\
         {\"record\":\"core_latency\",\"from\":0,\"to\":1,\"one_way_cycles\":80.0}\n\
         {\"record\":\"core_latency\",\"from\":1,\"to\":0,\"one_way_cycles\":90.0}\n",
    )
    .unwrap();
    let (ok, out, err) = granule(&[
        "model",
        "simulate",
        "--topology",
        "this-machine",
        "--topology-input",
        info.to_str().unwrap(),
        "--service",
        "100",
        "--delay",
        "0",
        "--completions",
        "5000",
        "--format",
        "csv",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("record,name,cores,ghz"), "{out}");
    assert!(out.contains("topology,this-machine,2,3"), "{out}");
    // Saturated on two cores: every hand-off crosses, 80 or 90 cycles.
    let header: Vec<&str> = out.lines().find(|l| l.starts_with("record,lock,")).unwrap().split(',').collect();
    let row: Vec<&str> = out.lines().find(|l| l.starts_with("model_simulate,clh,2,")).unwrap().split(',').collect();
    let hold: f64 = row[header.iter().position(|h| *h == "mean_hold_cycles").unwrap()].parse().unwrap();
    assert!((hold - 185.0).abs() < 0.1, "{hold}");
    let _ = std::fs::remove_file(info);
}

/// A `granule scale`-shaped file made by the model: s per acquisition,
/// overhead a per acquisition, delay D per round trip (D/2 per acquisition).
fn synthetic_scale(s: f64, a: f64) -> String {
    let ghz = 2.0;
    let mut out = format!("{{\"record\":\"machine\",\"cpu_model\":\"model\",\"tsc_ghz\":{ghz}}}\n");
    for d in [0.0, 1000.0, 4000.0] {
        for n in 1..=8 {
            let x = Repairman::new(n, s, a + d / 2.0).unwrap().solve().throughput;
            let rt = x * ghz * 1e9 / 2.0;
            out.push_str(&format!(
                "{{\"record\":\"scale\",\"regime\":\"bkl\",\"cores\":{n},\"delay_cycles\":{d},\"run\":1,\"round_trips_per_sec\":{rt}}}\n"
            ));
        }
    }
    out
}

#[test]
fn fit_recovers_the_parameters_of_scale_records() {
    let input = temp("scale.jsonl");
    std::fs::write(&input, synthetic_scale(300.0, 100.0)).unwrap();
    let plot = temp("fit.svg");
    let rs = run_json(&["model", "fit", "--input", input.to_str().unwrap(), "--plot", plot.to_str().unwrap()]);
    assert_eq!(of_kind(&rs, "fit_input")[0]["tsc_ghz"], 2.0);
    let fits = of_kind(&rs, "model_fit");
    // One joint fit over the three delays, and one per delay (8 core counts each).
    assert_eq!(fits.len(), 4);
    let joint = fits.iter().find(|r| r["scope"] == "all delays").unwrap();
    assert!((f(&joint["s"]) - 300.0).abs() < 0.5, "{joint}");
    assert!((f(&joint["a"]) - 100.0).abs() < 0.5, "{joint}");
    assert!(f(&joint["r2"]) > 0.999999);
    let d1000 = fits.iter().find(|r| r["delay"] == 1000).unwrap();
    assert!((f(&d1000["a"]) - 600.0).abs() < 1.0, "one delay: a is the whole think time, 100 + 1000/2: {d1000}");
    assert!((f(&d1000["knee_cores"]) - 3.0).abs() < 0.01);
    assert_eq!(of_kind(&rs, "fit_point").len(), 24 + 3 * 8);
    assert!(!of_kind(&rs, "model_curve").is_empty());
    assert!(std::fs::read_to_string(&plot).unwrap().contains("D = 4000"));

    // One delay, s alone with a known think time.
    let rs = run_json(&["model", "fit", "--input", input.to_str().unwrap(), "--delay", "4000", "--think", "2100"]);
    let fits = of_kind(&rs, "model_fit");
    assert_eq!(fits.len(), 1);
    assert!((f(&fits[0]["s"]) - 300.0).abs() < 0.5, "{}", fits[0]);
    assert_eq!(fits[0]["a_given"], true);
    let _ = std::fs::remove_file(input);
    let _ = std::fs::remove_file(plot);
}

#[test]
fn fit_reads_generic_csv_in_its_own_units() {
    // The seeds' units: lock throughput per cycle, s = 358, a = 1999.
    let input = temp("generic.csv");
    let mut csv = String::from("cores,throughput\n");
    for n in 1..=14 {
        csv.push_str(&format!("{n},{}\n", Repairman::new(n, 358.0, 1999.0).unwrap().solve().throughput));
    }
    std::fs::write(&input, csv).unwrap();
    let rs = run_json(&["model", "fit", "--input", input.to_str().unwrap()]);
    let fit = of_kind(&rs, "model_fit")[0];
    assert!((f(&fit["s"]) - 358.0).abs() < 0.5 && (f(&fit["a"]) - 1999.0).abs() < 2.0, "{fit}");
    assert_eq!(fit["time_unit"], "input time unit");
    let _ = std::fs::remove_file(input);
}

#[test]
fn scale_fit_measures_fits_and_profiles_the_hold_time() {
    let rs = run_json(&[
        "scale",
        "--regimes",
        "bkl,none",
        "--cores",
        "1,2",
        "--delays",
        "0,4000",
        "--warmup",
        "0.01",
        "--seconds",
        "0.05",
        "--fit",
    ]);
    assert_eq!(of_kind(&rs, "scale").len(), 8);
    let holds = of_kind(&rs, "lock_hold");
    assert_eq!(holds.len(), 2, "bkl profiled at 1 and 2 cores; none has no lock");
    assert!(holds.iter().all(|h| f(&h["hold_cycles"]) > 0.0 && h["regime"] == "bkl"));
    let fits = of_kind(&rs, "model_fit");
    assert_eq!(fits.len(), 1, "only the big lock is fitted, jointly over the two delays");
    assert_eq!(fits[0]["regime"], "bkl");
    assert!(f(&fits[0]["s"]) > 0.0 && fits[0]["r2"].is_number());
    assert!(f(&fits[0]["profiled_hold_1_core"]) > 0.0);
    assert_eq!(fits[0]["profiled_hold_cores"], 2);
    assert_eq!(of_kind(&rs, "fit_point").len(), 4);
    assert_eq!(of_kind(&rs, "model_knee").len(), 2);
}

#[test]
fn bad_model_options_fail_with_a_clear_message() {
    let cases: &[(&[&str], &str)] = &[
        (&["model", "predict", "--service", "0", "--delay", "1"], "--service"),
        (&["model", "predict", "--service", "1", "--delay", "1", "--cores", "0..3"], "expected counts in 1..=4096"),
        (&["model", "simulate", "--topology", "mars", "--service", "1", "--delay", "1"], "unknown topology"),
        (&["model", "simulate", "--service", "1", "--delay", "1", "--cores", "60"], "has 56"),
        (&["model", "simulate", "--lock", "spin", "--service", "1", "--delay", "1", "--cores", "2"], "unknown lock"),
        (&["model", "fit", "--input", "/nonexistent/granule.jsonl"], "reading"),
        (
            &["scale", "--regimes", "none", "--cores", "1", "--delays", "0", "--seconds", "0.01", "--plot", "x.svg"],
            "--fit",
        ),
    ];
    for (args, want) in cases {
        let (ok, _, err) = granule(args);
        assert!(!ok, "{args:?} should fail");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
