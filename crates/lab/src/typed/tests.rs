//! Every record struct read back from what it wrote: recorded records (a
//! real 2-core suite run, and the model, verify and scale commands) and
//! synthetic ones for commands that need programs this machine may lack
//! (redis-server, valgrind), each read into its struct, written again
//! through [`Record::to_map`] and read once more.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::*;
use crate::cmd;
use crate::output::{json_lines, record};
use anyhow::Result;

/// Two records of every kind `granule suite` writes, from a real run of
/// the quick suite on a 2-core AMD EPYC VM (`results.jsonl`, lines kept
/// as written).
const SUITE: &str = include_str!("suite.jsonl");

/// Records written by `granule model predict`, `model validate`, `verify`
/// (with `--inject-bug` for its `verify_violation`),
/// `scale --fit` (its `lock_hold`), `scale --lock-stats` (a `scale`
/// record with what the profiler saw), `scale --runs 3` (`scale_speedup`) and `metal run` (a `metal_pingpong`
/// line of the image's serial console under QEMU).
const COMMANDS: &str = include_str!("commands.jsonl");

/// Synthetic records of the commands that need redis-server or valgrind.
const SYNTHETIC: &str = concat!(
    r#"{"record":"serve_bench_setup","regime":"bkl","granule_port":6390,"redis_port":6391,"redis_version":"7.0.15","requests":1000,"requests_pipelined":5000,"clients":4,"rounds":3,"server_cpu":"0","benchmark_cpus":"1","server_cpu_time":"process CPU-time clock (ns)"}"#,
    "\n",
    r#"{"record":"serve_bench","round":1,"server":"granule","test":"set","pipeline":16,"order":0,"requests":5000,"requests_per_sec":125000.5,"server_cpu_s":0.25,"requests_per_cpu_s":500002.0,"load_cpu_s":0.2,"load_cpu_share":0.8}"#,
    "\n",
    r#"{"record":"serve_vs_redis","test":"get","pipeline":1,"regime":"bkl","rounds":3,"granule_requests_per_sec":90000.0,"redis_requests_per_sec":100000.0,"ratio_rps":0.9,"granule_requests_per_cpu_s":null,"redis_requests_per_cpu_s":120000.0,"ratio_xput":null,"paired_ratio_rps":0.92,"paired_ratio_xput":null,"paired_ratio_xput_min":null,"paired_ratio_xput_max":null,"granule_load_cpu_share":0.95,"redis_load_cpu_share":null,"meets_target":false}"#,
    "\n",
    r#"{"record":"ipc_instructions","regime":"bkl","instructions_per_round_trip":812.5,"extra_instructions_over_none":40.25,"extra_instructions_per_call":20.125,"iterations_short":1000,"iterations_long":11000,"ir_short":900000,"ir_long":9025000}"#,
    "\n",
    r#"{"record":"linux_skipped","reason":"redis-server not found on PATH"}"#,
    "\n",
);

/// The records of JSON Lines `text` (every line a JSON object), numbered.
fn parse(text: &str) -> Vec<Map<String, Value>> {
    text.lines()
        .map(|l| match serde_json::from_str::<Value>(l) {
            Ok(Value::Object(m)) => m,
            other => panic!("not a record: {l} ({other:?})"),
        })
        .collect()
}

/// `T`'s records of JSON Lines `text`.
fn read<T: Record + DeserializeOwned>(source: &str, text: &str) -> Result<Vec<(usize, T)>> {
    read_records::<T>(source, numbered(&parse(text)))
}

