//! The [`Objects`] drive (`fine`): shared entries that hold exactly the
//! objects they touch, the exclusive side for everything else.

use super::{general_syscall, Drive, Entry, SetCheck};
use crate::args::SyscallArgs;
use crate::config::{BootConfig, BootError};
use crate::exit::ExitPlan;
use crate::hold::{Hold, Stop};
use crate::kernel::{spin_hook, CoreHandle, Kernel};
use crate::regime::{LockSet, LockTarget, ObjectLocks};
use crate::state::Ctx;
use crate::waits::Queues;

/// Shared rounds a kernel entry tries before it takes the exclusive side.
const MAX_ROUNDS: u32 = 4;

/// A shared entry holds this core's scheduler, then each object as the
/// kernel's paths ask for it (`hold.rs`): the IPC fast path's guards, the
/// decoder's and resolvers' reads. If a lock cannot be had the body stops
/// before its point of no return; everything is released and the entry
/// runs again, first taking what it learnt (in lock order, from nothing).
/// After [`MAX_ROUNDS`] stopped rounds, or for an entry that needs it, an
/// exclusive entry.
#[derive(Debug)]
pub struct Objects;

impl<R: ObjectLocks<Drive = Self, Waits = Queues>> Drive<R> for Objects {
    type Guard<'k>
        = RegimeLocks<'k, R>
    where
        R: 'k;

    fn waits(_config: &BootConfig, _regime: &R) -> Result<Queues, BootError> {
        Ok(Queues)
    }

    #[inline(always)]
    fn enter<'k, T>(
        k: &'k Kernel<R>,
        c: usize,
        entry: Entry,
        mut f: impl FnMut(&mut Ctx<'_, Queues>, SetCheck<'_>, &mut RegimeLocks<'k, R>) -> Result<T, Stop>,
    ) -> T {
        let regime = &k.regime;
        let exclusive = entry == Entry::Whole || (entry == Entry::Syscall && regime.take_escalation(c));
        if exclusive {
            return exclusive_round(k, c, &mut f);
        }
        // The first round, inline: it takes this core's lock (its read
        // side), then what the body holds.
        regime.enter(c, spin_hook);
        let mut guard = RegimeLocks { regime, core: c, exclusive: false, failed: None };
        let stop = if regime.lock_one(c, LockTarget::Core(c), spin_hook) {
            match shared_round(k, c, &mut f, &mut guard) {
                Ok(out) => return out,
                Err(stop) => stop,
            }
        } else {
            Stop::Exclusive
        };
        later_rounds(k, c, &mut f, stop, guard.failed)
    }

    #[inline(always)]
    fn syscall(k: &Kernel<R>, core: &mut CoreHandle, args: SyscallArgs) -> ExitPlan {
        general_syscall(k, core, args, true)
    }
}

/// The guard of an [`Objects`] entry: the regime's object locks in a shared
/// entry, everything in an exclusive one.
pub struct RegimeLocks<'k, R: ObjectLocks> {
    regime: &'k R,
    core: usize,
    /// The exclusive side is held.
    exclusive: bool,
    /// The lock a hold could not have (learnt for the next round).
    failed: Option<LockTarget>,
}

impl<R: ObjectLocks> core::fmt::Debug for RegimeLocks<'_, R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RegimeLocks")
            .field("core", &self.core)
            .field("exclusive", &self.exclusive)
            .field("failed", &self.failed)
            .finish()
    }
}

impl<R: ObjectLocks> Hold for RegimeLocks<'_, R> {
    #[inline(always)]
    #[track_caller]
    fn hold(&mut self, target: LockTarget) -> bool {
        if self.exclusive || self.regime.lock_one(self.core, target, spin_hook) {
            return true;
        }
        self.failed = Some(target);
        false
    }

    #[inline(always)]
    fn whole(&self) -> bool {
        self.exclusive
    }

    fn escalate(&mut self) {
        self.regime.escalate(self.core);
    }
}

