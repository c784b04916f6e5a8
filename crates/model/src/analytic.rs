//! The machine-repairman model of one lock shared by `n` cores (seed 001 §4).
//!
//! Each of `n` cores alternates between *thinking* — running outside the
//! lock for a time of mean `a` (user code, the non-locked part of a system
//! call) — and asking for the lock, which serves one core at a time for a
//! mean time `s`. State `k` is the number of cores waiting for or holding
//! the lock. The seeds' model (finite-source M/M/1//n, [`Repairman`]) takes
//! both times as exponential: arrivals in state `k` come at rate `(n−k)/a`,
//! services at rate `1/s`, and balancing the flows gives
//!
//! ```text
//! P_k = P_0 · (s/a)^k · n!/(n−k)!        P_0 = 1 / Σ_{i=0..n} (s/a)^i · n!/(n−i)!
//! w   = Σ k·P_k                          X   = (1 − P_0)/s
//! ```
//!
//! `w` is the mean number of cores waiting or holding, `X` the lock's
//! throughput (critical sections per unit of time), `1 − P_0` the lock's
//! utilisation, and `R = w/X` (Little's law) the mean time from asking for the
//! lock to releasing it. Throughput grows almost linearly up to the
//! saturation point `n* = 1 + a/s` ([`knee`]) and is bounded by `1/s`.
//!
//! The terms grow like `n!`: for `n` in the thousands they overflow `f64`
//! long before they are summed. Every sum here is kept in log space — a
//! term is the previous one times `(s/a)(n−k+1)`, so its logarithm is a
//! running sum — and normalised by the largest term (log-sum-exp), so `n` of
//! 4096 and beyond are as exact as `n` of 2.
//!
//! **Constant service.** The seeds' formula is exact when the service is
//! exponential, whatever the think times' distribution (the finite-source
//! queue is then a product-form closed network, insensitive to the delay
//! station's law). It is *not* insensitive to the service law: with FCFS
//! service and exponential think times (M/G/1//n) the throughput depends on
//! the whole service distribution. [`FiniteSource`] computes that exactly
//! (Takács 1962; Kleinrock, *Queueing Systems* vol. 1, §5.11): with
//! `B*(θ)` the Laplace–Stieltjes transform of the service time and
//! `λ = 1/a`,
//!
//! ```text
//! P_0 = 1 / (1 + nλs · Σ_{k=0..n−1} C(n−1,k) · Π_{i=1..k} (1 − B*(iλ))/B*(iλ))
//! ```
//!
//! which for exponential service (`(1−B*)/B* = iλs`) is the seeds' `P_0`
//! again, and for constant service (`(1−B*)/B* = e^{iλs} − 1`) is the
//! M/D/1//n model. A constant critical section queues less than an
//! exponential one of the same mean, so near the knee it carries a few per
//! cent more throughput than the seeds' model predicts.

use crate::dist::ServiceLaw;
use crate::error::{non_negative, positive, Error};

/// The saturation point `n* = 1 + a/s`: the core count at which the
/// asymptotes `n/(a+s)` (no contention) and `1/s` (lock always busy) cross.
pub fn knee(s: f64, a: f64) -> f64 {
    1.0 + a / s
}

/// What the model says about one core count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Solution {
    /// Cores `n`.
    pub cores: usize,
    /// Probability that no core waits for or holds the lock.
    pub p0: f64,
    /// Lock throughput `X = (1 − P_0)/s`: critical sections per unit of time.
    pub throughput: f64,
    /// Lock utilisation `1 − P_0`: the fraction of time the lock is held.
    pub utilisation: f64,
    /// Mean number of cores waiting for or holding the lock (`w`).
    pub queue_length: f64,
    /// Mean number of cores waiting, not holding (`w − (1 − P_0)`).
    pub waiting: f64,
    /// Mean time from asking for the lock to releasing it (`w/X`).
    pub response_time: f64,
}

