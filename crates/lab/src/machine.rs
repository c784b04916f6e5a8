//! The machine record that heads every result file: what the numbers were
//! measured on, so they are never separated from their context.

use std::borrow::Cow;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::output::Record;
use crate::topology::{Topology, TopologyRecord};

/// Facts about this machine that every command reports first.
#[derive(Clone, Debug)]
pub struct Machine {
    /// CPU brand string.
    pub cpu_model: String,
    /// Logical CPUs this process may run on.
    pub cores: usize,
    /// Cycle-counter (TSC) ticks per second, calibrated against the OS clock.
    pub tsc_hz: f64,
    /// What RTM detection found (see `granule_sync::rtm`).
    pub rtm: String,
    /// `git describe` of the source tree, if known.
    pub git_revision: String,
    /// Sockets, LLC domains, SMT siblings and the CPU fill order.
    pub topology: Topology,
}

/// Bytes of memory the OS reports available (`MemAvailable` in
/// `/proc/meminfo`); `None` where it does not say.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

fn cpu_model() -> String {
    #[cfg(target_arch = "x86_64")]
    {
        let cpuid = raw_cpuid::CpuId::new();
        if let Some(b) = cpuid.get_processor_brand_string() {
            return b.as_str().trim().to_string();
        }
    }
    "unknown".into()
}

fn git_revision() -> String {
    Command::new("git")
        .args(["describe", "--always", "--dirty", "--abbrev=12"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// Ticks of the cycle counter per second: the median of five 20 ms windows
/// against the monotonic OS clock.
pub fn tsc_hz() -> f64 {
    static HZ: OnceLock<f64> = OnceLock::new();
    *HZ.get_or_init(|| {
        let mut samples: Vec<f64> = (0..5)
            .map(|_| {
                let t0 = Instant::now();
                let c0 = granule_sync::cycles::now();
                while t0.elapsed() < Duration::from_millis(20) {
                    std::hint::spin_loop();
                }
                let c1 = granule_sync::cycles::now();
                let dt = t0.elapsed().as_secs_f64();
                (c1 - c0) as f64 / dt
            })
            .collect();
        samples.sort_by(f64::total_cmp);
        samples[2]
    })
}

impl Machine {
    /// Describe this machine (calibrates the cycle counter once).
    pub fn detect() -> Self {
        Self {
            cpu_model: cpu_model(),
            cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            tsc_hz: tsc_hz(),
            rtm: granule_sync::rtm::detect().to_string(),
            git_revision: git_revision(),
            topology: Topology::detect().clone(),
        }
    }

    /// Nanoseconds per cycle-counter tick.
    pub fn ns_per_cycle(&self) -> f64 {
        1e9 / self.tsc_hz
    }

    /// The `{"record":"machine",...}` record.
    pub fn record(&self) -> Map<String, Value> {
        MachineRecord {
            cpu_model: Cow::Borrowed(&self.cpu_model),
            cores: self.cores,
            tsc_ghz: self.tsc_hz / 1e9,
            rtm: Cow::Borrowed(&self.rtm),
            os: Cow::Borrowed(std::env::consts::OS),
            arch: Cow::Borrowed(std::env::consts::ARCH),
            granule_version: Cow::Borrowed(env!("CARGO_PKG_VERSION")),
            git_revision: Cow::Borrowed(&self.git_revision),
            command: std::env::args().collect::<Vec<_>>().join(" "),
            topology: self.topology.record(),
        }
        .to_map()
    }
}

/// `machine`: what every command's numbers were measured on, and by which
/// build and command line. The first record of every output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// A blank for the report's hand-made test records (`suite::records::testing`).
#[cfg_attr(test, derive(Default))]
pub struct MachineRecord<'a> {
    /// CPU brand string.
    pub cpu_model: Cow<'a, str>,
    /// Logical CPUs this process may run on.
    pub cores: usize,
    /// Cycle-counter (TSC) frequency, GHz.
    pub tsc_ghz: f64,
    /// What RTM detection found.
    pub rtm: Cow<'a, str>,
    /// Operating system (`std::env::consts::OS`).
    pub os: Cow<'static, str>,
    /// CPU architecture (`std::env::consts::ARCH`).
    pub arch: Cow<'static, str>,
    /// Version of the `granule` package.
    pub granule_version: Cow<'static, str>,
    /// `git describe` of the source tree, or "unknown".
    pub git_revision: Cow<'a, str>,
    /// The command line, arguments separated by spaces.
    pub command: String,
    /// Sockets, LLC domains and SMT sibling groups (CPU lists), the order
    /// experiments take CPUs in, and the core counts at which that order
    /// completes an LLC domain and a socket (`boundaries`).
    pub topology: TopologyRecord,
}

impl Record for MachineRecord<'_> {
    const KIND: &'static str = "machine";
}
