//! The one error type of the model crate: a parameter or an input that the
//! model cannot work with, said in words a command line can print as is.

use std::fmt;

/// Why a model, fit or simulation cannot be computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// A parameter is out of its domain (negative time, zero cores, …).
    Invalid(String),
    /// The least-squares fit could not be computed or did not converge.
    Fit(String),
    /// A topology is malformed or too small for the cores asked for.
    Topology(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Invalid(m) => write!(f, "invalid model parameter: {m}"),
            Error::Fit(m) => write!(f, "fit failed: {m}"),
            Error::Topology(m) => write!(f, "topology: {m}"),
        }
    }
}

impl std::error::Error for Error {}

/// `Ok(())` if `x` is a finite number ≥ 0, else an [`Error::Invalid`] naming it.
pub(crate) fn non_negative(name: &str, x: f64) -> Result<(), Error> {
    if x.is_finite() && x >= 0.0 {
        Ok(())
    } else {
        Err(Error::Invalid(format!("{name} must be a finite number ≥ 0, got {x}")))
    }
}

/// `Ok(())` if `x` is a finite number > 0, else an [`Error::Invalid`] naming it.
pub(crate) fn positive(name: &str, x: f64) -> Result<(), Error> {
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        Err(Error::Invalid(format!("{name} must be a finite number > 0, got {x}")))
    }
}
