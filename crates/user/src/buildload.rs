//! A build-like load on the kernel's subsystems (seed `003` §5.2 ran
//! `make buildworld`): on every core, worker threads ("compilers")
//! alternate exponentially distributed compute with the sysctl reads a
//! build tool makes (by name and by OID), rare sets, an occasional full
//! walk (`sysctl -a`) and kernel-log appends; one reader thread (syslogd)
//! drains the log, sleeping on a notification when it is empty. A *job* is
//! one compute burst and its calls.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_utils::CachePadded;
use granule_hosted::{Machine, MachineConfig, MachineError, UserCtx};
use granule_kernel::abi::{Error, ObjectType};
use granule_kernel::{BootInfo, Regime, Word};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp};

use crate::alloc::Allocator;
use crate::build_status::BuildStatus;
use crate::env::{CPtr, Env};
use crate::pingpong::spin_cycles;
use crate::trap::Trap;

/// The OIDs a build tool reads (what `make`, `cc` and `ld` ask FreeBSD).
pub const BUILD_OIDS: [&str; 12] = [
    "hw.ncpu",
    "hw.pagesize",
    "kern.osreldate",
    "kern.ostype",
    "kern.osrelease",
    "hw.machine_arch",
    "kern.argmax",
    "vm.stats.vm.v_page_count",
    "kern.maxfilesperproc",
    "kern.smp.cpus",
    "user.localbase",
    "hw.physmem",
];

/// The writable OID the rare sets change.
pub const SET_OID: &str = "kern.maxvnodes";

/// Priority of the workers and the reader (below the root task's).
const PRIORITY: u8 = 100;

/// The load's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BuildSpec {
    /// Cores with workers.
    pub cores: usize,
    /// Workers per core.
    pub workers: usize,
    /// Mean compute between a job's calls, in cycles (exponential).
    pub compute_cycles: f64,
    /// Sysctl reads per job (half by name, half by OID).
    pub reads_per_job: u32,
    /// Per thousand sysctl calls: sets.
    pub write_permille: u32,
    /// Per thousand jobs: full walks.
    pub walk_permille: u32,
    /// Per thousand jobs: kernel-log appends.
    pub log_permille: u32,
    /// Seed of the workers' random number generators.
    pub seed: u64,
}

/// What one worker publishes.
#[derive(Debug, Default)]
struct WorkerStats {
    jobs: AtomicU64,
    calls: AtomicU64,
    errors: AtomicU64,
}

/// A build load: its spec and counters.
#[derive(Debug)]
pub struct BuildLoad {
    spec: BuildSpec,
    workers: Vec<CachePadded<WorkerStats>>,
    read: CachePadded<AtomicU64>,
    status: BuildStatus,
}

impl BuildLoad {
    pub fn new(spec: BuildSpec) -> Self {
        let n = spec.cores * spec.workers;
        Self {
            spec,
            workers: (0..n).map(|_| CachePadded::new(WorkerStats::default())).collect(),
            read: CachePadded::new(AtomicU64::new(0)),
            status: BuildStatus::default(),
        }
    }

    /// Jobs completed so far, all workers.
    pub fn jobs(&self) -> u64 {
        self.workers.iter().map(|w| w.jobs.load(Ordering::Relaxed)).sum()
    }

    /// Subsystem calls made so far, all workers.
    pub fn calls(&self) -> u64 {
        self.workers.iter().map(|w| w.calls.load(Ordering::Relaxed)).sum()
    }

    /// Calls that failed (other than a full log), all workers.
    pub fn errors(&self) -> u64 {
        self.workers.iter().map(|w| w.errors.load(Ordering::Relaxed)).sum()
    }

    /// Log messages the reader took.
    pub fn messages_read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    fn build<T: Trap>(&self, env: &mut Env<T>, info: &BootInfo, worker: Word, reader: Word) -> Result<(), Error> {
        let mut a = Allocator::from_boot(info);
        let n = a.create(env, ObjectType::Notification, 0)?;
        env.klog_bind(n)?;
        a.thread(env, reader, n, 0, PRIORITY, true)?;
        for core in 0..self.spec.cores {
            for w in 0..self.spec.workers {
                a.thread(env, worker, (core * self.spec.workers + w) as Word, core, PRIORITY, true)?;
            }
        }
        Ok(())
    }
}

