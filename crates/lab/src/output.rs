//! Output of every command: JSON Lines, CSV or a human table.
//!
//! A command produces records (`serde_json` objects whose first field is
//! `"record"`, the record kind) and hands them to [`emit`]. JSON Lines prints
//! the machine record first, then one record per line. CSV prints one block
//! per record kind (header, then rows), machine record first. The table groups
//! records by kind and prints one aligned table per kind.

use std::io::{self, Write};

use clap::ValueEnum;
use serde_json::{Map, Value};

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

/// A record: an ordered JSON object with a `"record"` kind first.
pub fn record(kind: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("record".into(), Value::from(kind));
    m
}

fn kind(r: &Map<String, Value>) -> &str {
    r.get("record").and_then(Value::as_str).unwrap_or("record")
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

fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.to_string(),
            (_, Some(i), _) => i.to_string(),
            (_, _, Some(f)) if f.abs() >= 100.0 => format!("{f:.0}"),
            (_, _, Some(f)) if f.abs() >= 1.0 => format!("{f:.2}"),
            // Rates per cycle and small errors: three significant digits.
            (_, _, Some(f)) if f != 0.0 && f.abs() < 0.01 => format!("{f:.2e}"),
            (_, _, Some(f)) => format!("{f:.3}"),
            _ => n.to_string(),
        },
        Some(other) => other.to_string(),
    }
}

fn csv_cell(v: Option<&Value>) -> String {
    let s = match v {
        Some(Value::Number(n)) => n.to_string(),
        other => cell(other),
    };
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
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