/// Log of the sum of `exp(x)` over `xs`, computed without overflow.
fn log_sum_exp(xs: impl Iterator<Item = f64> + Clone) -> f64 {
    let m = xs.clone().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + xs.map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// `ln(e^x − 1)` for `x > 0`, accurate for tiny and huge `x`.
fn ln_expm1(x: f64) -> f64 {
    x + (-(-x).exp_m1()).ln()
}

fn check(n: usize, s: f64, a: f64) -> Result<(), Error> {
    if n == 0 {
        return Err(Error::Invalid("the model needs at least one core".into()));
    }
    positive("service time s", s)?;
    non_negative("think time a", a)
}

/// A solution from the throughput: `w` follows from Little's law applied to
/// the thinking cores (`n − w = X·a`).
fn from_throughput(n: usize, s: f64, a: f64, utilisation: f64) -> Solution {
    let x = utilisation / s;
    let w = (n as f64 - x * a).clamp(utilisation, n as f64);
    Solution {
        cores: n,
        p0: 1.0 - utilisation,
        throughput: x,
        utilisation,
        queue_length: w,
        waiting: w - utilisation,
        response_time: w / x,
    }
}

/// The seeds' finite-source M/M/1//n model: `n` cores, mean service `s`,
/// mean think time `a` (any time unit, the same for both).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Repairman {
    n: usize,
    s: f64,
    a: f64,
}

impl Repairman {
    /// The model for `n ≥ 1` cores, `s > 0` and `a ≥ 0` (a core that never
    /// thinks, `a = 0`, always waits for or holds the lock).
    pub fn new(n: usize, s: f64, a: f64) -> Result<Self, Error> {
        check(n, s, a)?;
        Ok(Self { n, s, a })
    }

    /// Cores.
    pub fn cores(&self) -> usize {
        self.n
    }

    /// `ln` of the unnormalised terms `(s/a)^k n!/(n−k)!`, `k = 0..=n`.
    fn log_terms(&self) -> Vec<f64> {
        let n = self.n;
        if self.a == 0.0 {
            // ρ = ∞: only state n has weight.
            let mut t = vec![f64::NEG_INFINITY; n + 1];
            t[n] = 0.0;
            return t;
        }
        let ln_rho = self.s.ln() - self.a.ln();
        let mut out = Vec::with_capacity(n + 1);
        let mut l = 0.0;
        out.push(l);
        for k in 1..=n {
            l += ln_rho + ((n - k + 1) as f64).ln();
            out.push(l);
        }
        out
    }

    /// The state probabilities `P_0 ..= P_n` (they sum to 1).
    pub fn probabilities(&self) -> Vec<f64> {
        let t = self.log_terms();
        let z = log_sum_exp(t.iter().copied());
        t.iter().map(|l| (l - z).exp()).collect()
    }

    /// `P_0`, throughput, utilisation, queue length and response time.
    pub fn solve(&self) -> Solution {
        let p = self.probabilities();
        // 1 − P_0 directly when P_0 is small; summed from the busy states
        // when P_0 ≈ 1, where the subtraction would cancel.
        let u = if p[0] < 0.5 { 1.0 - p[0] } else { p[1..].iter().sum() };
        let w: f64 = p.iter().enumerate().map(|(k, pk)| k as f64 * pk).sum();
        let x = u / self.s;
        Solution {
            cores: self.n,
            p0: p[0],
            throughput: x,
            utilisation: u,
            queue_length: w,
            waiting: w - u,
            response_time: w / x,
        }
    }
}

/// The finite-source model with exponential think times and a service time
/// of a given law (M/G/1//n, Takács' formula; see the module essay).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FiniteSource {
    n: usize,
    s: f64,
    a: f64,
    law: ServiceLaw,
}

impl FiniteSource {
    /// The model for `n ≥ 1` cores, mean service `s > 0` of law `law`, mean
    /// (exponential) think time `a ≥ 0`.
    pub fn new(n: usize, s: f64, a: f64, law: ServiceLaw) -> Result<Self, Error> {
        check(n, s, a)?;
        Ok(Self { n, s, a, law })
    }

    /// `ln((1 − B*(θ))/B*(θ))` for the service law at `θ > 0`.
    fn ln_phi(&self, theta: f64) -> f64 {
        match self.law {
            // B*(θ) = 1/(1 + θs): (1 − B*)/B* = θs.
            ServiceLaw::Exponential => (theta * self.s).ln(),
            // B*(θ) = e^{−θs}: (1 − B*)/B* = e^{θs} − 1.
            ServiceLaw::Constant => ln_expm1(theta * self.s),
        }
    }

