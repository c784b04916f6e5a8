//! Records read from files a user names (`model fit --input`, `model
//! simulate --topology-input`): JSON Lines or `granule`'s CSV, every record
//! remembering the file and line it came from, so that every complaint about
//! a value says where it is.
//!
//! Nothing read here is trusted: the file's size is bounded before it is
//! read ([`MAX_INPUT_BYTES`]), a malformed line is an error naming its file
//! and line, and a number is taken only through [`Record::real`] or
//! [`Record::int`], which check that it is a finite number in the caller's
//! range. Nothing is ever allocated in proportion to a number read from a
//! file.

use std::fmt;
use std::io::Read;
use std::ops::RangeInclusive;
use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use serde_json::{Map, Value};

use crate::fields::Fields;

/// Largest input file read, in bytes.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Where a record came from: a file (or `-` for standard input, or a
/// command's own name for records it made itself) and a 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The file as the user named it.
    pub source: Arc<str>,
    /// 1-based line number.
    pub line: usize,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.source, self.line)
    }
}

/// One record and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// Its file and line.
    pub at: Place,
    /// Its fields.
    pub fields: Map<String, Value>,
}

/// Its kind (`machine`, `scale`, …) and string fields are read as every
/// record's are; its numbers through [`Record::real`] and [`Record::int`].
impl<'a> Fields<'a> for &'a Record {
    fn field(self, key: &str) -> Option<&'a Value> {
        self.fields.get(key)
    }
}

impl Record {
    /// A numeric field in `range`: `None` if absent (or null), an error
    /// naming the place if it is not a finite number in `range`.
    pub fn real(&self, key: &str, range: RangeInclusive<f64>) -> Result<Option<f64>> {
        let Some(v) = self.field(key).filter(|v| !v.is_null()) else { return Ok(None) };
        match v.as_f64() {
            Some(x) if x.is_finite() && range.contains(&x) => Ok(Some(x)),
            _ => bail!("{}: `{key}` must be a number in [{}, {}], not {v}", self.at, range.start(), range.end()),
        }
    }

    /// An integer field in `range`: `None` if absent (or null), an error
    /// naming the place if it is not an integer in `range`.
    pub fn int(&self, key: &str, range: RangeInclusive<u64>) -> Result<Option<u64>> {
        let Some(v) = self.field(key).filter(|v| !v.is_null()) else { return Ok(None) };
        let exact = v.as_u64().or_else(|| {
            // A float that is an exact integer (CSV and some writers give 2.0).
            v.as_f64().filter(|x| x.fract() == 0.0 && *x >= 0.0 && *x <= 9.0e15).map(|x| x as u64)
        });
        match exact {
            Some(n) if range.contains(&n) => Ok(Some(n)),
            _ => bail!("{}: `{key}` must be an integer in {}..={}, not {v}", self.at, range.start(), range.end()),
        }
    }

    /// [`Record::int`] as a `usize` (every range used fits one).
    pub fn index(&self, key: &str, range: RangeInclusive<usize>) -> Result<Option<usize>> {
        let r = *range.start() as u64..=*range.end() as u64;
        Ok(self.int(key, r)?.map(|n| n as usize))
    }
}

/// The text of `path` (`-`: standard input), at most [`MAX_INPUT_BYTES`].
pub fn read_text(path: &Path) -> Result<String> {
    let name = path.display();
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| {
        let line = 1 + e.as_bytes()[..e.utf8_error().valid_up_to()].iter().filter(|&&b| b == b'\n').count();
        anyhow::anyhow!("{name}:{line}: not UTF-8 text")
    })
}

/// The bytes of `path` (`-`: standard input), at most [`MAX_INPUT_BYTES`].
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    let name = path.display();
    let mut bytes = Vec::new();
    let limit = MAX_INPUT_BYTES + 1;
    if path.as_os_str() == "-" {
        std::io::stdin().lock().take(limit).read_to_end(&mut bytes).context("reading standard input")?;
    } else {
        let file = std::fs::File::open(path).with_context(|| format!("reading {name}"))?;
        file.take(limit).read_to_end(&mut bytes).with_context(|| format!("reading {name}"))?;
    }
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        bail!("{name}: larger than {} MiB, the most an input file may be", MAX_INPUT_BYTES >> 20);
    }
    Ok(bytes)
}

/// The records of the file at `path`.
pub fn read(path: &Path) -> Result<Vec<Record>> {
    parse(&path.display().to_string(), &read_text(path)?)
}

