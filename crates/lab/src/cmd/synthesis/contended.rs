//! The contended case (seed `004`: where lock-freedom should pay): on a
//! hosted two-core machine, management operations from one core and then
//! from both at once — suspend + resume of a thread running on the other
//! core, allocate + free of a 4 KiB frame from one shared untyped, and
//! map + unmap of a frame beside the other core's in one page table
//! (`granule_user::manage_load`). Throughput in pairs per second, per
//! regime; `none` cannot run it (the cores share objects).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use granule_hosted::granule_kernel::{Kernel, Regime};
use granule_hosted::MachineConfig;
use granule_user::manage_load::{self, ManageLoad, ManageSpec};
use serde::{Deserialize, Serialize};

use crate::output::Record;
use crate::regimes::{with_regime, Experiment, Probe};

/// The operations measured.
pub const OPERATIONS: [&str; 3] = ["suspend + resume", "allocate + free page", "map + unmap page"];

/// `synthesis_contended`: one operation from one or both cores under one
/// regime, in pairs per second (mean and standard deviation over runs),
/// with the two-core over one-core ratio and the ratios to `bkl` and
/// `fine` at the same number of cores (measured in the same invocation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContendedRecord {
    pub regime: Cow<'static, str>,
    pub operation: Cow<'static, str>,
    /// Cores issuing the operation (the other core, if any, runs only its
    /// victim).
    pub issuing_cores: usize,
    pub runs: usize,
    pub pairs_per_sec_mean: f64,
    pub pairs_per_sec_std: f64,
    /// Two issuing cores over one (on the two-core rows).
    pub two_over_one: Option<f64>,
    pub over_bkl: Option<f64>,
    pub over_fine: Option<f64>,
}

impl Record for ContendedRecord {
    const KIND: &'static str = "synthesis_contended";
}

/// One run: operation `op` (index into [`OPERATIONS`]) from `issuing`
/// cores.
struct Run {
    op: usize,
    issuing: usize,
    warmup: Duration,
    window: Duration,
}

impl Experiment for Run {
    type Out = f64;
    const DISJOINT: bool = false;

    fn run<R: Regime>(self, regime: R, _probe: &dyn Fn(&Kernel<R>) -> Option<Probe>) -> Result<f64> {
        let mask = if self.issuing == 2 { 0b11 } else { 0b01 };
        let spec = ManageSpec {
            controllers: if self.op == 0 { mask } else { 0 },
            allocators: if self.op == 1 { mask } else { 0 },
            mappers: if self.op == 2 { mask } else { 0 },
            victim_cycles: 2000,
        };
        let load = Arc::new(ManageLoad::new(spec));
        let mut config = MachineConfig::new(2);
        config.hold_secondary_cores = true;
        let m = manage_load::boot(config, regime, load.clone()).map_err(|e| anyhow!("{e}"))?;
        let count = |l: &ManageLoad| match self.op {
            0 => l.pairs(),
            1 => l.pages(),
            _ => l.maps(),
        };
        let measured = (|| -> Result<f64> {
            m.wait_running(Duration::from_secs(10)).map_err(|e| anyhow!(e))?;
            std::thread::sleep(self.warmup);
            let (n0, t0) = (count(&load), granule_sync::cycles::now());
            std::thread::sleep(self.window);
            let (n1, t1) = (count(&load), granule_sync::cycles::now());
            Ok((n1 - n0) as f64 / (t1.wrapping_sub(t0).max(1) as f64 / crate::machine::tsc_hz()))
        })();
        let root = m.machine.boot_info().root_thread;
        let faults = m.machine.shutdown().map_err(|e| anyhow!("{e}"))?;
        let rate = measured?;
        if let Some(f) = faults.iter().find(|f| f.thread != root) {
            bail!("user thread {:?} on core {} faulted: {}", f.thread, f.core, f.message);
        }
        Ok(rate)
    }
}

/// Pairs per second of operation `op` from `issuing` cores under `regime`.
pub fn measure(regime: &str, op: usize, issuing: usize, seconds: f64) -> Result<f64> {
    let boot = MachineConfig::new(2).kernel;
    let run = Run {
        op,
        issuing,
        warmup: Duration::from_secs_f64((seconds / 3.0).min(0.2)),
        window: Duration::from_secs_f64(seconds),
    };
    with_regime(regime, &boot, false, run)
}
