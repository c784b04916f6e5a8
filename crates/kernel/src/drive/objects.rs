//! The [`Objects`] drive (`fine`): shared entries that hold exactly the
//! objects they touch, the exclusive side for everything else.

use super::{general_syscall, Drive, SetCheck};
use crate::abi::Sysno;
use crate::args::SyscallArgs;
use crate::config::{BootConfig, BootError};
use crate::exit::ExitPlan;
use crate::fastpath::FastLocks;
use crate::kernel::{spin_hook, CoreHandle, Kernel};
use crate::plan::{Entry, Planned};
use crate::regime::{LockSet, LockTarget, ObjectLocks};
use crate::state::{Ctx, TRAP_SYSCALL};
use crate::waits::Queues;

/// Shared rounds a kernel entry tries before it takes the exclusive side.
const MAX_ROUNDS: u32 = 4;

/// A shared entry holding this core's scheduler, then the objects `plan.rs`
/// names, step by step; if a lock cannot be had, everything is released
/// and the entry starts again holding what was learnt (in lock order, from
/// nothing); after [`MAX_ROUNDS`] failed rounds, or for an entry that needs
/// it, an exclusive entry. `Call` and `ReplyRecv` first try the IPC fast
/// path fused with the locking.
#[derive(Debug)]
pub struct Objects;

impl<R: ObjectLocks<Drive = Self, Waits = Queues>> Drive<R> for Objects {
    fn waits(_config: &BootConfig, _regime: &R) -> Result<Queues, BootError> {
        Ok(Queues)
    }

    fn enter<T>(k: &Kernel<R>, c: usize, entry: Entry, f: impl FnOnce(&mut Ctx<'_, Queues>, SetCheck<'_>) -> T) -> T {
        let regime = &k.regime;
        let mut f = Some(f);
        let syscall = matches!(entry, Entry::Syscall(_));
        let mut exclusive = matches!(entry, Entry::Whole) || (syscall && regime.take_escalation(c));
        let mut hint = LockSet::core(c);
        let mut rounds = 0;
        let check = |set: &LockSet| regime.lock_set(c, set);
        while !exclusive {
            regime.enter(c, spin_hook);
            // The first round's plan takes this core's lock itself; a later
            // round first takes everything learnt so far, in lock order.
            let planned = if rounds == 0 || regime.lock_more(c, &hint, spin_hook) {
                // SAFETY: the regime granted core `c` a shared entry; the
                // context reads nothing before `plan` has had this core's
                // lock taken, then only what `plan` has had locked (or what
                // changes only under the exclusive side, see `plan.rs`), and
                // the operation executes only after the regime accepted its
                // lock set. `c`'s handle is `&mut`, so no other thread acts
                // as `c`. The context ends before `exit`.
                let mut ctx = unsafe { Ctx::new(&k.state, c) };
                // A lock that cannot be had is learnt, with what is held, so
                // that the next round takes all of it in lock order.
                let mut failed = None;
                let planned = ctx.plan(&entry, &mut |t: LockTarget| {
                    let ok = regime.lock_one(c, t, spin_hook);
                    if !ok {
                        failed = Some(t);
                    }
                    ok
                });
                if planned == Planned::Ready {
                    if let Some(f) = f.take() {
                        let out = f(&mut ctx, Some(&check));
                        regime.unlock_objects(c);
                        regime.exit(c);
                        return out;
                    }
                }
                if let Some(t) = failed {
                    hint.extend(&regime.held_set(c));
                    hint.add_target(t);
                }
                planned
            } else {
                Planned::Exclusive
            };
            regime.unlock_objects(c);
            regime.exit(c);
            rounds += 1;
            exclusive = planned == Planned::Exclusive || rounds >= MAX_ROUNDS || hint.exclusive();
        }
        regime.enter_exclusive(c, spin_hook);
        let out = {
            // SAFETY: the exclusive side excludes every other core's entry;
            // `c`'s handle is `&mut`. The context ends before `exit_exclusive`.
            let mut ctx = unsafe { Ctx::new(&k.state, c) };
            f.take().map(|f| f(&mut ctx, Some(&check)))
        };
        regime.exit_exclusive(c);
        match out {
            Some(out) => out,
            // `f` is taken only on the path that returns at once.
            None => unreachable!("kernel entry body ran twice"),
        }
    }

    #[inline(always)]
    fn syscall(k: &Kernel<R>, core: &mut CoreHandle, args: SyscallArgs) -> ExitPlan {
        if let Some(plan) = fused_fastpath(k, core, args) {
            return plan;
        }
        // The fast path was tried (fused) already.
        general_syscall(k, core, args, false)
    }
}

/// The IPC fast path fused with the locking, in a shared entry; `None`
/// (with nothing changed and nothing held) when it does not apply, and the
/// general path runs. Pending remote requests send the call to the general
/// path, which serves them first.
#[inline(always)]
fn fused_fastpath<R: ObjectLocks<Waits = Queues>>(
    k: &Kernel<R>,
    core: &mut CoreHandle,
    args: SyscallArgs,
) -> Option<ExitPlan> {
    if args.sysno != Sysno::Call.word() && args.sysno != Sysno::ReplyRecv.word() {
        return None;
    }
    let c = k.check(core);
    if k.regime.escalation_pending(c) || k.state.pending(c) {
        return None;
    }
    k.state.trap(c, TRAP_SYSCALL);
    k.regime.enter(c, spin_hook);
    let out = {
        // SAFETY: the regime granted core `c` a shared entry; the fast path
        // reads each object (and this core's scheduler) only after
        // `lock_one` returned `true` for it, or what changes only under the
        // exclusive side (capability slots, generations; see `fastpath.rs`),
        // and writes only what it holds. `c`'s handle is `&mut`, so no other
        // thread acts as `c`. The context ends before `unlock_objects` and
        // `exit`.
        let mut ctx = unsafe { Ctx::new(&k.state, c) };
        let mut locks = RegimeLocks { regime: &k.regime, core: c };
        if ctx.fastpath(args, &mut locks) {
            ctx.count_syscall();
            Some(ctx.finish_entry())
        } else {
            None
        }
    };
    k.regime.unlock_objects(c);
    k.regime.exit(c);
    out
}

/// The fast path's locks: the regime's object locks.
struct RegimeLocks<'a, R: ObjectLocks> {
    regime: &'a R,
    core: usize,
}

impl<R: ObjectLocks> FastLocks for RegimeLocks<'_, R> {
    #[inline(always)]
    #[track_caller]
    fn hold(&mut self, target: LockTarget) -> bool {
        self.regime.lock_one(self.core, target, spin_hook)
    }
}
