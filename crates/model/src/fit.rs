//! Fitting the seeds' model to measured throughput: least squares of
//! `(s, a)` — or of `s` alone, `a` known — to points `(n, X)`.
//!
//! Each [`Point`] is a core count, a measured lock throughput (critical
//! sections per unit of time, in any unit: per cycle for the seeds' figures
//! read in cycles, per cycle for `granule scale` after converting round
//! trips per second) and an optional *known* part of the think time. The
//! model's think time for a point is `a + known_think`, so one fit can span
//! several imposed delays (`known_think` = the delay per request) with `a`
//! the unknown rest, or fit one curve (`known_think` = 0) with `a` the whole
//! think time. The fitted `s` and `a` come out in the time unit of
//! `1/throughput`.
//!
//! Method: Levenberg–Marquardt (the `levenberg-marquardt` crate, MINPACK's
//! algorithm) on the residuals `X(n; s, a) − X_measured`, scaled by the mean
//! measurement, with `s` and `a` in units of `1/max X` (a negative step is
//! reflected at zero), so the tolerances mean the same whatever the unit.
//! (Not in `ln s`: as `s → 0` the model's sensitivity to `ln s` vanishes,
//! and a search in `ln s` can slide off onto that plateau.) The Jacobian is
//! analytic: with `ρ = s/a`, `dP_0/dρ = −P_0·w/ρ`, so
//!
//! ```text
//! ∂X/∂s = (P_0·w − U)/s²        ∂X/∂a = −P_0·w/(s·a)        (U = 1 − P_0)
//! ```
//!
//! The start is the best point of a coarse logarithmic grid scaled to the
//! data, so the fit does not depend on a guess. Reported: R² = 1 − SS_res /
//! SS_tot, the residuals, and standard errors from the covariance
//! `σ²(JᵀJ)⁻¹`, `σ² = SS_res/(m − p)` — `None` when there are no more points
//! than parameters (the fit then passes through the points and says nothing
//! about its own uncertainty).

use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt, TerminationReason};
use nalgebra::storage::Owned;
use nalgebra::{DMatrix, DVector, Dyn};

use crate::analytic::{knee, Repairman};
use crate::error::{non_negative, positive, Error};

/// One measurement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Cores.
    pub cores: usize,
    /// Measured lock throughput.
    pub throughput: f64,
    /// The part of the think time that is known (an imposed delay per
    /// request), added to the fitted `a`.
    pub known_think: f64,
}

impl Point {
    /// A point with no known think time.
    pub fn new(cores: usize, throughput: f64) -> Self {
        Self { cores, throughput, known_think: 0.0 }
    }
}

/// A fitted model.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    /// Service time.
    pub s: f64,
    /// Think time (the unknown part, with points' `known_think` added).
    pub a: f64,
    /// Standard error of `s`.
    pub s_err: Option<f64>,
    /// Standard error of `a` (`None` also when `a` was given).
    pub a_err: Option<f64>,
    /// Coefficient of determination (`None` if all points are equal).
    pub r2: Option<f64>,
    /// Points minus fitted parameters.
    pub dof: usize,
    /// The model at each point, in input order.
    pub fitted: Vec<f64>,
    /// Measured minus fitted, in input order.
    pub residuals: Vec<f64>,
    /// Whether Levenberg–Marquardt reported convergence.
    pub converged: bool,
}

impl Fit {
    /// The model's throughput for `n` cores with `known_think` added to `a`.
    pub fn predict(&self, n: usize, known_think: f64) -> f64 {
        model(n, self.s, self.a + known_think).0
    }

    /// The saturation point `1 + (a + known_think)/s`.
    pub fn knee(&self, known_think: f64) -> f64 {
        knee(self.s, self.a + known_think)
    }
}

/// `X`, `∂X/∂s`, `∂X/∂a` of the seeds' model.
fn model(n: usize, s: f64, a: f64) -> (f64, f64, f64) {
    let sol = match Repairman::new(n, s, a) {
        Ok(m) => m.solve(),
        Err(_) => return (f64::NAN, f64::NAN, f64::NAN),
    };
    let (p0, w, u) = (sol.p0, sol.queue_length, sol.utilisation);
    let dx_ds = (p0 * w - u) / (s * s);
    let dx_da = if a > 0.0 { -p0 * w / (s * a) } else { 0.0 };
    (sol.throughput, dx_ds, dx_da)
}

/// The least-squares problem in `s` (and `a` unless it is fixed).
#[derive(Clone, Debug)]
struct Problem<'a> {
    points: &'a [Point],
    fixed_a: Option<f64>,
    scale: f64,
    /// The data's time unit: the parameters are `s/unit` and `a/unit`, so
    /// both are of order one whatever the unit of the measurements.
    unit: f64,
    params: DVector<f64>,
}