/// One shared round of core `c` holding at least its own lock: run `f`; on
/// success everything is released and the result returned; if it stops,
/// what it learnt is still held (for [`later_rounds`] to read) and the
/// entry is left.
#[inline(always)]
fn shared_round<'k, R: ObjectLocks<Drive = Objects, Waits = Queues>, T>(
    k: &'k Kernel<R>,
    c: usize,
    f: &mut impl FnMut(&mut Ctx<'_, Queues>, SetCheck<'_>, &mut RegimeLocks<'k, R>) -> Result<T, Stop>,
    guard: &mut RegimeLocks<'k, R>,
) -> Result<T, Stop> {
    let regime = &k.regime;
    let check = |set: &LockSet| regime.lock_set(c, set);
    let out = {
        // SAFETY: the regime granted core `c` a shared entry and this core's
        // lock (which excludes the exclusive side); the body reads an object
        // only after its guard held it, or what changes only under the
        // exclusive side (`hold.rs`), and changes nothing before its last
        // hold. `c`'s handle is `&mut`, so no other thread acts as `c`. The
        // context ends before `unlock_objects` and `exit`.
        let mut ctx = unsafe { Ctx::new(&k.state, c) };
        f(&mut ctx, Some(&check), guard)
    };
    if out.is_ok() {
        regime.unlock_objects(c);
        regime.exit(c);
    }
    out
}

/// The rounds after a first that stopped with `stop` (still inside the
/// regime's entry, its locks still held, `failed` the lock it could not
/// have): each first takes everything
/// learnt so far, in lock order from nothing (so every lock is waited for
/// in order); after [`MAX_ROUNDS`] rounds, or for an entry that needs it,
/// the exclusive side.
#[inline(never)]
#[cold]
fn later_rounds<'k, R: ObjectLocks<Drive = Objects, Waits = Queues>, T>(
    k: &'k Kernel<R>,
    c: usize,
    f: &mut impl FnMut(&mut Ctx<'_, Queues>, SetCheck<'_>, &mut RegimeLocks<'k, R>) -> Result<T, Stop>,
    mut stop: Stop,
    mut failed: Option<LockTarget>,
) -> T {
    let regime = &k.regime;
    let mut hint = LockSet::core(c);
    let mut rounds = 1;
    loop {
        // A lock that could not be had is learnt, with what is held, so
        // that the next round takes all of it in lock order.
        if let (Stop::Retry, Some(t)) = (stop, failed) {
            hint.extend(&regime.held_set(c));
            hint.add_target(t);
        }
        regime.unlock_objects(c);
        regime.exit(c);
        if stop == Stop::Exclusive || rounds >= MAX_ROUNDS || hint.exclusive() {
            return exclusive_round(k, c, f);
        }
        rounds += 1;
        regime.enter(c, spin_hook);
        let mut guard = RegimeLocks { regime, core: c, exclusive: false, failed: None };
        if !regime.lock_more(c, &hint, spin_hook) {
            regime.unlock_objects(c);
            regime.exit(c);
            return exclusive_round(k, c, f);
        }
        match shared_round(k, c, f, &mut guard) {
            Ok(out) => return out,
            Err(s) => (stop, failed) = (s, guard.failed),
        }
    }
}

/// An exclusive entry of core `c`, where the body cannot stop.
#[inline(never)]
fn exclusive_round<'k, R: ObjectLocks<Drive = Objects, Waits = Queues>, T>(
    k: &'k Kernel<R>,
    c: usize,
    f: &mut impl FnMut(&mut Ctx<'_, Queues>, SetCheck<'_>, &mut RegimeLocks<'k, R>) -> Result<T, Stop>,
) -> T {
    let regime = &k.regime;
    let check = |set: &LockSet| regime.lock_set(c, set);
    regime.enter_exclusive(c, spin_hook);
    let out = {
        // SAFETY: the exclusive side excludes every other core's entry;
        // `c`'s handle is `&mut`. The context ends before `exit_exclusive`.
        let mut ctx = unsafe { Ctx::new(&k.state, c) };
        let mut guard = RegimeLocks { regime, core: c, exclusive: true, failed: None };
        f(&mut ctx, Some(&check), &mut guard)
    };
    regime.exit_exclusive(c);
    match out {
        Ok(out) => out,
        // An exclusive guard holds everything and needs nothing more.
        Err(_) => unreachable!("an exclusive entry stopped"),
    }
}
