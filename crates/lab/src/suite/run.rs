//! Running the suite's steps: each one is this binary run again as a child
//! process with `--format json`, its records collected and tagged.
//!
//! Children keep the experiments isolated from one another (a fresh process,
//! fresh pinned threads, no leftover allocator or cache state), and the
//! command line each record came from is exactly what the report shows.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde_json::{Map, Value};

use super::plan::Step;
use crate::fields::Fields;

/// One record.
pub type Record = Map<String, Value>;

/// The field that tags every record of a step with the step's name (the
/// experiment), after its `record` field.
pub const STEP_FIELD: &str = "experiment";

/// What one step produced.
#[derive(Clone, Debug)]
pub struct StepRun {
    /// The step.
    pub step: Step,
    /// Its records (its machine record dropped: the suite has one), each
    /// tagged with `"experiment": step.name` ([`STEP_FIELD`]).
    pub records: Vec<Map<String, Value>>,
    /// Its machine record.
    pub machine: Option<Map<String, Value>>,
    /// Wall-clock seconds it took.
    pub seconds: f64,
}

/// Run `step` as `exe <args…> --format json`.
pub fn run_step(exe: &Path, step: &Step) -> Result<StepRun> {
    let t0 = Instant::now();
    let out = Command::new(exe)
        .args(&step.args)
        .args(["--format", "json"])
        .output()
        .with_context(|| format!("cannot start `{}`", step.command_line()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        bail!("`{}` failed ({}): {}", step.command_line(), out.status, err.trim());
    }
    let stdout = String::from_utf8(out.stdout).context("a step printed output that is not UTF-8")?;
    let (machine, records) = parse_records(&stdout, &step.name)
        .with_context(|| format!("reading the records of `{}`", step.command_line()))?;
    Ok(StepRun { step: step.clone(), records, machine, seconds: t0.elapsed().as_secs_f64() })
}

/// Split JSON Lines into the machine record and the other records, each
/// tagged with `experiment`.
pub fn parse_records(jsonl: &str, experiment: &str) -> Result<(Option<Record>, Vec<Record>)> {
    let mut machine = None;
    let mut records = Vec::new();
    for (i, line) in jsonl.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let value: Value = serde_json::from_str(line).with_context(|| format!("line {}: not JSON", i + 1))?;
        let Value::Object(mut r) = value else { bail!("line {}: not a JSON object", i + 1) };
        if r.kind() == "machine" {
            machine = Some(r);
            continue;
        }
        // `record` stays first; the experiment follows it.
        let kind = r.shift_remove("record").unwrap_or(Value::from("record"));
        let mut tagged = Map::new();
        tagged.insert("record".into(), kind);
        tagged.insert(STEP_FIELD.into(), Value::from(experiment));
        tagged.extend(r);
        records.push(tagged);
    }
    Ok((machine, records))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_tagged_and_the_machine_record_is_set_apart() {
        let text =
            "{\"record\":\"machine\",\"cores\":2}\n{\"record\":\"ipc\",\"regime\":\"bkl\",\"runs\":3,\"cycles\":9}\n\n";
        let (m, rs) = parse_records(text, "ipc").unwrap();
        assert_eq!(m.unwrap()["cores"], 2);
        assert_eq!(rs.len(), 1);
        let keys: Vec<&str> = rs[0].keys().map(String::as_str).collect();
        // The fields keep their order after the experiment.
        assert_eq!(keys, ["record", "experiment", "regime", "runs", "cycles"]);
    }

    #[test]
    fn malformed_output_is_an_error() {
        assert!(parse_records("{\"record\":\"x\"}\nnot json\n", "x").is_err());
        assert!(parse_records("[1,2]\n", "x").is_err());
    }
}
