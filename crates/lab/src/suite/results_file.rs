//! A `results.jsonl` file as the report reads it back, and one run's page
//! written from its records: what `granule suite` does after measuring and
//! `granule report` does again later, so the two pages are the same.
//!
//! A line that is not a JSON object with a `record` field — malformed,
//! truncated, not UTF-8, or from another program — is named as
//! `FILE:LINE: …` and skipped; its place is kept (an empty `skipped`
//! record), so the page's line numbers still name the file's lines. A
//! record that is one, of a kind the report draws, but does not read into
//! its struct is an error naming the file, line and field
//! ([`Results::view`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::{Map, Value};

use super::frontier::{self, Frontier};
use super::records::Records;
use super::{build_figures, build_page};

/// One results file, read.
#[derive(Clone, Debug)]
pub struct Results {
    /// The file.
    pub path: PathBuf,
    /// Its records, one per line (skipped lines are `{"record":"skipped"}`).
    pub records: Vec<Map<String, Value>>,
    /// What was skipped, as `FILE:LINE: why`.
    pub skipped: Vec<String>,
}

impl Results {
    /// Its records as the report reads them, each in its struct; an error
    /// names the line and field of a record that does not read.
    pub fn view(&self) -> Result<Records> {
        Records::read(&self.path.display().to_string(), &self.records)
    }
}

/// Read `path`: every line a record, or skipped with a reason.
pub fn read_results(path: &Path) -> Result<Results> {
    let bytes = crate::input::read_bytes(path)?;
    let name = path.display().to_string();
    let mut records = Vec::new();
    let mut skipped = Vec::new();
    let mut raw: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    if raw.last().is_some_and(|l| l.is_empty()) {
        raw.pop();
    }
    for (i, raw) in raw.into_iter().enumerate() {
        let Ok(line) = std::str::from_utf8(raw) else {
            skipped.push(format!("{name}:{}: not UTF-8 text; skipped", i + 1));
            records.push(crate::output::record("skipped"));
            continue;
        };
        let line = line.strip_suffix('\r').unwrap_or(line);
        // Any kind of record is kept here, so only its kind is looked at
        // (its `record` field); the report reads each into its struct.
        let why = match serde_json::from_str::<Value>(line) {
            _ if line.trim().is_empty() => Some("an empty line".to_string()),
            Err(e) => Some(format!("not JSON ({e})")),
            Ok(Value::Object(m)) if m.get("record").and_then(Value::as_str).is_some() => {
                records.push(m);
                None
            }
            Ok(Value::Object(_)) => Some("a JSON object without a \"record\" field: not a granule record".into()),
            Ok(_) => Some("not a JSON object".to_string()),
        };
        if let Some(why) = why {
            skipped.push(format!("{name}:{}: {why}; skipped", i + 1));
            records.push(crate::output::record("skipped"));
        }
    }
    if !records.iter().any(|r| r.get("record").and_then(Value::as_str) == Some("machine")) {
        skipped.push(format!("{name}: no machine record: the machine is unknown"));
    }
    Ok(Results { path: path.to_path_buf(), records, skipped })
}

/// Write the page of `rs`, one run's records: `index.html` and one SVG per
/// figure in `dir`. Returns the number of figures, and the frontier the
/// page answers with (computed once, for the figures, the page and the
/// caller).
pub fn write_report(dir: &Path, rs: &Records) -> Result<(usize, Frontier)> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let frontier = frontier::compute(rs);
    let figs = build_figures(rs, &frontier);
    for f in &figs {
        let p = dir.join(format!("{}.svg", f.id));
        std::fs::write(&p, f.svg()).with_context(|| format!("writing {}", p.display()))?;
    }
    let index = dir.join("index.html");
    let page = build_page(rs, &frontier, &figs);
    std::fs::write(&index, page).with_context(|| format!("writing {}", index.display()))?;
    Ok((figs.len(), frontier))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("granule-report-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn malformed_and_foreign_lines_are_named_and_skipped_keeping_line_numbers() {
        let p = temp("results.jsonl");
        let text = "{\"record\":\"machine\",\"cores\":2}\n{\"record\":\"ipc\",\"regime\":\"bkl\"}\nnot json\n[1,2]\n\
                    {\"name\":\"x\"}\n{\"record\":\"ipc\",\"regime\":\"none\"\n\n{\"record\":\"ipc\",\"regime\":\"fine\"}\n";
        let mut bytes = text.as_bytes().to_vec();
        // Line 9: a byte that is not UTF-8.
        bytes.extend_from_slice(b"{\"record\":\"ipc\",\"regime\":\"\xff\"}\n");
        std::fs::write(&p, bytes).unwrap();
        let r = read_results(&p).unwrap();
        assert_eq!(r.records.len(), 9);
        let name = p.display().to_string();
        let lines: Vec<&str> = r.skipped.iter().map(|s| s.strip_prefix(&format!("{name}:")).unwrap()).collect();
        assert!(lines[0].starts_with("3: not JSON"), "{lines:?}");
        assert!(lines[1].starts_with("4: not a JSON object"), "{lines:?}");
        assert!(lines[2].starts_with("5: a JSON object without a \"record\" field"), "{lines:?}");
        assert!(lines[3].starts_with("6: not JSON"), "{lines:?}");
        assert!(lines[4].starts_with("7: an empty line"), "{lines:?}");
        assert!(lines[5].starts_with("9: not UTF-8 text"), "{lines:?}");
        assert_eq!(lines.len(), 6);
        // The fine record is still line 8 of the file.
        assert_eq!(r.records[7]["regime"], "fine");
    }

    #[test]
    fn a_file_without_a_machine_record_says_so() {
        let p = temp("r.jsonl");
        std::fs::write(&p, "{\"record\":\"ipc\"}\n").unwrap();
        let r = read_results(&p).unwrap();
        assert!(r.skipped.iter().any(|s| s.contains("no machine record")), "{:?}", r.skipped);
    }
}
