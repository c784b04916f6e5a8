//! The machine: boot, the shared state of all cores, measurement hooks and
//! shutdown.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use granule_kernel::{BootConfig, BootError, BootInfo, FaultKind, Kernel, Regime, ThreadId, Word};

use crate::context::ContextTable;
use crate::doorbell::{Doorbell, Ring};
use crate::idle_work::IdleWork;
use crate::irq::{IrqController, IrqWire};
use crate::thread::{install_panic_hook, tearing_down, ProgramFn, Programs, RootFn, UserContext, UserCtx};

/// How to build a machine.
#[derive(Clone)]
pub struct MachineConfig {
    /// The kernel's boot configuration (`kernel.cores` is the number of cores).
    pub kernel: BootConfig,
    /// CPU (index into the process's CPU order, see
    /// [`placement`](crate::placement)) of each core; `None`: core `i` on the
    /// `i`-th CPU of that order, wrapping around.
    pub cpus: Option<Vec<usize>>,
    /// Pin each core's OS thread to its CPU.
    pub pin: bool,
    /// Stack size of each user context, in bytes.
    pub stack_bytes: usize,
    /// Cycles an idle core spins before it parks its OS thread (a core with
    /// idle work does not spin: it waits in its work at once).
    pub idle_spin_cycles: u64,
    /// Period of every core's virtual timer (`None`: no timer interrupts).
    pub tick: Option<Duration>,
    /// Keep cores `1..` out of the kernel until the root task calls
    /// [`UserCtx::release_secondary_cores`] (for the `none` regime: the root
    /// builds everything while no other core is in the kernel).
    pub hold_secondary_cores: bool,
    /// The core device interrupt lines are routed to.
    pub device_irq_core: usize,
    /// How long [`Machine::shutdown`] waits for the cores to stop.
    pub shutdown_timeout: Duration,
    /// Count the cycles each core spends in user code (two cycle-counter
    /// reads per kernel entry; see [`Machine::user_cycles`]).
    pub account_user_time: bool,
    /// Check every kernel invariant after every system call (tests; see
    /// [`Machine::invariant_violations`]).
    pub check_invariants: bool,
    /// Work for a core's idle loop: (core, work), see [`crate::idle_work`].
    pub idle_work: Option<(usize, Arc<dyn IdleWork>)>,
    programs: Vec<ProgramFn>,
    wires: Vec<IrqWire>,
}

impl std::fmt::Debug for MachineConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MachineConfig")
            .field("kernel", &self.kernel)
            .field("cpus", &self.cpus)
            .field("pin", &self.pin)
            .field("stack_bytes", &self.stack_bytes)
            .field("idle_spin_cycles", &self.idle_spin_cycles)
            .field("tick", &self.tick)
            .field("hold_secondary_cores", &self.hold_secondary_cores)
            .field("account_user_time", &self.account_user_time)
            .field("idle_work", &self.idle_work.as_ref().map(|(core, _)| *core))
            .field("programs", &self.programs.len())
            .field("wires", &self.wires)
            .finish_non_exhaustive()
    }
}

impl MachineConfig {
    /// A machine of `cores` cores with the kernel's default boot
    /// configuration, pinned cores, 256 KiB user stacks, a 100 µs-ish idle
    /// spin (200 000 cycles), a 1 ms timer and a 5 s shutdown bound.
    pub fn new(cores: usize) -> Self {
        Self {
            kernel: BootConfig::new(cores),
            cpus: None,
            pin: true,
            stack_bytes: 256 << 10,
            idle_spin_cycles: 200_000,
            tick: Some(Duration::from_millis(1)),
            hold_secondary_cores: false,
            device_irq_core: 0,
            shutdown_timeout: Duration::from_secs(5),
            account_user_time: false,
            check_invariants: false,
            idle_work: None,
            programs: Vec::new(),
            wires: Vec::new(),
        }
    }

    /// A wire for a device's interrupt line `line` (taken modulo
    /// `NUM_IRQS`), connected to the machine's interrupt controller at boot.
    /// The line is routed to [`MachineConfig::device_irq_core`]; a device
    /// line must not be a core's timer line (`BootInfo::timer_irq_base`…).
    pub fn irq_wire(&mut self, line: usize) -> IrqWire {
        let w = IrqWire::new(line);
        self.wires.push(w.clone());
        w
    }

