//! The seed's three findings, computed from one invocation's runs, per
//! (regime, cores): (1) the wait on the lock that serialises sysctl under
//! `giant` (the kernel's whole-kernel lock) against the sysctl lock's under
//! `sx`; (2) how much more often `improper` takes the sysctl lock, and how
//! much longer it waits in total, than `giant` takes its lock; (3) jobs per
//! second under `sx` against `giant`. Totals are over the last run of each
//! policy (boot, warm-up and window: equal lengths for every policy).

use granule_hosted::granule_kernel::SubsystemLocking;
use granule_sync::profile::SiteRecord;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

use crate::output::Record;

/// The lock a regime's `giant` policy serialises the subsystems with, as
/// the profiler names it (`lockfree`'s management gate is not profiled).
pub fn giant_lock(regime: &str) -> Option<&'static str> {
    match regime {
        "bkl" | "bkl-ticket" | "bkl-mcs" | "rtm" => Some("kernel"),
        "fine" => Some("fine.brlock"),
        _ => None,
    }
}

/// Acquisitions, contended acquisitions and total wait of the sites whose
/// lock `pick` accepts.
fn sum(sites: &[SiteRecord], pick: impl Fn(&str) -> bool) -> (u64, u64, u64) {
    sites
        .iter()
        .filter(|s| pick(&s.lock))
        .fold((0, 0, 0), |(a, c, w), s| (a + s.acquisitions, c + s.contended, w + s.wait_total))
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// `subsystem_findings`: the seed's findings for one regime and core count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FindingsRecord {
    pub regime: Cow<'static, str>,
    pub cores: usize,
    /// The lock `giant` serialises with (null: not profiled).
    pub giant_lock: Option<Cow<'static, str>>,
    /// Under `giant`: that lock's acquisitions, contended acquisitions and
    /// total wait (cycles).
    pub giant_acquisitions: Option<u64>,
    pub giant_contended: Option<u64>,
    pub giant_wait_total: Option<u64>,
    /// Under `sx`: the sysctl lock's (both modes).
    pub sx_sysctl_acquisitions: u64,
    pub sx_sysctl_contended: u64,
    pub sx_sysctl_wait_total: u64,
    /// Under `improper`: the sysctl lock's (exclusive at every access point).
    pub improper_sysctl_acquisitions: u64,
    pub improper_sysctl_contended: u64,
    pub improper_sysctl_wait_total: u64,
    /// Finding 2: improper's acquisitions over giant's.
    pub improper_over_giant_acquisitions: Option<f64>,
    /// Finding 2: improper's total wait over giant's.
    pub improper_over_giant_wait: Option<f64>,
    /// Finding 3: jobs per second, sx over giant (mean over runs).
    pub sx_over_giant_jobs: Option<f64>,
}

impl Record for FindingsRecord {
    const KIND: &'static str = "subsystem_findings";
}

/// The findings of `regime` at `cores`, from each policy's last-run sites
/// and mean jobs per second (`None` for a policy not run).
pub fn findings(
    regime: &'static str,
    cores: usize,
    sites: impl Fn(SubsystemLocking) -> Option<Vec<SiteRecord>>,
    jobs: impl Fn(SubsystemLocking) -> Option<f64>,
) -> Option<FindingsRecord> {
    let giant = sites(SubsystemLocking::Giant)?;
    let sx = sites(SubsystemLocking::Sx)?;
    let improper = sites(SubsystemLocking::Improper)?;
    let lock = giant_lock(regime);
    let g = lock.map(|l| sum(&giant, |n| n == l));
    let sysctl = |n: &str| n.ends_with("sysctl lock");
    let s = sum(&sx, sysctl);
    let i = sum(&improper, sysctl);
    Some(FindingsRecord {
        regime: Cow::Borrowed(regime),
        cores,
        giant_lock: lock.map(Cow::Borrowed),
        giant_acquisitions: g.map(|g| g.0),
        giant_contended: g.map(|g| g.1),
        giant_wait_total: g.map(|g| g.2),
        sx_sysctl_acquisitions: s.0,
        sx_sysctl_contended: s.1,
        sx_sysctl_wait_total: s.2,
        improper_sysctl_acquisitions: i.0,
        improper_sysctl_contended: i.1,
        improper_sysctl_wait_total: i.2,
        improper_over_giant_acquisitions: g.and_then(|g| ratio(i.0, g.0)),
        improper_over_giant_wait: g.and_then(|g| ratio(i.2, g.2)),
        sx_over_giant_jobs: jobs(SubsystemLocking::Sx).zip(jobs(SubsystemLocking::Giant)).map(|(s, g)| s / g),
    })
}

impl FindingsRecord {
    /// The three findings in words.
    pub fn text(&self) -> String {
        let mut t = format!("== the seed's findings: {}, {} cores ==\n", self.regime, self.cores);
        match (self.giant_lock.as_deref(), self.giant_wait_total, self.giant_contended) {
            (Some(l), Some(w), Some(c)) => t.push_str(&format!(
                "1. giant waited {w} cycles in total on `{l}` ({c} contended acquisitions); sx waited {} cycles on the \
                 sysctl lock ({} contended of {}).\n",
                self.sx_sysctl_wait_total, self.sx_sysctl_contended, self.sx_sysctl_acquisitions
            )),
            _ => t.push_str(&format!(
                "1. giant's lock is not profiled under {}; sx waited {} cycles on the sysctl lock ({} contended of {}).\n",
                self.regime, self.sx_sysctl_wait_total, self.sx_sysctl_contended, self.sx_sysctl_acquisitions
            )),
        }
        match (self.improper_over_giant_acquisitions, self.improper_over_giant_wait) {
            (Some(a), Some(w)) => t.push_str(&format!(
                "2. improper took the sysctl lock {} times, {a:.1}× giant's acquisitions of its lock, and waited \
                 {w:.1}× as long in total.\n",
                self.improper_sysctl_acquisitions
            )),
            _ => t.push_str(&format!(
                "2. improper took the sysctl lock {} times and waited {} cycles (no giant lock to compare).\n",
                self.improper_sysctl_acquisitions, self.improper_sysctl_wait_total
            )),
        }
        match self.sx_over_giant_jobs {
            Some(r) => {
                t.push_str(&format!("3. sx completed {:+.1} % jobs per second against giant.\n", (r - 1.0) * 100.0))
            }
            None => t.push_str("3. sx or giant did not run.\n"),
        }
        t
    }
}
