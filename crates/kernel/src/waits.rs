//! Where blocked threads wait: a type of the regime, not a run-time test.
//!
//! Every object keeps its own slab-linked wait queue (endpoint, notification)
//! and reply fields; that is [`Queues`], the representation of every regime
//! but `lockfree`. Under `lockfree` blocked threads wait in CAS words
//! instead (`crate::lockfree::LfState`), and the objects' own queues stay
//! empty. The general code (`detach`, object destruction, binding, the
//! invariant checker) asks the representation at the few places where the
//! two differ, through this trait. It is a type parameter of the kernel
//! state and of [`Ctx`], chosen by [`crate::Regime::Waits`], so for
//! [`Queues`] each hook is an empty inline function that compiles away.

// The trait is public because `Regime` names it, and sealed because its
// methods name kernel internals (the access context, entry kinds) that no
// other crate can name: nothing outside the kernel can implement or call
// it, which is what these lints would otherwise guard.
#![allow(private_interfaces, private_bounds)]

use crate::abi::Word;
use crate::args::FaultKind;
use crate::introspect::CoreStats;
use crate::object::{Cap, Notification, Ref, Reply, SlotAddr, Tcb};
use crate::outcome::Outcome;
use crate::state::{Ctx, WaitsHere};
use crate::violation::InvariantViolation;

/// A reply object's caller and receiver, as the general code keeps them.
pub(crate) type CallerAndReceiver = (Option<Ref<Tcb>>, Option<Ref<Tcb>>);

