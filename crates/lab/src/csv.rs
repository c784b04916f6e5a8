//! `granule`'s CSV cells, both ways: [`quote`] as [`crate::output::csv`]
//! writes them, [`split`] and [`value`] as [`crate::input`] reads them back,
//! so that a file one command prints is a file another reads.

use serde_json::Value;

/// `cell` as a CSV cell: quoted (with `"` doubled) if it holds a comma, a
/// quote or a newline, else as it is.
pub fn quote(cell: &str) -> String {
    if cell.contains([',', '"', '\n']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_string()
    }
}

/// The cells of one CSV line (double quotes quote, `""` is a quote).
pub fn split(line: &str) -> Vec<String> {
    let (mut cells, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    cells.push(cur);
    cells
}

/// A CSV cell as JSON: an integer, a finite number, null if empty, else text.
pub fn value(cell: &str) -> Value {
    if let Ok(u) = cell.parse::<u64>() {
        return u.into();
    }
    match cell.parse::<f64>() {
        Ok(f) if f.is_finite() => f.into(),
        _ if cell.is_empty() => Value::Null,
        _ => cell.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_cells_split_back() {
        let cells = ["plain", "a,b", "say \"hi\"", "", "2.5"];
        let line = cells.iter().map(|c| quote(c)).collect::<Vec<_>>().join(",");
        assert_eq!(line, "plain,\"a,b\",\"say \"\"hi\"\"\",,2.5");
        assert_eq!(split(&line), cells);
        assert_eq!(
            [value("7"), value("2.5"), value(""), value("x"), value("NaN")],
            [Value::from(7u64), Value::from(2.5), Value::Null, Value::from("x"), Value::from("NaN")]
        );
    }
}
