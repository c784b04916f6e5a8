//! The records of `granule model fit` (and `granule scale --fit`):
//! `fit_input`, then per fit `model_fit`, its `fit_point`s, a `model_knee`
//! per delay and, except in a table, a `model_curve` per predicted core
//! count.
//!
//! Throughput is in the input's unit and named after it: fields
//! `…_round_trips_per_sec` for `granule scale` input, `…_throughput` for
//! generic `cores, throughput` input ([`Peak`], [`Predicted`]). `s`, `a` and
//! think times are in the unit `time_unit` of `model_fit` names.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::{Scope, Units};
use crate::output::Record;

/// A delay as printed: a whole number as an integer, else as a float.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct Delay(pub f64);

impl Delay {
    fn whole(self) -> Option<u64> {
        (self.0.fract() == 0.0 && self.0 < 9e15).then_some(self.0 as u64)
    }
}

impl Serialize for Delay {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.whole() {
            Some(n) => s.serialize_u64(n),
            None => s.serialize_f64(self.0),
        }
    }
}

impl fmt::Display for Delay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.whole() {
            Some(n) => write!(f, "{n}"),
            None => write!(f, "{}", Value::from(self.0)),
        }
    }
}

/// The fields that say which fit a record belongs to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// A blank for the report's hand-made test records (`suite::records::testing`).
#[cfg_attr(test, derive(Default))]
pub struct FitKey<'a> {
    /// The regime (or the input's `regime` field, `data` without one).
    pub regime: Cow<'a, str>,
    /// `all delays` (one joint fit) or `one delay`.
    pub scope: Cow<'static, str>,
    /// The delay (cycles per round trip for scale input); null only for
    /// the `model_fit` of a joint fit over every delay.
    pub delay: Option<Delay>,
}

impl<'a> FitKey<'a> {
    /// The key of `regime`'s fit over `scope`, at `delay`.
    pub(super) fn new(regime: &'a str, scope: Scope, delay: Option<f64>) -> Self {
        Self { regime: Cow::Borrowed(regime), scope: Cow::Borrowed(scope.name()), delay: delay.map(Delay) }
    }
}

/// The model's peak throughput `1/s`, in the input's unit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Peak {
    /// Round trips per second (`granule scale` input).
    #[serde(rename = "peak_round_trips_per_sec")]
    RoundTripsPerSec(f64),
    /// The input's own throughput unit.
    #[serde(rename = "peak_throughput")]
    Throughput(f64),
}

/// A predicted throughput, in the input's unit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Predicted {
    /// Round trips per second (`granule scale` input).
    #[serde(rename = "predicted_round_trips_per_sec")]
    RoundTripsPerSec(f64),
    /// The input's own throughput unit.
    #[serde(rename = "predicted_throughput")]
    Throughput(f64),
}

impl Predicted {
    /// The field it is written as, and the throughput.
    pub fn field(self) -> (&'static str, f64) {
        match self {
            Predicted::RoundTripsPerSec(x) => ("predicted_round_trips_per_sec", x),
            Predicted::Throughput(x) => ("predicted_throughput", x),
        }
    }
}

impl Units {
    /// `x` (in the input's unit) as a peak throughput.
    pub(super) fn peak(self, x: f64) -> Peak {
        match self {
            Units::Scale { .. } => Peak::RoundTripsPerSec(x),
            Units::Generic => Peak::Throughput(x),
        }
    }

    /// `x` (in the input's unit) as a predicted throughput.
    pub(super) fn predicted(self, x: f64) -> Predicted {
        match self {
            Units::Scale { .. } => Predicted::RoundTripsPerSec(x),
            Units::Generic => Predicted::Throughput(x),
        }
    }
}

/// `fit_input`: what was read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// A blank for the report's hand-made test records (`suite::records::testing`).
#[cfg_attr(test, derive(Default))]
pub struct FitInput<'a> {
    /// The input file as named (`-`: standard input).
    pub file: String,
    /// Measurements read.
    pub points: usize,
    /// The input's machine record's CPU (null without one).
    pub cpu_model: Option<Cow<'a, str>>,
    /// TSC frequency the scale input was converted with, GHz (null for
    /// generic input).
    pub tsc_ghz: Option<f64>,
    /// Lock acquisitions per round trip (null for generic input).
    pub locks_per_round_trip: Option<f64>,
}

impl Record for FitInput<'_> {
    const KIND: &'static str = "fit_input";
}

/// `model_fit`: one least-squares fit of the machine-repairman model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// A blank for the report's hand-made test records (`suite::records::testing`).
#[cfg_attr(test, derive(Default))]
pub struct ModelFit<'a> {
    /// Which fit.
    #[serde(flatten)]
    pub key: FitKey<'a>,
    /// Points fitted.
    pub points: usize,
    /// Service time per request.
    pub s: f64,
    /// Standard error of `s` (null if unknown).
    pub s_err: Option<f64>,
    /// Think time per request outside the lock (beyond the delay, for a
    /// joint fit).
    pub a: f64,
    /// Standard error of `a` (null if unknown or given).
    pub a_err: Option<f64>,
    /// `a` was given (`--think`), not fitted.
    pub a_given: bool,
    /// Coefficient of determination (null if all points are equal).
    pub r2: Option<f64>,
    /// Degrees of freedom: points minus fitted parameters.
    pub dof: usize,
    /// Levenberg–Marquardt reported convergence.
    pub converged: bool,
    /// The saturation point `1 + a/s`, cores (null for a joint fit: see the
    /// `model_knee` per delay).
    pub knee_cores: Option<f64>,
    /// The unit of `s` and `a`.
    pub time_unit: Cow<'static, str>,
    /// Profiled average hold on 1 core, cycles (from `lock_hold` records
    /// in the input; null without).
    pub profiled_hold_1_core: Option<f64>,
    /// The most cores of a profiled hold in the input.
    pub profiled_hold_cores: Option<usize>,
    /// Profiled average hold on that many cores, cycles.
    pub profiled_hold_n_cores: Option<f64>,
    /// Distinct core counts among the points fitted.
    pub distinct_cores: usize,
    /// Whether the fit is determined enough to quote as a prediction: at
    /// least [`QUOTE_MIN_CORES`] distinct core counts and R² ≥
    /// [`QUOTE_MIN_R2`].
    pub quoted: bool,
    /// Why not, when not.
    pub not_quoted_because: Option<String>,
}

