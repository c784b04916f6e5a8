//! What the one IPC executor needs of a wait representation.
//!
//! The executor (`rendezvous.rs` for endpoints and reply objects,
//! `object/notification.rs` for notifications) is written once, against
//! [`Exec`]: "take a waiting partner, or wait", "answer the caller in a
//! reply object, or claim it", "wake a thread". Two representations
//! implement it:
//!
//! * [`Queues`] — the objects' own slab-linked queues and reply fields
//!   (the wait representation of every regime but `lockfree`). The entry holds everything
//!   the executor touches (the whole kernel, or under `fine` the objects the
//!   resolvers held, `hold.rs`), so "take" pops the head, "wait" takes a
//!   partner already waiting on the other side or appends, and every update
//!   of a reply object succeeds at once.
//! * `lockfree`'s CAS words (`lockfree/ipc.rs`): the endpoint's
//!   `DualQueue`, the notification's `SignalStack` and the reply word, where
//!   "wait" may find that a partner arrived meanwhile and an update may have
//!   to retry.
//!
//! The executor follows the stricter protocol of the two (the lock-free
//! one, see `crate::lockfree`): a thread about to wait is prepared as
//! blocked *before* it is published ([`Exec::running`]) and restored if a
//! partner turned up instead; a caller is recorded in the reply object
//! before the receiver is woken. Under [`Queues`] the extra steps are plain
//! stores to objects the entry holds.

use granule_sync::lockfree::Side;

use crate::abi::Word;
use crate::ipc::Msg;
use crate::object::endpoint::EpState;
use crate::object::reply::ReplyState;
use crate::object::{Endpoint, Notification, Ref, Reply, Tcb};
use crate::state::Ctx;
use crate::waits::{Queues, Waits};

/// The side of an endpoint on which senders wait.
pub(crate) const SENDERS: Side = Side::A;
/// The side of an endpoint on which receivers wait.
pub(crate) const RECEIVERS: Side = Side::B;

/// How the executor reaches wait representation `W` (see the module
/// documentation).
pub(crate) trait Exec<W: Waits> {
    /// The executor runs on objects the general path's resolvers held and
    /// read first (`syscall.rs`: their lock set offered, a stall requested
    /// where needed). `false`: it takes what it needs itself, by
    /// compare-and-swap, and a whole entry runs it straight after decoding.
    const RESOLVED: bool = true;

    /// Capabilities may be transferred and bound notifications served here:
    /// a whole entry (under `fine`, the resolvers stopped a shared entry
    /// that would need either, `hold.rs`).
    fn whole(&self) -> bool;