    /// Throughput, utilisation, queue length and response time (`P_k` of
    /// the general model are not computed).
    pub fn solve(&self) -> Solution {
        let (n, s, a) = (self.n, self.s, self.a);
        if a == 0.0 {
            return from_throughput(n, s, a, 1.0);
        }
        let lambda = 1.0 / a;
        // ln of C(n−1, k) · Π_{i≤k} φ_i, k = 0..n−1, by running sums.
        let mut terms = Vec::with_capacity(n);
        let (mut ln_c, mut ln_prod) = (0.0, 0.0);
        terms.push(0.0);
        for k in 1..n {
            ln_c += ((n - k) as f64).ln() - (k as f64).ln();
            ln_prod += self.ln_phi(k as f64 * lambda);
            terms.push(ln_c + ln_prod);
        }
        // L = ln(nλs · Σ terms); P_0 = 1/(1 + e^L), 1 − P_0 = 1/(1 + e^{−L}).
        let l = (n as f64 * lambda * s).ln() + log_sum_exp(terms.iter().copied());
        let utilisation = 1.0 / (1.0 + (-l).exp());
        from_throughput(n, s, a, utilisation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(x: f64, y: f64, rel: f64) -> bool {
        (x - y).abs() <= rel * y.abs().max(1e-300)
    }

    #[test]
    fn one_core_never_waits() {
        let m = Repairman::new(1, 100.0, 900.0).unwrap().solve();
        assert!(close(m.throughput, 1.0 / 1000.0, 1e-12));
        assert!(close(m.utilisation, 0.1, 1e-12));
        assert!(close(m.queue_length, 0.1, 1e-12));
        assert!(m.waiting.abs() < 1e-12);
        assert!(close(m.response_time, 100.0, 1e-12));
    }

    #[test]
    fn two_cores_by_hand() {
        // s = a = 1: terms 1, 2, 2 → P = 0.2, 0.4, 0.4; w = 1.2, X = 0.8,
        // R = w/X = 1.5 (the same as n/X − a).
        let m = Repairman::new(2, 1.0, 1.0).unwrap();
        let p = m.probabilities();
        for (got, want) in p.iter().zip([0.2, 0.4, 0.4]) {
            assert!(close(*got, want, 1e-12), "{p:?}");
        }
        let sol = m.solve();
        assert!(close(sol.p0, 0.2, 1e-12));
        assert!(close(sol.throughput, 0.8, 1e-12));
        assert!(close(sol.queue_length, 1.2, 1e-12));
        assert!(close(sol.waiting, 0.4, 1e-12));
        assert!(close(sol.response_time, 1.5, 1e-12));
    }

    #[test]
    fn three_cores_by_hand() {
        // s = 1, a = 2 (ρ = 1/2): terms 1, 3/2, 3/2, 3/4, sum 19/4.
        let sol = Repairman::new(3, 1.0, 2.0).unwrap().solve();
        assert!(close(sol.p0, 4.0 / 19.0, 1e-12));
        assert!(close(sol.throughput, 15.0 / 19.0, 1e-12));
        assert!(close(sol.queue_length, 27.0 / 19.0, 1e-12));
        // Little's law on the thinking cores: n − w = X·a.
        assert!(close(3.0 - sol.queue_length, sol.throughput * 2.0, 1e-12));
    }

    #[test]
    fn no_think_time_saturates_the_lock() {
        let sol = Repairman::new(5, 2.0, 0.0).unwrap().solve();
        assert_eq!(sol.p0, 0.0);
        assert!(close(sol.throughput, 0.5, 1e-12));
        assert!(close(sol.queue_length, 5.0, 1e-12));
        let g = FiniteSource::new(5, 2.0, 0.0, ServiceLaw::Constant).unwrap().solve();
        assert!(close(g.throughput, 0.5, 1e-12) && close(g.queue_length, 5.0, 1e-12));
    }

    #[test]
    fn knee_is_where_the_asymptotes_cross() {
        let (s, a) = (100.0, 1000.0);
        let n = knee(s, a);
        assert!(close(n / (a + s), 1.0 / s, 1e-12));
    }

    #[test]
    fn stable_for_thousands_of_cores() {
        for &(s, a) in &[(1.0, 100.0), (1.0, 1e6), (358.0, 1999.0), (1.0, 1e-3)] {
            let m = Repairman::new(4096, s, a).unwrap();
            let p = m.probabilities();
            assert!(p.iter().all(|x| x.is_finite() && *x >= 0.0));
            assert!(close(p.iter().sum(), 1.0, 1e-9));
            let sol = m.solve();
            assert!(sol.throughput.is_finite() && sol.throughput > 0.0);
            assert!(sol.throughput <= 1.0 / s * (1.0 + 1e-12), "bounded by 1/s");
            assert!(sol.throughput <= 4096.0 / (a + s) * (1.0 + 1e-9), "bounded by n/(a+s)");
            let g = FiniteSource::new(4096, s, a, ServiceLaw::Constant).unwrap().solve();
            assert!(g.throughput.is_finite() && g.throughput > 0.0 && g.throughput <= 1.0 / s * (1.0 + 1e-12));
        }
        // Far below the knee the lock is almost idle and X ≈ n/(a+s); far
        // above, X = 1/s.
        let light = Repairman::new(4096, 1.0, 1e9).unwrap().solve();
        assert!(close(light.throughput, 4096.0 / (1e9 + 1.0), 1e-5));
        let heavy = Repairman::new(4096, 1.0, 100.0).unwrap().solve();
        assert!(close(heavy.throughput, 1.0, 1e-12));
    }

    #[test]
    fn takacs_with_exponential_service_is_the_seeds_model() {
        for n in [1, 2, 3, 7, 20, 64, 500] {
            for (s, a) in [(1.0, 1.0), (100.0, 1000.0), (358.0, 1999.0), (5.0, 0.5)] {
                let seeds = Repairman::new(n, s, a).unwrap().solve();
                let g = FiniteSource::new(n, s, a, ServiceLaw::Exponential).unwrap().solve();
                assert!(close(g.throughput, seeds.throughput, 1e-9), "n={n} s={s} a={a}");
                assert!(close(g.queue_length, seeds.queue_length, 1e-9), "n={n} s={s} a={a}");
            }
        }
    }

    #[test]
    fn constant_service_two_cores_by_hand() {
        // n = 2, constant s, exponential think of rate λ: every service
        // starts with the other core thinking; it arrives during the service
        // with probability 1 − e^{−λs}, else the lock idles for a mean
        // 1/(2λ). So X = 1/(s + e^{−λs}/(2λ)).
        for (s, a) in [(1.0, 1.0), (100.0, 1000.0), (3.0, 0.7)] {
            let lambda: f64 = 1.0 / a;
            let want = 1.0 / (s + (-lambda * s).exp() / (2.0 * lambda));
            let got = FiniteSource::new(2, s, a, ServiceLaw::Constant).unwrap().solve().throughput;
            assert!(close(got, want, 1e-12), "s={s} a={a}: {got} vs {want}");
        }
        // …which differs from the seeds' exponential-service 0.8 at s = a = 1.
        let seeds = Repairman::new(2, 1.0, 1.0).unwrap().solve().throughput;
        assert!((seeds - 0.8).abs() < 1e-12);
    }

    #[test]
    fn one_core_is_insensitive_and_constant_service_queues_less() {
        let one = FiniteSource::new(1, 10.0, 90.0, ServiceLaw::Constant).unwrap().solve();
        assert!(close(one.throughput, 0.01, 1e-12));
        for n in 2..40 {
            let c = FiniteSource::new(n, 100.0, 1000.0, ServiceLaw::Constant).unwrap().solve();
            let e = Repairman::new(n, 100.0, 1000.0).unwrap().solve();
            assert!(c.throughput >= e.throughput * (1.0 - 1e-12), "n={n}");
            assert!(c.queue_length <= e.queue_length * (1.0 + 1e-12), "n={n}");
        }
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(Repairman::new(0, 1.0, 1.0).is_err());
        assert!(Repairman::new(2, 0.0, 1.0).is_err());
        assert!(Repairman::new(2, 1.0, -1.0).is_err());
        assert!(FiniteSource::new(2, f64::INFINITY, 1.0, ServiceLaw::Constant).is_err());
    }
}
