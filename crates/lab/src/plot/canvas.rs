//! A figure's SVG document, drawn by plotters' SVG backend into a string.
//!
//! The document is drawn in layers, each by its own `SVGBackend` over the
//! whole figure: most of a figure is one layer. A mark with a tooltip, and
//! text turned by an angle plotters cannot turn it by (it turns text by
//! quarter turns only), are layers of their own, which the document wraps
//! in a `<g>` holding the tooltip's `<title>`, or turned by `rotate(…)`.
//! Those two wrappers are the only SVG markup written here by hand.

use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, DrawingAreaErrorKind, IntoDrawingArea, SVGBackend, WHITE};

use super::text;

/// A figure's drawing area, in pixels from its top left corner.
pub(crate) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// What drawing on an [`Area`] gives.
pub(crate) type Drawn = Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// An SVG document being drawn, `width` × `height` pixels, white.
#[derive(Debug)]
pub(crate) struct Canvas {
    size: (u32, u32),
    /// The `<svg …>` opening tag plotters writes.
    head: String,
    body: String,
}

impl Canvas {
    pub(crate) fn new(width: f64, height: f64) -> Self {
        text::register();
        let mut c = Canvas {
            size: (width.ceil() as u32, height.max(1.0).ceil() as u32),
            head: String::new(),
            body: String::new(),
        };
        c.layer(|a| a.fill(&WHITE));
        c
    }

    /// Draw a layer.
    pub(crate) fn layer(&mut self, draw: impl FnOnce(&Area<'_>) -> Drawn) {
        let body = self.render(draw);
        self.body.push_str(&body);
    }

    /// Draw a layer with `tip` as its tooltip (none: a plain layer).
    pub(crate) fn layer_with_tip(&mut self, tip: Option<&str>, draw: impl FnOnce(&Area<'_>) -> Drawn) {
        match tip {
            None => self.layer(draw),
            Some(tip) => {
                let body = self.render(draw);
                self.body.push_str(&format!("<g><title>{}</title>\n{body}</g>\n", escape(tip)));
            }
        }
    }

    /// Draw a layer turned `angle` degrees anticlockwise (reading upwards)
    /// about `(x, y)`, with `tip` as its tooltip if any.
    pub(crate) fn layer_turned(
        &mut self,
        angle: f64,
        (x, y): (f64, f64),
        tip: Option<&str>,
        draw: impl FnOnce(&Area<'_>) -> Drawn,
    ) {
        let body = self.render(draw);
        let title = tip.map(|t| format!("<title>{}</title>\n", escape(t))).unwrap_or_default();
        self.body.push_str(&format!("<g transform=\"rotate(-{angle} {x:.1} {y:.1})\">\n{title}{body}</g>\n"));
    }

    /// The document.
    pub(crate) fn finish(self) -> String {
        format!("{}{}</svg>\n", self.head, self.body)
    }

    /// The elements plotters draws for `draw`, without the document's
    /// opening and closing tags (the first layer's opening tag is kept for
    /// the document).
    fn render(&mut self, draw: impl FnOnce(&Area<'_>) -> Drawn) -> String {
        let mut out = String::new();
        {
            let area = SVGBackend::with_string(&mut out, self.size).into_drawing_area();
            // Plotters draws into a string: only a font it cannot find fails,
            // and the figures' font is compiled in.
            draw(&area).expect("plotters draws a figure into a string");
            area.present().expect("plotters finishes a figure in a string");
        }
        let at = out.find('\n').map_or(0, |i| i + 1);
        if self.head.is_empty() {
            self.head = out[..at].to_string();
        }
        out[at..].strip_suffix("</svg>\n").unwrap_or(&out[at..]).to_string()
    }
}

/// `s` as SVG text.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