/// Check every `T::KIND` record of `text`: it reads into `T`, writes back
/// to the same fields (less the suite's `experiment` tag), and the value
/// written reads back equal. Returns how many there were.
fn round_trip<T: Record + DeserializeOwned + PartialEq + Debug>(text: &str) -> usize {
    let originals: Vec<(usize, Map<String, Value>)> = text
        .lines()
        .enumerate()
        .filter_map(|(i, l)| match serde_json::from_str::<Value>(l) {
            Ok(Value::Object(m)) if m.get("record").and_then(Value::as_str) == Some(T::KIND) => Some((i + 1, m)),
            _ => None,
        })
        .collect();
    let typed = read::<T>("fixture", text).unwrap_or_else(|e| panic!("{}: {e:#}", T::KIND));
    assert_eq!(typed.len(), originals.len(), "{}", T::KIND);
    for ((line, t), (orig_line, mut orig)) in typed.iter().zip(originals) {
        assert_eq!(*line, orig_line);
        orig.remove("experiment");
        assert_eq!(t.to_map(), orig, "{} on line {line} writes back other fields", T::KIND);
        let again = read::<T>("written", &json_lines(&[t.to_map()])).unwrap();
        assert_eq!(again.len(), 1);
        assert_eq!(&again[0].1, t, "{} on line {line}", T::KIND);
    }
    typed.len()
}

