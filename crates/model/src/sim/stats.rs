//! The run's estimates: time averages over the measured window, and a
//! batch-means confidence interval for the throughput.
//!
//! The measured completions are cut into batches of equal size; a batch's
//! throughput is its size over its duration. Batches far longer than the
//! system's memory are nearly independent, so the Student-t interval over
//! the batch throughputs is an honest 95 % interval for the mean.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Mean and 95 % half-width of the batch throughputs (`None` with fewer
/// than two batches).
pub(crate) fn batch_interval(per_batch: u64, durations: &[f64]) -> Option<f64> {
    let b = durations.len();
    if b < 2 {
        return None;
    }
    let xs: Vec<f64> = durations.iter().map(|d| per_batch as f64 / d).collect();
    let mean = xs.iter().sum::<f64>() / b as f64;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (b - 1) as f64;
    let t = StudentsT::new(0.0, 1.0, (b - 1) as f64).ok()?.inverse_cdf(0.975);
    Some(t * (var / b as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_of_identical_batches_is_zero_and_grows_with_spread() {
        assert_eq!(batch_interval(10, &[2.0, 2.0, 2.0]), Some(0.0));
        assert_eq!(batch_interval(10, &[2.0]), None);
        let narrow = batch_interval(10, &[2.0, 2.1, 1.9, 2.0]).unwrap();
        let wide = batch_interval(10, &[2.0, 3.0, 1.0, 2.0]).unwrap();
        assert!(0.0 < narrow && narrow < wide);
        // Two batches of throughput 4 and 6: mean 5, sd √2, t(1) = 12.706.
        let h = batch_interval(12, &[3.0, 2.0]).unwrap();
        assert!((h - 12.706 * (2.0f64 / 2.0).sqrt()).abs() < 1e-2, "{h}");
    }
}
