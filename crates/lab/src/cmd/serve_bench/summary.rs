//! The records: one `serve_bench` per (round, server, test, pipeline) and
//! one `serve_vs_redis` per (test, pipeline) comparing the two servers'
//! medians over the rounds.

use serde_json::{Map, Value};

use super::servers::Kind;
use crate::output::record;

/// One measured run.
#[derive(Clone, Debug)]
pub struct Sample {
    pub round: u64,
    pub server: Kind,
    pub test: String,
    pub pipeline: u64,
    /// 1 if this server ran first for this (test, pipeline) in its round,
    /// else 2.
    pub order: u64,
    pub requests: u64,
    pub requests_per_sec: f64,
    pub server_cpu_s: f64,
}

impl Sample {
    /// Requests per second of server CPU time; none when no CPU tick was
    /// charged.
    pub fn requests_per_cpu_s(&self) -> Option<f64> {
        (self.server_cpu_s > 0.0).then(|| self.requests as f64 / self.server_cpu_s)
    }

    /// The `serve_bench` record.
    pub fn record(&self) -> Map<String, Value> {
        let mut r = record("serve_bench");
        r.insert("round".into(), self.round.into());
        r.insert("server".into(), self.server.name().into());
        r.insert("test".into(), self.test.clone().into());
        r.insert("pipeline".into(), self.pipeline.into());
        r.insert("order".into(), self.order.into());
        r.insert("requests_per_sec".into(), self.requests_per_sec.into());
        r.insert("server_cpu_s".into(), self.server_cpu_s.into());
        r.insert("requests_per_cpu_s".into(), self.requests_per_cpu_s().into());
        r
    }
}

/// The median of `xs` (the mean of the middle two of an even count); none
/// when empty.
pub fn median(mut xs: Vec<f64>) -> Option<f64> {
    xs.retain(|x| x.is_finite());
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    Some(if n % 2 == 1 { xs[n / 2] } else { (xs[n / 2 - 1] + xs[n / 2]) / 2.0 })
}

/// `a / b`, none unless both are known and `b` positive.
fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// The `serve_vs_redis` record of (`test`, `pipeline`) over `samples`.
pub fn compare(samples: &[Sample], regime: &str, test: &str, pipeline: u64) -> Map<String, Value> {
    let of = |kind: Kind| samples.iter().filter(move |s| s.server == kind && s.test == test && s.pipeline == pipeline);
    let rps = |kind: Kind| median(of(kind).map(|s| s.requests_per_sec).collect());
    let xput = |kind: Kind| median(of(kind).filter_map(Sample::requests_per_cpu_s).collect());
    let (g_rps, r_rps) = (rps(Kind::Granule), rps(Kind::Redis));
    let (g_xput, r_xput) = (xput(Kind::Granule), xput(Kind::Redis));
    let ratio_rps = ratio(g_rps, r_rps);
    let ratio_xput = ratio(g_xput, r_xput);
    let mut r = record("serve_vs_redis");
    r.insert("test".into(), test.into());
    r.insert("pipeline".into(), pipeline.into());
    r.insert("regime".into(), regime.into());
    r.insert("rounds".into(), (of(Kind::Granule).count().min(of(Kind::Redis).count()) as u64).into());
    r.insert("granule_requests_per_sec".into(), g_rps.into());
    r.insert("redis_requests_per_sec".into(), r_rps.into());
    r.insert("ratio_rps".into(), ratio_rps.into());
    r.insert("granule_requests_per_cpu_s".into(), g_xput.into());
    r.insert("redis_requests_per_cpu_s".into(), r_xput.into());
    r.insert("ratio_xput".into(), ratio_xput.into());
    let meets = ratio_rps.is_some_and(|x| x >= 1.0) && ratio_xput.is_some_and(|x| x >= 1.0);
    r.insert("meets_target".into(), meets.into());
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(server: Kind, round: u64, rps: f64, cpu: f64) -> Sample {
        Sample {
            round,
            server,
            test: "set".into(),
            pipeline: 1,
            order: 1,
            requests: 1000,
            requests_per_sec: rps,
            server_cpu_s: cpu,
        }
    }

    #[test]
    fn medians() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(vec![f64::NAN, 5.0]), Some(5.0));
    }

    #[test]
    fn comparison_of_medians() {
        let s = vec![
            sample(Kind::Granule, 1, 200.0, 0.5),
            sample(Kind::Granule, 2, 100.0, 1.0),
            sample(Kind::Granule, 3, 300.0, 0.0),
            sample(Kind::Redis, 1, 100.0, 1.0),
            sample(Kind::Redis, 2, 100.0, 1.0),
            sample(Kind::Redis, 3, 100.0, 2.0),
        ];
        let r = compare(&s, "bkl", "set", 1);
        assert_eq!(r["ratio_rps"].as_f64(), Some(2.0));
        // Granule: 2000 and 1000 requests per CPU-second (the run charged
        // no tick has none): median 1500; Redis: 1000.
        assert_eq!(r["granule_requests_per_cpu_s"].as_f64(), Some(1500.0));
        assert_eq!(r["ratio_xput"].as_f64(), Some(1.5));
        assert_eq!(r["meets_target"], true);
        assert_eq!(r["rounds"], 3);
        let none = compare(&s, "bkl", "get", 1);
        assert!(none["ratio_rps"].is_null());
        assert_eq!(none["meets_target"], false);
        assert_eq!(sample(Kind::Redis, 1, 1.0, 0.0).record()["requests_per_cpu_s"], Value::Null);
    }
}
