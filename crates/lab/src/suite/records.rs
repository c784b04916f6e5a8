//! The suite's records as the report reads them: every record with its line
//! number in `results.jsonl`, so each number in the report can name the
//! record it came from.

use serde_json::{Map, Value};

use crate::fields::Fields;

/// A record and its (1-based) line in `results.jsonl`.
#[derive(Clone, Copy, Debug)]
pub struct Rec<'a> {
    /// Line number in `results.jsonl` (the machine record is line 1).
    pub line: usize,
    /// The record.
    pub map: &'a Map<String, Value>,
}

/// Its fields (`num`, `str`, `bool`, `kind`), borrowed from the record.
impl<'a> Fields<'a> for Rec<'a> {
    fn field(self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }
}

impl<'a> Rec<'a> {
    /// The experiment (suite step) it came from.
    pub fn experiment(&self) -> &'a str {
        self.str("experiment").unwrap_or("")
    }
}

/// All records of a suite run, in `results.jsonl` order.
#[derive(Clone, Copy, Debug)]
pub struct Records<'a> {
    all: &'a [Map<String, Value>],
}

impl<'a> Records<'a> {
    /// View `all` (the machine record first, as in `results.jsonl`).
    pub fn new(all: &'a [Map<String, Value>]) -> Self {
        Self { all }
    }

    /// Every record with its line number.
    pub fn iter(&self) -> impl Iterator<Item = Rec<'a>> + 'a {
        self.all.iter().enumerate().map(|(i, map)| Rec { line: i + 1, map })
    }

    /// The records of `kind` from step `experiment`.
    pub fn of(&self, experiment: &str, kind: &str) -> Vec<Rec<'a>> {
        self.iter().filter(|r| r.kind() == kind && r.experiment() == experiment).collect()
    }

    /// The machine record.
    pub fn machine(&self) -> Option<Rec<'a>> {
        self.iter().find(|r| r.kind() == "machine")
    }
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

impl Source {
    /// The source of field `field` of `r`, if it is a number.
    pub fn of(r: &Rec<'_>, field: &str) -> Option<Self> {
        Some(Self { line: r.line, field: field.into(), value: r.num(field)?, file: None })
    }
}

/// Hand-made records for the report's unit tests.
#[cfg(test)]
pub mod testing {
    use serde_json::{Map, Value};

    use crate::output::record;

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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::record;

    #[test]
    fn lines_count_from_the_machine_record() {
        let mut a = record("machine");
        a.insert("cores".into(), 2.into());
        let mut b = record("ipc");
        b.insert("experiment".into(), "ipc".into());
        b.insert("round_trip_cycles_mean".into(), 250.5.into());
        let all = vec![a, b];
        let rs = Records::new(&all);
        assert_eq!(rs.machine().unwrap().line, 1);
        let ipc = rs.of("ipc", "ipc");
        assert_eq!(ipc.len(), 1);
        assert_eq!(ipc[0].line, 2);
        let s = Source::of(&ipc[0], "round_trip_cycles_mean").unwrap();
        assert_eq!((s.line, s.value), (2, 250.5));
        assert!(Source::of(&ipc[0], "missing").is_none());
    }
}
