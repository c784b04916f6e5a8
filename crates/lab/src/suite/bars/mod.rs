//! Bar charts with error bars (the seeds' IPC-cost figure), drawn with
//! plotters in the style of [`crate::plot`]: same palettes, fonts, tick
//! steps and labels.
//!
//! Bars stand one per category, or side by side in groups (bars with a
//! `group`: the group names the category under them, a legend the bars'
//! colours). No two labels overlap ([`plan`]): category labels that do not
//! fit their slot wrap, or else turn (35° to 90°, the bottom margin growing
//! to the longest); value labels stand above their bars, upright when too
//! wide to lie flat, and are left out (the bar's tooltip keeps the value)
//! when the bars are too narrow even for that. [`draw`] draws the plan.

mod draw;
mod plan;
#[cfg(test)]
mod tests;

use crate::plot::{colour, Legend, Mark};

/// One bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// Label under the bar, or in the legend when the bar is in a group.
    pub label: String,
    /// Height.
    pub value: f64,
    /// Half-height of the error bar (none drawn if 0).
    pub error: f64,
    /// Palette index: [`crate::regimes::colour`] when the bar is a regime.
    pub colour: usize,
    /// The group it stands in, side by side with the other bars of the
    /// group, under the group's name (empty: a category of its own).
    pub group: String,
}

/// A horizontal reference line across the chart (e.g. a physical floor).
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// Legend text.
    pub label: String,
    /// Height.
    pub value: f64,
}

/// A bar chart.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BarChart {
    /// Title above the plot.
    pub title: String,
    /// Y axis label, with its unit.
    pub y_label: String,
    /// The bars, left to right (a group's bars gathered where it first
    /// appears).
    pub bars: Vec<Bar>,
    /// Dashed reference lines.
    pub references: Vec<Reference>,
}

/// A category: a bar of its own, or a group of bars.
struct Category<'a> {
    label: &'a str,
    bars: Vec<&'a Bar>,
}

impl BarChart {
    fn grouped(&self) -> bool {
        self.bars.iter().any(|b| !b.group.is_empty())
    }

    /// The categories, left to right.
    fn categories(&self) -> Vec<Category<'_>> {
        let mut out: Vec<Category<'_>> = Vec::new();
        for b in &self.bars {
            if b.group.is_empty() {
                out.push(Category { label: &b.label, bars: vec![b] });
            } else if let Some(c) = out.iter_mut().find(|c| c.label == b.group && c.bars[0].group == b.group) {
                c.bars.push(b);
            } else {
                out.push(Category { label: &b.group, bars: vec![b] });
            }
        }
        out
    }

    /// The legend: the bars' colours when they stand in groups, and the
    /// reference lines.
    fn legend(&self) -> Legend {
        let mut entries: Vec<(Mark, String)> = Vec::new();
        if self.grouped() {
            for b in &self.bars {
                let same =
                    |m: &Mark, l: &str| l == b.label && matches!(m, Mark::Swatch(c) if colour(*c) == colour(b.colour));
                if !entries.iter().any(|(m, l)| same(m, l)) {
                    entries.push((Mark::Swatch(b.colour), b.label.clone()));
                }
            }
        }
        entries.extend(self.references.iter().map(|r| (Mark::Dashed, r.label.clone())));
        let text_w = Legend::text_width_for(entries.iter().map(|(_, l)| l.as_str()));
        Legend::new(entries, text_w)
    }
}
