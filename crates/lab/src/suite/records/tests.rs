//! Reading a suite's records into their structs.

use super::testing::rec;
use super::*;
use crate::output::record;

/// The real 2-core run.
const REAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/epyc-2core/results.jsonl");

#[test]
fn lines_count_from_the_machine_record_and_steps_are_kept() {
    let all = vec![
        record("machine"),
        rec("ipc", "ipc", &[("regime", "bkl".into()), ("round_trip_cycles_mean", 250.5.into())]),
        rec("ipc", "ipc_profile", &[("regime", "bkl".into()), ("profiled", true.into())]),
    ];
    let rs = Records::new(&all);
    assert_eq!(rs.machine.as_ref().map(|m| m.line), Some(1));
    let ipc: Vec<&At<IpcRecord>> = rs.ipc.of("ipc").collect();
    assert_eq!(ipc.len(), 1);
    assert_eq!((ipc[0].line, ipc[0].step.as_str(), ipc[0].round_trip_cycles_mean), (2, "ipc", 250.5));
    assert_eq!(rs.ipc.len(), 2);
    assert_eq!(rs.ipc_runs().len(), 1, "the profiled run is not quoted");
    let s = ipc[0].source("round_trip_cycles_mean", ipc[0].round_trip_cycles_mean);
    assert_eq!((s.line, s.field.as_str(), s.value), (2, "round_trip_cycles_mean", 250.5));
}

#[test]
fn every_record_of_the_real_run_reads() {
    let r = crate::suite::results_file::read_results(std::path::Path::new(REAL)).unwrap();
    let rs = Records::read(REAL, &r.records).unwrap();
    let m = rs.machine.as_ref().expect("a machine record");
    assert_eq!((m.line, m.cores), (1, 2));
    assert_eq!(rs.suite.as_ref().map(|s| s.line), Some(2));
    let counts = [
        rs.atomic_cost.len(),
        rs.core_latency.len(),
        rs.lock_uncontended.len(),
        rs.lock_contended.len(),
        rs.quaject.len(),
        rs.ipc.len(),
        rs.lock_profile.len(),
        rs.scale.len(),
        rs.kv.len(),
        rs.kv_linux.len(),
        rs.regime_skipped.len(),
        rs.subsystems.len(),
        rs.subsystem_findings.len(),
        rs.null_call.len(),
        rs.synthesis.len(),
        rs.synthesis_atomics.len(),
        rs.synthesis_contended.len(),
        rs.fit_input.len(),
        rs.model_fit.len(),
        rs.model_knee.len(),
        rs.model_curve.len(),
        rs.service_band.len(),
        rs.model_simulate.len(),
    ];
    assert!(counts.iter().all(|n| *n > 0), "{counts:?}");
    // Each record in its place: line k is the file's line k.
    let kinds = |kind: &str| -> Vec<usize> {
        r.records.iter().enumerate().filter(|(_, m)| m["record"] == kind).map(|(i, _)| i + 1).collect()
    };
    assert_eq!(rs.scale.iter().map(|s| s.line).collect::<Vec<_>>(), kinds("scale"));
    assert_eq!(rs.model_simulate.iter().map(|s| s.line).collect::<Vec<_>>(), kinds("model_simulate"));
}

#[test]
fn a_record_that_does_not_read_is_an_error_naming_its_line_and_field() {
    let mut all = vec![record("machine"), rec("ipc", "ipc", &[("regime", "bkl".into())])];
    let e = Records::read("r.jsonl", &all).unwrap_err().to_string();
    assert!(e.starts_with("r.jsonl:2: ") && e.contains("`profiled`"), "{e}");
    // A machine record that does not read is left out, not an error.
    all.truncate(1);
    all[0].insert("cores".into(), "two".into());
    let rs = Records::read("r.jsonl", &all).unwrap();
    assert!(rs.machine.is_none() && rs.ipc.is_empty());
}

#[test]
fn records_from_the_emulator_are_named_so_the_page_can_say_their_timings_mean_nothing() {
    let hosted = vec![record("machine"), rec("ipc", "ipc", &[("regime", "bkl".into())])];
    assert_eq!(crate::suite::emulated_platform(&Records::new(&hosted)), None);
    let mut emulated = hosted.clone();
    emulated.push(rec("scale", "scale", &[("regime", "bkl".into()), ("platform", "qemu-tcg".into())]));
    let rs = Records::new(&emulated);
    assert_eq!(rs.scale.iter().next().and_then(|r| r.platform.as_deref()), Some("qemu-tcg"));
    assert_eq!(crate::suite::emulated_platform(&rs), Some("qemu-tcg"));
}