/// The smallest parameter (in units of `unit`): keeps `s` a positive number
/// the model can evaluate.
const TINY: f64 = 1e-12;

impl Problem<'_> {
    /// `s` and `a` from the parameters. A negative parameter is read as its
    /// absolute value (a reflection at zero), so the search may step across
    /// zero without leaving the model's domain.
    fn sa(&self) -> (f64, f64) {
        let s = self.params[0].abs().max(TINY) * self.unit;
        let a = self.fixed_a.unwrap_or_else(|| self.params[1].abs() * self.unit);
        (s, a)
    }

    /// `d|p|/dp` of parameter `i`.
    fn sign(&self, i: usize) -> f64 {
        if self.params[i] < 0.0 {
            -1.0
        } else {
            1.0
        }
    }

    fn ss(&self, p: &DVector<f64>) -> f64 {
        let mut q = self.clone();
        q.params = p.clone();
        q.residuals().map_or(f64::INFINITY, |r| r.norm_squared())
    }
}

impl LeastSquaresProblem<f64, Dyn, Dyn> for Problem<'_> {
    type ResidualStorage = Owned<f64, Dyn>;
    type JacobianStorage = Owned<f64, Dyn, Dyn>;
    type ParameterStorage = Owned<f64, Dyn>;

    fn set_params(&mut self, x: &DVector<f64>) {
        self.params.copy_from(x);
    }

    fn params(&self) -> DVector<f64> {
        self.params.clone()
    }

    fn residuals(&self) -> Option<DVector<f64>> {
        let (s, a) = self.sa();
        let r = DVector::from_iterator(
            self.points.len(),
            self.points.iter().map(|p| (model(p.cores, s, a + p.known_think).0 - p.throughput) / self.scale),
        );
        r.iter().all(|x| x.is_finite()).then_some(r)
    }

    fn jacobian(&self) -> Option<DMatrix<f64>> {
        let (s, a) = self.sa();
        let cols = self.params.len();
        let mut j = DMatrix::zeros(self.points.len(), cols);
        for (i, p) in self.points.iter().enumerate() {
            let (_, dx_ds, dx_da) = model(p.cores, s, a + p.known_think);
            j[(i, 0)] = dx_ds * self.unit * self.sign(0) / self.scale;
            if cols > 1 {
                j[(i, 1)] = dx_da * self.unit * self.sign(1) / self.scale;
            }
        }
        j.iter().all(|x| x.is_finite()).then_some(j)
    }
}

fn check(points: &[Point]) -> Result<(), Error> {
    if points.is_empty() {
        return Err(Error::Fit("no points to fit".into()));
    }
    for p in points {
        if p.cores == 0 {
            return Err(Error::Fit("a point has 0 cores".into()));
        }
        positive("every measured throughput", p.throughput).map_err(|e| Error::Fit(e.to_string()))?;
        non_negative("every known think time", p.known_think).map_err(|e| Error::Fit(e.to_string()))?;
    }
    Ok(())
}