/// The fewest distinct core counts a quoted fit rests on: two parameters
/// and at least two degrees of freedom left over the shape of the curve.
pub const QUOTE_MIN_CORES: usize = 4;
/// The smallest R² of a quoted fit.
pub const QUOTE_MIN_R2: f64 = 0.9;

/// Whether a fit over `distinct_cores` core counts with coefficient of
/// determination `r2` may be quoted, and why not.
pub fn quotable(distinct_cores: usize, r2: Option<f64>, converged: bool) -> (bool, Option<String>) {
    let why = if !converged {
        Some("the fit did not converge".to_string())
    } else if distinct_cores < QUOTE_MIN_CORES {
        Some(format!(
            "only {distinct_cores} distinct core count{} measured (a fit of s and a needs at least {QUOTE_MIN_CORES})",
            if distinct_cores == 1 { "" } else { "s" }
        ))
    } else {
        match r2 {
            Some(r) if r >= QUOTE_MIN_R2 => None,
            Some(r) => Some(format!("R² = {r:.2} is below {QUOTE_MIN_R2}")),
            None => Some("R² is undefined (every point equal)".to_string()),
        }
    };
    (why.is_none(), why)
}

impl Record for ModelFit<'_> {
    const KIND: &'static str = "model_fit";
}

/// `fit_point`: one measurement beside the fitted model, in the input's
/// throughput unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitPoint<'a> {
    /// Which fit.
    #[serde(flatten)]
    pub key: FitKey<'a>,
    /// Cores.
    pub cores: usize,
    /// Measured throughput.
    pub measured: f64,
    /// The fitted model's throughput.
    pub fitted: f64,
    /// `measured − fitted`.
    pub residual: f64,
}

impl Record for FitPoint<'_> {
    const KIND: &'static str = "fit_point";
}

/// `model_knee` of a fit, for one delay: where the fitted big lock
/// saturates, and what it predicts at the most `--predict-cores`.
/// (`granule model predict` writes its own `model_knee`.)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitKnee<'a> {
    /// Which fit and delay.
    #[serde(flatten)]
    pub key: FitKey<'a>,
    /// `a` plus the delay's share per request.
    pub think_per_request: f64,
    /// The saturation point, cores.
    pub knee_cores: f64,
    /// The bound `1/s`.
    #[serde(flatten)]
    pub peak: Peak,
    /// The most `--predict-cores`.
    pub predicted_at_cores: usize,
    /// The model's throughput there.
    #[serde(flatten)]
    pub predicted: Predicted,
}

impl Record for FitKnee<'_> {
    const KIND: &'static str = "model_knee";
}

/// `model_curve`: the fitted model's throughput at one of
/// `--predict-cores`, for one delay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelCurve<'a> {
    /// Which fit and delay.
    #[serde(flatten)]
    pub key: FitKey<'a>,
    /// Cores.
    pub cores: usize,
    /// The model's throughput.
    #[serde(flatten)]
    pub predicted: Predicted,
}

impl Record for ModelCurve<'_> {
    const KIND: &'static str = "model_curve";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_fields_are_named_after_the_input_unit() {
        for units in [Units::Scale { ghz: 2.0, per_trip: 2.0 }, Units::Generic] {
            let key = FitKey::new("bkl", Scope::Delay(500.0), Some(500.0));
            let knee = FitKnee {
                key: key.clone(),
                think_per_request: 1.0,
                knee_cores: 2.0,
                peak: units.peak(3.0),
                predicted_at_cores: 4,
                predicted: units.predicted(5.0),
            };
            let keys: Vec<String> = knee.to_map().keys().cloned().collect();
            let name = units.throughput_name();
            let want = [
                "record".to_string(),
                "regime".into(),
                "scope".into(),
                "delay".into(),
                "think_per_request".into(),
                "knee_cores".into(),
                format!("peak_{name}"),
                "predicted_at_cores".into(),
                format!("predicted_{name}"),
            ];
            assert_eq!(keys, want);
            assert_eq!(knee.predicted.field(), (want[8].as_str(), 5.0), "the field the report cites");
        }
    }

    #[test]
    fn whole_delays_are_integers() {
        let v = |d: f64| serde_json::to_value(Delay(d)).unwrap();
        assert_eq!((v(500.0), v(2000.5), v(f64::NAN)), (Value::from(500u64), Value::from(2000.5), Value::Null));
        assert_eq!((Delay(500.0).to_string(), Delay(2000.5).to_string()), ("500".to_string(), "2000.5".to_string()));
    }
}
