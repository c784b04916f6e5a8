//! The KV macrobenchmark as the report reads it: records `kv` (the kernel,
//! one per regime, core count, workload and run) and `kv_linux` (real
//! `redis-server` on Linux, regime `linux`) of step `kv`, grouped into one
//! series per regime for each workload.
//!
//! A plotted or quoted point is the *median run* of its (workload, regime,
//! cores): the run whose value of the field in question is the median (the
//! lower of the middle two for an even number of runs), so every number the
//! report shows is a field of one record, which it names.

use std::collections::BTreeMap;

use super::records::{Rec, Records};
use crate::fields::Fields;
use crate::regimes::rank;

/// The suite step that runs `granule kv`.
pub const STEP: &str = "kv";

/// The regime of the `kv_linux` records.
pub const LINUX: &str = "linux";

/// User cycles between kernel entries on core 0 (the virtual network) in the
/// seeds' five-core case (seed `001` §5.2.2).
pub const SEED_USER_CYCLES_CORE0: f64 = 800.0;

/// The same on the client/server cores (seed `001` §5.2.2).
pub const SEED_USER_CYCLES_SERVERS: f64 = 1600.0;

/// One regime's points for one workload, by core count.
#[derive(Clone, Debug)]
pub struct Series<'a> {
    /// The regime (`linux` for real Redis on Linux).
    pub regime: &'a str,
    /// Every run's record per core count, in `results.jsonl` order.
    pub runs: BTreeMap<usize, Vec<Rec<'a>>>,
}

impl<'a> Series<'a> {
    /// The legend text.
    pub fn label(&self) -> String {
        if self.regime == LINUX {
            "Linux redis-server (measured)".into()
        } else {
            format!("{} (measured)", self.regime)
        }
    }

    /// Palette index: the regime's fixed colour (Linux has its own).
    pub fn colour(&self) -> usize {
        crate::regimes::colour(self.regime)
    }

    /// The median run of each core count by `field`, in core order.
    pub fn medians(&self, field: &str) -> Vec<Rec<'a>> {
        self.runs.values().filter_map(|runs| median_run(runs, field)).collect()
    }

    /// The median run by `field` at the most cores measured.
    pub fn at_most_cores(&self, field: &str) -> Option<(usize, Rec<'a>)> {
        let (&cores, runs) = self.runs.iter().next_back()?;
        Some((cores, median_run(runs, field)?))
    }
}

/// Every series of one workload.
#[derive(Clone, Debug)]
pub struct Workload<'a> {
    /// The YCSB workload letter (`a` … `f`).
    pub name: &'a str,
    /// The kernel's regimes in the seeds' order, then Linux.
    pub series: Vec<Series<'a>>,
}

impl Workload<'_> {
    /// A chart title: the workload and its operation mix.
    pub fn title(&self) -> String {
        let mix = match self.name {
            "a" => "50 % reads, 50 % updates",
            "b" => "95 % reads, 5 % updates",
            "c" => "read only",
            "d" => "95 % reads of the latest records, 5 % inserts",
            "e" => "95 % short scans, 5 % inserts",
            "f" => "50 % reads, 50 % read-modify-writes",
            _ => "",
        };
        let name = self.name.to_uppercase();
        if mix.is_empty() {
            format!("YCSB workload {name}")
        } else {
            format!("YCSB workload {name} ({mix})")
        }
    }
}

/// The run of `runs` with the median `field` (the lower middle one for an
/// even count); runs without the field are left out.
pub fn median_run<'a>(runs: &[Rec<'a>], field: &str) -> Option<Rec<'a>> {
    let mut with: Vec<(f64, Rec<'a>)> = runs.iter().filter_map(|r| Some((r.num(field)?, *r))).collect();
    if with.is_empty() {
        return None;
    }
    with.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.line.cmp(&b.1.line)));
    Some(with[(with.len() - 1) / 2].1)
}

/// The kernel's (unprofiled) and Linux's KV records of the suite, per
/// workload in letter order.
pub fn workloads<'a>(rs: &Records<'a>) -> Vec<Workload<'a>> {
    let rows =
        rs.of(STEP, "kv").into_iter().filter(|r| r.bool("profiled") != Some(true)).chain(rs.of(STEP, "kv_linux"));
    // workload → regime → cores → runs
    let mut by: BTreeMap<&str, BTreeMap<&str, BTreeMap<usize, Vec<Rec<'_>>>>> = BTreeMap::new();
    for r in rows {
        let (Some(w), Some(regime), Some(cores)) = (r.str("workload"), r.str("regime"), r.num("cores")) else {
            continue;
        };
        by.entry(w).or_default().entry(regime).or_default().entry(cores as usize).or_default().push(r);
    }
    by.into_iter()
        .map(|(name, regimes)| {
            let mut series: Vec<Series<'_>> =
                regimes.into_iter().map(|(regime, runs)| Series { regime, runs }).collect();
            // Linux ranks after every regime of the kernel.
            series.sort_by_key(|s| (s.regime == LINUX, rank(s.regime), s.regime));
            Workload { name, series }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::record;
    use serde_json::{Map, Value};

    fn kv(kind: &str, regime: &str, cores: u64, run: u64, ops: f64) -> Map<String, Value> {
        let mut m = record(kind);
        m.insert("experiment".into(), STEP.into());
        m.insert("regime".into(), regime.into());
        m.insert("cores".into(), cores.into());
        m.insert("workload".into(), "a".into());
        m.insert("run".into(), run.into());
        m.insert("ops_per_sec".into(), ops.into());
        m
    }

    #[test]
    fn series_follow_the_seeds_order_with_linux_last_and_points_are_median_runs() {
        let all = vec![
            record("machine"),
            kv("kv_linux", LINUX, 1, 1, 50.0),
            kv("kv", "fine", 1, 1, 30.0),
            kv("kv", "bkl", 1, 1, 10.0),
            kv("kv", "bkl", 1, 2, 30.0),
            kv("kv", "bkl", 1, 3, 20.0),
            kv("kv", "bkl", 2, 1, 40.0),
            kv("kv", "bkl", 2, 2, 45.0),
        ];
        let ws = workloads(&Records::new(&all));
        assert_eq!(ws.len(), 1);
        assert_eq!(ws[0].title(), "YCSB workload A (50 % reads, 50 % updates)");
        let regimes: Vec<&str> = ws[0].series.iter().map(|s| s.regime).collect();
        assert_eq!(regimes, ["bkl", "fine", LINUX]);
        let bkl: Vec<usize> = ws[0].series[0].medians("ops_per_sec").iter().map(|r| r.line).collect();
        // 1 core: runs 10, 30, 20 → 20 (line 6); 2 cores: 40, 45 → the lower, 40 (line 7).
        assert_eq!(bkl, [6, 7]);
        let (cores, top) = ws[0].series[0].at_most_cores("ops_per_sec").unwrap();
        assert_eq!((cores, top.line), (2, 7));
        assert_eq!(ws[0].series[2].label(), "Linux redis-server (measured)");
        assert!(median_run(&[], "ops_per_sec").is_none());
    }
}
