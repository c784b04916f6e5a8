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

/// The median of `xs`: the middle value, or the mean of the middle two of an
/// even count; values that are not finite (NaN, infinities) are left out,
/// and `None` when none is left. The one median of the lab: every command
/// takes its medians from here.
pub fn median(xs: &[f64]) -> Option<f64> {
    let finite: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    (!finite.is_empty()).then(|| Data::new(finite).median())
}

/// [`median`] of integer samples (cycle counts), 0 for none.
pub fn median_u64(xs: &[u64]) -> f64 {
    median(&xs.iter().map(|&x| x as f64).collect::<Vec<_>>()).unwrap_or(0.0)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[f64::NAN, 5.0, f64::INFINITY]), Some(5.0));
        assert_eq!(median(&[f64::NAN]), None);
        assert_eq!(median_u64(&[]), 0.0);
        assert_eq!(median_u64(&[7, 1, 3]), 3.0);
        assert_eq!(median_u64(&[1, 2, 3, 10]), 2.5);
    }
}
