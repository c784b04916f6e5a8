//! Summary statistics of repeated measurements (via `statrs`).

use statrs::statistics::{Data, Distribution, Median};

/// Median, mean, standard deviation, min and max of a sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Median.
    pub median: f64,
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (0 for one sample).
    pub std: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

/// The median of `xs` (`None` if empty).
pub fn median(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| Data::new(xs.to_vec()).median())
}

/// Summarise `xs` (an empty sample summarises to zeros).
pub fn summarize(xs: &[f64]) -> Summary {
    if xs.is_empty() {
        return Summary::default();
    }
    let d = Data::new(xs.to_vec());
    Summary {
        median: d.median(),
        mean: d.mean().unwrap_or(0.0),
        std: if xs.len() > 1 { d.std_dev().unwrap_or(0.0) } else { 0.0 },
        min: xs.iter().copied().fold(f64::INFINITY, f64::min),
        max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    }
}
