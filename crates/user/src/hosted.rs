//! Running the programs on the hosted platform: boot a machine whose root
//! task builds a ping-pong experiment, and sample it from outside.

use std::sync::Arc;
use std::time::{Duration, Instant};

use granule_hosted::{FaultRecord, Machine, MachineConfig, MachineError, StuckCores, UserCtx};
use granule_kernel::abi::CAP_INIT_TCB;
use granule_kernel::Regime;

use crate::env::Env;
use crate::pingpong::{self, PingPong};

/// A machine running a ping-pong experiment.
#[derive(Debug)]
pub struct PingPongMachine<R: Regime> {
    /// The machine.
    pub machine: Machine<R>,
    /// The experiment's shared state.
    pub pp: Arc<PingPong>,
}

/// A reading of a running experiment.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Cycle counter when read.
    pub cycles: u64,
    /// Round trips completed by each pair.
    pub round_trips: Vec<u64>,
    /// Idle cycles of each core since boot.
    pub idle_cycles: Vec<u64>,
}

/// What happened between two samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    /// Cycles elapsed.
    pub cycles: u64,
    /// Round trips of all pairs.
    pub round_trips: u64,
    /// Round trips of each pair.
    pub per_pair: Vec<u64>,
    /// Busy fraction of each core (1 - idle / elapsed).
    pub utilisation: Vec<f64>,
}

impl Sample {
    /// The window from `self` to `later`.
    pub fn until(&self, later: &Sample) -> Window {
        let cycles = later.cycles.wrapping_sub(self.cycles).max(1);
        let per_pair: Vec<u64> =
            self.round_trips.iter().zip(&later.round_trips).map(|(a, b)| b.saturating_sub(*a)).collect();
        let utilisation = self
            .idle_cycles
            .iter()
            .zip(&later.idle_cycles)
            .map(|(a, b)| (1.0 - b.saturating_sub(*a) as f64 / cycles as f64).clamp(0.0, 1.0))
            .collect();
        Window { cycles, round_trips: per_pair.iter().sum(), per_pair, utilisation }
    }
}

/// Boot `config` under `regime` with a root task that builds `pp`'s pairs,
/// lets the secondary cores in (if they are held), and suspends itself.
pub fn boot<R: Regime>(
    mut config: MachineConfig,
    regime: R,
    pp: Arc<PingPong>,
) -> Result<PingPongMachine<R>, MachineError> {
    let c = pp.clone();
    let client = config.program(move |ctx: &mut UserCtx<'_>, arg| pingpong::client(&mut Env::new(ctx), &c, arg));
    let s = pp.clone();
    let server = config.program(move |ctx: &mut UserCtx<'_>, arg| pingpong::server(&mut Env::new(ctx), &s, arg));
    let r = pp.clone();
    let machine = Machine::boot(config, regime, move |ctx, info| {
        let built = r.build(&mut Env::new(&mut *ctx), info, client, server);
        ctx.release_secondary_cores();
        if let Err(e) = built {
            panic!("building the ping-pong pairs: {e}");
        }
        let mut env = Env::new(ctx);
        // Done: leave the core to the pairs.
        let _ = env.tcb_suspend(CAP_INIT_TCB);
        panic!("the root task could not suspend itself");
    })?;
    Ok(PingPongMachine { machine, pp })
}

impl<R: Regime> PingPongMachine<R> {
    /// Wait until the root task built every pair and every pair completed at
    /// least one round trip, or fail with the reason (setup error, a fault,
    /// or `timeout`).
    pub fn wait_running(&self, timeout: Duration) -> Result<(), String> {
        let t0 = Instant::now();
        loop {
            if let Some(e) = self.pp.setup_error() {
                return Err(format!("the root task could not build the pairs: {e}"));
            }
            let faults: Vec<FaultRecord> = self
                .machine
                .faults()
                .into_iter()
                .filter(|f| f.thread != self.machine.boot_info().root_thread)
                .collect();
            if let Some(f) = faults.first() {
                return Err(format!("user thread {:?} on core {} faulted: {}", f.thread, f.core, f.message));
            }
            if self.pp.is_ready() && self.pp.round_trips().iter().all(|&n| n > 0) {
                return Ok(());
            }
            if t0.elapsed() > timeout {
                return Err(format!(
                    "the pairs did not start within {timeout:?} (ready: {}, round trips: {:?})",
                    self.pp.is_ready(),
                    self.pp.round_trips()
                ));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Read the counters now.
    pub fn sample(&self) -> Sample {
        let cycles = granule_sync::cycles::now();
        Sample {
            cycles,
            round_trips: self.pp.round_trips(),
            idle_cycles: (0..self.machine.cores()).map(|c| self.machine.idle_cycles(c)).collect(),
        }
    }

    /// Stop the machine; returns the faults of user threads other than the
    /// root task (which suspends itself and never faults unless building
    /// failed).
    pub fn shutdown(self) -> Result<Vec<FaultRecord>, StuckCores> {
        let root = self.machine.boot_info().root_thread;
        Ok(self.machine.shutdown()?.into_iter().filter(|f| f.thread != root).collect())
    }
}

/// Wait until `ready` holds, or fail with the reason: the root task's
/// setup error (`status`), a fault of a user thread other than the root,
/// or `timeout` (`what` names what did not start).
pub fn wait_until<R: Regime>(
    machine: &Machine<R>,
    status: &crate::build_status::BuildStatus,
    timeout: Duration,
    what: &str,
    ready: impl Fn() -> bool,
) -> Result<(), String> {
    let t0 = Instant::now();
    let root = machine.boot_info().root_thread;
    loop {
        if let Some(e) = status.error() {
            return Err(format!("the root task could not build the load: {e}"));
        }
        if let Some(f) = machine.faults().into_iter().find(|f| f.thread != root) {
            return Err(format!("user thread {:?} on core {} faulted: {}", f.thread, f.core, f.message));
        }
        if ready() {
            return Ok(());
        }
        if t0.elapsed() > timeout {
            return Err(format!("{what} did not start within {timeout:?}"));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The end of a root task that built an experiment: record how building
/// went, let the secondary cores in, and suspend itself for good.
pub fn root_done(
    ctx: &mut UserCtx<'_>,
    status: &crate::build_status::BuildStatus,
    built: Result<(), granule_kernel::abi::Error>,
) -> ! {
    status.record(built);
    ctx.release_secondary_cores();
    let mut env = Env::new(ctx);
    let _ = env.tcb_suspend(CAP_INIT_TCB);
    panic!("the root task could not suspend itself");
}