    /// Register a user program; returns its entry word (for `REG_PC`, i.e.
    /// `TcbWriteRegisters`). Entry 0 is the root task.
    pub fn program(&mut self, f: impl Fn(&mut UserCtx<'_>, Word) + Send + Sync + 'static) -> Word {
        self.programs.push(Arc::new(f));
        self.programs.len() as Word
    }
}

/// Why a machine did not boot.
#[derive(Debug)]
pub enum MachineError {
    /// The kernel refused the boot configuration.
    Kernel(BootError),
    /// The configuration is inconsistent (the reason).
    Config(String),
    /// An OS thread could not be created.
    Spawn(std::io::Error),
}

impl std::fmt::Display for MachineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Kernel(e) => write!(f, "kernel boot: {e}"),
            Self::Config(why) => write!(f, "machine configuration: {why}"),
            Self::Spawn(e) => write!(f, "spawning a core thread: {e}"),
        }
    }
}

impl std::error::Error for MachineError {}

/// A user thread that stopped abnormally.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultRecord {
    /// The thread.
    pub thread: ThreadId,
    /// The core it faulted on.
    pub core: usize,
    /// What the kernel was told.
    pub kind: FaultKind,
    /// The panic message (or why else it stopped).
    pub message: String,
}

/// The cores that did not stop within the shutdown bound (they were left
/// running detached: a user thread that never traps cannot be preempted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StuckCores(pub Vec<usize>);

impl std::fmt::Display for StuckCores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cores {:?} did not stop (a user thread that never traps cannot be preempted)", self.0)
    }
}

impl std::error::Error for StuckCores {}

/// The start gate of the secondary cores.
#[derive(Debug)]
pub(crate) struct Gate {
    open: AtomicBool,
    bells: Arc<[CachePadded<Doorbell>]>,
}

impl Gate {
    pub(crate) fn open(&self) {
        if !self.open.swap(true, Ordering::AcqRel) {
            for b in self.bells.iter().skip(1) {
                b.ring(Ring::Ipi);
            }
        }
    }

    pub(crate) fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }
}

/// One core's idle clock, readable by anyone at any time (see
/// [`Machine::idle_cycles`]): `since` is the cycle count at which the current
/// idle period began (0: not idle) and doubles as the version of `total`.
#[derive(Debug, Default)]
pub(crate) struct IdleClock {
    total: AtomicU64,
    since: AtomicU64,
}

impl IdleClock {
    pub(crate) fn begin(&self, now: u64) {
        self.since.store(now.max(1), Ordering::Release);
    }

    pub(crate) fn end(&self, cycles: u64) {
        let t = self.total.load(Ordering::Relaxed);
        self.total.store(t + cycles, Ordering::Release);
        self.since.store(0, Ordering::Release);
    }

    fn read(&self, now: u64) -> u64 {
        loop {
            let s1 = self.since.load(Ordering::Acquire);
            let total = self.total.load(Ordering::Acquire);
            let s2 = self.since.load(Ordering::Acquire);
            if s1 == s2 {
                return total + if s1 != 0 { now.saturating_sub(s1) } else { 0 };
            }
        }
    }
}

/// Everything the cores share.
pub(crate) struct Shared<R: Regime> {
    // Field order is drop order: contexts before the kernel whose IPC buffers
    // they point into.
    pub(crate) table: ContextTable<UserContext>,
    pub(crate) kernel: Kernel<R>,
    pub(crate) bells: Arc<[CachePadded<Doorbell>]>,
    pub(crate) irq: Arc<IrqController>,
    pub(crate) programs: Programs,
    pub(crate) gate: Arc<Gate>,
    pub(crate) stop: AtomicBool,
    pub(crate) faults: Mutex<Vec<FaultRecord>>,
    pub(crate) idle: Box<[CachePadded<IdleClock>]>,
    pub(crate) user: Box<[CachePadded<AtomicU64>]>,
    pub(crate) account_user: bool,
    pub(crate) check: bool,
    pub(crate) violations: Mutex<Vec<String>>,
    pub(crate) timer_irq_base: usize,
    pub(crate) stack_bytes: usize,
    pub(crate) idle_spin_cycles: u64,
    pub(crate) hold: bool,
}

impl<R: Regime> Shared<R> {
    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    pub(crate) fn record_fault(&self, f: FaultRecord) {
        self.faults.lock().unwrap_or_else(|e| e.into_inner()).push(f);
    }
}

