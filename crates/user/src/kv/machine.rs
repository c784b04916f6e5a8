//! The machine that runs a KV system: booting it under a regime, waiting
//! for it to be built and loaded, and reading its counters.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use granule_hosted::nic::{FarSide, Nic};
use granule_hosted::{FaultRecord, Machine, MachineConfig, MachineError, StuckCores, UserCtx};
use granule_kernel::abi::CAP_INIT_TCB;
use granule_kernel::Regime;

use super::system::{KvConfig, KvSystem, Mode, RING_SLOTS};
use super::{build, client, server};
use crate::env::Env;

/// A machine running a KV system.
#[derive(Debug)]
pub struct KvMachine<R: Regime> {
    /// The machine.
    pub machine: Machine<R>,
    /// The system's shared state.
    pub kv: Arc<KvSystem>,
}

/// A reading of a running KV machine.
#[derive(Clone, Debug, PartialEq)]
pub struct KvSample {
    /// Cycle counter when read.
    pub cycles: u64,
    /// Run-phase operations so far.
    pub ops: u64,
    /// Per core: idle cycles, user cycles, system calls, other kernel entries.
    pub idle: Vec<u64>,
    /// See `idle`.
    pub user: Vec<u64>,
    /// See `idle`.
    pub syscalls: Vec<u64>,
    /// See `idle`.
    pub interrupts: Vec<u64>,
    /// Per core: times its OS thread parked in the idle loop (each costs the
    /// waker a futex wake-up).
    pub parks: Vec<u64>,
}

/// Boot `config` under `regime`: the card, the programs, and a root task
/// that builds the system ([`build::system`]) and suspends itself. With
/// [`Mode::External`], `far` is plugged into the card before boot.
pub fn boot<R: Regime>(
    mut machine: MachineConfig,
    regime: R,
    config: KvConfig,
    far: Option<Arc<dyn FarSide>>,
) -> Result<KvMachine<R>, MachineError> {
    if machine.kernel.cores != config.cores {
        return Err(MachineError::Config(format!(
            "the machine has {} cores, the KV system {}",
            machine.kernel.cores, config.cores
        )));
    }
    // `granule kv` reports user time; it costs two cycle-counter reads per
    // resume, which the external (TCP) mode spares its requests.
    machine.account_user_time = matches!(config.mode, Mode::Loopback);
    machine.tick = None;
    let wire = machine.irq_wire(config.irq_line);
    let nic = Arc::new(Nic::new(RING_SLOTS, wire));
    let kv = Arc::new(KvSystem::new(config, nic.clone()));
    let k = kv.clone();
    let driver = machine.program(move |ctx: &mut UserCtx<'_>, _| {
        let spec = k.driver.get().unwrap_or_else(|| panic!("driver started before the root task built it"));
        crate::net::driver::run(&mut Env::new(ctx), spec)
    });
    let k = kv.clone();
    let stack = machine.program(move |ctx: &mut UserCtx<'_>, arg| {
        let spec = k.stacks.get().and_then(|s| s.get(arg as usize));
        let spec = spec.unwrap_or_else(|| panic!("stack {arg} started before the root task built it"));
        crate::net::stack::run(&mut Env::new(ctx), spec)
    });
    let k = kv.clone();
    let server = machine.program(move |ctx: &mut UserCtx<'_>, arg| server::run(&mut Env::new(ctx), &k, arg as usize));
    let k = kv.clone();
    let client = machine.program(move |ctx: &mut UserCtx<'_>, arg| client::run(&mut Env::new(ctx), &k, arg as usize));
    match far {
        Some(far) => {
            nic.connect(far);
        }
        None => {
            if kv.config.mode == Mode::Loopback {
                nic.connect(Arc::new(super::loopback::Loopback::new(Arc::downgrade(&kv))));
            }
        }
    }
    let r = kv.clone();
    let entries = build::Entries { driver, stack, server, client };
    let m = Machine::boot(machine, regime, move |ctx, info| {
        let built = build::system(&mut Env::new(&mut *ctx), info, &r, entries);
        r.status.record(built);
        if let Err(e) = built {
            panic!("building the KV system: {e}");
        }
        let _ = Env::new(ctx).tcb_suspend(CAP_INIT_TCB);
        panic!("the root task could not suspend itself");
    })?;
    Ok(KvMachine { machine: m, kv })
}

impl<R: Regime> KvMachine<R> {
    /// Wait until the system is built and (with load clients) loaded, or fail
    /// with the reason (setup error, a fault, or `timeout`).
    pub fn wait_loaded(&self, timeout: Duration) -> Result<(), String> {
        let t0 = Instant::now();
        loop {
            if let Some(e) = self.kv.setup_error() {
                return Err(format!("the root task could not build the KV system: {e}"));
            }
            if let Some(f) = self.faults().first() {
                return Err(format!("user thread {:?} on core {} faulted: {}", f.thread, f.core, f.message));
            }
            if self.kv.is_ready() && self.kv.loaded() {
                return Ok(());
            }
            if t0.elapsed() > timeout {
                return Err(format!(
                    "the KV system was not loaded within {timeout:?} (built: {}, clients still loading: {})",
                    self.kv.is_ready(),
                    self.kv.loading.load(Ordering::Relaxed)
                ));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// User threads that faulted (the root task excluded).
    pub fn faults(&self) -> Vec<FaultRecord> {
        let root = self.machine.boot_info().root_thread;
        self.machine.faults().into_iter().filter(|f| f.thread != root).collect()
    }

    /// Read the counters now.
    pub fn sample(&self) -> KvSample {
        let m = &self.machine;
        let n = m.cores();
        let stats: Vec<_> = (0..n).map(|c| m.kernel().core_stats(c)).collect();
        KvSample {
            cycles: granule_sync::cycles::now(),
            ops: self.kv.ops(),
            idle: (0..n).map(|c| m.idle_cycles(c)).collect(),
            user: (0..n).map(|c| m.user_cycles(c)).collect(),
            syscalls: stats.iter().map(|s| s.syscalls).collect(),
            interrupts: stats.iter().map(|s| s.other_entries).collect(),
            parks: (0..n).map(|c| m.parks(c)).collect(),
        }
    }

    /// Stop the machine; returns the faults of user threads other than the
    /// root task.
    pub fn shutdown(self) -> Result<Vec<FaultRecord>, StuckCores> {
        let root = self.machine.boot_info().root_thread;
        Ok(self.machine.shutdown()?.into_iter().filter(|f| f.thread != root).collect())
    }
}
