//! Marks and text placed in pixels, each made of plotters' elements: text
//! on a baseline (level, or reading upwards), the point mark of each line
//! style, lines with dash patterns, and rectangles.

use plotters::element::{Circle, PathElement, Polygon, Rectangle, Text};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{Color, FontTransform, RGBColor, TextStyle, WHITE};

use super::canvas::{Area, Drawn};
use super::palette::INK;
use super::text::{font, text_width_in};

/// Where plotters sets the baseline of text anchored at its top: `0.76em`
/// below the point given.
const ASCENT: f64 = 0.76;

/// A size, weight and colour of type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Type {
    size: f64,
    bold: bool,
    colour: RGBColor,
}

impl Type {
    /// Regular black type of `font-size` `size`.
    pub(crate) const fn new(size: f64) -> Self {
        Type { size, bold: false, colour: INK }
    }

    pub(crate) const fn bold(self) -> Self {
        Type { bold: true, ..self }
    }

    pub(crate) const fn colour(self, colour: RGBColor) -> Self {
        Type { colour, ..self }
    }

    /// The width of `s` in this type.
    pub(crate) fn width(&self, s: &str) -> f64 {
        text_width_in(s, self.size, self.bold)
    }

    fn style(&self, anchor: HPos) -> TextStyle<'_> {
        TextStyle::from(font(self.size, self.bold)).color(&self.colour).pos(Pos::new(anchor, VPos::Top))
    }

    /// Draw `s` with its baseline at `y`, starting, centred or ending (by
    /// `anchor`) at `x`.
    pub(crate) fn draw(&self, area: &Area<'_>, s: &str, (x, y): (f64, f64), anchor: HPos) -> Drawn {
        let at = (x.round() as i32, (y - ASCENT * self.size).round() as i32);
        area.draw(&Text::new(s, at, self.style(anchor)))
    }

    /// Draw `s` reading upwards, its baseline at `x`, starting, centred or
    /// ending (by `anchor`) at height `y`.
    pub(crate) fn draw_up(&self, area: &Area<'_>, s: &str, (x, y): (f64, f64), anchor: HPos) -> Drawn {
        let at = ((x - ASCENT * self.size).round() as i32, y.round() as i32);
        area.draw(&Text::new(s, at, self.style(anchor).transform(FontTransform::Rotate270)))
    }
}

fn px((x, y): (f64, f64)) -> (i32, i32) {
    (x.round() as i32, y.round() as i32)
}

/// A point mark of style `style`, colour `c`, centred on `(x, y)`: a filled
/// dot, then an open square, a filled triangle and a cross (cycling).
pub(crate) fn point(area: &Area<'_>, at: (f64, f64), c: RGBColor, style: usize) -> Drawn {
    let (x, y) = px(at);
    match style % 4 {
        0 => area.draw(&Circle::new((x, y), 4, c.filled())),
        1 => {
            area.draw(&Rectangle::new([(x - 3, y - 3), (x + 3, y + 3)], WHITE.filled()))?;
            let edge = vec![(x - 3, y - 3), (x + 3, y - 3), (x + 3, y + 3), (x - 3, y + 3), (x - 3, y - 3)];
            area.draw(&PathElement::new(edge, c.stroke_width(2)))
        }
        2 => area.draw(&Polygon::new(vec![(x, y - 5), (x + 4, y + 3), (x - 4, y + 3)], c.filled())),
        _ => {
            area.draw(&PathElement::new(vec![(x - 4, y - 4), (x + 4, y + 4)], c.stroke_width(2)))?;
            area.draw(&PathElement::new(vec![(x - 4, y + 4), (x + 4, y - 4)], c.stroke_width(2)))
        }
    }
}

/// A line through `points` in colour `c`, `width` wide, in the dash
/// pattern `dash` (see [`super::palette::dash`]).
pub(crate) fn line(area: &Area<'_>, points: &[(f64, f64)], c: RGBColor, width: u32, dash: &[f64]) -> Drawn {
    for piece in dashes(points, dash) {
        let mut piece: Vec<(i32, i32)> = piece.into_iter().map(px).collect();
        piece.dedup();
        if piece.len() >= 2 {
            area.draw(&PathElement::new(piece, c.stroke_width(width)))?;
        }
    }
    Ok(())
}

/// The pieces of the line through `points` drawn in the dash pattern
/// `pattern` (lengths drawn and skipped in turn; empty: the whole line).
pub(crate) fn dashes(points: &[(f64, f64)], pattern: &[f64]) -> Vec<Vec<(f64, f64)>> {
    if pattern.is_empty() || pattern.iter().any(|d| *d <= 0.0) {
        return vec![points.to_vec()];
    }
    let mut out = Vec::new();
    let mut cur: Vec<(f64, f64)> = points.iter().take(1).copied().collect();
    let (mut k, mut left) = (0, pattern[0]);
    for w in points.windows(2) {
        let ((ax, ay), (bx, by)) = (w[0], w[1]);
        let len = (bx - ax).hypot(by - ay);
        let mut done = 0.0;
        while len - done > left {
            done += left;
            let p = (ax + (bx - ax) * done / len, ay + (by - ay) * done / len);
            if k % 2 == 0 {
                cur.push(p);
                out.push(std::mem::take(&mut cur));
            } else {
                cur = vec![p];
            }
            k = (k + 1) % pattern.len();
            left = pattern[k];
        }
        left -= len - done;
        if k % 2 == 0 {
            cur.push((bx, by));
        }
    }
    if cur.len() >= 2 {
        out.push(cur);
    }
    out
}

/// A rectangle from `(x0, y0)` to `(x1, y1)` filled with `c` at `opacity`.
pub(crate) fn fill(area: &Area<'_>, (x0, y0): (f64, f64), (x1, y1): (f64, f64), c: RGBColor, opacity: f64) -> Drawn {
    area.draw(&Rectangle::new([px((x0, y0)), px((x1, y1))], c.mix(opacity).filled()))
}

/// The outline of the rectangle from `(x0, y0)` to `(x1, y1)`.
pub(crate) fn outline(area: &Area<'_>, (x0, y0): (f64, f64), (x1, y1): (f64, f64), c: RGBColor) -> Drawn {
    area.draw(&Rectangle::new([px((x0, y0)), px((x1, y1))], c.stroke_width(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dashes_follow_the_pattern_around_corners() {
        let d = dashes(&[(0.0, 0.0), (10.0, 0.0), (10.0, 10.0)], &[7.0, 4.0]);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0], [(0.0, 0.0), (7.0, 0.0)]);
        // The second dash starts 4 on, turns the corner, and runs 7.
        assert_eq!(d[1], [(10.0, 1.0), (10.0, 8.0)]);
        assert_eq!(dashes(&[(0.0, 0.0), (5.0, 0.0)], &[]), [[(0.0, 0.0), (5.0, 0.0)]]);
        let around = dashes(&[(0.0, 0.0), (9.0, 0.0), (9.0, 9.0)], &[10.0, 2.0]);
        assert_eq!(around[0], [(0.0, 0.0), (9.0, 0.0), (9.0, 1.0)]);
    }
}
