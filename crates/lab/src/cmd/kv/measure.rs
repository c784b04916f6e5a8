//! One `granule kv` point on the kernel: a fresh machine running the KV
//! system under one regime, loaded, warmed up, then measured over a window
//! (`--seconds`) or until every client finished its operations (`--ops`).

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};
use granule_hosted::granule_kernel::{Kernel, Regime};
use granule_hosted::MachineConfig;
use granule_sync::profile::SiteRecord;
use granule_user::kv::{boot, KvSample};
use granule_user::kv::{KvConfig, Mode};
use hdrhistogram::Histogram;

use crate::regimes::{with_regime, Experiment, Probe};

/// How long the load phase may take.
const LOAD_TIMEOUT: Duration = Duration::from_secs(120);

/// What to run.
#[derive(Clone, Debug)]
pub struct KvSpec {
    /// The system.
    pub config: KvConfig,
    /// Warm-up after loading.
    pub warmup: Duration,
    /// The window (ignored when `config.ops_per_client` is set).
    pub window: Duration,
    /// Longest a fixed-operation run may take.
    pub deadline: Duration,
    /// Compile the lock profiler in.
    pub profile: bool,
    /// Cycles an idle core spins before parking its OS thread (`None`: the
    /// platform's default).
    pub idle_spin_cycles: Option<u64>,
}

/// What one point measured.
#[derive(Debug)]
pub struct KvResult {
    /// Counters at the start and the end of the window.
    pub start: KvSample,
    /// See `start`.
    pub end: KvSample,
    /// Cycle counter when the last client finished (fixed-operation runs),
    /// else the end of the window: throughput is over `start.cycles..this`.
    pub ops_end_cycles: u64,
    /// Redis commands sent by all clients in the window.
    pub requests: u64,
    /// Latency of the window's operations, in cycles.
    pub latency: Histogram<u64>,
    /// Operations that failed (whole run).
    pub failed: u64,
    /// Packets the driver dropped (whole run).
    pub dropped: u64,
    /// The lock profile over the window's run (profiled runs).
    pub profile: Option<Vec<SiteRecord>>,
}

/// Measure `regime` on `spec`.
pub fn measure(regime: &str, spec: &KvSpec) -> Result<KvResult> {
    let mut machine = MachineConfig::new(spec.config.cores);
    machine.shutdown_timeout = Duration::from_secs(5);
    if let Some(c) = spec.idle_spin_cycles {
        machine.idle_spin_cycles = c;
    }
    let boot_cfg = machine.kernel.clone();
    with_regime(regime, &boot_cfg, spec.profile, KvRun { spec, machine })
}

struct KvRun<'a> {
    spec: &'a KvSpec,
    machine: MachineConfig,
}

fn requests(kv: &granule_user::kv::KvSystem) -> u64 {
    kv.clients.iter().map(|c| c.requests.load(std::sync::atomic::Ordering::Relaxed)).sum()
}

impl Experiment for KvRun<'_> {
    type Out = KvResult;
    // The driver on core 0 signals stacks on every core and they signal it:
    // cores share notifications.
    const DISJOINT: bool = false;

    fn run<R: Regime>(self, regime: R, probe: &dyn Fn(&Kernel<R>) -> Option<Probe>) -> Result<KvResult> {
        let spec = self.spec;
        let mut config = spec.config.clone();
        config.mode = Mode::Loopback;
        let m = boot(self.machine, regime, config, None).map_err(|e| anyhow!("{e}"))?;
        let measured = (|| -> Result<(KvSample, KvSample, u64, Histogram<u64>, u64)> {
            m.wait_loaded(LOAD_TIMEOUT).map_err(|e| anyhow!(e))?;
            std::thread::sleep(spec.warmup);
            m.kv.reset_latency();
            let (s0, r0) = (m.sample(), requests(&m.kv));
            if spec.config.ops_per_client.is_some() {
                let t0 = Instant::now();
                while !m.kv.all_done() {
                    if t0.elapsed() > spec.deadline {
                        bail!("the clients did not finish their operations within {:?}", spec.deadline);
                    }
                    if let Some(f) = m.faults().first() {
                        bail!("user thread {:?} on core {} faulted: {}", f.thread, f.core, f.message);
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            } else {
                std::thread::sleep(spec.window);
            }
            let (s1, r1) = (m.sample(), requests(&m.kv));
            let last = m.kv.clients.iter().map(|c| c.done_at.load(std::sync::atomic::Ordering::Relaxed)).max();
            let ops_end = if spec.config.ops_per_client.is_some() { last.unwrap_or(s1.cycles) } else { s1.cycles };
            Ok((s0, s1, r1 - r0, m.kv.latency(), ops_end))
        })();
        let profile = probe(m.machine.kernel()).map(|p| p.sites).filter(|s| !s.is_empty());
        let failed = m.kv.failed();
        let dropped = m.kv.driver.get().map_or(0, |d| d.dropped.load(std::sync::atomic::Ordering::Relaxed));
        let faults = m.shutdown().map_err(|e| anyhow!("{e}"))?;
        let (start, end, requests, latency, ops_end_cycles) = measured?;
        if let Some(f) = faults.first() {
            bail!("user thread {:?} on core {} faulted: {}", f.thread, f.core, f.message);
        }
        if end.ops == start.ops {
            bail!("no operation completed in the window");
        }
        Ok(KvResult { start, end, ops_end_cycles, requests, latency, failed, dropped, profile })
    }
}
