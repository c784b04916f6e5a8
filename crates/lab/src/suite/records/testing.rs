//! Hand-made records for the report's unit tests: each written as a map
//! with only the fields a test needs, and read as the report reads a
//! results file once the fields it left out are filled in from a blank of
//! its struct (zero, empty text, false, null).

use serde_json::{Map, Value};

use super::Records;
use crate::cmd::ipc::records::IpcRecord;
use crate::cmd::kv::record::{KvLinuxRecord, KvRecord};
use crate::cmd::model::fit::records::{FitInput, ModelFit};
use crate::cmd::model::simulate::records::SimulateRecord;
use crate::cmd::scale::records::ScaleRecord;
use crate::fields::Fields;
use crate::machine::MachineRecord;
use crate::output::{record, Record};

/// A record of `kind` from step `exp` with `fields`.
pub fn rec(kind: &str, exp: &str, fields: &[(&str, Value)]) -> Map<String, Value> {
    let mut m = record(kind);
    m.insert("experiment".into(), exp.into());
    for (k, v) in fields {
        m.insert((*k).into(), v.clone());
    }
    m
}

/// A `scale` record: `regime` at `delay` on `cores`, `t` round trips/s.
pub fn scale_point(regime: &str, delay: u64, cores: u64, t: f64) -> Map<String, Value> {
    rec(
        "scale",
        "scale",
        &[
            ("regime", regime.into()),
            ("delay_cycles", delay.into()),
            ("cores", cores.into()),
            ("round_trips_per_sec", t.into()),
        ],
    )
}

/// The blank record of `kind`, for the kinds tests write by hand.
fn blank(kind: &str) -> Option<Map<String, Value>> {
    Some(match kind {
        "machine" => MachineRecord::default().to_map(),
        "ipc" => IpcRecord::default().to_map(),
        "scale" => ScaleRecord::default().to_map(),
        "kv" => KvRecord::default().to_map(),
        "kv_linux" => KvLinuxRecord::default().to_map(),
        "fit_input" => FitInput::default().to_map(),
        "model_fit" => ModelFit::default().to_map(),
        "model_simulate" => SimulateRecord::default().to_map(),
        _ => return None,
    })
}

impl Records {
    /// Hand-made records `all` (the first is line 1), each of a kind with
    /// a [`blank`] completed by the blank's fields it lacks, read as
    /// [`Records::read`] reads a results file.
    pub fn new(all: &[Map<String, Value>]) -> Self {
        let complete: Vec<Map<String, Value>> = all
            .iter()
            .map(|m| match blank(m.kind()) {
                Some(mut b) => {
                    b.extend(m.clone());
                    b
                }
                None => m.clone(),
            })
            .collect();
        Self::read("test", &complete).unwrap_or_else(|e| panic!("hand-made records: {e:#}"))
    }
}
