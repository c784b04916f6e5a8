//! The report page: one self-contained HTML file (inline CSS and SVG, no
//! scripts to run, nothing fetched from a network) that links only to files
//! the suite wrote beside it.

use std::fmt::Write as _;

use serde_json::Value;

use super::figures::Fig;
use super::records::Rec;
use crate::fields::{text, Fields, Style};

/// Escape text for HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A cell's text: numbers rounded for people (the record keeps every digit).
pub fn cell(v: Option<&Value>) -> String {
    text(v, Style::Report)
}

/// A table of records: `(heading, field)` columns; each row names its
/// `results.jsonl` line.
pub fn table(rows: &[Rec<'_>], cols: &[(&str, &str)]) -> String {
    if rows.is_empty() {
        return "<p class=\"none\">No records.</p>\n".into();
    }
    let mut out = String::from("<table>\n<tr><th>line</th>");
    for (h, _) in cols {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr>\n");
    for r in rows {
        let _ = write!(out, "<tr><td class=\"line\">{}</td>", r.line);
        for (_, f) in cols {
            let _ = write!(out, "<td>{}</td>", esc(&cell(r.field(f))));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// A figure: the SVG inline, its caption, and its sources as JSON.
pub fn figure(f: &Fig) -> String {
    let sources = serde_json::to_string(&f.sources).unwrap_or_else(|_| "[]".into());
    format!(
        "<figure id=\"{id}\">\n<h3>{title}</h3>\n{svg}<figcaption>{caption} <a href=\"{id}.svg\">SVG file</a>.</figcaption>\n\
         <script type=\"application/json\" class=\"figure-data\" data-figure=\"{id}\">{sources}</script>\n</figure>\n",
        id = f.id,
        title = esc(&f.title),
        svg = f.svg(),
        caption = esc(&f.caption),
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
    "body { font-family: sans-serif; max-width: 1000px; margin: 2em auto; padding: 0 1em; color: #222; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.8em 0; display: block; max-width: 100%; overflow-x: auto; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
th { background: #f3f3f3; } td.line { color: #888; }
figure { margin: 1.5em 0; } figure svg { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; color: #444; }
.summary li { margin: 0.4em 0; } .none { color: #888; }
.note { background: #fff8e0; border-left: 4px solid #e0b000; padding: 0.5em 1em; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::record;

    #[test]
    fn tables_escape_and_name_their_lines() {
        let mut m = record("x");
        m.insert("name".into(), "<b>".into());
        m.insert("v".into(), 1234.5.into());
        let rows = [Rec { line: 7, map: &m }];
        let t = table(&rows, &[("name", "name"), ("value", "v")]);
        assert!(t.contains("<td class=\"line\">7</td><td>&lt;b&gt;</td><td>1234</td>"), "{t}");
        assert!(table(&[], &[("a", "a")]).contains("No records"));
    }

    #[test]
    fn a_page_fetches_nothing() {
        let p = page("t", "<p>x</p>");
        assert!(!p.contains("http://") && !p.contains("https://") && !p.contains("<script src"));
    }
}
