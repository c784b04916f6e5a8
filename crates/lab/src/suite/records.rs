//! The suite's records as the report reads them: every record of a kind the
//! report draws, read once into the struct its command wrote it with
//! ([`crate::typed`]), with its line number in `results.jsonl` and the step
//! it came from, so each number in the report can name the record it came
//! from, and a field renamed in a struct is a compile error here rather than
//! a number silently missing from the page.
//!
//! A record of such a kind that does not read (a field missing, or of
//! another type) is an error naming the file, the line and the field. The
//! machine and suite records only describe the run: one that does not read
//! is left out (`granule report` names it) and the page calls the machine
//! unknown. A step that did not run leaves its kinds empty, and the page
//! says what is missing.

use std::ops::Deref;

use anyhow::Result;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::cmd::info::{AtomicCostRecord, CoreLatencyRecord};
use crate::cmd::ipc::records::{IpcRecord, LockProfileRecord};
use crate::cmd::kv::record::{KvLinuxRecord, KvRecord, LinuxSkipped};
use crate::cmd::locks::records::{LockContended, LockUncontended};
use crate::cmd::model::fit::band::ServiceBand;
use crate::cmd::model::fit::records::{FitInput, FitKnee, ModelCurve, ModelFit};
use crate::cmd::model::simulate::records::SimulateRecord;
use crate::cmd::quaject::records::QuajectRecord;
use crate::cmd::scale::records::ScaleRecord;
use crate::cmd::subsystems::findings::FindingsRecord;
use crate::cmd::subsystems::records::SubsystemsRecord;
use crate::cmd::suite::SuiteRecord;
use crate::cmd::synthesis::atomics::AtomicsRecord;
use crate::cmd::synthesis::contended::ContendedRecord;
use crate::cmd::synthesis::records::{NullCallRecord, SynthesisRecord};
use crate::machine::MachineRecord;
use crate::output::Record;
use crate::regimes::RegimeSkipped;
use crate::typed::{numbered, read_records, record_of};

/// A record, its (1-based) line in `results.jsonl` and its step; its
/// fields are the record's own (`r.regime`, through `Deref`).
#[derive(Clone, Debug, PartialEq)]
pub struct At<T> {
    /// Line number in `results.jsonl` (the machine record is line 1).
    pub line: usize,
    /// The step (experiment) it came from; empty for the machine and suite
    /// records.
    pub step: String,
    /// The record.
    pub rec: T,
}

impl<T> Deref for At<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.rec
    }
}

impl<T> At<T> {
    /// The source of a number this record holds in its field `field`.
    pub fn source(&self, field: &str, value: f64) -> Source {
        Source { line: self.line, field: field.into(), value, file: None }
    }
}

/// Every record of one kind, in `results.jsonl` order.
#[derive(Clone, Debug, PartialEq)]
pub struct Kind<T>(Vec<At<T>>);

impl<T> Default for Kind<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T> Deref for Kind<T> {
    type Target = [At<T>];

    fn deref(&self) -> &[At<T>] {
        &self.0
    }
}

impl<T> Kind<T> {
    /// The records from step `step`.
    pub fn of<'a>(&'a self, step: &'a str) -> impl Iterator<Item = &'a At<T>> + 'a {
        self.0.iter().filter(move |r| r.step == step)
    }
}