/// A running machine: the kernel, one pinned OS thread per core, the root
/// task started on core 0.
pub struct Machine<R: Regime> {
    shared: Arc<Shared<R>>,
    cores: Vec<Option<JoinHandle<()>>>,
    ticker: Option<JoinHandle<()>>,
    shutdown_timeout: Duration,
    boot_info: BootInfo,
    started: Instant,
}

impl<R: Regime> std::fmt::Debug for Machine<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Machine").field("regime", &R::NAME).field("cores", &self.cores.len()).finish_non_exhaustive()
    }
}

impl<R: Regime> Machine<R> {
    /// Boot: the kernel under `regime`, one OS thread per core, and the root
    /// task `root` on core 0 (it owns all untyped memory; it gets the boot
    /// information and builds the experiment).
    pub fn boot(
        config: MachineConfig,
        regime: R,
        root: impl FnOnce(&mut UserCtx<'_>, &BootInfo) + Send + 'static,
    ) -> Result<Self, MachineError> {
        let cores = config.kernel.cores;
        if config.device_irq_core >= cores.max(1) {
            return Err(MachineError::Config(format!(
                "device_irq_core {} is not a core of {cores}",
                config.device_irq_core
            )));
        }
        if let Some(cpus) = &config.cpus {
            if cpus.len() < cores {
                return Err(MachineError::Config(format!("{} CPUs given for {cores} cores", cpus.len())));
            }
        }
        install_panic_hook();
        let (kernel, info, handles) = Kernel::boot(config.kernel.clone(), regime).map_err(MachineError::Kernel)?;
        let bells: Arc<[CachePadded<Doorbell>]> = (0..cores).map(|_| CachePadded::new(Doorbell::default())).collect();
        if let Some((core, work)) = &config.idle_work {
            let Some(bell) = bells.get(*core) else {
                return Err(MachineError::Config(format!("idle work for core {core} of {cores}")));
            };
            bell.bind_idle_work(work.clone());
        }
        let irq = Arc::new(IrqController::new(cores, info.timer_irq_base, config.device_irq_core));
        for w in &config.wires {
            let (irq, bells) = (irq.clone(), bells.clone());
            w.connect(Box::new(move |line| irq.raise(line, &bells)));
        }
        let gate = Arc::new(Gate { open: AtomicBool::new(!config.hold_secondary_cores), bells: bells.clone() });
        let shared = Arc::new(Shared {
            table: ContextTable::new(kernel.max_threads()),
            irq: irq.clone(),
            kernel,
            bells,
            programs: Programs {
                root: Mutex::new(Some((Box::new(root) as RootFn, info.clone()))),
                programs: config.programs.clone(),
            },
            gate,
            stop: AtomicBool::new(false),
            faults: Mutex::new(Vec::new()),
            idle: (0..cores).map(|_| CachePadded::new(IdleClock::default())).collect(),
            user: (0..cores).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
            account_user: config.account_user_time,
            check: config.check_invariants,
            violations: Mutex::new(Vec::new()),
            timer_irq_base: info.timer_irq_base,
            stack_bytes: config.stack_bytes,
            idle_spin_cycles: config.idle_spin_cycles,
            hold: config.hold_secondary_cores,
        });
        let allowed = crate::placement::cpu_order();
        let mut machine = Machine {
            shared: shared.clone(),
            cores: Vec::with_capacity(cores),
            ticker: None,
            shutdown_timeout: config.shutdown_timeout,
            boot_info: info,
            started: Instant::now(),
        };
        for handle in handles {
            let i = handle.index();
            let cpu = if !config.pin || allowed.is_empty() {
                None
            } else {
                let k = config.cpus.as_ref().map_or(i, |c| c[i]);
                Some(allowed[k % allowed.len()])
            };
            let shared = shared.clone();
            let t = std::thread::Builder::new()
                .name(format!("granule-core-{i}"))
                .spawn(move || crate::core::run(shared, handle, cpu))
                .map_err(MachineError::Spawn)?;
            machine.cores.push(Some(t));
        }
        if let Some(period) = config.tick {
            let shared = shared.clone();
            let t = std::thread::Builder::new()
                .name("granule-timer".into())
                .spawn(move || {
                    while !shared.stopping() {
                        std::thread::park_timeout(period);
                        for b in shared.bells.iter() {
                            b.ring(Ring::Timer);
                        }
                    }
                })
                .map_err(MachineError::Spawn)?;
            machine.ticker = Some(t);
        }
        Ok(machine)
    }

    /// The kernel (for its statistics and its regime's lock profile).
    pub fn kernel(&self) -> &Kernel<R> {
        &self.shared.kernel
    }

    /// What the root task was told at boot.
    pub fn boot_info(&self) -> &BootInfo {
        &self.boot_info
    }

    /// Number of cores.
    pub fn cores(&self) -> usize {
        self.cores.len()
    }

    /// Cycles core `core` has spent in its idle loop since boot, including
    /// the idle period it may be in right now.
    pub fn idle_cycles(&self, core: usize) -> u64 {
        self.shared.idle[core].read(crate::clock::now())
    }

    /// Cycles core `core` has spent running user code since boot (0 unless
    /// [`MachineConfig::account_user_time`]): from resuming a context to its
    /// trap, so the platform's switch into and out of the context is
    /// included.
    pub fn user_cycles(&self, core: usize) -> u64 {
        self.shared.user[core].load(Ordering::Relaxed)
    }

    /// Kernel invariants found broken after a system call (only with
    /// [`MachineConfig::check_invariants`]), as text.
    pub fn invariant_violations(&self) -> Vec<String> {
        self.shared.violations.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// How many times core `core` parked its OS thread in the idle loop.
    pub fn parks(&self, core: usize) -> u64 {
        self.shared.bells[core].parks()
    }

    /// How many times a user context was taken by a core that did not own
    /// it: each context's first run, plus one per migration hand-off.
    pub fn context_moves(&self) -> u64 {
        self.shared.table.moves()
    }

    /// Whether core `core` is parked in its idle loop right now.
    pub fn is_parked(&self, core: usize) -> bool {
        self.shared.bells[core].is_sleeping()
    }

    /// User threads that faulted so far (panicked, returned, bad entry).
    pub fn faults(&self) -> Vec<FaultRecord> {
        self.shared.faults.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Time since boot.
    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// Raise device interrupt line `irq`.
    pub fn raise_irq(&self, irq: usize) {
        self.shared.irq.raise(irq, &self.shared.bells);
    }

    /// Let the secondary cores run (see [`MachineConfig::hold_secondary_cores`]).
    pub fn release_secondary_cores(&self) {
        self.shared.gate.open();
    }

    /// Stop every core and join their threads (waiting at most the
    /// configured bound), then tear down every user context.
    pub fn shutdown(mut self) -> Result<Vec<FaultRecord>, StuckCores> {
        self.stop_and_join()?;
        Ok(self.faults())
    }

    fn stop_and_join(&mut self) -> Result<(), StuckCores> {
        if self.cores.iter().all(Option::is_none) {
            return Ok(());
        }
        self.shared.stop.store(true, Ordering::Release);
        for b in self.shared.bells.iter() {
            b.ring(Ring::Shutdown);
        }
        if let Some(t) = self.ticker.take() {
            t.thread().unpark();
            let _ = t.join();
        }
        let deadline = Instant::now() + self.shutdown_timeout;
        while Instant::now() < deadline && self.cores.iter().flatten().any(|t| !t.is_finished()) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut stuck = Vec::new();
        for (i, slot) in self.cores.iter_mut().enumerate() {
            match slot.take() {
                Some(t) if t.is_finished() => {
                    if let Err(p) = t.join() {
                        // A core thread panicked: a platform or kernel bug.
                        // Report it loudly; the machine is stopped anyway.
                        eprintln!("granule-hosted: core {i} thread panicked: {p:?}");
                    }
                }
                Some(_) => stuck.push(i),
                None => {}
            }
        }
        if !stuck.is_empty() {
            return Err(StuckCores(stuck));
        }
        // Every core thread is gone: this thread is the only one left using
        // the contexts. Unwind them here, before the kernel is dropped.
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            tearing_down(|| {
                for v in shared.table.values_mut() {
                    *v = None;
                }
            });
        }
        Ok(())
    }
}

impl<R: Regime> Drop for Machine<R> {
    fn drop(&mut self) {
        if let Err(e) = self.stop_and_join() {
            eprintln!("granule-hosted: {e}");
        }
    }
}
