//! Records read back into the structs that wrote them: every record struct
//! derives `Deserialize` as well as `Serialize`, so a reader takes a
//! record's fields by name and type from the struct, never by string key.
//! A field renamed or retyped in the struct is then an error naming the
//! record's line and the field, not a value silently read as missing.

use anyhow::{anyhow, bail, Result};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::output::Record;

/// Every record of kind `T::KIND` among `lines` (each a parsed record with
/// its 1-based line number in `source`), read into `T`, with its line.
/// Records of other kinds are passed over; a `T::KIND` record whose fields
/// are missing or of the wrong type is an error naming `source`, the line
/// and the field.
pub fn read_records<'a, T: Record + DeserializeOwned>(
    source: &str,
    lines: impl IntoIterator<Item = (usize, &'a Map<String, Value>)>,
) -> Result<Vec<(usize, T)>> {
    let mut out = Vec::new();
    for (line, m) in lines {
        if let Some(t) = record_of::<T>(m).map_err(|e| anyhow!("{source}:{line}: {e}"))? {
            out.push((line, t));
        }
    }
    Ok(out)
}

/// `records` numbered as the lines of a file: record `k` is line `k + 1`
/// (as `results.jsonl` is read, a skipped line keeping its place).
pub fn numbered(records: &[Map<String, Value>]) -> impl Iterator<Item = (usize, &Map<String, Value>)> {
    records.iter().enumerate().map(|(i, m)| (i + 1, m))
}

/// `m` read into `T` if it is a `T::KIND` record (`None` for other kinds).
pub fn record_of<T: Record + DeserializeOwned>(m: &Map<String, Value>) -> Result<Option<T>> {
    if m.get("record").and_then(Value::as_str) != Some(T::KIND) {
        return Ok(None);
    }
    match serde_json::from_value::<T>(Value::Object(m.clone())) {
        Ok(t) => Ok(Some(t)),
        Err(e) => {
            let msg = e.to_string();
            match culprit(&msg, m) {
                Some(field) => bail!("a {} record's field `{field}`: {msg}", T::KIND),
                None => bail!("a {} record that does not read: {msg}", T::KIND),
            }
        }
    }
}

/// The field a deserialisation error is about: serde names a missing one
/// itself; for a value of the wrong type it names the value, which is
/// looked up among the record's fields (the one field holding it).
fn culprit(msg: &str, m: &Map<String, Value>) -> Option<String> {
    if let Some(rest) = msg.strip_prefix("missing field `") {
        return rest.split('`').next().map(str::to_string);
    }
    let unexpected = msg.strip_prefix("invalid type: ").or_else(|| msg.strip_prefix("invalid value: "))?;
    let holding: Vec<&String> =
        m.iter().filter(|(k, v)| *k != "record" && unexpected.starts_with(&described(v))).map(|(k, _)| k).collect();
    match holding.as_slice() {
        [one] => Some((*one).clone()),
        [] => None,
        many => Some(many.iter().map(|k| k.as_str()).collect::<Vec<_>>().join("` or `")),
    }
}

/// A JSON value as serde's "invalid type" message describes it.
fn described(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) if n.is_f64() => {
            // serde writes a float with a decimal point: `2.0`, not `2`.
            let f = n.to_string();
            let point = if f.contains(['.', 'e', 'E']) { "" } else { ".0" };
            format!("floating point `{f}{point}`")
        }
        Value::Number(n) => format!("integer `{n}`"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "sequence".into(),
        Value::Object(_) => "map".into(),
    }
}

#[cfg(test)]
mod tests;
