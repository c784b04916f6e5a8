//! Colours and line styles.
//!
//! A series' `colour` is an index into one of two palettes. A series (or
//! bar) that *is* a regime takes [`crate::regimes::colour`] — a fixed
//! colour per regime name, the same in every figure; anything else (locks,
//! simulated machines, delays) takes a small index into a separate palette
//! of colours no regime uses. A series' `style` picks its dash pattern and
//! the shape of its marks (see [`super::marks`]).

use plotters::style::RGBColor;

use crate::regimes::REGIME_COLOURS;

/// Colours for series and bars that are not regimes (locks, machines,
/// delays, policies): none of them is a regime's colour.
const OTHER_PALETTE: [&str; 10] =
    ["#393b79", "#bcbd22", "#7b4173", "#e7ba52", "#637939", "#6b6ecf", "#000000", "#9c9ede", "#a6761d", "#66c2a5"];

/// Grid lines.
pub(crate) const GRID: RGBColor = RGBColor(0xdd, 0xdd, 0xdd);
/// The frame around a plot area.
pub(crate) const FRAME: RGBColor = RGBColor(0x44, 0x44, 0x44);
/// Reference lines and their legend marks.
pub(crate) const REFERENCE: RGBColor = RGBColor(0x55, 0x55, 0x55);
/// Text.
pub(crate) const INK: RGBColor = RGBColor(0, 0, 0);
/// Value labels beside marks.
pub(crate) const VALUE_INK: RGBColor = RGBColor(0x33, 0x33, 0x33);

/// The colour of palette index `i` (see [`REGIME_COLOURS`]), as `#rrggbb`.
pub(crate) fn colour(i: usize) -> &'static str {
    match i.checked_sub(REGIME_COLOURS) {
        Some(k) => crate::regimes::hex(k),
        None => OTHER_PALETTE[i % OTHER_PALETTE.len()],
    }
}

/// The colour of palette index `i`, for plotters.
pub(crate) fn rgb(i: usize) -> RGBColor {
    parse(colour(i))
}

/// `#rrggbb` as a colour (black if malformed).
fn parse(hex: &str) -> RGBColor {
    let byte = |k: usize| hex.get(1 + 2 * k..3 + 2 * k).and_then(|h| u8::from_str_radix(h, 16).ok()).unwrap_or(0);
    RGBColor(byte(0), byte(1), byte(2))
}

/// The colours of the palette for series that are not regimes.
#[cfg(test)]
pub(crate) fn other_palette() -> &'static [&'static str] {
    &OTHER_PALETTE
}

/// The dash pattern of line style `style`: lengths drawn and skipped, in
/// turn (empty: solid).
pub(crate) fn dash(style: usize) -> &'static [f64] {
    match style % 4 {
        0 => &[],
        1 => &[7.0, 4.0],
        2 => &[2.0, 3.0],
        _ => &[8.0, 3.0, 2.0, 3.0],
    }
}

/// The dash pattern of reference lines.
pub(crate) const REFERENCE_DASH: &[f64] = &[6.0, 4.0];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_colours_parse() {
        assert_eq!(parse("#1f77b4"), RGBColor(0x1f, 0x77, 0xb4));
        assert_eq!(parse("#000000"), RGBColor(0, 0, 0));
        assert_eq!(rgb(crate::regimes::colour("bkl")), RGBColor(0xd6, 0x27, 0x28));
    }
}
