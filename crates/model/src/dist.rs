//! Distributions of time: how long a core thinks between two requests for the
//! lock (the user delay) and how long it holds the lock (the service).
//!
//! The analytic models know a service *law* ([`ServiceLaw`]: exponential, as
//! the seeds' M/M/1//n assumes, or constant, as a fixed kernel path is); the
//! simulator samples a [`Dist`], which may also be an empirical distribution
//! built from measured samples (drawn with replacement, each sample equally
//! likely).

use rand::Rng;
use rand_distr::{Distribution, Exp1};

use crate::error::{non_negative, Error};

/// The law of the lock's service time in the analytic finite-source model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServiceLaw {
    /// Exponentially distributed (the seeds' M/M/1//n).
    Exponential,
    /// Every critical section takes exactly the mean (M/D/1//n).
    Constant,
}

impl ServiceLaw {
    /// The name used on command lines and in records.
    pub fn name(self) -> &'static str {
        match self {
            ServiceLaw::Exponential => "exp",
            ServiceLaw::Constant => "const",
        }
    }
}

/// A distribution of non-negative times that the simulator samples.
#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    /// Exponential with this mean.
    Exponential(f64),
    /// Always this value.
    Constant(f64),
    /// One of these samples, uniformly at random (with replacement).
    Empirical(Vec<f64>),
}

impl Dist {
    /// An exponential distribution of mean `mean` (≥ 0; 0 is always 0).
    pub fn exponential(mean: f64) -> Result<Self, Error> {
        non_negative("mean", mean)?;
        Ok(Dist::Exponential(mean))
    }

    /// A constant `value` (≥ 0).
    pub fn constant(value: f64) -> Result<Self, Error> {
        non_negative("value", value)?;
        Ok(Dist::Constant(value))
    }

    /// The empirical distribution of `samples` (at least one, each ≥ 0).
    pub fn empirical(samples: Vec<f64>) -> Result<Self, Error> {
        if samples.is_empty() {
            return Err(Error::Invalid("an empirical distribution needs at least one sample".into()));
        }
        for &x in &samples {
            non_negative("every empirical sample", x)?;
        }
        Ok(Dist::Empirical(samples))
    }

    /// A distribution of `law` with mean `mean`.
    pub fn of_law(law: ServiceLaw, mean: f64) -> Result<Self, Error> {
        match law {
            ServiceLaw::Exponential => Dist::exponential(mean),
            ServiceLaw::Constant => Dist::constant(mean),
        }
    }

    /// The mean.
    pub fn mean(&self) -> f64 {
        match self {
            Dist::Exponential(m) | Dist::Constant(m) => *m,
            Dist::Empirical(xs) => xs.iter().sum::<f64>() / xs.len() as f64,
        }
    }

    /// The analytic law this distribution follows, if it is one of them.
    pub fn law(&self) -> Option<ServiceLaw> {
        match self {
            Dist::Exponential(_) => Some(ServiceLaw::Exponential),
            Dist::Constant(_) => Some(ServiceLaw::Constant),
            Dist::Empirical(_) => None,
        }
    }

    /// A short description for records: `exp(1000)`, `const(100)`,
    /// `empirical(512 samples, mean 980.5)`.
    pub fn describe(&self) -> String {
        match self {
            Dist::Exponential(m) => format!("exp({m})"),
            Dist::Constant(m) => format!("const({m})"),
            Dist::Empirical(xs) => format!("empirical({} samples, mean {:.1})", xs.len(), self.mean()),
        }
    }

    /// One sample.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match self {
            Dist::Exponential(m) => {
                let e: f64 = Exp1.sample(rng);
                e * m
            }
            Dist::Constant(m) => *m,
            Dist::Empirical(xs) => xs[rng.gen_range(0..xs.len())],
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;

    #[test]
    fn sample_means_match_the_stated_mean() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for d in [Dist::exponential(250.0).unwrap(), Dist::constant(40.0).unwrap()] {
            let n = 200_000;
            let m = (0..n).map(|_| d.sample(&mut rng)).sum::<f64>() / n as f64;
            assert!((m - d.mean()).abs() / d.mean() < 0.01, "{d:?}: sample mean {m}");
        }
        let e = Dist::empirical(vec![1.0, 2.0, 6.0]).unwrap();
        assert_eq!(e.mean(), 3.0);
        assert!((0..1000).all(|_| [1.0, 2.0, 6.0].contains(&e.sample(&mut rng))));
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(Dist::exponential(-1.0).is_err());
        assert!(Dist::constant(f64::NAN).is_err());
        assert!(Dist::empirical(vec![]).is_err());
        assert!(Dist::empirical(vec![1.0, -2.0]).is_err());
        assert_eq!(Dist::of_law(ServiceLaw::Constant, 3.0).unwrap(), Dist::Constant(3.0));
        assert_eq!(Dist::Exponential(2.0).law(), Some(ServiceLaw::Exponential));
    }
}
