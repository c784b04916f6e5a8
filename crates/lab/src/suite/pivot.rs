//! A long list of records as a short table: one row per value of one key,
//! one column per value of another, each cell one field (the same quantity
//! everywhere, so one number format for the whole table), and a last column
//! naming the rows' `results.jsonl` lines.

use std::fmt::Write as _;

use serde_json::Value;

use super::cite;
use super::html::{esc, ColumnFormat};
use super::records::Rec;
use super::units::line_list;
use crate::fields::Fields;

/// `rows` pivoted: `row_key` names each table row (`None` skips the
/// record), `col_key` each column, `field` fills the cell; rows and columns
/// in the order they first appear. `corner` heads the first column.
pub fn pivot(
    rows: &[Rec<'_>],
    corner: &str,
    row_key: impl Fn(&Rec<'_>) -> Option<String>,
    col_key: impl Fn(&Rec<'_>) -> Option<String>,
    field: &str,
) -> String {
    pivot_with(rows, corner, row_key, col_key, field, &[])
}

/// [`pivot`], with `extra` `(heading, field)` columns after the pivoted
/// ones, taken from each row's first record (one format per column).
pub fn pivot_with(
    rows: &[Rec<'_>],
    corner: &str,
    row_key: impl Fn(&Rec<'_>) -> Option<String>,
    col_key: impl Fn(&Rec<'_>) -> Option<String>,
    field: &str,
    extra: &[(&str, &str)],
) -> String {
    let mut firsts: Vec<Rec<'_>> = Vec::new();
    let mut row_names: Vec<String> = Vec::new();
    let mut col_names: Vec<String> = Vec::new();
    let mut cells: Vec<(usize, usize, f64, usize)> = Vec::new();
    for r in rows {
        let (Some(rk), Some(ck), Some(v)) = (row_key(r), col_key(r), r.field(field).and_then(Value::as_f64)) else {
            continue;
        };
        let ri = index(&mut row_names, rk);
        if ri == firsts.len() {
            firsts.push(*r);
        }
        let ci = index(&mut col_names, ck);
        cells.push((ri, ci, v, r.line));
    }
    if cells.is_empty() {
        return "<p class=\"none\">No records.</p>\n".into();
    }
    let fmt = ColumnFormat::of(&cells.iter().map(|c| c.2).collect::<Vec<_>>());
    let mut out = format!("<table>\n<tr><th>{}</th>", cite::html(corner));
    for c in &col_names {
        let _ = write!(out, "<th>{}</th>", cite::html(c));
    }
    for (h, _) in extra {
        let _ = write!(out, "<th>{}</th>", cite::html(h));
    }
    out.push_str("<th>lines</th></tr>\n");
    let extra_fmt: Vec<ColumnFormat> = extra
        .iter()
        .map(|(_, f)| {
            ColumnFormat::of(&firsts.iter().filter_map(|r| r.field(f).and_then(Value::as_f64)).collect::<Vec<_>>())
        })
        .collect();
    for (ri, name) in row_names.iter().enumerate() {
        let _ = write!(out, "<tr><td>{}</td>", cite::html(name));
        let mut lines = Vec::new();
        for ci in 0..col_names.len() {
            let hit: Vec<&(usize, usize, f64, usize)> = cells.iter().filter(|c| c.0 == ri && c.1 == ci).collect();
            lines.extend(hit.iter().map(|c| c.3));
            // Several records for one cell (repeated runs): the first is
            // shown, every line is named.
            let text = hit.first().map_or(String::new(), |c| fmt.write(c.2));
            let _ = write!(out, "<td>{}</td>", esc(&text));
        }
        for ((_, f), fmt) in extra.iter().zip(&extra_fmt) {
            let text =
                firsts.get(ri).and_then(|r| r.field(f)).and_then(Value::as_f64).map_or(String::new(), |v| fmt.write(v));
            let _ = write!(out, "<td>{}</td>", esc(&text));
        }
        let _ = writeln!(out, "<td class=\"line\">{}</td></tr>", line_list(&lines));
    }
    out.push_str("</table>\n");
    out
}

/// The position of `name` in `names`, appended if new.
fn index(names: &mut Vec<String>, name: String) -> usize {
    match names.iter().position(|n| *n == name) {
        Some(i) => i,
        None => {
            names.push(name);
            names.len() - 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::record;

    #[test]
    fn records_become_a_grid_with_their_lines() {
        let maps: Vec<_> = [("a", 1, 1.5e6), ("a", 2, 2.5e6), ("b", 1, 500_000.0)]
            .iter()
            .map(|(k, c, v)| {
                let mut m = record("x");
                m.insert("k".into(), (*k).into());
                m.insert("c".into(), (*c).into());
                m.insert("v".into(), (*v).into());
                m
            })
            .collect();
        let rows: Vec<Rec<'_>> = maps.iter().enumerate().map(|(i, m)| Rec { line: i + 3, map: m }).collect();
        let t = pivot(
            &rows,
            "lock",
            |r| r.str("k").map(str::to_string),
            |r| r.num("c").map(|c| format!("{c} threads")),
            "v",
        );
        assert!(t.contains("<th>1 threads</th><th>2 threads</th><th>lines</th>"), "{t}");
        assert!(t.contains("<td>a</td><td>1.50 M</td><td>2.50 M</td><td class=\"line\">3, 4</td>"), "{t}");
        assert!(t.contains("<td>b</td><td>0.50 M</td><td></td><td class=\"line\">5</td>"), "{t}");
    }
}
