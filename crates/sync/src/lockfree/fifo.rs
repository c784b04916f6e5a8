//! The intrusive FIFO of waiting threads shared by [`super::DualQueue`] and
//! [`super::SignalStack`]: the Michael–Scott queue (M. M. Michael and M. L.
//! Scott, *Simple, fast, and practical non-blocking and blocking concurrent
//! queue algorithms*, PODC 1996) without its dummy node, because the nodes
//! are the waiting threads themselves and a dequeued thread must be free to
//! wait elsewhere at once.
//!
//! The queue's head and tail live in the owner's word (its [`Ends`]), next
//! to whatever else that word holds and a tag every successful CAS bumps;
//! nodes are linked oldest to newest through the caller's link array
//! ([`super::link`]):
//!
//! * wait on an empty queue: CAS the word to `head = tail = node` (the
//!   owner does this itself: it also decides what else the word says).
//! * wait behind tail `t`: read `t`'s link, re-check the word, then CAS the
//!   link from "no successor" to the node (the linearisation point), then
//!   try to swing the word's tail to the node. The tail may lag by one node;
//!   anyone who finds the tail's link non-empty swings it first (helping).
//! * take head `h` with a successor: read `h`'s link, re-check the word,
//!   CAS the word's head to the successor.
//! * take the last node `h` (`head == tail`): the dummy's job — keeping
//!   enqueuers from linking behind a node that is leaving — is done by
//!   *closing* `h`'s link with a CAS ("no successor" → "closed"). The
//!   closer owns `h`; it (or anyone who finds the tail closed) then CASes
//!   the word to empty. An enqueuer's CAS on a closed link fails.
//!
//! Links carry their own tag: an enqueuer that read the tail's link,
//! re-checked the word, and then lost the tail (taken, and waiting
//! elsewhere behind a fresh link) fails its link CAS.
//!
//! So an uncontended wait on an empty queue is one CAS (the owner's), a
//! take of a non-last waiter one CAS; a wait behind others and a take of
//! the last waiter are two.
//!
//! Taking is the claim: the node leaves the only word naming it by the CAS
//! that takes it (for the last node, by the close; the word's emptying
//! after it is bookkeeping anyone may finish).

use super::link::{self, relink, Link, Links, Rmw, NIL};
use crate::primitive::{AtomicU64, Ordering};

/// A word holding a FIFO's ends (and maybe more), as seen by one load.
pub(crate) trait Ends: Copy + PartialEq {
    /// The oldest waiter, `NIL` if none.
    fn head(self) -> u32;
    /// The newest waiter (may lag by one), `NIL` if none.
    fn tail(self) -> u32;
    /// The word after a successful CAS from this one with waiters
    /// `head ..= tail` (`NIL, NIL`: none), the rest kept, the tag bumped.
    fn ends(self, head: u32, tail: u32) -> Self;
}

/// The atomic word holding a FIFO's ends.
pub(crate) trait Cell {
    /// The decoded word.
    type W: Ends;
    /// `Acquire` load.
    fn load(&self) -> Self::W;
    /// The instruction [`Cell::cas`] is.
    const RMW: Rmw;
    /// `AcqRel` CAS from `seen` to `new`; the word now if it failed.
    fn cas(&self, seen: Self::W, new: Self::W) -> Result<(), Self::W>;
}

/// [`Cell::cas`], accounted to `links`.
#[inline(always)]
pub(crate) fn cas<'a, C: Cell, L: Links<'a>>(cell: &C, links: &L, seen: C::W, new: C::W) -> Result<(), C::W> {
    links.rmw(C::RMW);
    cell.cas(seen, new)
}

/// A CAS of `link` (a node's link word, found once by the caller for its
/// load and this CAS) from `seen` to `new`, accounted to `links`.
#[inline(always)]
fn cas_link<'a, L: Links<'a>>(links: &L, link: &AtomicU64, seen: Link, new: u64) -> bool {
    links.rmw(Rmw::Cmpxchg);
    link.compare_exchange(seen.raw(), new, Ordering::AcqRel, Ordering::Acquire).is_ok()
}

/// What one attempt of an operation found.
pub(crate) enum Step<W> {
    /// Done: `Some(node)` taken, or `None` (now waiting).
    Done(Option<u32>),
    /// Something changed: try again with the word as it is now.
    Retry(W),
}

/// One attempt to take the head of the non-empty queue in `w`.
#[inline(always)]
pub(crate) fn take_step<'a, C, L>(cell: &C, links: &L, w: C::W) -> Step<C::W>
where
    C: Cell,
    L: Links<'a>,
{
    let h = w.head();
    let hl = links.link(h);
    let l = link::load(hl);
    // The link must be the one of `w`'s head.
    let now = cell.load();
    if now != w {
        return Step::Retry(now);
    }
    if h != w.tail() {
        if l.next == NIL || l.closed {
            // Not consistent with `w` (cannot happen): read again.
            return Step::Retry(cell.load());
        }
        return match cas(cell, links, w, w.ends(l.next, w.tail())) {
            Ok(()) => Step::Done(Some(h)),
            Err(now) => Step::Retry(now),
        };
    }
    if let Some(step) = help(cell, links, w, l) {
        return step;
    }
    // The last waiter: close its link, then empty the word.
    if cas_link(links, hl, l, l.closed()) {
        finish_close(cell, links, w);
        Step::Done(Some(h))
    } else {
        Step::Retry(cell.load())
    }
}

/// One attempt to make `node` (the caller's) wait behind the tail of the
/// non-empty queue in `w`.
#[inline(always)]
pub(crate) fn enqueue_step<'a, C, L>(cell: &C, links: &L, w: C::W, node: u32) -> Step<C::W>
where
    C: Cell,
    L: Links<'a>,
{
    let t = w.tail();
    let tl = links.link(t);
    let l = link::load(tl);
    let now = cell.load();
    if now != w {
        return Step::Retry(now);
    }
    if let Some(step) = help(cell, links, w, l) {
        return step;
    }
    relink(links.link(node), NIL);
    if cas_link(links, tl, l, l.to(node)) {
        // Linked: the node waits. Swing the tail (or let a helper).
        let _ = cas(cell, links, w, w.ends(w.head(), node));
        Step::Done(None)
    } else {
        Step::Retry(cell.load())
    }
}

/// With `l` the link of `w`'s tail: if the tail lags (`l` has a successor)
/// swing it, if the tail is closed finish its removal; then the caller
/// retries.
#[inline(always)]
fn help<'a, C: Cell, L: Links<'a>>(cell: &C, links: &L, w: C::W, l: Link) -> Option<Step<C::W>> {
    let next = if l.closed {
        w.ends(NIL, NIL)
    } else if l.next != NIL {
        w.ends(w.head(), l.next)
    } else {
        return None;
    };
    Some(Step::Retry(match cas(cell, links, w, next) {
        Ok(()) => next,
        Err(now) => now,
    }))
}

/// The closer of `w`'s last waiter empties the word, unless a helper did.
/// While the closed node is the word's only waiter nothing but a change of
/// the word's other fields (the dual queue's mark) can get in between, and
/// the closed node cannot wait anywhere again before the closer returns.
#[inline(always)]
fn finish_close<'a, C: Cell, L: Links<'a>>(cell: &C, links: &L, mut w: C::W) {
    let h = w.head();
    loop {
        match cas(cell, links, w, w.ends(NIL, NIL)) {
            Ok(()) => return,
            Err(now) if now.head() == h && now.tail() == h => w = now,
            Err(_) => return,
        }
    }
}