/// A worker: jobs forever.
fn worker<T: Trap>(env: &mut Env<T>, load: &BuildLoad, index: Word) {
    let spec = load.spec;
    let Some(stats) = load.workers.get(index as usize) else { panic!("unknown worker {index}") };
    let mut rng = SmallRng::seed_from_u64(spec.seed ^ index.wrapping_mul(0x9e37_79b9));
    let compute = (spec.compute_cycles > 0.0).then(|| Exp::new(1.0 / spec.compute_cycles)).and_then(Result::ok);
    let oids: Vec<Vec<u32>> = BUILD_OIDS.iter().filter_map(|n| env.sysctl_name_to_oid(n).ok()).collect();
    let set_oid = env.sysctl_name_to_oid(SET_OID).ok();
    let calls = std::cell::Cell::new(0u64);
    let errors = std::cell::Cell::new(0u64);
    let check = |r: Result<(), Error>| {
        calls.set(calls.get() + 1);
        if matches!(r, Err(e) if e != Error::RingFull) {
            errors.set(errors.get() + 1);
        }
    };
    for job in 1u64.. {
        if let Some(d) = &compute {
            spin_cycles(d.sample(&mut rng) as u64);
        }
        for i in 0..spec.reads_per_job {
            if rng.gen_range(0..1000) < spec.write_permille {
                if let Some(o) = &set_oid {
                    check(env.sysctl_set(o, &(262_144 + (job % 7) as i64).to_le_bytes()));
                }
                continue;
            }
            let k = rng.gen_range(0..BUILD_OIDS.len());
            if i % 2 == 0 {
                check(env.sysctl_get_name(BUILD_OIDS[k], crate::NULL).map(|_| ()));
            } else if let Some(o) = oids.get(k % oids.len().max(1)) {
                check(env.sysctl_get_oid(o, crate::NULL).map(|_| ()));
            }
        }
        if rng.gen_range(0..1000) < spec.walk_permille {
            let mut at = Vec::new();
            while let Ok((next, _)) = env.sysctl_next(&at) {
                // Values longer than the message only report their length.
                let r = env.sysctl_get_oid(&next, crate::NULL).map(|_| ());
                check(if r == Err(Error::BufferTooSmall) { Ok(()) } else { r });
                at = next;
            }
        }
        if rng.gen_range(0..1000) < spec.log_permille {
            check(env.klog_append(format!("cc: built obj{index}/{job}.o").as_bytes()));
        }
        stats.calls.store(calls.get(), Ordering::Relaxed);
        stats.errors.store(errors.get(), Ordering::Relaxed);
        stats.jobs.store(job, Ordering::Relaxed);
    }
}

/// The log reader: drain, then sleep on the notification.
fn reader<T: Trap>(env: &mut Env<T>, load: &BuildLoad, ntfn: CPtr) {
    loop {
        match env.klog_read() {
            Ok((msgs, _)) if !msgs.is_empty() => {
                load.read.fetch_add(msgs.len() as u64, Ordering::Relaxed);
            }
            Ok(_) => {
                let _ = env.wait(ntfn);
            }
            Err(e) => panic!("klog read: {e}"),
        }
    }
}

/// A machine running a build load.
#[derive(Debug)]
pub struct BuildMachine<R: Regime> {
    pub machine: Machine<R>,
    pub load: Arc<BuildLoad>,
}

/// Boot `config` under `regime` with a root task that builds the load and
/// suspends itself.
pub fn boot<R: Regime>(
    mut config: MachineConfig,
    regime: R,
    load: Arc<BuildLoad>,
) -> Result<BuildMachine<R>, MachineError> {
    let l = load.clone();
    let worker = config.program(move |ctx: &mut UserCtx<'_>, arg| worker(&mut Env::new(ctx), &l, arg));
    let l = load.clone();
    let reader = config.program(move |ctx: &mut UserCtx<'_>, arg| reader(&mut Env::new(ctx), &l, arg));
    let l = load.clone();
    let machine = Machine::boot(config, regime, move |ctx, info| {
        let built = l.build(&mut Env::new(&mut *ctx), info, worker, reader);
        crate::hosted::root_done(ctx, &l.status, built)
    })?;
    Ok(BuildMachine { machine, load })
}

impl<R: Regime> BuildMachine<R> {
    /// Wait until every worker finished a job, or fail with the reason.
    pub fn wait_running(&self, timeout: Duration) -> Result<(), String> {
        crate::hosted::wait_until(&self.machine, &self.load.status, timeout, "the workers", || {
            self.load.workers.iter().all(|w| w.jobs.load(Ordering::Relaxed) > 0)
        })
    }
}
