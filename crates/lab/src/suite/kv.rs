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

use super::records::{Records, Source};
use crate::cmd::kv::record::{KvRecord, LoadFigures};
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

/// A quantity every run measures, kernel and Linux alike: a field of the
/// load figures both records share ([`LoadFigures`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// YCSB operations per second (`ops_per_sec`).
    OpsPerSec,
    /// Operations per second over the utilisation (`xput`).
    Xput,
}

impl Field {
    /// The field's name in the records.
    pub fn name(self) -> &'static str {
        match self {
            Field::OpsPerSec => "ops_per_sec",
            Field::Xput => "xput",
        }
    }

    /// Its value in `load`.
    pub fn of(self, load: &LoadFigures) -> f64 {
        match self {
            Field::OpsPerSec => load.ops_per_sec,
            Field::Xput => load.xput,
        }
    }
}

/// One run as the report reads it: a `kv` record (the kernel) or a
/// `kv_linux` record (Linux), by the fields they share.
#[derive(Clone, Copy, Debug)]
pub struct Run<'a> {
    /// Its line in `results.jsonl`.
    pub line: usize,
    /// The regime (`linux` for real Redis on Linux).
    pub regime: &'a str,
    /// Cores of the layout.
    pub cores: usize,
    /// The YCSB workload letter.
    pub workload: &'a str,
    /// Throughput, latency, utilisation.
    pub load: &'a LoadFigures,
    /// The kernel's own record (`None` on Linux).
    pub kernel: Option<&'a KvRecord>,
}

impl Run<'_> {
    /// The value of `field`.
    pub fn get(&self, field: Field) -> f64 {
        field.of(self.load)
    }

    /// The source of `field`.
    pub fn source(&self, field: Field) -> Source {
        Source { line: self.line, field: field.name().into(), value: self.get(field), file: None }
    }

    /// The source of its core count.
    pub fn cores_source(&self) -> Source {
        Source { line: self.line, field: "cores".into(), value: self.cores as f64, file: None }
    }
}

/// Every run of step `kv`, the kernel's (profiled or not) then Linux's,
/// each in `results.jsonl` order.
pub fn runs(rs: &Records) -> Vec<Run<'_>> {
    let kernel = rs.kv.of(STEP).map(|r| Run {
        line: r.line,
        regime: &r.regime,
        cores: r.cores,
        workload: &r.workload,
        load: &r.load,
        kernel: Some(&r.rec),
    });
    let linux = rs.kv_linux.of(STEP).map(|r| Run {
        line: r.line,
        regime: &r.point.regime,
        cores: r.point.cores,
        workload: &r.point.workload,
        load: &r.point.load,
        kernel: None,
    });
    kernel.chain(linux).collect()
}

/// One regime's points for one workload, by core count.
#[derive(Clone, Debug)]
pub struct Series<'a> {
    /// The regime (`linux` for real Redis on Linux).
    pub regime: &'a str,
    /// Every run per core count, in `results.jsonl` order.
    pub runs: BTreeMap<usize, Vec<Run<'a>>>,
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
    pub fn medians(&self, field: Field) -> Vec<Run<'a>> {
        self.runs.values().filter_map(|runs| median_run(runs, field)).collect()
    }

    /// The median run by `field` at the most cores measured.
    pub fn at_most_cores(&self, field: Field) -> Option<(usize, Run<'a>)> {
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
/// even count).
pub fn median_run<'a>(runs: &[Run<'a>], field: Field) -> Option<Run<'a>> {
    let mut with: Vec<(f64, Run<'a>)> = runs.iter().map(|r| (r.get(field), *r)).collect();
    if with.is_empty() {
        return None;
    }
    with.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.line.cmp(&b.1.line)));
    Some(with[(with.len() - 1) / 2].1)
}

/// The kernel's (unprofiled) and Linux's runs of the suite, per workload in
/// letter order.
pub fn workloads(rs: &Records) -> Vec<Workload<'_>> {
    // workload → regime → cores → runs
    let mut by: BTreeMap<&str, BTreeMap<&str, BTreeMap<usize, Vec<Run<'_>>>>> = BTreeMap::new();
    for r in runs(rs).into_iter().filter(|r| !r.kernel.is_some_and(|k| k.profiled)) {
        by.entry(r.workload).or_default().entry(r.regime).or_default().entry(r.cores).or_default().push(r);
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
        let rs = Records::new(&all);
        let ws = workloads(&rs);
        assert_eq!(ws.len(), 1);
        assert_eq!(ws[0].title(), "YCSB workload A (50 % reads, 50 % updates)");
        let regimes: Vec<&str> = ws[0].series.iter().map(|s| s.regime).collect();
        assert_eq!(regimes, ["bkl", "fine", LINUX]);
        let bkl: Vec<usize> = ws[0].series[0].medians(Field::OpsPerSec).iter().map(|r| r.line).collect();
        // 1 core: runs 10, 30, 20 → 20 (line 6); 2 cores: 40, 45 → the lower, 40 (line 7).
        assert_eq!(bkl, [6, 7]);
        let (cores, top) = ws[0].series[0].at_most_cores(Field::OpsPerSec).unwrap();
        assert_eq!((cores, top.line), (2, 7));
        assert_eq!(ws[0].series[2].label(), "Linux redis-server (measured)");
        assert!(median_run(&[], Field::OpsPerSec).is_none());
    }
}
