//! The report page: one self-contained HTML file (inline CSS and SVG, no
//! scripts to run, nothing fetched from a network) that links only to files
//! the suite wrote beside it.

use std::fmt::Write as _;

use serde_json::Value;

use super::cite;
use super::figures::Fig;
use super::records::At;
use crate::fields::{text, Style};

/// Escape text for HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A cell's text: numbers rounded for people (the record keeps every digit).
pub fn cell(v: Option<&Value>) -> String {
    text(v, Style::Report)
}

/// How one column of a table writes its numbers: every cell alike (the
/// same decimals and the same k / M scale), so `7.4 M` never stands beside
/// `549885` nor `1.00` beside `1.000`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColumnFormat {
    /// Divide by this before writing (1, 10³ or 10⁶).
    pub scale: f64,
    /// The suffix after a scaled number (`""`, `" k"`, `" M"`).
    pub suffix: &'static str,
    /// Decimals after the point.
    pub decimals: usize,
}

impl ColumnFormat {
    /// The format for a column holding `values`: whole numbers below a
    /// million as they are; otherwise scaled by the largest magnitude, with
    /// three significant digits for it.
    pub fn of(values: &[f64]) -> Self {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let max = finite.iter().map(|v| v.abs()).fold(0.0, f64::max);
        let whole = finite.iter().all(|v| v.fract() == 0.0);
        let (scale, suffix) = if max >= 1e6 {
            (1e6, " M")
        } else if max >= 1e5 && !whole {
            (1e3, " k")
        } else {
            (1.0, "")
        };
        let m = max / scale;
        let decimals = if whole && scale == 1.0 || m >= 100.0 {
            0
        } else if m >= 10.0 {
            1
        } else if m >= 1.0 {
            2
        } else {
            3
        };
        ColumnFormat { scale, suffix, decimals }
    }

    /// `v` in this format, with thousands separators; an exact zero as `0`.
    pub fn write(&self, v: f64) -> String {
        if !v.is_finite() {
            return "—".into();
        }
        if v == 0.0 {
            return "0".into();
        }
        format!("{}{}", super::units::grouped(&format!("{:.*}", self.decimals, v / self.scale)), self.suffix)
    }
}

/// A column of a [`table`] of `T` records: its heading, and the field it
/// shows, as a JSON value.
pub type Column<'h, T> = (&'h str, fn(&T) -> Value);