#[test]
fn every_record_struct_reads_back_what_it_wrote() {
    use cmd::model::fit::records as fit;
    let suite: Vec<(&str, usize)> = vec![
        ("machine", round_trip::<crate::machine::MachineRecord<'static>>(SUITE)),
        ("suite", round_trip::<cmd::suite::SuiteRecord<'static>>(SUITE)),
        ("atomic_cost", round_trip::<cmd::info::AtomicCostRecord>(SUITE)),
        ("core_latency", round_trip::<cmd::info::CoreLatencyRecord>(SUITE)),
        ("lock_uncontended", round_trip::<cmd::locks::records::LockUncontended>(SUITE)),
        ("lock_contended", round_trip::<cmd::locks::records::LockContended>(SUITE)),
        ("lock_skipped", round_trip::<cmd::locks::records::LockSkipped>(SUITE)),
        ("quaject", round_trip::<cmd::quaject::records::QuajectRecord>(SUITE)),
        ("regime_skipped", round_trip::<crate::regimes::RegimeSkipped>(SUITE)),
        ("null_call", round_trip::<cmd::synthesis::records::NullCallRecord>(SUITE)),
        ("synthesis", round_trip::<cmd::synthesis::records::SynthesisRecord>(SUITE)),
        ("synthesis_atomics", round_trip::<cmd::synthesis::atomics::AtomicsRecord>(SUITE)),
        ("synthesis_contended", round_trip::<cmd::synthesis::contended::ContendedRecord>(SUITE)),
        ("ipc", round_trip::<cmd::ipc::records::IpcRecord>(SUITE)),
        ("lock_profile", round_trip::<cmd::ipc::records::LockProfileRecord<'static>>(SUITE)),
        ("scale", round_trip::<cmd::scale::records::ScaleRecord>(SUITE)),
        ("kv", round_trip::<cmd::kv::record::KvRecord>(SUITE)),
        ("kv_linux", round_trip::<cmd::kv::record::KvLinuxRecord>(SUITE)),
        ("subsystems", round_trip::<cmd::subsystems::records::SubsystemsRecord>(SUITE)),
        ("subsystem_lock", round_trip::<cmd::subsystems::records::SubsystemLockRecord<'static>>(SUITE)),
        ("subsystem_findings", round_trip::<cmd::subsystems::findings::FindingsRecord>(SUITE)),
        ("fit_input", round_trip::<fit::FitInput<'static>>(SUITE)),
        ("model_fit", round_trip::<fit::ModelFit<'static>>(SUITE)),
        ("service_band", round_trip::<cmd::model::fit::band::ServiceBand>(SUITE)),
        ("fit_point", round_trip::<fit::FitPoint<'static>>(SUITE)),
        ("model_knee", round_trip::<fit::FitKnee<'static>>(SUITE)),
        ("model_curve", round_trip::<fit::ModelCurve<'static>>(SUITE)),
        ("topology", round_trip::<cmd::model::simulate::records::TopologyRecord<'static>>(SUITE)),
        ("model_simulate", round_trip::<cmd::model::simulate::records::SimulateRecord<'static>>(SUITE)),
    ];
    let commands: Vec<(&str, usize)> = vec![
        ("model_predict", round_trip::<cmd::model::predict::PredictRecord>(COMMANDS)),
        ("model_knee", round_trip::<cmd::model::predict::PredictKnee>(COMMANDS)),
        ("model_validate", round_trip::<cmd::model::validate::ValidateRecord>(COMMANDS)),
        ("model_validate_summary", round_trip::<cmd::model::validate::ValidateSummary>(COMMANDS)),
        ("verify", round_trip::<cmd::verify::records::VerifyRecord>(COMMANDS)),
        ("verify_summary", round_trip::<cmd::verify::records::VerifySummaryRecord>(COMMANDS)),
        ("verify_violation", round_trip::<cmd::verify::records::VerifyViolationRecord>(COMMANDS)),
        ("lock_hold", round_trip::<cmd::scale::records::LockHold<'static>>(COMMANDS)),
        ("scale", round_trip::<cmd::scale::records::ScaleRecord>(COMMANDS)),
        ("scale_speedup", round_trip::<cmd::scale::speedup::ScaleSpeedup<'static>>(COMMANDS)),
        ("metal_pingpong", round_trip::<cmd::metal::record::MetalPingpongRecord>(COMMANDS)),
        ("serve_bench_setup", round_trip::<cmd::serve_bench::summary::Setup>(SYNTHETIC)),
        ("serve_bench", round_trip::<cmd::serve_bench::summary::ServeBenchRecord<'static>>(SYNTHETIC)),
        ("serve_vs_redis", round_trip::<cmd::serve_bench::summary::ServeVsRedis<'static>>(SYNTHETIC)),
        ("ipc_instructions", round_trip::<cmd::ipc::instructions::record::IpcInstructionsRecord>(SYNTHETIC)),
        ("linux_skipped", round_trip::<cmd::kv::record::LinuxSkipped>(SYNTHETIC)),
    ];
    for (kind, n) in suite.iter().chain(&commands) {
        assert!(*n > 0, "no {kind} record to read back");
    }
    // Every kind of the recorded suite run is covered.
    for line in SUITE.lines() {
        let kind = serde_json::from_str::<Value>(line).unwrap()["record"].as_str().unwrap().to_string();
        assert!(suite.iter().any(|(k, _)| *k == kind), "{kind} is not read back");
    }
}

#[test]
fn a_missing_or_mistyped_field_is_named_with_its_line() {
    type Lock = cmd::locks::records::LockSkipped;
    let text = "{\"record\":\"machine\"}\n{\"record\":\"lock_skipped\",\"lock\":\"rtm\",\"reason\":\"no RTM\"}\n\
                {\"record\":\"lock_skipped\",\"lock\":\"rtm\"}\n";
    let e = read::<Lock>("f.jsonl", text).unwrap_err().to_string();
    assert!(e.starts_with("f.jsonl:3: ") && e.contains("`reason`"), "{e}");
    let text = "{\"record\":\"lock_skipped\",\"lock\":\"rtm\",\"reason\":7}\n";
    let e = read::<Lock>("f.jsonl", text).unwrap_err().to_string();
    assert!(e.starts_with("f.jsonl:1: ") && e.contains("field `reason`"), "{e}");
    type Point = cmd::model::predict::PredictRecord;
    let mut m = record("model_predict");
    for (k, v) in [("service_dist", Value::from("exp")), ("cores", Value::from(2.5)), ("speedup", Value::from(true))] {
        m.insert(k.into(), v);
    }
    let e = read_records::<Point>("r.jsonl", numbered(&[record("machine"), m])).unwrap_err().to_string();
    assert!(e.starts_with("r.jsonl:2: ") && e.contains("field `cores`"), "{e}");
    // Other kinds are passed over.
    assert!(read::<Lock>("f", "{\"record\":\"ipc\"}\n").unwrap().is_empty());
}