/// All the records of a suite run the report reads, by kind.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Records {
    /// The machine record (`None` if absent or unreadable).
    pub machine: Option<At<MachineRecord<'static>>>,
    /// How the suite ran (`None` if absent or unreadable).
    pub suite: Option<At<SuiteRecord<'static>>>,
    /// `granule info`: each atomic instruction's cost.
    pub atomic_cost: Kind<AtomicCostRecord>,
    /// `granule info`: the core-to-core latencies.
    pub core_latency: Kind<CoreLatencyRecord>,
    /// `granule locks`.
    pub lock_uncontended: Kind<LockUncontended>,
    /// `granule locks`.
    pub lock_contended: Kind<LockContended>,
    /// `granule quaject`.
    pub quaject: Kind<QuajectRecord>,
    /// `granule ipc` (and its profiled runs).
    pub ipc: Kind<IpcRecord>,
    /// `granule ipc --lock-stats`.
    pub lock_profile: Kind<LockProfileRecord<'static>>,
    /// `granule scale`.
    pub scale: Kind<ScaleRecord>,
    /// `granule kv` on the kernel.
    pub kv: Kind<KvRecord>,
    /// `granule kv --linux`: real redis-server on Linux.
    pub kv_linux: Kind<KvLinuxRecord>,
    /// Why Linux was not measured.
    pub linux_skipped: Kind<LinuxSkipped>,
    /// Regimes a step could not run.
    pub regime_skipped: Kind<RegimeSkipped>,
    /// `granule subsystems`.
    pub subsystems: Kind<SubsystemsRecord>,
    /// `granule subsystems`: the paper's findings.
    pub subsystem_findings: Kind<FindingsRecord>,
    /// `granule synthesis`: the null procedure call.
    pub null_call: Kind<NullCallRecord>,
    /// `granule synthesis`: Tables 2–4.
    pub synthesis: Kind<SynthesisRecord>,
    /// `granule synthesis`: the lock-free parts' atomic instructions.
    pub synthesis_atomics: Kind<AtomicsRecord>,
    /// `granule synthesis`: the contended case.
    pub synthesis_contended: Kind<ContendedRecord>,
    /// `granule model fit`: its input.
    pub fit_input: Kind<FitInput<'static>>,
    /// `granule model fit`: the fits.
    pub model_fit: Kind<ModelFit<'static>>,
    /// `granule model fit`: the knee per fit and delay.
    pub model_knee: Kind<FitKnee<'static>>,
    /// `granule model fit`: the fitted curves.
    pub model_curve: Kind<ModelCurve<'static>>,
    /// `granule model fit`: the service-time band.
    pub service_band: Kind<ServiceBand>,
    /// `granule model simulate`, every simulation step.
    pub model_simulate: Kind<SimulateRecord<'static>>,
}

impl Records {
    /// The records of `all` (the lines of `source`, the machine record
    /// first, as in `results.jsonl`), each read into its struct; an error
    /// names the line and field of the first record that does not read.
    pub fn read(source: &str, all: &[Map<String, Value>]) -> Result<Self> {
        Ok(Self {
            machine: head(all),
            suite: head(all),
            atomic_cost: kind(source, all)?,
            core_latency: kind(source, all)?,
            lock_uncontended: kind(source, all)?,
            lock_contended: kind(source, all)?,
            quaject: kind(source, all)?,
            ipc: kind(source, all)?,
            lock_profile: kind(source, all)?,
            scale: kind(source, all)?,
            kv: kind(source, all)?,
            kv_linux: kind(source, all)?,
            linux_skipped: kind(source, all)?,
            regime_skipped: kind(source, all)?,
            subsystems: kind(source, all)?,
            subsystem_findings: kind(source, all)?,
            null_call: kind(source, all)?,
            synthesis: kind(source, all)?,
            synthesis_atomics: kind(source, all)?,
            synthesis_contended: kind(source, all)?,
            fit_input: kind(source, all)?,
            model_fit: kind(source, all)?,
            model_knee: kind(source, all)?,
            model_curve: kind(source, all)?,
            service_band: kind(source, all)?,
            model_simulate: kind(source, all)?,
        })
    }

    /// The single-core IPC runs the report quotes: step `ipc`'s records,
    /// less the lock profiler's runs.
    pub fn ipc_runs(&self) -> Vec<&At<IpcRecord>> {
        self.ipc.of("ipc").filter(|r| !r.profiled).collect()
    }
}

/// The step a record came from: the tag the suite adds to every step's
/// records ([`super::run::STEP_FIELD`]). No command writes it, so no
/// struct holds it: it is read by its name.
fn step_of(m: &Map<String, Value>) -> String {
    m.get(super::run::STEP_FIELD).and_then(Value::as_str).unwrap_or_default().to_string()
}

/// Every `T` record of `all`, with its line and step.
fn kind<T: Record + DeserializeOwned>(source: &str, all: &[Map<String, Value>]) -> Result<Kind<T>> {
    let read = read_records::<T>(source, numbered(all))?;
    Ok(Kind(read.into_iter().map(|(line, rec)| At { line, step: step_of(&all[line - 1]), rec }).collect()))
}

/// The first `T` record of `all`, if it reads.
fn head<T: Record + DeserializeOwned>(all: &[Map<String, Value>]) -> Option<At<T>> {
    let (line, rec) = numbered(all).find_map(|(line, m)| Some((line, record_of::<T>(m).transpose()?)))?;
    Some(At { line, step: step_of(&all[line - 1]), rec: rec.ok()? })
}

/// Where a plotted or quoted number came from: a record's line and field.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Source {
    /// Line in `results.jsonl`.
    pub line: usize,
    /// Field of that record.
    pub field: String,
    /// The value as the record has it.
    pub value: f64,
    /// The results file, where a page draws from several (`granule report`
    /// comparing machines).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

#[cfg(test)]
pub mod testing;

#[cfg(test)]
mod tests;
