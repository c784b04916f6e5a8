//! Output of every command: JSON Lines, CSV or a human table.
//!
//! A command builds each record as a typed struct, one per record kind, that
//! implements [`Record`]; [`Record::to_map`] turns it into the `serde_json`
//! object the renderers take (its first field `"record"`, the record kind,
//! then the struct's fields in declaration order), so that one list can hold
//! records of every kind. The command hands that list to [`emit`]. JSON
//! Lines prints the machine record first, then one record per line. CSV
//! prints one block per record kind (header, then rows), machine record
//! first. The table groups records by kind and prints one aligned table per
//! kind.

use std::io::{self, Write};

use clap::ValueEnum;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::fields::{text, Fields, Style};

/// How a command prints its results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns for people.
    #[default]
    Table,
    /// JSON Lines: one object per measurement, machine record first.
    Json,
    /// Comma-separated values, one header + rows block per record kind.
    Csv,
}

/// One kind of record as a typed struct: its fields are the record's
/// fields, in declaration order. An `Option` field that is `None` is `null`
/// in the record, unless the struct skips it
/// (`#[serde(skip_serializing_if = "Option::is_none")]`).
pub trait Record: Serialize {
    /// The record kind: the value of its `"record"` field.
    const KIND: &'static str;

    /// The record as the renderers take it: `"record": KIND` first, then
    /// the struct's fields in declaration order.
    fn to_map(&self) -> Map<String, Value> {
        let mut m = record(Self::KIND);
        match serde_json::to_value(self) {
            Ok(Value::Object(fields)) => m.extend(fields),
            // A derived `Serialize` of a struct with named fields is always
            // an object: anything else is a bug in the record's type.
            other => panic!("a {} record must serialise to a JSON object, not {other:?}", Self::KIND),
        }
        m
    }
}

/// An empty record of `kind`: an ordered JSON object holding only its
/// `"record"` field (the start of [`Record::to_map`]; tests of the
/// renderers build records from it by hand).
pub fn record(kind: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("record".into(), Value::from(kind));
    m
}

/// The kind a record is grouped under (`record` if it has none).
fn kind(r: &Map<String, Value>) -> &str {
    r.str("record").unwrap_or("record")
}

/// Group records by kind, keeping first-appearance order.
fn groups(records: &[Map<String, Value>]) -> Vec<(&str, Vec<&Map<String, Value>>)> {
    let mut out: Vec<(&str, Vec<&Map<String, Value>>)> = Vec::new();
    for r in records {
        let k = kind(r);
        match out.iter_mut().find(|(name, _)| *name == k) {
            Some((_, v)) => v.push(r),
            None => out.push((k, vec![r])),
        }
    }
    out
}

/// Columns of a group: union of keys in first-appearance order, minus `record`.
fn columns<'a>(rows: &[&'a Map<String, Value>]) -> Vec<&'a str> {
    let mut cols: Vec<&str> = Vec::new();
    for r in rows {
        for k in r.keys() {
            if k != "record" && !cols.contains(&k.as_str()) {
                cols.push(k);
            }
        }
    }
    cols
}

/// A value as a table shows it.
fn cell(v: Option<&Value>) -> String {
    text(v, Style::Table)
}

fn csv_cell(v: Option<&Value>) -> String {
    crate::csv::quote(&match v {
        Some(Value::Number(n)) => n.to_string(),
        other => cell(other),
    })
}

/// Render records as aligned tables, one per record kind.
pub fn table(records: &[Map<String, Value>]) -> String {
    let mut out = String::new();
    for (k, rows) in groups(records) {
        let cols = columns(&rows);
        let cells: Vec<Vec<String>> = rows.iter().map(|r| cols.iter().map(|c| cell(r.get(*c))).collect()).collect();
        let widths: Vec<usize> = cols
            .iter()
            .enumerate()
            .map(|(i, c)| cells.iter().map(|row| row[i].len()).chain([c.len()]).max().unwrap_or(0))
            .collect();
        out.push_str(&format!("== {k} ==\n"));
        let line = |vals: Vec<&str>| {
            vals.iter().zip(&widths).map(|(v, w)| format!("{v:>w$}")).collect::<Vec<_>>().join("  ") + "\n"
        };
        out.push_str(&line(cols.clone()));
        for row in &cells {
            out.push_str(&line(row.iter().map(String::as_str).collect()));
        }
        out.push('\n');
    }
    out
}

/// Render records as CSV blocks, one per record kind, separated by a blank line.
pub fn csv(records: &[Map<String, Value>]) -> String {
    let mut out = String::new();
    for (i, (k, rows)) in groups(records).into_iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let cols = columns(&rows);
        out.push_str("record,");
        out.push_str(&cols.join(","));
        out.push('\n');
        for r in rows {
            out.push_str(k);
            for c in &cols {
                out.push(',');
                out.push_str(&csv_cell(r.get(*c)));
            }
            out.push('\n');
        }
    }
    out
}

/// Render records as JSON Lines.
pub fn json_lines(records: &[Map<String, Value>]) -> String {
    let mut out = String::new();
    for r in records {
        out.push_str(&Value::Object(r.clone()).to_string());
        out.push('\n');
    }
    out
}

/// Print `records` (the machine record first) to stdout in `format`; `extra`
/// is appended in table format only (e.g. a profiler table).
pub fn emit(format: Format, records: &[Map<String, Value>], extra: &str) -> io::Result<()> {
    let text = match format {
        Format::Table => {
            // The machine record is long; the table shows it as key: value lines.
            let mut s = String::new();
            let (machine, rest): (Vec<_>, Vec<_>) = records.iter().cloned().partition(|r| kind(r) == "machine");
            for m in &machine {
                for (k, v) in m.iter().filter(|(k, _)| *k != "record") {
                    s.push_str(&format!("{k:>16}: {}\n", cell(Some(v))));
                }
                s.push('\n');
            }
            s.push_str(&table(&rest));
            s.push_str(extra);
            s
        }
        Format::Json => json_lines(records),
        Format::Csv => csv(records),
    };
    let mut stdout = io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record kind for the tests.
    #[derive(Serialize)]
    struct Point {
        b: u64,
        a: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        c: Option<u64>,
        x: f64,
    }

    impl Record for Point {
        const KIND: &'static str = "point";
    }

    #[test]
    fn a_record_is_its_kind_then_its_fields_in_declaration_order() {
        let p = Point { b: 2, a: None, c: None, x: 2.0 }.to_map();
        assert_eq!(json_lines(&[p]), "{\"record\":\"point\",\"b\":2,\"a\":null,\"x\":2.0}\n");
        let q = Point { b: 1, a: Some(f64::NAN), c: Some(3), x: 1.5 }.to_map();
        assert_eq!(
            json_lines(std::slice::from_ref(&q)),
            "{\"record\":\"point\",\"b\":1,\"a\":null,\"c\":3,\"x\":1.5}\n"
        );
        let r = Point { b: 1, a: Some(0.5), c: None, x: 1.0 }.to_map();
        assert_eq!(csv(&[q, r]), "record,b,a,c,x\npoint,1,,3,1.5\npoint,1,0.5,,1.0\n");
    }
}
