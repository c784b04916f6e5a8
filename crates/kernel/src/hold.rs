//! Holding an object before reading it: the one rule every kernel path
//! follows, whatever the regime.
//!
//! A general kernel entry (and the IPC fast path inside it) calls
//! [`Hold::object`] on each object *before* it reads the object's mutable
//! state: the endpoint before its queue, the reply object before its
//! caller, the notification before its waiters, the partner's core before
//! its ready queue. What a hold means is the regime's guard:
//!
//! * [`AllHeld`] — the whole kernel is held already (`none`, `bkl`, `rtm`,
//!   `lockfree`'s management entries): every hold is `Ok` and compiles to
//!   nothing, and its stops have the empty type [`Never`], so no stop
//!   handling is compiled either.
//! * the `fine` regime's object locks (`drive/objects.rs`): a lock that
//!   comes after every lock held is waited for, any other is only tried; a
//!   try that fails stops the entry with [`Stop::Retry`]. Because every hold
//!   comes before the entry's point of no return, nothing has changed yet:
//!   the drive releases everything and runs the entry again, this time
//!   taking what it learnt in lock order from the start (seL4's fine-grained
//!   variant in the seeds, §3.3, locks in address order or restarts).
//!
//! A thread is held with the place it sits in, never on its own: this
//! core's current thread with this core's scheduler (held from the entry's
//! start), a thread waiting in an endpoint's or notification's queue with
//! that endpoint or notification, a thread waiting for a reply with the
//! reply object, a ready thread with its core. A thread leaves a place only
//! while that place is held, and a shared entry finds a thread only through
//! a place it holds, so the thread's state it reads and writes is covered.
//! (The seeds' fine-grained kernel also locks the two TCBs; here that would
//! be two more locks per call guarding nothing the places do not.) What
//! this rests on, each kept by the kernel's other rules:
//!
//! * a reply object's caller is always a thread waiting on that reply
//!   object (the invariant checker's reply rule), so answering the caller it
//!   names touches a thread the reply object holds;
//! * a core's current thread changes only in that core's own entries or in
//!   exclusive ones, and one whose affinity moved it elsewhere exists only
//!   inside the exclusive entry that moved it;
//! * a thread in no place — inactive, or just taken from a queue by this
//!   entry to run next here — is reached only by an exclusive entry or by
//!   the entry that took it, whose place is still held until it exits;
//! * a bound notification's thread, reached through the notification and
//!   not through where it waits, is woken only by an exclusive entry
//!   (`need_whole` in the signal's resolver).
//!
//! `FineOptions::check_holds` checks that the objects and cores an operation
//! names are held; that a thread is reached only through a held place is
//! argued here, not checked at run time.
//!
//! What never needs a hold — it changes only while the whole kernel is held —
//! is read freely: capability slots, generations, a thread's CSpace,
//! affinity, priority and bound notification, a notification's bound thread,
//! IRQ bindings. An entry that needs the whole kernel (an object invocation,
//! a capability transfer, waking a bound thread, a zombie or stall-owning
//! current thread) asks [`Hold::need_whole`], which stops a shared entry with
//! [`Stop::Exclusive`].
//!
//! The one hold that may fail after a change is the receive half of
//! `ReplyRecv`, whose reply has been delivered: that call restarts from the
//! user side instead ([`Hold::escalate`], `syscall.rs`), as a refused lock
//! set always did.

use crate::abi::{Error, ObjectType};
use crate::ids::ObjectId;
use crate::object::{Endpoint, Notification, Ref, Reply, KIND_IRQ};
use crate::regime::LockTarget;

/// Why a shared entry stopped before its point of no return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// A lock could not be had: release everything and run the entry again.
    Retry,
    /// The entry needs the whole kernel.
    Exclusive,
}

/// Why a guard's entries stop: [`Stop`] for a guard that can fail,
/// [`Never`] for one that holds everything (its stops then vanish from the
/// code at compile time).
pub(crate) trait StopKind: Copy + core::fmt::Debug {
    /// Whether an entry may stop at all (false for [`Never`]).
    const CAN_STOP: bool;
    /// A lock could not be had.
    fn retry() -> Option<Self>;
    /// The whole kernel is needed.
    fn exclusive() -> Option<Self>;
}

