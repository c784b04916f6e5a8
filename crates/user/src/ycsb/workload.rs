//! The six core workloads (YCSB's `workloads/workloada` … `workloadf`) and
//! the run's configuration.

use std::fmt;
use std::str::FromStr;

/// One of YCSB's core workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Workload {
    /// Update heavy: 50 % reads, 50 % updates, Zipfian.
    A,
    /// Read mostly: 95 % reads, 5 % updates, Zipfian.
    B,
    /// Read only: 100 % reads, Zipfian.
    C,
    /// Read latest: 95 % reads, 5 % inserts, the newest keys most popular.
    D,
    /// Short ranges: 95 % scans of 1–100 records, 5 % inserts, Zipfian.
    E,
    /// Read-modify-write: 50 % reads, 50 % read-modify-writes, Zipfian.
    F,
}

impl Workload {
    /// Every workload, in order.
    pub const ALL: [Workload; 6] = [Workload::A, Workload::B, Workload::C, Workload::D, Workload::E, Workload::F];

    /// The workload's parameters, as in YCSB's `workloads/workload[a-f]`
    /// files (properties they leave out at CoreWorkload's defaults).
    #[must_use]
    pub fn spec(self) -> WorkloadSpec {
        let base = WorkloadSpec::default();
        match self {
            Workload::A => WorkloadSpec { read: 0.5, update: 0.5, ..base },
            Workload::B => WorkloadSpec { read: 0.95, update: 0.05, ..base },
            Workload::C => WorkloadSpec { read: 1.0, ..base },
            Workload::D => WorkloadSpec { read: 0.95, insert: 0.05, distribution: Distribution::Latest, ..base },
            Workload::E => WorkloadSpec { scan: 0.95, insert: 0.05, max_scan_length: 100, ..base },
            Workload::F => WorkloadSpec { read: 0.5, read_modify_write: 0.5, ..base },
        }
    }

    /// The letter, lower case (`"a"` … `"f"`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Workload::A => "a",
            Workload::B => "b",
            Workload::C => "c",
            Workload::D => "d",
            Workload::E => "e",
            Workload::F => "f",
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of the six workloads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseWorkloadError(pub String);

impl fmt::Display for ParseWorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown YCSB workload {:?} (expected a, b, c, d, e or f)", self.0)
    }
}

impl std::error::Error for ParseWorkloadError {}

impl FromStr for Workload {
    type Err = ParseWorkloadError;

    /// `"a"` … `"f"`, or YCSB's file names `"workloada"` … `"workloadf"`,
    /// in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        let letter = lower.strip_prefix("workload").unwrap_or(&lower);
        Workload::ALL.into_iter().find(|w| w.as_str() == letter).ok_or_else(|| ParseWorkloadError(s.to_owned()))
    }
}

/// How the run phase picks the key of a read, update, scan or
/// read-modify-write (YCSB's `requestdistribution`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Distribution {
    /// Scrambled Zipfian over the keys (YCSB's default).
    Zipfian,
    /// Skewed towards the most recently inserted keys.
    Latest,
    /// Uniform over the loaded keys `0..recordcount` (YCSB's
    /// `UniformLongGenerator(insertstart, insertstart + insertcount − 1)`:
    /// keys inserted during the run are never picked).
    Uniform,
}

impl Distribution {
    /// YCSB's property value (`"zipfian"`, `"latest"`, `"uniform"`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Distribution::Zipfian => "zipfian",
            Distribution::Latest => "latest",
            Distribution::Uniform => "uniform",
        }
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A workload's operation mix and key choice (YCSB's properties of the same
/// names). Proportions are weights: they need not sum to one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorkloadSpec {
    /// `readproportion`.
    pub read: f64,
    /// `updateproportion`.
    pub update: f64,
    /// `insertproportion`.
    pub insert: f64,
    /// `scanproportion`.
    pub scan: f64,
    /// `readmodifywriteproportion`.
    pub read_modify_write: f64,
    /// `requestdistribution`.
    pub distribution: Distribution,
    /// `minscanlength` (scan lengths are uniform over
    /// `min_scan_length..=max_scan_length`, YCSB's
    /// `scanlengthdistribution=uniform`).
    pub min_scan_length: u64,
    /// `maxscanlength`.
    pub max_scan_length: u64,
}

impl Default for WorkloadSpec {
    /// No operation (every workload file sets all five proportions), and
    /// CoreWorkload's defaults for the rest: Zipfian, scans of 1–1000
    /// records.
    fn default() -> Self {
        Self {
            read: 0.0,
            update: 0.0,
            insert: 0.0,
            scan: 0.0,
            read_modify_write: 0.0,
            distribution: Distribution::Zipfian,
            min_scan_length: 1,
            max_scan_length: 1000,
        }
    }
}

/// A run's configuration (YCSB's properties; defaults are this project's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Which workload.
    pub workload: Workload,
    /// `recordcount`: keys loaded before the run (default 32 000).
    pub record_count: u64,
    /// `fieldcount` (default 10).
    pub field_count: usize,
    /// `fieldlength`, bytes per value (default 100).
    pub field_length: usize,
    /// `readallfields` (default true: `HGETALL`; false: `HMGET` of one
    /// random field).
    pub read_all_fields: bool,
    /// `writeallfields` (default true here, false in YCSB: an update writes
    /// every field; false: one random field).
    pub write_all_fields: bool,
    /// Seed of every client's random number generator (mixed with the
    /// client's index).
    pub seed: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            workload: Workload::A,
            record_count: 32_000,
            field_count: 10,
            field_length: 100,
            read_all_fields: true,
            write_all_fields: true,
            seed: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display_round_trip() {
        for w in Workload::ALL {
            assert_eq!(w.to_string().parse::<Workload>(), Ok(w));
            assert_eq!(w.to_string().to_uppercase().parse::<Workload>(), Ok(w));
            assert_eq!(format!("workload{w}").parse::<Workload>(), Ok(w));
        }
        assert!("g".parse::<Workload>().is_err());
        assert!("".parse::<Workload>().is_err());
    }

    #[test]
    fn proportions_are_ycsbs() {
        let e = Workload::E.spec();
        assert_eq!((e.scan, e.insert, e.max_scan_length), (0.95, 0.05, 100));
        assert_eq!(Workload::D.spec().distribution, Distribution::Latest);
        for w in Workload::ALL {
            let s = w.spec();
            let total = s.read + s.update + s.insert + s.scan + s.read_modify_write;
            assert!((total - 1.0).abs() < 1e-12, "{w}: {total}");
        }
    }
}
