//! Management operations from both cores at once (seed `004`'s case for
//! lock-freedom): *controllers* suspend and resume a *victim* thread that
//! runs on the other core, *allocators* allocate and free 4 KiB frames
//! from one shared untyped, and *mappers* map and unmap a frame of their
//! own in the root's address space, beside each other's in one page table
//! (core `c` at page `c + 1`: both entries share a cache line). Each core
//! has a victim (it computes and yields every `victim_cycles`); the spec
//! says which cores have which role, so one run can be compared with the
//! other core quiet.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_utils::CachePadded;
use granule_hosted::{Machine, MachineConfig, MachineError, UserCtx};
use granule_kernel::abi::{Error, ObjectType, CAP_INIT_CNODE, CAP_INIT_VSPACE};
use granule_kernel::{BootInfo, Regime, Word};

use crate::alloc::Allocator;
use crate::build_status::BuildStatus;
use crate::env::{Env, NULL};
use crate::pingpong::spin_cycles;
use crate::trap::Trap;

/// Priority of the load's threads (below the root task's).
const PRIORITY: u8 = 100;

/// What runs on each core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ManageSpec {
    /// Cores with a controller (suspending and resuming the other core's
    /// victim), as a bit mask.
    pub controllers: u64,
    /// Cores with an allocator, as a bit mask.
    pub allocators: u64,
    /// Cores with a mapper, as a bit mask.
    pub mappers: u64,
    /// Cycles a victim computes between yields.
    pub victim_cycles: u64,
}

/// The load: its spec and counters (operations per core).
#[derive(Debug)]
pub struct ManageLoad {
    spec: ManageSpec,
    /// Suspend + resume pairs, per controller core.
    pairs: [CachePadded<AtomicU64>; 2],
    /// Allocate + free pairs, per allocator core.
    pages: [CachePadded<AtomicU64>; 2],
    /// Map + unmap pairs, per mapper core.
    maps: [CachePadded<AtomicU64>; 2],
    status: BuildStatus,
}

/// A thread's argument: its role and the capability it works on.
fn arg(role: Word, cap: Word, core: usize) -> Word {
    (role << 32) | (cap << 8) | core as Word
}

const VICTIM: Word = 0;
const CONTROLLER: Word = 1;
const ALLOCATOR: Word = 2;
const MAPPER: Word = 3;

/// Where core `core`'s mapper maps its frame: page `core + 1` of the first
/// 2 MiB region, so both mappers share one page table.
pub fn mapper_vaddr(core: usize) -> Word {
    (core as Word + 1) << 12
}

impl ManageLoad {
    pub fn new(spec: ManageSpec) -> Self {
        Self {
            spec,
            pairs: Default::default(),
            pages: Default::default(),
            maps: Default::default(),
            status: BuildStatus::default(),
        }
    }

    /// Suspend + resume pairs completed so far.
    pub fn pairs(&self) -> u64 {
        self.pairs.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// Allocate + free pairs completed so far.
    pub fn pages(&self) -> u64 {
        self.pages.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// Map + unmap pairs completed so far.
    pub fn maps(&self) -> u64 {
        self.maps.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    fn build<T: Trap>(&self, env: &mut Env<T>, info: &BootInfo, entry: Word) -> Result<(), Error> {
        let mut a = Allocator::from_boot(info);
        let mut victims = [0; 2];
        for (core, v) in victims.iter_mut().enumerate() {
            *v = a.thread(env, entry, arg(VICTIM, 0, core), core, PRIORITY, true)?;
        }
        for core in 0..2 {
            if self.spec.controllers & (1 << core) != 0 {
                a.thread(env, entry, arg(CONTROLLER, victims[1 - core], core), core, PRIORITY, true)?;
            }
            if self.spec.allocators & (1 << core) != 0 {
                // Its own slot to retype into (the untyped is the root's first).
                let slot = a.slot()?;
                a.thread(env, entry, arg(ALLOCATOR, slot, core), core, PRIORITY, true)?;
            }
            if self.spec.mappers & (1 << core) != 0 {
                let frame = a.create(env, ObjectType::Frame, 12)?;
                a.thread(env, entry, arg(MAPPER, frame, core), core, PRIORITY, true)?;
            }
        }
        Ok(())
    }

    fn thread<T: Trap>(&self, env: &mut Env<T>, w: Word, untyped: Word) {
        let (role, cap, core) = (w >> 32, (w >> 8) & 0xff_ffff, (w & 0xff) as usize);
        match role {
            VICTIM => loop {
                spin_cycles(self.spec.victim_cycles);
                let _ = env.yield_now();
            },
            CONTROLLER => {
                for n in 1u64.. {
                    if env.tcb_suspend(cap).is_err() || env.tcb_resume(cap).is_err() {
                        panic!("controller on core {core}: suspend/resume failed");
                    }
                    self.pairs[core].store(n, Ordering::Relaxed);
                }
            }
            MAPPER => {
                for n in 1u64.. {
                    if env.frame_map(cap, CAP_INIT_VSPACE, mapper_vaddr(core)).is_err() || env.frame_unmap(cap).is_err()
                    {
                        panic!("mapper on core {core}: map/unmap failed");
                    }
                    self.maps[core].store(n, Ordering::Relaxed);
                }
            }
            _ => {
                for n in 1u64.. {
                    if env.untyped_retype(untyped, ObjectType::Frame, 12, NULL, cap, 1).is_err()
                        || env.cnode_delete(CAP_INIT_CNODE, cap).is_err()
                    {
                        panic!("allocator on core {core}: allocate/free failed");
                    }
                    self.pages[core].store(n, Ordering::Relaxed);
                }
            }
        }
    }
}

/// A machine running the load.
#[derive(Debug)]
pub struct ManageMachine<R: Regime> {
    pub machine: Machine<R>,
    pub load: Arc<ManageLoad>,
}

/// Boot a two-core `config` under `regime` with a root task that builds the
/// load and suspends itself.
pub fn boot<R: Regime>(
    mut config: MachineConfig,
    regime: R,
    load: Arc<ManageLoad>,
) -> Result<ManageMachine<R>, MachineError> {
    let l = load.clone();
    let untyped = std::sync::Arc::new(AtomicU64::new(0));
    let u = untyped.clone();
    let entry = config.program(move |ctx: &mut UserCtx<'_>, arg| {
        let ut = u.load(Ordering::Acquire);
        l.thread(&mut Env::new(ctx), arg, ut)
    });
    let l = load.clone();
    let machine = Machine::boot(config, regime, move |ctx, info| {
        if let Some(&(ut, _)) = info.untyped.first() {
            untyped.store(ut, Ordering::Release);
        }
        let built = l.build(&mut Env::new(&mut *ctx), info, entry);
        crate::hosted::root_done(ctx, &l.status, built)
    })?;
    Ok(ManageMachine { machine, load })
}

impl<R: Regime> ManageMachine<R> {
    /// Wait until every controller, allocator and mapper has completed a pair.
    pub fn wait_running(&self, timeout: Duration) -> Result<(), String> {
        let s = self.load.spec;
        crate::hosted::wait_until(&self.machine, &self.load.status, timeout, "the load", || {
            (0..2).all(|c| {
                (s.controllers & (1 << c) == 0 || self.load.pairs[c].load(Ordering::Relaxed) > 0)
                    && (s.allocators & (1 << c) == 0 || self.load.pages[c].load(Ordering::Relaxed) > 0)
                    && (s.mappers & (1 << c) == 0 || self.load.maps[c].load(Ordering::Relaxed) > 0)
            })
        })
    }
}