/// Where blocked threads wait besides the objects' own queues (see the
/// module documentation). Sealed: implemented by [`Queues`] and by
/// `lockfree`'s state only.
pub trait Waits: WaitsHere + Send + Sync + Sized + 'static {
    /// Whether a core may write a capability slot while another reads it
    /// (`lockfree`'s shared paths). `false`: a slot changes only where no
    /// other core reads it (the whole kernel, or `fine`'s write side), so
    /// a look-up reads it without validating its snapshot
    /// ([`crate::object::slot_cap::SlotCap::get_settled`]).
    #[doc(hidden)]
    const SHARED_CAP_WRITES: bool = false;

    /// Whether other cores left `core` work that its next entry must do
    /// beyond its pending IPI bits (`lockfree`: its inbox, a stop request).
    #[doc(hidden)]
    #[inline(always)]
    fn asks(&self, _core: usize) -> bool {
        false
    }

    /// `detach`'s blocked cases, if this representation holds them: take
    /// `t` out of whatever it waits in and mark its call for restart
    /// (`Some(interrupted)`); `None` lets the general code go on.
    #[doc(hidden)]
    #[inline(always)]
    fn detach(_ctx: &mut Ctx<'_, Self>, _t: Ref<Tcb>) -> Option<bool> {
        None
    }

    /// The thread at the head of `ep`'s queue, if this representation holds
    /// endpoint queues (`Some(head)`); `None`: ask the endpoint.
    #[doc(hidden)]
    #[inline(always)]
    fn ep_head(_ctx: &mut Ctx<'_, Self>, _ep: Ref<crate::object::Endpoint>) -> Option<Option<Ref<Tcb>>> {
        None
    }

    /// A notification is destroyed: detach the waiters this representation
    /// holds.
    #[doc(hidden)]
    #[inline(always)]
    fn cancel_waits(_ctx: &mut Ctx<'_, Self>, _n: Ref<Notification>) {}

    /// A reply object is destroyed: its caller and receiver, taken out of
    /// this representation (`None`: the reply object's own fields).
    #[doc(hidden)]
    #[inline(always)]
    fn take_reply(_ctx: &mut Ctx<'_, Self>, _r: Ref<Reply>) -> Option<CallerAndReceiver> {
        None
    }

    /// Whether threads wait on notification `n` in this representation.
    #[doc(hidden)]
    #[inline(always)]
    fn has_waiters(_ctx: &mut Ctx<'_, Self>, _n: Ref<Notification>) -> bool {
        false
    }

    /// A signal from the kernel (an interrupt) to `n`, if this
    /// representation delivers it (`true`); `false`: the general path does.
    #[doc(hidden)]
    #[inline(always)]
    fn kernel_signal(_ctx: &mut Ctx<'_, Self>, _n: Ref<Notification>, _badge: Word) -> bool {
        false
    }

    /// A system call of `caller`, this core's current thread, starts on
    /// the general path: `false` if this representation stopped it
    /// instead (`lockfree`: a suspend nobody has met; it first links what
    /// its shared paths left detached, as every system call must see the
    /// derivation tree whole).
    #[doc(hidden)]
    #[inline(always)]
    fn syscall_starts(_ctx: &mut Ctx<'_, Self>, _caller: Ref<Tcb>) -> bool {
        true
    }

    /// Whether this core may run `t`, which it is about to dispatch (the
    /// end of every entry); `false`: a pending suspend stopped it instead
    /// (`lockfree`'s `STOPME`), and the core chooses again.
    #[doc(hidden)]
    #[inline(always)]
    fn may_dispatch(_ctx: &mut Ctx<'_, Self>, _t: Ref<Tcb>) -> bool {
        true
    }

    /// The general code made `t` inactive (`true`), or runnable from
    /// inactive (`false`).
    #[doc(hidden)]
    #[inline(always)]
    fn set_inactive(_ctx: &mut Ctx<'_, Self>, _t: Ref<Tcb>, _inactive: bool) {}

    /// The general code bound `t` to a notification or unbound it (a
    /// management entry).
    #[doc(hidden)]
    #[inline(always)]
    fn binding_changed(_ctx: &mut Ctx<'_, Self>, _t: Ref<Tcb>) {}

    /// The general code created `t`, inactive, on core `core`: whatever
    /// this representation kept for the object's last thread goes.
    #[doc(hidden)]
    #[inline(always)]
    fn created(_ctx: &mut Ctx<'_, Self>, _t: Ref<Tcb>, _core: usize) {}

    /// The general code gave `t` home core `core` (migration).
    #[doc(hidden)]
    #[inline(always)]
    fn set_home(_ctx: &mut Ctx<'_, Self>, _t: Ref<Tcb>, _core: usize) {}

    /// `Resume` of `t`, which is not inactive: `true` if this
    /// representation had a suspend pending for it, now cancelled.
    #[doc(hidden)]
    #[inline(always)]
    fn cancel_stop(_ctx: &mut Ctx<'_, Self>, _t: Ref<Tcb>) -> bool {
        false
    }

    /// A suspend of `t` this representation has not acted on yet:
    /// `Some(false)` pending (`t` is inactive to every observer),
    /// `Some(true)` cancelled by a resume since; either way a call `t` is
    /// blocked in will be restarted (introspection).
    #[doc(hidden)]
    #[inline(always)]
    fn stop_requested(_ctx: &mut Ctx<'_, Self>, _t: Ref<Tcb>) -> Option<bool> {
        None
    }

    /// Whether thread `t` is being destroyed by a deletion the general
    /// code has not finished (`lockfree`'s shared destroy): introspection
    /// reads it as the deletion's result.
    #[doc(hidden)]
    #[inline(always)]
    fn destroying(_ctx: &mut Ctx<'_, Self>, _t: Ref<Tcb>) -> bool {
        false
    }

    /// The capability a dead slot `a` stands for until the general code
    /// finishes its deletion (the null capability where none does), as
    /// the invariant checker counts it.
    #[doc(hidden)]
    #[inline(always)]
    fn dead_cap(_ctx: &mut Ctx<'_, Self>, _a: SlotAddr) -> Cap {
        Cap::NULL
    }

    /// Add this representation's per-core counters of core `core` to
    /// `stats`.
    #[doc(hidden)]
    #[inline(always)]
    fn stats(&self, _core: usize, _stats: &mut CoreStats) {}

    /// Make the `Call` of `caller`'s fault `kind` in a whole entry, if this
    /// representation runs the executor on its own words (`Some`: the
    /// outcome); `None`: the general path resolves and runs it.
    #[doc(hidden)]
    #[inline(always)]
    fn fault_call(_ctx: &mut Ctx<'_, Self>, _caller: Ref<Tcb>, _kind: FaultKind) -> Option<Outcome> {
        None
    }

    /// The invariant checker's part for this representation: count the
    /// threads waiting in it into `places` and check its words.
    #[doc(hidden)]
    #[inline(always)]
    fn check(_ctx: &mut Ctx<'_, Self>, _places: &mut [u32]) -> Result<(), InvariantViolation> {
        Ok(())
    }
}

/// The objects' own slab-linked queues and reply fields: every regime but
/// `lockfree`. Holds nothing; also the executor's way to them (`exec.rs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Queues;

impl Waits for Queues {}

impl WaitsHere for Queues {
    type Here<'k> = ();

    #[inline(always)]
    unsafe fn here(&self, _core: usize) {}
}