impl StopKind for Stop {
    const CAN_STOP: bool = true;
    #[inline(always)]
    fn retry() -> Option<Self> {
        Some(Stop::Retry)
    }
    #[inline(always)]
    fn exclusive() -> Option<Self> {
        Some(Stop::Exclusive)
    }
}

/// A guard that holds everything never stops.
pub type Never = core::convert::Infallible;

impl StopKind for Never {
    const CAN_STOP: bool = false;
    #[inline(always)]
    fn retry() -> Option<Self> {
        None
    }
    #[inline(always)]
    fn exclusive() -> Option<Self> {
        None
    }
}

/// How a decoded call ends before it executes: it fails with an error (the
/// caller is told), or the entry stops (`S`, the guard's [`StopKind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Halt<S> {
    Fail(Error),
    Stop(S),
}

impl<S> From<Error> for Halt<S> {
    #[inline(always)]
    fn from(e: Error) -> Self {
        Halt::Fail(e)
    }
}

impl<S: StopKind> From<S> for Halt<S> {
    #[inline(always)]
    fn from(s: S) -> Self {
        Halt::Stop(s)
    }
}

/// Objects that have a lock of their own under `fine`.
pub(crate) trait Lockable {
    /// Their [`ObjectId::kind`].
    const KIND: u8;
}

impl Lockable for Endpoint {
    const KIND: u8 = ObjectType::Endpoint as u8;
}
impl Lockable for Notification {
    const KIND: u8 = ObjectType::Notification as u8;
}
impl Lockable for Reply {
    const KIND: u8 = ObjectType::Reply as u8;
}

/// The lock of object `r`.
#[inline(always)]
pub(crate) fn target<T: Lockable>(r: Ref<T>) -> LockTarget {
    LockTarget::Object(ObjectId { kind: T::KIND, index: r.index() })
}

/// A regime's guard: how an entry holds each object before reading it (see
/// the module documentation).
pub(crate) trait Hold {
    /// Why its entries stop.
    type Stop: StopKind;

    /// Hold `target`; `false` if it cannot be had now.
    #[track_caller]
    fn hold(&mut self, target: LockTarget) -> bool;

    /// Whether the whole kernel is held.
    fn whole(&self) -> bool;

    /// The call restarts from the user side after a change (see the module
    /// documentation): its next attempt should take the whole kernel.
    fn escalate(&mut self);

    /// Hold object `r`.
    #[inline(always)]
    #[track_caller]
    fn object<T: Lockable>(&mut self, r: Ref<T>) -> Result<(), Self::Stop> {
        self.take(target(r))
    }

    /// Hold core `c`'s scheduler state (its ready queues, current thread).
    #[inline(always)]
    #[track_caller]
    fn core(&mut self, c: usize) -> Result<(), Self::Stop> {
        self.take(LockTarget::Core(c))
    }

    /// Hold the handler slot of IRQ line `irq`.
    #[inline(always)]
    #[track_caller]
    fn irq(&mut self, irq: usize) -> Result<(), Self::Stop> {
        self.take(LockTarget::Object(ObjectId { kind: KIND_IRQ, index: irq as u32 }))
    }

    /// Hold `target`, or stop with [`Stop::Retry`].
    #[inline(always)]
    #[track_caller]
    fn take(&mut self, target: LockTarget) -> Result<(), Self::Stop> {
        match Self::Stop::retry() {
            Some(stop) if !self.hold(target) => Err(stop),
            _ => Ok(()),
        }
    }

    /// The entry needs the whole kernel: `Ok` if it is held, else stop with
    /// [`Stop::Exclusive`].
    #[inline(always)]
    fn need_whole(&self) -> Result<(), Self::Stop> {
        match Self::Stop::exclusive() {
            Some(stop) if !self.whole() => Err(stop),
            _ => Ok(()),
        }
    }
}

/// Everything is held already (the regime granted the whole kernel).
/// Public only as a drive's guard type; nothing outside the kernel can use
/// it (the trait it implements is the kernel's own).
#[derive(Debug)]
pub struct AllHeld;

impl Hold for AllHeld {
    type Stop = Never;

    #[inline(always)]
    #[track_caller]
    fn hold(&mut self, _target: LockTarget) -> bool {
        true
    }

    #[inline(always)]
    fn whole(&self) -> bool {
        true
    }

    #[inline(always)]
    fn escalate(&mut self) {}
}