    /// Take the oldest thread waiting on `side` of `ep`.
    fn take(&self, ctx: &mut Ctx<'_, W>, ep: Ref<Endpoint>, side: Side) -> Option<Ref<Tcb>>;

    /// Make `me` (prepared as blocked) wait on `side` of `ep`; `Some`: a
    /// thread waiting on the other side was taken instead, and `me` does
    /// not wait.
    fn offer(&self, ctx: &mut Ctx<'_, W>, ep: Ref<Endpoint>, side: Side, me: Ref<Tcb>) -> Option<Ref<Tcb>>;

    /// A sender now waits on `ep` with `msg` (a whole entry).
    #[inline(always)]
    fn sender_waits(&self, _ctx: &mut Ctx<'_, W>, _ep: Ref<Endpoint>, _msg: Msg) {}

    /// A sender was taken from `ep` (a whole entry).
    #[inline(always)]
    fn sender_taken(&self, _ctx: &mut Ctx<'_, W>, _ep: Ref<Endpoint>) {}

    /// Decide on reply object `r`: `f` sees its state and returns the state
    /// to install (`None`: leave it). Returns the state `f` decided on.
    fn reply_update(
        &self,
        ctx: &mut Ctx<'_, W>,
        r: Ref<Reply>,
        f: impl FnMut(ReplyState) -> Option<ReplyState>,
    ) -> ReplyState;

    /// Set reply object `r`, owned by this entry (see `ReplyWord`).
    fn reply_set(&self, ctx: &mut Ctx<'_, W>, r: Ref<Reply>, st: ReplyState);

    /// `t` (taken by this entry, made runnable) runs again; `core` and
    /// `prio` are its home core and priority, which the caller read from
    /// its TCB as it made `t` runnable.
    fn wake_on(&self, ctx: &mut Ctx<'_, W>, t: Ref<Tcb>, core: usize, prio: u8);

    /// Hand `msg` from `src` to `dst` (with capabilities only in a whole
    /// entry).
    fn transfer(&self, ctx: &mut Ctx<'_, W>, src: Ref<Tcb>, dst: Ref<Tcb>, msg: Msg, ep: Option<Ref<Endpoint>>);

    /// `me`, this core's current thread, stops (`false`) or goes on
    /// (`true`) running, around its publication as blocked.
    #[inline(always)]
    fn running(&self, _ctx: &mut Ctx<'_, W>, _me: Ref<Tcb>, _on: bool) {}

    /// The word of `me`'s bound notification, if it is active (consumed).
    #[inline(always)]
    fn poll_bound(&self, ctx: &mut Ctx<'_, W>, me: Ref<Tcb>) -> Option<Word> {
        let n = ctx.get(me)?.bound?;
        self.poll(ctx, n)
    }

    /// Take the oldest waiter of `n` before its bound thread is considered
    /// (a whole entry; otherwise [`Exec::signal`] serves waiters).
    fn pop_waiter(&self, ctx: &mut Ctx<'_, W>, n: Ref<Notification>) -> Option<Ref<Tcb>>;

    /// Outside a whole entry, a signal to the notification bound to `t`:
    /// claim `t` if it waits in an endpoint receive (`true`: ours, its
    /// receive to be ended with the badge; `lockfree/bound.rs`). A whole
    /// entry takes it out of its queue itself ([`Ctx::signal`]).
    #[inline(always)]
    fn claim_bound(&self, _ctx: &mut Ctx<'_, W>, _t: Ref<Tcb>) -> bool {
        false
    }

    /// Signal `n` with `badge`: take its oldest waiter, or accumulate.
    fn signal(&self, ctx: &mut Ctx<'_, W>, n: Ref<Notification>, badge: Word) -> Option<Ref<Tcb>>;

    /// Consume `n`'s word if it is active.
    fn poll(&self, ctx: &mut Ctx<'_, W>, n: Ref<Notification>) -> Option<Word>;

    /// Consume `n`'s word if it is active (`Some`), else make `me`
    /// (prepared as blocked) wait on it.
    fn wait(&self, ctx: &mut Ctx<'_, W>, n: Ref<Notification>, me: Ref<Tcb>) -> Option<Word>;
}

/// The objects' own queues and reply fields, every object the executor
/// touches held by the entry (see the module documentation). Every wait
/// representation has them (under `lockfree` they stay empty), so the
/// general code may run on them for any.
impl<W: Waits> Exec<W> for Queues {
    #[inline(always)]
    fn whole(&self) -> bool {
        // Under `fine` this executor also runs in shared entries: it may act
        // as in a whole entry because capability transfer and a bound
        // thread's wake-up (the only steps that differ) made the entry
        // exclusive (`hold.rs`) before it got here.
        true
    }

    #[inline(always)]
    fn take(&self, ctx: &mut Ctx<'_, W>, ep: Ref<Endpoint>, side: Side) -> Option<Ref<Tcb>> {
        let want = if side == SENDERS { EpState::Send } else { EpState::Recv };
        let e = ctx.get(ep)?;
        if e.state != want {
            return None;
        }
        let head = e.queue.head;
        let t = ctx.ref_at::<Tcb>(head)?;
        ctx.ep_remove(ep, t);
        Some(t)
    }

    #[inline(always)]
    fn offer(&self, ctx: &mut Ctx<'_, W>, ep: Ref<Endpoint>, side: Side, me: Ref<Tcb>) -> Option<Ref<Tcb>> {
        let other = if side == SENDERS { RECEIVERS } else { SENDERS };
        if let Some(t) = self.take(ctx, ep, other) {
            return Some(t);
        }
        let state = if side == SENDERS { EpState::Send } else { EpState::Recv };
        ctx.ep_append(ep, me, state);
        None
    }

    #[inline(always)]
    fn reply_update(
        &self,
        ctx: &mut Ctx<'_, W>,
        r: Ref<Reply>,
        mut f: impl FnMut(ReplyState) -> Option<ReplyState>,
    ) -> ReplyState {
        let Some(x) = ctx.get(r) else { return ReplyState::Empty };
        let st = match (x.caller, x.receiver) {
            (Some(c), _) => ReplyState::Caller(c, x.grant),
            (None, Some(t)) => ReplyState::Receiver(t),
            (None, None) => ReplyState::Empty,
        };
        if let Some(new) = f(st) {
            self.reply_set(ctx, r, new);
        }
        st
    }

    #[inline(always)]
    fn reply_set(&self, ctx: &mut Ctx<'_, W>, r: Ref<Reply>, st: ReplyState) {
        let Some(x) = ctx.get(r) else { return };
        (x.caller, x.receiver) = match st {
            ReplyState::Empty => (None, None),
            ReplyState::Receiver(t) => (None, Some(t)),
            ReplyState::Caller(c, grant) => {
                x.grant = grant;
                (Some(c), None)
            }
        };
    }

    #[inline(always)]
    fn wake_on(&self, ctx: &mut Ctx<'_, W>, t: Ref<Tcb>, core: usize, prio: u8) {
        ctx.wake_on(t, core, prio);
    }

    #[inline(always)]
    fn transfer(&self, ctx: &mut Ctx<'_, W>, src: Ref<Tcb>, dst: Ref<Tcb>, msg: Msg, ep: Option<Ref<Endpoint>>) {
        ctx.transfer(src, dst, msg, ep);
    }

    #[inline(always)]
    fn pop_waiter(&self, ctx: &mut Ctx<'_, W>, n: Ref<Notification>) -> Option<Ref<Tcb>> {
        let head = ctx.get(n)?.queue.head;
        let w = ctx.ref_at::<Tcb>(head)?;
        ctx.ntfn_remove(n, w);
        Some(w)
    }

    #[inline(always)]
    fn signal(&self, ctx: &mut Ctx<'_, W>, n: Ref<Notification>, badge: Word) -> Option<Ref<Tcb>> {
        // Waiters were served by `pop_waiter` (a whole entry's order).
        if let Some(x) = ctx.get(n) {
            x.word |= badge;
            x.active = true;
        }
        None
    }

    #[inline(always)]
    fn poll(&self, ctx: &mut Ctx<'_, W>, n: Ref<Notification>) -> Option<Word> {
        ctx.get(n)?.active.then(|| ctx.take_signal(n))
    }

    #[inline(always)]
    fn wait(&self, ctx: &mut Ctx<'_, W>, n: Ref<Notification>, me: Ref<Tcb>) -> Option<Word> {
        if let Some(w) = self.poll(ctx, n) {
            return Some(w);
        }
        let q = ctx.get(n)?.queue;
        let q = ctx.q_append(q, me.index());
        if let Some(x) = ctx.get(n) {
            x.queue = q;
        }
        None
    }
}
