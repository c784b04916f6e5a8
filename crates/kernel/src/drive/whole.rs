//! Drives whose `enter` grants the whole kernel: [`Whole`] (`none`, `bkl`),
//! [`WholeChecked`] (`rtm`, which also sees each operation's lock set) and
//! [`GeneralOnly`] (tests: the general path alone, every set offered).

use super::{general_syscall, Drive, Entry, SetCheck};
use crate::args::SyscallArgs;
use crate::config::{BootConfig, BootError};
use crate::exit::ExitPlan;
use crate::hold::{AllHeld, Never};
use crate::kernel::{spin_hook, CoreHandle, Kernel};
use crate::regime::{LockSet, Regime};
use crate::state::Ctx;
use crate::waits::Queues;

/// `enter` grants the whole kernel. `OFFER_SET`: each decoded operation's
/// lock set is offered to [`Regime::lock_set`] before it executes (else it
/// is never built); `FAST_PATH`: `Call`, `ReplyRecv`, `Signal` and `Wait`
/// try the fast path first. Use the aliases.
#[derive(Debug)]
pub struct WholeKernel<const OFFER_SET: bool, const FAST_PATH: bool>;

/// The whole kernel, no lock set, the fast path (`none`, `bkl`).
pub type Whole = WholeKernel<false, true>;

/// The whole kernel, possibly as a hardware transaction, with the fast path;
/// an operation needing the whole kernel (allocation, an unbounded walk)
/// sees its set refused and runs under the fallback lock (`rtm`).
pub type WholeChecked = WholeKernel<true, true>;

/// The whole kernel, every operation's lock set offered, and the IPC fast
/// path never run: the general path alone, for tests that compare the two
/// paths or record every lock set.
pub type GeneralOnly = WholeKernel<true, false>;

impl<R, const OFFER_SET: bool, const FAST_PATH: bool> Drive<R> for WholeKernel<OFFER_SET, FAST_PATH>
where
    R: Regime<Drive = Self, Waits = Queues>,
{
    type Guard<'k>
        = AllHeld
    where
        R: 'k;

    fn waits(_config: &BootConfig, _regime: &R) -> Result<Queues, BootError> {
        Ok(Queues)
    }

    #[inline(always)]
    fn enter<'k, T>(
        k: &'k Kernel<R>,
        c: usize,
        _entry: Entry,
        mut f: impl FnMut(&mut Ctx<'_, Queues>, SetCheck<'_>, &mut Self::Guard<'k>) -> Result<T, Never>,
    ) -> T {
        // SAFETY: `c` is a core handle's, below the configuration's cores,
        // which `Kernel::boot` checked against the regime's; the caller
        // holds that handle `&mut`, so no other thread acts as `c`.
        let held = unsafe { k.regime.enter(c, spin_hook) };
        // SAFETY: as for `enter`; the body offers a set only inside this
        // entry.
        let check = |set: &LockSet| unsafe { k.regime.lock_set(c, set) };
        let out = {
            // SAFETY: the regime has just granted core `c` the whole kernel
            // (its `enter` returned), and the caller holds `c`'s `&mut
            // CoreHandle`, so this is the only thread acting as core `c`;
            // the context ends with this block, before `exit`.
            let mut ctx = unsafe { Ctx::new(&k.state, c) };
            f(&mut ctx, if OFFER_SET { Some(&check) } else { None }, &mut AllHeld)
        };
        // SAFETY: as for `enter`.
        unsafe { k.regime.exit(c, held) };
        match out {
            Ok(out) => out,
            // `AllHeld` never stops.
            Err(never) => match never {},
        }
    }

    #[inline(always)]
    fn syscall(k: &Kernel<R>, core: &mut CoreHandle, args: SyscallArgs) -> ExitPlan {
        general_syscall(k, core, args, FAST_PATH, &Queues)
    }
}
