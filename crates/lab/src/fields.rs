//! Reading fields back out of records of any kind, by name: the helper
//! behind the places that handle a record without knowing its struct — the
//! renderers in [`crate::output`] (which group records by kind), the
//! suite's step runner ([`crate::suite::run`], which sets the machine
//! record apart), and files a user names ([`crate::input`], JSON Lines or
//! CSV with only the fields a command needs). A reader that knows the
//! record's kind reads it into the struct that wrote it instead
//! ([`crate::typed`], [`crate::suite::records`]).
//!
//! A record here is a JSON object, by reference, or a type that views one
//! ([`crate::input::Record`]). Every read is lenient: a field that is
//! absent, null or of another type reads as `None`. Values a user supplied,
//! which must be checked and blamed on their line, go through
//! [`crate::input::Record::real`] and [`crate::input::Record::int`]
//! instead. [`text`] shows a field's value to people, in a terminal table
//! or in the report.

use serde_json::{Map, Value};

/// A record whose fields can be read, borrowed for `'a`.
pub trait Fields<'a>: Copy {
    /// The raw value of `key`.
    fn field(self, key: &str) -> Option<&'a Value>;

    /// A string field (`None` if absent, null or not a string).
    fn str(self, key: &str) -> Option<&'a str> {
        self.field(key).and_then(Value::as_str)
    }

    /// The record kind (its `record` field), or "".
    fn kind(self) -> &'a str {
        self.str("record").unwrap_or("")
    }
}

impl<'a> Fields<'a> for &'a Map<String, Value> {
    fn field(self, key: &str) -> Option<&'a Value> {
        self.get(key)
    }
}

/// Where [`text`] shows a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// A terminal table ([`crate::output::table`]): booleans as `true` /
    /// `false`, small numbers in scientific notation.
    Table,
    /// The suite's HTML report: booleans as `yes` / `no`, millions as `M`.
    Report,
}

/// A field's value (`None`: absent) as people read it in `style`: empty for
/// absent or null, integers as they are, other numbers rounded (the record
/// keeps every digit).
pub fn text(v: Option<&Value>, style: Style) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) if style == Style::Report => if *b { "yes" } else { "no" }.into(),
        Some(Value::Number(n)) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.to_string(),
            (_, Some(i), _) => i.to_string(),
            (_, _, Some(f)) if style == Style::Report && f.abs() >= 1e6 => format!("{:.3}M", f / 1e6),
            (_, _, Some(f)) if f.abs() >= 100.0 => format!("{f:.0}"),
            (_, _, Some(f)) if f.abs() >= 1.0 => format!("{f:.2}"),
            // Rates per cycle and small errors: three significant digits.
            (_, _, Some(f)) if style == Style::Table && f != 0.0 && f.abs() < 0.01 => format!("{f:.2e}"),
            (_, _, Some(f)) => format!("{f:.3}"),
            _ => n.to_string(),
        },
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_leniently() {
        let Value::Object(m) = serde_json::json!({"record": "ipc", "n": 2, "s": "a", "z": null}) else {
            unreachable!()
        };
        assert_eq!(m.kind(), "ipc");
        assert_eq!((m.str("s"), m.str("n"), m.str("z"), m.str("absent")), (Some("a"), None, None, None));
        assert_eq!(m.field("n"), Some(&Value::from(2)));
        assert_eq!(Map::new().kind(), "");
    }

    #[test]
    fn text_rounds_for_people_in_each_style() {
        let show = |v: Value| (text(Some(&v), Style::Table), text(Some(&v), Style::Report));
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(show(Value::from(7u64)), s("7", "7"));
        assert_eq!(show(Value::from(-7i64)), s("-7", "-7"));
        assert_eq!(show(Value::from(2_500_000.0)), s("2500000", "2.500M"));
        assert_eq!(show(Value::from(1234.5)), s("1234", "1234"));
        assert_eq!(show(Value::from(2.5)), s("2.50", "2.50"));
        assert_eq!(show(Value::from(0.0012345)), s("1.23e-3", "0.001"));
        assert_eq!(show(Value::from(0.0)), s("0.000", "0.000"));
        assert_eq!(show(Value::from(true)), s("true", "yes"));
        assert_eq!(show(Value::from("x")), s("x", "x"));
        assert_eq!(show(Value::Null), s("", ""));
        assert_eq!(text(None, Style::Table), "");
    }
}
