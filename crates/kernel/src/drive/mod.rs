//! How the kernel drives a regime: a type of the regime ([`Regime::Drive`]),
//! not flags tested at run time.
//!
//! A kernel entry is `trap → enter → decode → execute → exit`. What `enter`
//! grants, and so how the rest must proceed, is the drive:
//!
//! * [`Whole`] (`none`, `bkl`): `enter` grants the whole kernel; the IPC
//!   fast path runs inside it, no lock set is built.
//! * [`WholeChecked`] (`rtm`): the same, and each decoded operation's lock set is
//!   offered to the regime, which aborts a transaction to its fallback lock
//!   when the set needs the whole kernel.
//! * [`GeneralOnly`] (tests): the whole kernel, every set offered, and the
//!   general path alone, so the fast path can be compared with it.
//! * [`Objects`] (`fine`): `enter` is a shared entry that grants only this
//!   core's scheduler; every path holds each object before it reads it
//!   (`hold.rs`), and an entry that cannot have a lock runs again, finally
//!   taking the exclusive side ([`crate::regime::ObjectLocks`]).
//! * `lockfree`'s `Shared` (in `crate::lockfree`): IPC, notifications,
//!   ticks and IPIs run on the lock-free shared paths; `enter`/`exit` are the
//!   management gate for everything else.
//!
//! Each drive is monomorphised into the kernel's entry points, so `none`
//! still compiles to no lock code and `lockfree` keeps its own instruction
//! count.

// The trait is public because `Regime` names it, and sealed because its
// methods name kernel internals (the access context, entry kinds) that no
// other crate can name: nothing outside the kernel can implement or call
// it, which is what these lints would otherwise guard.
#![allow(private_interfaces, private_bounds)]

mod objects;
mod whole;

pub use objects::Objects;
pub use whole::{GeneralOnly, Whole, WholeChecked, WholeKernel};

pub(crate) use crate::args::Entry;
use crate::args::{OtherEntry, SyscallArgs};
use crate::config::{BootConfig, BootError};
use crate::exec::Exec;
use crate::exit::ExitPlan;
use crate::hold::{Hold, StopKind};
use crate::kernel::{CoreHandle, Kernel};
use crate::regime::Regime;
use crate::state::Ctx;

pub(crate) use crate::regime::SetCheck;

/// How the kernel drives regime `R` (see the module documentation). Sealed:
/// its methods name kernel internals.
pub trait Drive<R: Regime<Drive = Self>>: Sized + 'static {
    /// How an entry holds each object before reading it (`hold.rs`).
    #[doc(hidden)]
    type Guard<'k>: Hold
    where
        R: 'k;

    /// Whether a `ReplyRecv` may deliver its reply and then return
    /// `restart` (its receive half could not be held, past the point of no
    /// return; `hold.rs`): true exactly where the guard can stop
    /// ([`Regime::REPLY_THEN_RESTART`]).
    #[doc(hidden)]
    const REPLY_THEN_RESTART: bool = <<Self::Guard<'static> as Hold>::Stop as StopKind>::CAN_STOP;

    /// The regime's wait representation, built at boot (or the reason the
    /// configuration cannot run under it).
    #[doc(hidden)]
    fn waits(config: &BootConfig, regime: &R) -> Result<R::Waits, BootError>;

    /// A general kernel entry of core `c`, trapped already: run `f` inside
    /// the regime, holding what it asks its guard for. `f` may stop
    /// ([`Stop`]) only before it has changed anything; it then runs again,
    /// finally with the whole kernel held, where it cannot stop.
    #[doc(hidden)]
    fn enter<'k, T>(
        k: &'k Kernel<R>,
        c: usize,
        entry: Entry,
        f: impl FnMut(
            &mut Ctx<'_, R::Waits>,
            SetCheck<'_>,
            &mut Self::Guard<'k>,
        ) -> Result<T, <Self::Guard<'k> as Hold>::Stop>,
    ) -> T;

    /// A system call of `core`'s current thread.
    #[doc(hidden)]
    fn syscall(k: &Kernel<R>, core: &mut CoreHandle, args: SyscallArgs) -> ExitPlan;

    /// An entry other than a system call on a path outside the general
    /// entry, if the drive has one and it applies (`lockfree`'s shared
    /// paths); `None`: the general entry runs it.
    #[doc(hidden)]
    #[inline(always)]
    fn other(_k: &Kernel<R>, _core: &mut CoreHandle, _what: OtherEntry) -> Option<ExitPlan> {
        None
    }
}

/// The general path's system call, inside the drive's general entry, run
/// on executor `e` (`exec.rs`); `fast`: try the IPC fast path first.
#[inline(always)]
pub(crate) fn general_syscall<R: Regime>(
    k: &Kernel<R>,
    core: &mut CoreHandle,
    args: SyscallArgs,
    fast: bool,
    e: &impl Exec<R::Waits>,
) -> ExitPlan {
    k.enter(core, crate::state::TRAP_SYSCALL, Entry::Syscall, |ctx, set, guard| {
        let direct = ctx.handle_syscall(e, args, set, fast, guard)?;
        ctx.count_syscall();
        // Each end returns straight into the entry's result (one `match`
        // of the two would build the plan aside and copy it).
        if let Some(d) = direct {
            return Ok(ctx.finish_direct(d));
        }
        Ok(ctx.finish_entry())
    })
}