/// `n` logarithmically spaced values from `lo` to `hi`.
fn log_grid(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f64> {
    let (l, h) = (lo.ln(), hi.ln());
    (0..n).map(move |i| (l + (h - l) * i as f64 / (n - 1) as f64).exp())
}

/// Fit `s` and `a` to `points`.
pub fn fit(points: &[Point]) -> Result<Fit, Error> {
    solve(points, None)
}

/// Fit `s` alone to `points`, the think time being `a` (plus each point's
/// known part).
pub fn fit_service(points: &[Point], a: f64) -> Result<Fit, Error> {
    non_negative("the known think time a", a)?;
    solve(points, Some(a))
}

fn solve(points: &[Point], fixed_a: Option<f64>) -> Result<Fit, Error> {
    check(points)?;
    let m = points.len();
    let scale = points.iter().map(|p| p.throughput).sum::<f64>() / m as f64;
    let x_max = points.iter().map(|p| p.throughput).fold(0.0, f64::max);
    let n_max = points.iter().map(|p| p.cores).max().unwrap_or(1) as f64;
    // X ≤ 1/s and X(n) ≤ n/(a + s): the time scale is 1/x_max.
    let unit = 1.0 / x_max;
    let mut problem =
        Problem { points, fixed_a, scale, unit, params: DVector::zeros(if fixed_a.is_some() { 1 } else { 2 }) };
    let mut best = (f64::INFINITY, problem.params.clone());
    for s in log_grid(unit * 1e-4, unit * 10.0, 61) {
        let a_grid: Vec<f64> = match fixed_a {
            Some(_) => vec![1.0],
            None => log_grid(unit * 1e-4, unit * n_max * 1e3, 61).collect(),
        };
        for a in a_grid {
            let p = if fixed_a.is_some() {
                DVector::from_vec(vec![s / unit])
            } else {
                DVector::from_vec(vec![s / unit, a / unit])
            };
            let ss = problem.ss(&p);
            if ss < best.0 {
                best = (ss, p);
            }
        }
    }
    if !best.0.is_finite() {
        return Err(Error::Fit("the model cannot be evaluated on these points".into()));
    }
    problem.params = best.1.clone();
    let (mut problem, report) =
        LevenbergMarquardt::new().with_ftol(1e-14).with_xtol(1e-14).with_patience(400).minimize(problem);
    // Never end worse than the start (an aborted step can leave the
    // problem at a rejected trial point).
    let end = problem.ss(&problem.params.clone());
    if end.is_nan() || end > best.0 {
        problem.params = best.1;
    }
    // `NoImprovementPossible`: the tolerances are below what f64 can tell
    // apart, i.e. the start or an iterate already is the minimum.
    let converged = report.termination.was_successful()
        || matches!(report.termination, TerminationReason::NoImprovementPossible(_));
    let (s, a) = problem.sa();
    let fitted: Vec<f64> = points.iter().map(|p| model(p.cores, s, a + p.known_think).0).collect();
    let residuals: Vec<f64> = points.iter().zip(&fitted).map(|(p, f)| p.throughput - f).collect();
    if !(s.is_finite() && a.is_finite() && fitted.iter().all(|f| f.is_finite())) {
        return Err(Error::Fit("the fit diverged".into()));
    }
    let ss_res: f64 = residuals.iter().map(|r| r * r).sum();
    let mean = points.iter().map(|p| p.throughput).sum::<f64>() / m as f64;
    let ss_tot: f64 = points.iter().map(|p| (p.throughput - mean).powi(2)).sum();
    let r2 = (ss_tot > 0.0).then(|| 1.0 - ss_res / ss_tot);
    let k = problem.params.len();
    let dof = m.saturating_sub(k);
    let (s_err, a_err) =
        if dof > 0 { errors(points, s, a, fixed_a.is_some(), ss_res / dof as f64) } else { (None, None) };
    Ok(Fit { s, a, s_err, a_err, r2, dof, fitted, residuals, converged })
}

/// Standard errors of `s` (and `a`) from `σ²(JᵀJ)⁻¹`, `J` in the natural
/// parameters.
fn errors(points: &[Point], s: f64, a: f64, a_fixed: bool, sigma2: f64) -> (Option<f64>, Option<f64>) {
    let k = if a_fixed { 1 } else { 2 };
    let mut j = DMatrix::zeros(points.len(), k);
    for (i, p) in points.iter().enumerate() {
        let (_, dx_ds, dx_da) = model(p.cores, s, a + p.known_think);
        j[(i, 0)] = dx_ds;
        if k > 1 {
            j[(i, 1)] = dx_da;
        }
    }
    let Some(cov) = (j.transpose() * &j).try_inverse() else { return (None, None) };
    let se = |i: usize| {
        let v = cov[(i, i)] * sigma2;
        (v.is_finite() && v >= 0.0).then(|| v.sqrt())
    };
    (se(0), if a_fixed { None } else { se(1) })
}

#[cfg(test)]
mod tests {
    use levenberg_marquardt::differentiate_numerically;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use rand_distr::{Distribution, Normal};

    use super::*;

    fn synthetic(s: f64, a: f64, cores: impl Iterator<Item = usize>, noise: f64, seed: u64) -> Vec<Point> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let e = Normal::new(0.0, noise).unwrap();
        cores.map(|n| Point::new(n, model(n, s, a).0 * (1.0 + e.sample(&mut rng)))).collect()
    }

    #[test]
    fn analytic_jacobian_matches_numerical_differentiation() {
        let points: Vec<Point> = [1usize, 3, 8, 14, 28]
            .iter()
            .map(|&n| Point { cores: n, throughput: 1e-3, known_think: if n > 3 { 500.0 } else { 0.0 } })
            .collect();
        for fixed_a in [None, Some(1500.0)] {
            let params = match fixed_a {
                None => DVector::from_vec(vec![0.358, 1.999]),
                Some(_) => DVector::from_vec(vec![0.358]),
            };
            let mut p = Problem { points: &points, fixed_a, scale: 1e-3, unit: 1000.0, params };
            let numeric = differentiate_numerically(&mut p).unwrap();
            let analytic = p.jacobian().unwrap();
            let err = (&numeric - &analytic).abs().max() / analytic.abs().max();
            assert!(err < 1e-5, "relative Jacobian error {err}\n{numeric}\n{analytic}");
        }
    }

    #[test]
    fn recovers_s_and_a_from_noisy_model_data() {
        // The seeds' single-socket fit: s = 358, a = 1999 cycles, 1..14
        // cores, here with 1 % multiplicative noise.
        for seed in 1..=5 {
            let pts = synthetic(358.0, 1999.0, 1..=14, 0.01, seed);
            let f = fit(&pts).unwrap();
            assert!(f.converged);
            assert!((f.s - 358.0).abs() / 358.0 < 0.05, "seed {seed}: {f:?}");
            assert!((f.a - 1999.0).abs() / 1999.0 < 0.08, "seed {seed}: {f:?}");
            // The truth lies within four standard errors.
            assert!((f.s - 358.0).abs() < 4.0 * f.s_err.unwrap(), "seed {seed}: {f:?}");
            assert!((f.a - 1999.0).abs() < 4.0 * f.a_err.unwrap(), "seed {seed}: {f:?}");
            assert!(f.r2.unwrap() > 0.99);
            assert_eq!(f.dof, 12);
            assert_eq!(f.residuals.len(), 14);
        }
    }

    #[test]
    fn exact_data_is_recovered_exactly_in_any_unit() {
        for (s, a, unit) in [(358.0, 1999.0, 1.0), (358.0, 1999.0, 1e-9 / 2.0), (40.0, 10.0, 1.0), (1.0, 5000.0, 1.0)] {
            let pts: Vec<Point> = (1..=32).map(|n| Point::new(n, model(n, s * unit, a * unit).0)).collect::<Vec<_>>();
            let f = fit(&pts).unwrap_or_else(|e| panic!("{s} {a} {unit}: {e}"));
            assert!((f.s / unit - s).abs() / s < 1e-4, "{s} {a} {unit}: {f:?}");
            assert!((f.a / unit - a).abs() / a < 1e-4, "{s} {a} {unit}: {f:?}");
            assert!(f.r2.unwrap() > 1.0 - 1e-9);
            assert!((f.knee(0.0) - knee(s, a)).abs() < 1e-3 * knee(s, a));
        }
    }

    #[test]
    fn service_alone_with_known_think_time() {
        let pts = synthetic(250.0, 3000.0, [1usize, 2, 4, 8, 16, 24].into_iter(), 0.005, 9);
        let f = fit_service(&pts, 3000.0).unwrap();
        assert_eq!(f.a, 3000.0);
        assert!(f.a_err.is_none() && f.s_err.is_some());
        assert!((f.s - 250.0).abs() / 250.0 < 0.03, "{f:?}");
        assert_eq!(f.dof, 5);
        // A wrong known a gives a worse fit.
        let wrong = fit_service(&pts, 1000.0).unwrap();
        assert!(wrong.r2.unwrap() < f.r2.unwrap());
    }

    #[test]
    fn several_delays_share_s_and_the_unknown_overhead() {
        // Think time = overhead 300 + imposed delay d: one fit over all.
        let (s, o) = (200.0, 300.0);
        let mut pts = Vec::new();
        for d in [0.0, 1000.0, 4000.0] {
            for n in 1..=2 {
                pts.push(Point { cores: n, throughput: model(n, s, o + d).0, known_think: d });
            }
        }
        let f = fit(&pts).unwrap();
        assert!((f.s - s).abs() / s < 1e-3 && (f.a - o).abs() / o < 1e-3, "{f:?}");
        assert_eq!(f.dof, 4);
        assert!((f.predict(8, 1000.0) - model(8, s, o + 1000.0).0).abs() < 1e-12);
    }

    #[test]
    fn as_many_points_as_parameters_leaves_no_uncertainty() {
        let pts = [Point::new(1, 1.0 / 1200.0), Point::new(2, model(2, 200.0, 1000.0).0)];
        let f = fit(&pts).unwrap();
        assert_eq!(f.dof, 0);
        assert!(f.s_err.is_none() && f.a_err.is_none());
        assert!((f.s - 200.0).abs() < 1.0 && (f.a - 1000.0).abs() < 1.0, "{f:?}");
    }

    #[test]
    fn bad_points_are_refused() {
        assert!(fit(&[]).is_err());
        assert!(fit(&[Point::new(0, 1.0)]).is_err());
        assert!(fit(&[Point::new(1, -1.0)]).is_err());
        assert!(fit_service(&[Point::new(1, 1.0)], -5.0).is_err());
    }
}
