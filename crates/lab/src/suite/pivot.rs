//! A long list of records as a short table: one row per value of one key,
//! one column per value of another, each cell one field (the same quantity
//! everywhere, so one number format for the whole table), and a last column
//! naming the rows' `results.jsonl` lines.

use std::fmt::Write as _;

use super::cite;
use super::html::{esc, ColumnFormat};
use super::units::line_list;

/// One record's place in a pivoted table: the row and column it names, the
/// value of its cell, its line, and the values of the table's extra columns.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// The table row.
    pub row: String,
    /// The table column.
    pub col: String,
    /// The cell's number.
    pub value: f64,
    /// The record's line in `results.jsonl`.
    pub line: usize,
    /// The record's values of the extra columns ([`pivot_with`]).
    pub extra: Vec<Option<f64>>,
}

impl Cell {
    /// A cell of a table without extra columns.
    pub fn new(row: String, col: String, value: f64, line: usize) -> Self {
        Self { row, col, value, line, extra: Vec::new() }
    }
}

/// `cells` pivoted: one table row per `row`, one column per `col`, rows and
/// columns in the order they first appear. `corner` heads the first column.
pub fn pivot(cells: impl IntoIterator<Item = Cell>, corner: &str) -> String {
    pivot_with(cells, corner, &[])
}

/// [`pivot`], with `extra` headed columns after the pivoted ones, taken
/// from each row's first cell (one format per column).
pub fn pivot_with(cells: impl IntoIterator<Item = Cell>, corner: &str, extra: &[&str]) -> String {
    let mut firsts: Vec<Vec<Option<f64>>> = Vec::new();
    let mut row_names: Vec<String> = Vec::new();
    let mut col_names: Vec<String> = Vec::new();
    let mut placed: Vec<(usize, usize, f64, usize)> = Vec::new();
    for c in cells {
        let ri = index(&mut row_names, c.row);
        if ri == firsts.len() {
            firsts.push(c.extra);
        }
        let ci = index(&mut col_names, c.col);
        placed.push((ri, ci, c.value, c.line));
    }
    if placed.is_empty() {
        return "<p class=\"none\">No records.</p>\n".into();
    }
    let fmt = ColumnFormat::of(&placed.iter().map(|c| c.2).collect::<Vec<_>>());
    let mut out = format!("<table>\n<tr><th>{}</th>", cite::html(corner));
    for c in &col_names {
        let _ = write!(out, "<th>{}</th>", cite::html(c));
    }
    for h in extra {
        let _ = write!(out, "<th>{}</th>", cite::html(h));
    }
    out.push_str("<th>lines</th></tr>\n");
    let extra_at = |ri: usize, k: usize| firsts.get(ri).and_then(|e| e.get(k).copied().flatten());
    let extra_fmt: Vec<ColumnFormat> = (0..extra.len())
        .map(|k| ColumnFormat::of(&(0..firsts.len()).filter_map(|ri| extra_at(ri, k)).collect::<Vec<_>>()))
        .collect();
    for (ri, name) in row_names.iter().enumerate() {
        let _ = write!(out, "<tr><td>{}</td>", cite::html(name));
        let mut lines = Vec::new();
        for ci in 0..col_names.len() {
            let hit: Vec<&(usize, usize, f64, usize)> = placed.iter().filter(|c| c.0 == ri && c.1 == ci).collect();
            lines.extend(hit.iter().map(|c| c.3));
            // Several records for one cell (repeated runs): the first is
            // shown, every line is named.
            let text = hit.first().map_or(String::new(), |c| fmt.write(c.2));
            let _ = write!(out, "<td>{}</td>", esc(&text));
        }
        for (k, fmt) in extra_fmt.iter().enumerate() {
            let text = extra_at(ri, k).map_or(String::new(), |v| fmt.write(v));
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

    #[test]
    fn records_become_a_grid_with_their_lines() {
        let cells = [("a", 1, 1.5e6), ("a", 2, 2.5e6), ("b", 1, 500_000.0)]
            .iter()
            .enumerate()
            .map(|(i, (k, c, v))| Cell::new(k.to_string(), format!("{c} threads"), *v, i + 3));
        let t = pivot(cells, "lock");
        assert!(t.contains("<th>1 threads</th><th>2 threads</th><th>lines</th>"), "{t}");
        assert!(t.contains("<td>a</td><td>1.50 M</td><td>2.50 M</td><td class=\"line\">3, 4</td>"), "{t}");
        assert!(t.contains("<td>b</td><td>0.50 M</td><td></td><td class=\"line\">5</td>"), "{t}");
    }

    #[test]
    fn extra_columns_come_from_each_rows_first_cell() {
        let cell = |row: &str, col: &str, line: usize, extra: f64| Cell {
            extra: vec![Some(extra), None],
            ..Cell::new(row.into(), col.into(), 1.0, line)
        };
        let t = pivot_with([cell("x", "a", 1, 2.0), cell("x", "b", 2, 9.0)], "op", &["paper", "none"]);
        assert!(t.contains("<td>x</td><td>1</td><td>1</td><td>2</td><td></td><td class=\"line\">1, 2</td>"), "{t}");
    }
}