/// A table of records: one row per record, `cols` its columns, each
/// column's numbers in one [`ColumnFormat`], text with names in `<code>`
/// ([`cite::html`]); each row names its `results.jsonl` line.
pub fn table<T>(rows: &[&At<T>], cols: &[Column<'_, T>]) -> String {
    if rows.is_empty() {
        return "<p class=\"none\">No records.</p>\n".into();
    }
    let mut out = String::from("<table>\n<tr><th>line</th>");
    for (h, _) in cols {
        let _ = write!(out, "<th>{}</th>", cite::html(h));
    }
    out.push_str("</tr>\n");
    let values: Vec<Vec<Value>> = rows.iter().map(|r| cols.iter().map(|(_, f)| f(r)).collect()).collect();
    let formats: Vec<ColumnFormat> = (0..cols.len())
        .map(|c| ColumnFormat::of(&values.iter().filter_map(|row| row[c].as_f64()).collect::<Vec<_>>()))
        .collect();
    for (r, row) in rows.iter().zip(&values) {
        let _ = write!(out, "<tr><td class=\"line\">{}</td>", r.line);
        for (v, fmt) in row.iter().zip(&formats) {
            let text = match v.as_f64() {
                Some(x) if !v.is_boolean() => esc(&fmt.write(x)),
                _ => cite::html(&cell(Some(v))),
            };
            let _ = write!(out, "<td>{text}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// A table of already formatted cells (HTML): a header row, then the rows.
pub fn grid(head: &[String], rows: &[Vec<String>]) -> String {
    if rows.is_empty() {
        return "<p class=\"none\">No records.</p>\n".into();
    }
    let mut out = String::from("<table>\n<tr>");
    for h in head {
        let _ = write!(out, "<th>{h}</th>");
    }
    out.push_str("</tr>\n");
    for r in rows {
        out.push_str("<tr>");
        for c in r {
            let _ = write!(out, "<td>{c}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// A note that every record of `step` is in `<step>.csv` beside the page.
pub fn csv_link(step: &str, what: &str) -> String {
    format!("<p class=\"csv\">{}: <a href=\"{step}.csv\">{step}.csv</a>.</p>\n", esc(what))
}

/// A figure: the SVG inline, its caption, and its sources as JSON.
pub fn figure(f: &Fig) -> String {
    let sources = serde_json::to_string(&f.sources).unwrap_or_else(|_| "[]".into());
    format!(
        "<figure id=\"{id}\">\n<h3>{title}</h3>\n{svg}<figcaption>{caption} <a href=\"{id}.svg\">SVG file</a>.</figcaption>\n\
         <script type=\"application/json\" class=\"figure-data\" data-figure=\"{id}\">{sources}</script>\n</figure>\n",
        id = f.id,
        title = cite::html(&f.title),
        svg = f.svg(),
        caption = cite::html(&f.caption),
        sources = sources.replace("</", "<\\/"),
    )
}

/// The whole page.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n<style>\n{STYLE}</style>\n\
         </head>\n<body>\n{body}</body>\n</html>\n",
        title = esc(title),
    )
}

const STYLE: &str =
    "body { font-family: sans-serif; max-width: 1200px; margin: 1.5em auto; padding: 0 1em; color: #222; line-height: 1.28; font-size: 14.5px; }
h1 { margin-bottom: 0.2em; font-size: 1.7em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin: 1.2em 0 0.5em; }
h3 { margin: 0.8em 0 0.3em; } p { margin: 0.5em 0; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; max-width: 100%; }
td, th { border: 1px solid #ccc; padding: 0.1em 0.4em; text-align: right; overflow-wrap: break-word; }
th { background: #f3f3f3; } td.line { color: #888; }
figure { margin: 0.8em 0; } figure h3 { margin-top: 0; } figure svg { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 0.85em; color: #444; }
.summary li, .verdict li { margin: 0.3em 0; } ul.summary { columns: 2; column-gap: 2em; } .summary li { break-inside: avoid; }
.tables { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); column-gap: 1.5em; align-items: start; }
.tables > section { min-width: 0; overflow-x: auto; } .tables > section.wide { grid-column: 1 / -1; } .tables h3 { margin-top: 0.6em; } .none, .csv { color: #666; font-size: 0.9em; }
.note { background: #fff8e0; border-left: 4px solid #e0b000; padding: 0.5em 1em; }
code { font-size: 0.92em; background: #f3f3f3; padding: 0 0.2em; border-radius: 3px; }
pre { background: #f6f6f6; padding: 0.8em; font-size: 0.85em; white-space: pre-wrap; overflow-wrap: anywhere; }
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_escape_and_name_their_lines() {
        let r = At { line: 7, step: String::new(), rec: ("<b>", 1234.5, None::<f64>) };
        let cols: [Column<'_, (&str, f64, Option<f64>)>; 3] =
            [("name", |r| r.0.into()), ("value", |r| r.1.into()), ("none", |r| r.2.into())];
        let t = table(&[&r], &cols);
        assert!(t.contains("<td class=\"line\">7</td><td>&lt;b&gt;</td><td>1,234</td><td></td>"), "{t}");
        assert!(table::<()>(&[], &[("a", |_| Value::Null)]).contains("No records"));
    }

    #[test]
    fn a_column_writes_every_number_alike() {
        let f = ColumnFormat::of(&[7_376_000.0, 549_885.0]);
        assert_eq!((f.write(7_376_000.0), f.write(549_885.0)), ("7.38 M".into(), "0.55 M".into()));
        let f = ColumnFormat::of(&[1.0, 1.126, 0.5]);
        assert_eq!((f.write(1.0), f.write(1.126), f.write(0.5)), ("1.00".into(), "1.13".into(), "0.50".into()));
        let f = ColumnFormat::of(&[8.0, 12_000.0]);
        assert_eq!(f.write(12_000.0), "12,000");
        assert_eq!(f.write(0.0), "0");
        assert_eq!(ColumnFormat::of(&[0.25, 0.5]).write(0.25), "0.250");
    }

    #[test]
    fn a_page_fetches_nothing() {
        let p = page("t", "<p>x</p>");
        assert!(!p.contains("http://") && !p.contains("https://") && !p.contains("<script src"));
    }
}
