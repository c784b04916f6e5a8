//! Text in figures: the font it is measured in, and text fitted to a width.
//!
//! Figures name the generic `sans-serif` family, so a browser draws them in
//! its own sans-serif face. Their layout measures text through plotters'
//! `ab_glyph` font support, with DejaVu Sans (from the `dejavu` crate,
//! compiled in, so no system font is needed) registered under that name:
//! the face Debian's browsers draw `sans-serif` with, and a wide one.
//! Plotters sizes a font by its line height (1.24 × the `font-size` its
//! SVG writes), so measured widths come out about 6 % wider than the
//! glyphs drawn: room to spare for a viewer whose face is a little wider.

use std::sync::Once;

use plotters::style::{register_font, FontDesc, FontFamily, FontStyle};

/// The font family every figure names.
pub(crate) const FAMILY: &str = "sans-serif";

/// Plotters' font size for an SVG `font-size` (its SVG backend writes
/// `font-size` as the size ÷ 1.24).
const PLOTTERS_EM: f64 = 1.24;

/// Register the figures' font with plotters (once; every text is measured
/// and drawn after this).
pub(crate) fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let regular = register_font(FAMILY, FontStyle::Normal, dejavu::sans::regular());
        let bold = register_font(FAMILY, FontStyle::Bold, dejavu::sans::bold());
        assert!(regular.is_ok() && bold.is_ok(), "the dejavu crate's DejaVu Sans is a valid font");
    });
}

/// The plotters font whose SVG `font-size` is `size`: a size near
/// `size × 1.24` that plotters divides back to exactly `size` where there
/// is one (so 12 reads `font-size="12"`; no f64 does that for 13 or 15,
/// which read `13.000000000000002`, the same size to a browser).
pub(crate) fn font(size: f64, bold: bool) -> FontDesc<'static> {
    register();
    let style = if bold { FontStyle::Bold } else { FontStyle::Normal };
    FontDesc::new(FontFamily::Name(FAMILY), plotters_size(size), style)
}

fn plotters_size(size: f64) -> f64 {
    let near = size * PLOTTERS_EM;
    let bits = near.to_bits();
    (0..16u64)
        .flat_map(|d| [bits.wrapping_add(d), bits.wrapping_sub(d)])
        .map(f64::from_bits)
        .find(|s| s / PLOTTERS_EM == size)
        .unwrap_or(near)
}

/// The width of `s` drawn at `font-size` `size`, as plotters measures it.
pub(crate) fn text_width(s: &str, size: f64) -> f64 {
    text_width_in(s, size, false)
}

/// [`text_width`] in bold (`bold`) or regular type.
pub(crate) fn text_width_in(s: &str, size: f64, bold: bool) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    font(size, bold).box_size(s).map_or(s.chars().count() as f64 * 0.65 * size, |(w, _)| f64::from(w))
}

/// `s` cut short with an ellipsis to fit `max_w` at `font-size` `size`
/// (at least its first character); and whether it was cut.
pub(crate) fn fit(s: &str, size: f64, max_w: f64) -> (String, bool) {
    fit_by(s, &|t| text_width(t, size), max_w)
}

/// [`fit`], widths measured by `width`.
fn fit_by(s: &str, width: &dyn Fn(&str) -> f64, max_w: f64) -> (String, bool) {
    if width(s) <= max_w {
        return (s.to_string(), false);
    }
    let chars: Vec<char> = s.chars().collect();
    let cut = |n: usize| format!("{}…", chars[..n].iter().collect::<String>().trim_end());
    let n = (1..chars.len()).rev().find(|n| width(&cut(*n)) <= max_w).unwrap_or(1);
    (cut(n), true)
}

/// Text broken into lines.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Wrapped {
    /// The lines.
    pub lines: Vec<String>,
    /// Whether text was left out (the last line ends in an ellipsis).
    pub cut: bool,
    /// Whether a word longer than a line had to be broken.
    pub broke: bool,
}

/// The longest start of `word` (at least one character) that fits `max_w`,
/// and the rest.
fn split_to_fit(word: &str, width: &dyn Fn(&str) -> f64, max_w: f64) -> (String, String) {
    let chars: Vec<char> = word.chars().collect();
    let n = (1..=chars.len()).rev().find(|n| width(&chars[..*n].iter().collect::<String>()) <= max_w).unwrap_or(1);
    (chars[..n].iter().collect(), chars[n..].iter().collect())
}

/// `text` broken at spaces into lines at most `max_w` wide at `font-size`
/// `size`, at most `max_lines` of them (the last cut short with an ellipsis
/// when the text needs more). A word wider than a line is broken.
pub(crate) fn wrap(text: &str, size: f64, max_w: f64, max_lines: usize) -> Wrapped {
    wrap_by(text, &|s| text_width(s, size), max_w, max_lines)
}

/// [`wrap`] in bold type.
pub(crate) fn wrap_bold(text: &str, size: f64, max_w: f64, max_lines: usize) -> Wrapped {
    wrap_by(text, &|s| text_width_in(s, size, true), max_w, max_lines)
}

/// [`wrap`], widths measured by `width`.
fn wrap_by(text: &str, width: &dyn Fn(&str) -> f64, max_w: f64, max_lines: usize) -> Wrapped {
    let fits = |s: &str| width(s) <= max_w;
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut broke = false;
    for word in text.split_whitespace() {
        let mut word = word.to_string();
        while !fits(&word) && word.chars().count() > 1 {
            broke = true;
            if !cur.is_empty() {
                lines.push(std::mem::take(&mut cur));
            }
            let (head, tail) = split_to_fit(&word, width, max_w);
            lines.push(head);
            word = tail;
        }
        if word.is_empty() {
            continue;
        }
        if cur.is_empty() {
            cur = word;
        } else if fits(&format!("{cur} {word}")) {
            cur.push(' ');
            cur.push_str(&word);
        } else {
            lines.push(std::mem::replace(&mut cur, word));
        }
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    let max_lines = max_lines.max(1);
    let mut cut = false;
    if lines.len() > max_lines {
        lines.truncate(max_lines);
        let last = lines.pop().unwrap_or_default();
        // Room for the ellipsis even when the last line is full.
        lines.push(fit_by(&format!("{}…", last.trim_end()), width, max_w).0);
        cut = true;
    }
    Wrapped { lines, cut, broke }
}