/// Records from JSON Lines or CSV text (`granule`'s CSV: blocks of a header
/// line and rows, separated by blank lines; `#` starts a comment line).
/// The first line that is neither blank nor a comment decides which: a JSON
/// object makes the text JSON Lines, and then every line must be one.
/// `source` names the text in errors.
pub fn parse(source: &str, text: &str) -> Result<Vec<Record>> {
    let source: Arc<str> = source.into();
    let mut out = Vec::new();
    let mut header: Option<Vec<String>> = None;
    let json_lines =
        text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#')).is_some_and(|l| l.starts_with('{'));
    for (i, line) in text.lines().enumerate() {
        let at = Place { source: source.clone(), line: i + 1 };
        let line = line.trim();
        if line.is_empty() {
            header = None;
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        if json_lines {
            match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(fields)) => out.push(Record { at, fields }),
                Ok(_) => bail!("{at}: not a JSON object"),
                Err(e) => bail!("{at}: not a JSON object ({e})"),
            }
            continue;
        }
        let cells = crate::csv::split(line);
        match &header {
            None => header = Some(cells),
            Some(h) if h.len() != cells.len() => {
                bail!("{at}: {} CSV cells under a header of {}", cells.len(), h.len())
            }
            Some(h) => {
                let fields = h.iter().cloned().zip(cells.iter().map(|c| crate::csv::value(c))).collect();
                out.push(Record { at, fields });
            }
        }
    }
    Ok(out)
}

/// Records a command made itself, placed at `source` lines 1, 2, … (so a
/// bad value in them is reported like one in a file).
pub fn located(source: &str, records: &[Map<String, Value>]) -> Vec<Record> {
    let source: Arc<str> = source.into();
    records
        .iter()
        .enumerate()
        .map(|(i, fields)| Record { at: Place { source: source.clone(), line: i + 1 }, fields: fields.clone() })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_and_json_lines_read_alike() {
        let json = r#"{"record":"machine","tsc_ghz":2.0,"command":"granule scale --regimes bkl,none"}
{"record":"scale","regime":"bkl","cores":1,"delay_cycles":0,"round_trips_per_sec":1000000.0}"#;
        let csv = "record,tsc_ghz,command\nmachine,2.0,\"granule scale --regimes bkl,none\"\n\n\
                   record,regime,cores,delay_cycles,round_trips_per_sec\nscale,bkl,1,0,1000000.0\n";
        let (a, b) = (parse("a.jsonl", json).unwrap(), parse("b.csv", csv).unwrap());
        assert_eq!(a.len(), 2);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].fields["command"], "granule scale --regimes bkl,none");
        assert_eq!(b[1].at.to_string(), "b.csv:5");
        for (x, y) in a.iter().zip(&b) {
            for k in x.fields.keys() {
                assert_eq!(x.fields[k].as_f64(), y.fields[k].as_f64(), "{k}");
                assert_eq!(x.fields[k].as_str(), y.fields[k].as_str(), "{k}");
            }
        }
    }

    #[test]
    fn malformed_lines_are_named_by_file_and_line() {
        let err = |text: &str| parse("in.jsonl", text).unwrap_err().to_string();
        assert!(err("{\"a\":1}\n{not json").starts_with("in.jsonl:2: not a JSON object"), "{}", err("{not"));
        assert!(err("\n\n{}\n[1]").starts_with("in.jsonl:4:"));
        assert!(err("a,b\n1,2,3").starts_with("in.jsonl:2: 3 CSV cells under a header of 2"));
    }

    #[test]
    fn numbers_are_checked_against_their_range_with_their_place() {
        let r = &parse("f", "\n{\"cores\":18446744073709551615,\"x\":\"NaN\",\"y\":2.0,\"z\":-1}").unwrap()[0];
        let e = r.int("cores", 1..=4096).unwrap_err().to_string();
        assert_eq!(e, "f:2: `cores` must be an integer in 1..=4096, not 18446744073709551615");
        assert!(r.real("x", 0.0..=1.0).unwrap_err().to_string().starts_with("f:2: `x`"));
        assert_eq!(r.int("y", 1..=4).unwrap(), Some(2));
        assert!(r.int("z", 0..=4).is_err());
        assert!(r.real("z", 0.0..=4.0).is_err());
        assert_eq!(r.real("absent", 0.0..=1.0).unwrap(), None);
    }
}
