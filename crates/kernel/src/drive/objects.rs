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
        // Every regime call below is as core `c`: a core handle's, below the
        // configuration's cores, which `Kernel::boot` checked against the
        // regime's, and the caller holds that handle `&mut`, so no other
        // thread acts as `c` — the contract of `Regime::enter` and of every
        // `ObjectLocks` method. The guard and `Rounds` carry `c` on.
        // The holds cover every set (`hold.rs`); a checking regime is shown
        // each one to confirm it.
        let check;
        let offered: SetCheck<'_> = if regime.checks_lock_sets() {
            // SAFETY: as above; the body offers a set only inside this entry.
            check = move |set: &LockSet| unsafe { regime.lock_set(c, set) };
            Some(&check)
        } else {
            None
        };
        let mut guard = RegimeLocks { regime, core: c, round: Round::Shared };
        // The first round takes this core's lock (its read side), then what
        // the body holds; a later one first what it learnt (`Rounds`).
        // SAFETY: `c` is in range and this thread acts as it (above), and
        // it holds no lock yet.
        let shared = !matches!(entry, Entry::Whole | Entry::Look)
            && unsafe { regime.start_shared(c, entry == Entry::Syscall, spin_hook) };
        if !shared {
            go_exclusive(&mut guard);
        }
        let mut rounds = Rounds(None);
        loop {
            let out = {
                // SAFETY: either the exclusive side is held (it excludes
                // every other core's entry), or the regime granted core `c`
                // a shared entry holding this core's lock (which excludes
                // the exclusive side), and the body reads an object only
                // after its guard held it, or what changes only under the
                // exclusive side (`hold.rs`), and changes nothing before its
                // last hold. `c`'s handle is `&mut`, so no other thread acts
                // as `c`. The context ends before the locks are released.
                let mut ctx = unsafe { Ctx::new(&k.state, c) };
                f(&mut ctx, offered, &mut guard)
            };
            match out {
                Ok(out) => {
                    // SAFETY: as above.
                    unsafe {
                        if guard.round == Round::Exclusive {
                            regime.exit_exclusive(c);
                        } else {
                            regime.unlock_objects(c);
                            regime.exit(c, ());
                        }
                    }
                    return out;
                }
                Err(stop) => rounds.next(&mut guard, stop),
            }
        }
    }

    #[inline(always)]
    fn syscall(k: &Kernel<R>, core: &mut CoreHandle, args: SyscallArgs) -> ExitPlan {
        general_syscall(k, core, args, true, &Queues)
    }
}

/// The guard of an [`Objects`] entry: the regime's object locks in a shared
/// entry, everything in an exclusive one.
pub struct RegimeLocks<'k, R: ObjectLocks> {
    regime: &'k R,
    /// The entry's core: below the regime's cores, and the thread holding
    /// the guard acts as it (made only by `Objects::enter`, which checks
    /// both).
    core: usize,
    /// What the round holds (one field, so that an entry starts with one
    /// store).
    round: Round,
}

/// What the current round of an [`Objects`] entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Round {
    /// A shared round, every hold granted so far.
    Shared,
    /// A shared round that could not hold this target (learnt for the
    /// next round).
    Refused(LockTarget),
    /// The exclusive side is held.
    Exclusive,
}

impl<R: ObjectLocks> core::fmt::Debug for RegimeLocks<'_, R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RegimeLocks").field("core", &self.core).field("round", &self.round).finish()
    }
}

impl<R: ObjectLocks> Hold for RegimeLocks<'_, R> {
    type Stop = Stop;

    #[inline(always)]
    #[track_caller]
    fn hold(&mut self, target: LockTarget) -> bool {
        // SAFETY: `self.core` is in range and this thread acts as it (the
        // field's invariant).
        // (An exclusive entry's holds are granted by the regime.)
        if unsafe { self.regime.lock_one(self.core, target, spin_hook) } {
            return true;
        }
        self.round = Round::Refused(target);
        false
    }

    #[inline(always)]
    fn whole(&self) -> bool {
        self.round == Round::Exclusive
    }

    fn escalate(&mut self) {
        // SAFETY: as in `hold`.
        unsafe { self.regime.escalate(self.core) };
    }
}

/// The rounds of an entry after its first: nothing until one stopped, then
/// how many shared rounds it ran and what it learnt (one word to clear at
/// the start of every entry).
struct Rounds(Option<(u32, LockSet)>);

impl Rounds {
    /// The round guarded by `guard` stopped (`stop`; a shared round, its
    /// locks still held): learn what it could not have, release, and start
    /// the next round — shared, first taking everything learnt in lock
    /// order from nothing (so every lock is waited for in order), or after
    /// [`MAX_ROUNDS`] rounds, or for an entry that needs it, exclusive.
    #[cold]
    #[inline(never)]
    fn next<R: ObjectLocks>(&mut self, guard: &mut RegimeLocks<'_, R>, stop: Stop) {
        let (regime, c) = (guard.regime, guard.core);
        // SAFETY (every regime call below): `c` is the guard's core, in range
        // and acted as by this thread (the field's invariant).
        let refused = match core::mem::replace(&mut guard.round, Round::Shared) {
            Round::Shared => None,
            Round::Refused(t) => Some(t),
            // An exclusive guard holds everything and needs nothing more.
            Round::Exclusive => unreachable!("an exclusive entry stopped"),
        };
        let (n, hint) = self.0.get_or_insert_with(|| (0, LockSet::core(c)));
        if let (Stop::Retry, Some(t)) = (stop, refused) {
            // SAFETY: as above.
            hint.extend(&unsafe { regime.held_set(c) });
            hint.add_target(t);
        }
        // SAFETY: as above.
        unsafe {
            regime.unlock_objects(c);
            regime.exit(c, ());
        }
        *n += 1;
        if stop == Stop::Exclusive || *n >= MAX_ROUNDS || hint.exclusive() {
            return go_exclusive(guard);
        }
        // SAFETY: as above.
        let shared = unsafe {
            let () = regime.enter(c, spin_hook);
            let held = regime.lock_more(c, hint, spin_hook);
            if !held {
                regime.unlock_objects(c);
                regime.exit(c, ());
            }
            held
        };
        if !shared {
            go_exclusive(guard);
        }
    }
}

/// The next round of the entry guarded by `guard` is exclusive.
#[cold]
#[inline(never)]
fn go_exclusive<R: ObjectLocks>(guard: &mut RegimeLocks<'_, R>) {
    // SAFETY: the guard's core is in range and acted as by this thread
    // (the field's invariant).
    unsafe { guard.regime.enter_exclusive(guard.core, spin_hook) };
    guard.round = Round::Exclusive;
}
