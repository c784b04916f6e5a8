//! A thread's suspension word: Synthesis's `STOPME` flag (Massalin & Pu,
//! seed `004` §4.2), with the resume that may overtake it.
//!
//! In Synthesis a thread is suspended by setting `STOPME` in its TCB with
//! one CAS and, if it runs on another CPU, interrupting that CPU; the
//! dispatcher that next meets the thread takes it off the ready queue and
//! marks it stopped. Here the word also carries what a resume needs — a
//! resume may arrive before anybody met the request, and must claim a
//! stopped thread exactly once — and the thread's home core, so a requester
//! knows whom to interrupt without reading the TCB.
//!
//! # Word layout (`AtomicU32`)
//!
//! | bits | name | meaning |
//! |---|---|---|
//! | 0 | `STOPME` | a suspend was requested and nobody has met it yet |
//! | 1 | `RESUMED` | (only with `STOPME`) a resume came after it: the two cancel out |
//! | 2 | `INACTIVE` | the thread is stopped and owned by nobody (never with `STOPME`) |
//! | 3 | `KILLED` | (with `STOPME` or `INACTIVE`) the thread is being destroyed: no resume cancels or claims it |
//! | 4 | `WAITING` | the thread waits in an endpoint's queue and has a bound notification: its signal may claim it |
//! | 5 | `GHOST` | (never with `WAITING`) a signal claimed it there: its node may still be in that queue |
//! | 6 | `MERGED` | (with `STOPME` and not `RESUMED`, or with `INACTIVE`) a second suspend came while the stop stood, or the owner stopped the thread on its own account over a request: a withdrawal leaves it ([`StopWord::withdraw`]) |
//! | 16..32 | home | the thread's core (set only while nobody else uses the word) |
//!
//! # Protocol
//!
//! | who | sees | CAS to | then |
//! |---|---|---|---|
//! | suspend | `0` | `STOPME` | interrupt the home core ([`Suspended::Requested`]) |
//! | suspend | `STOPME\|RESUMED` | `STOPME` | the request stands again ([`Suspended::Renewed`]) |
//! | suspend | `STOPME` or `INACTIVE` (and `KILLED`) | `\|MERGED` | the stop stands for two ([`Suspended::Already`]) |
//! | withdraw ([`StopWord::withdraw`]) | `STOPME` / `INACTIVE` | as a resume | the suspender's own request is taken back; with `MERGED` nothing changes |
//! | resume | `INACTIVE` | `0` | the caller owns the thread: make it runnable ([`Resumed::Claimed`]) |
//! | resume | `STOPME` | `STOPME\|RESUMED` | the request is cancelled ([`Resumed::Cancelled`]) |
//! | owner ([`StopWord::meet`]) | `STOPME\|RESUMED` | `0` | the thread goes on |
//! | owner | `STOPME` | `INACTIVE` | after stopping the thread (release) |
//! | owner ([`StopWord::stop`]) | anything | `INACTIVE` (`\|MERGED` over `STOPME`) | after stopping the thread on its own account (release) |
//! | kill ([`StopWord::kill`]) | `0` | `STOPME\|KILLED` | interrupt the home core ([`Killed::Requested`]) |
//! | kill | `INACTIVE` | `INACTIVE\|KILLED` | the thread stays stopped ([`Killed::Stopped`]) |
//! | resume | `INACTIVE\|KILLED` | `INACTIVE\|KILLED\|RESUMED` | nothing now; a withdrawal of the kill honours it |
//! | withdraw ([`StopWord::unkill`]) | `X\|KILLED` | `X`, or as a resume of `X` would | the destroy is taken back |
//!
//! The bound receiver's two bits (the kernel's `lockfree/bound.rs`) are a
//! second protocol on the same word, so that a taker's one load tells it
//! whether the thread it removed from a queue needs a second look
//! ([`StopWord::needs_look`]):
//!
//! | who | sees | CAS to | then |
//! |---|---|---|---|
//! | management, queueing a bound receiver | — | `\|WAITING` | a signal or a taker may claim it |
//! | taker ([`StopWord::claim_taken`]) | `WAITING` | `-WAITING` | the taker owns the thread ([`Claim::Owned`]) |
//! | taker | `GHOST` | `-GHOST` | the node was left behind: take again ([`Claim::Ghost`]) |
//! | signal ([`StopWord::claim_for_signal`]) | `WAITING` | `-WAITING\|GHOST` | the signaller owns the thread; its node stays queued |
//! | management ([`StopWord::clear_wait_bits`]) | — | `-WAITING-GHOST` | after taking the node out of its queue |
//!
//! The suspension bits never look at these two, and the owner's
//! publications keep them, as they keep `KILLED`.
//!
//! The owner's publications keep `KILLED`. A kill is Synthesis's destroy
//! ("mark the thread killed; the dispatcher that meets it removes it"): it
//! is a suspend that no resume can undo, which matters when a resume that
//! was checked before the destroy (on another core than the destroyer's)
//! lands after it — a
//! plain suspend would be cancelled by it and the destroyed thread would
//! run again. A kill meets a standing request only by giving up
//! ([`Killed::Already`]): the destroyer leaves the thread to a management
//! entry, which excludes every requester.
//!
//! Everything else is a no-op (suspending a stopped thread, resuming one
//! that is not suspended). The *owner* is whoever may touch the thread at
//! that moment (its core dispatching it, the core it traps on, the taker
//! that just removed it from a wait queue); the caller of [`StopWord::meet`]
//! stops the thread first and publishes `INACTIVE` second, so a resume that
//! claims it sees the stop complete (acquire/release on the word). An owner
//! whose publication loses to a resume undoes its stop and lets the thread
//! go on, exactly as if the request had been cancelled before it looked.
//!
//! Each operation is one CAS when uncontended; contention only retries.
//! The loom models (`tests/loom_lockfree.rs`) check that a request is
//! either met or cancelled, never both or neither, that a stopped thread is
//! claimed by at most one resume, and that a claimer sees the stop.

use crate::primitive::{AtomicU32, Ordering};

use super::link::Rmw;

const STOPME: u32 = 1;
const RESUMED: u32 = 2;
const INACTIVE: u32 = 4;
const KILLED: u32 = 8;
const MERGED: u32 = 64;
const FLAGS: u32 = STOPME | RESUMED | INACTIVE | KILLED | MERGED;
const WAITING: u32 = 16;
const GHOST: u32 = 32;
const HOME_SHIFT: u32 = 16;

/// What a suspend did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suspended {
    /// A new request: interrupt the thread's home core.
    Requested {
        /// The thread's home core.
        home: usize,
    },
    /// A request a resume had cancelled stands again: as good as new, but
    /// nobody needs interrupting (the thread's core has not met it yet).
    Renewed,
    /// The thread was stopped, or a request stood already: nothing changed.
    Already,
}

/// What a kill did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Killed {
    /// A new request for a thread that runs: interrupt its home core.
    Requested {
        /// The thread's home core.
        home: usize,
    },
    /// The thread was stopped, and stays stopped: no resume claims it.
    Stopped,
    /// A request stood already, or the thread was killed: nothing changed.
    Already,
}

/// What a taker that removed the thread's node from a queue found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The thread is the taker's (as far as this protocol goes: a pending
    /// suspend may still refuse it).
    Owned,
    /// A signal had claimed the thread and left the node behind: the node
    /// is gone now, and the taker takes again.
    Ghost,
}

/// What a resume did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resumed {
    /// The thread was stopped: the caller owns it now, and makes it runnable.
    Claimed,
    /// A request nobody had met is cancelled.
    Cancelled,
    /// The thread was not suspended: nothing to do.
    NotSuspended,
}

/// A thread's suspension word (see the module documentation).
#[derive(Debug)]
pub struct StopWord(AtomicU32);

impl Default for StopWord {
    fn default() -> Self {
        Self::new()
    }
}

impl StopWord {
    /// A runnable thread of core 0.
    pub fn new() -> Self {
        Self(AtomicU32::new(0))
    }

    /// CAS from `seen` to `new`, reported to `rmw`; the word now on failure.
    #[inline(always)]
    fn cas(&self, seen: u32, new: u32, rmw: &impl Fn(Rmw)) -> Result<(), u32> {
        rmw(Rmw::Cmpxchg);
        self.0.compare_exchange(seen, new, Ordering::AcqRel, Ordering::Acquire).map(|_| ())
    }

    /// Request that the thread stop.
    #[inline]
    pub fn suspend(&self, rmw: impl Fn(Rmw)) -> Suspended {
        let mut c = self.0.load(Ordering::Acquire);
        loop {
            let new = match c & FLAGS {
                0 => c | STOPME,
                f if f == STOPME | RESUMED => c & !RESUMED,
                // A stop stands (requested or met): this suspend merges in,
                // and a withdrawal of the first must leave it.
                f if f & MERGED == 0 && (f & !KILLED == STOPME || f & !KILLED == INACTIVE) => c | MERGED,
                // After a resume a kill remembered: stopped again.
                f if f == INACTIVE | KILLED | RESUMED => (c & !RESUMED) | MERGED,
                _ => return Suspended::Already,
            };
            match self.cas(c, new, &rmw) {
                Ok(()) if c & FLAGS == 0 => return Suspended::Requested { home: (c >> HOME_SHIFT) as usize },
                Ok(()) if new & MERGED != 0 => return Suspended::Already,
                Ok(()) => return Suspended::Renewed,
                Err(now) => c = now,
            }
        }
    }

    /// Mark the thread killed: a suspend that no resume undoes (the module
    /// documentation's protocol).
    #[inline]
    pub fn kill(&self, rmw: impl Fn(Rmw)) -> Killed {
        let mut c = self.0.load(Ordering::Acquire);
        loop {
            let (new, done) = match c & FLAGS & !MERGED {
                0 => (c | STOPME | KILLED, Killed::Requested { home: (c >> HOME_SHIFT) as usize }),
                INACTIVE => (c | KILLED, Killed::Stopped),
                _ => return Killed::Already,
            };
            match self.cas(c, new, &rmw) {
                Ok(()) => return done,
                Err(now) => c = now,
            }
        }
    }

    /// Take a kill back (its destroyer withdraws). `requested`: the kill
    /// made the request ([`Killed::Requested`]), which goes as a resume
    /// would take it — cancelled if nobody met it, the stopped thread
    /// claimed if somebody did. Otherwise the thread stays as the kill
    /// found it, stopped. No kill: nothing happens.
    #[inline]
    pub fn unkill(&self, requested: bool, rmw: impl Fn(Rmw)) -> Resumed {
        let mut c = self.0.load(Ordering::Acquire);
        loop {
            if c & KILLED == 0 {
                return Resumed::NotSuspended;
            }
            let (new, done) = match c & FLAGS & !KILLED {
                // A suspend merged into the kill's request: it stands.
                f if f & MERGED != 0 => (c & !KILLED, Resumed::NotSuspended),
                STOPME if requested => ((c & !KILLED) | RESUMED, Resumed::Cancelled),
                INACTIVE if requested => (c & !FLAGS, Resumed::Claimed),
                // A resume came while it was killed: it takes effect now.
                f if f == INACTIVE | RESUMED => (c & !FLAGS, Resumed::Claimed),
                _ => (c & !KILLED, Resumed::NotSuspended),
            };
            match self.cas(c, new, &rmw) {
                Ok(()) => return done,
                Err(now) => c = now,
            }
        }
    }

    /// Whether a taker that has just removed the thread's node from a queue
    /// must look again ([`StopWord::claim_taken`], then the suspension
    /// bits): one load and one bit test.
    #[inline(always)]
    pub fn needs_look(&self) -> bool {
        self.0.load(Ordering::Acquire) & (STOPME | WAITING | GHOST) != 0
    }

    /// Management queued the thread as a bound receiver: a signal may claim
    /// it from now on.
    pub fn set_waiting(&self, rmw: impl Fn(Rmw)) {
        rmw(Rmw::Cmpxchg);
        self.0.fetch_or(WAITING, Ordering::AcqRel);
    }

    /// Management took the thread's node out of its queue (or found it
    /// gone): neither bound-receiver bit stands.
    pub fn clear_wait_bits(&self, rmw: impl Fn(Rmw)) {
        rmw(Rmw::Cmpxchg);
        self.0.fetch_and(!(WAITING | GHOST), Ordering::AcqRel);
    }

    /// A taker removed the thread's node from a queue: claim the thread
    /// from a signal, or find that a signal claimed it first.
    #[inline]
    pub fn claim_taken(&self, rmw: impl Fn(Rmw)) -> Claim {
        let mut c = self.0.load(Ordering::Acquire);
        loop {
            let (new, done) = if c & GHOST != 0 {
                (c & !GHOST, Claim::Ghost)
            } else if c & WAITING != 0 {
                (c & !WAITING, Claim::Owned)
            } else {
                return Claim::Owned;
            };
            match self.cas(c, new, &rmw) {
                Ok(()) => return done,
                Err(now) => c = now,
            }
        }
    }

    /// A signal claims a waiting bound receiver (`true`: the signaller owns
    /// it, and its node stays in the queue as a ghost).
    #[inline]
    pub fn claim_for_signal(&self, rmw: impl Fn(Rmw)) -> bool {
        let mut c = self.0.load(Ordering::Acquire);
        while c & WAITING != 0 {
            match self.cas(c, (c & !WAITING) | GHOST, &rmw) {
                Ok(()) => return true,
                Err(now) => c = now,
            }
        }
        false
    }

    /// Whether the thread waits as a claimable bound receiver.
    pub fn is_waiting(&self) -> bool {
        self.0.load(Ordering::Acquire) & WAITING != 0
    }

    /// Whether a signal claimed the thread and its node may still be queued.
    pub fn is_ghost(&self) -> bool {
        self.0.load(Ordering::Acquire) & GHOST != 0
    }

    /// Whether the thread is killed ([`StopWord::kill`]).
    pub fn is_killed(&self) -> bool {
        self.0.load(Ordering::Acquire) & KILLED != 0
    }

    /// Resume the thread: claim it if stopped, cancel a request nobody met.
    /// A killed thread is neither.
    #[inline]
    pub fn resume(&self, rmw: impl Fn(Rmw)) -> Resumed {
        let mut c = self.0.load(Ordering::Acquire);
        loop {
            // A resume undoes every suspend, merged ones too.
            let (new, done) = match c & FLAGS & !MERGED {
                INACTIVE => (c & !FLAGS, Resumed::Claimed),
                STOPME => ((c & !MERGED) | RESUMED, Resumed::Cancelled),
                // Remembered for a withdrawal of the kill (`unkill`).
                f if f == INACTIVE | KILLED => ((c & !MERGED) | RESUMED, Resumed::NotSuspended),
                _ => return Resumed::NotSuspended,
            };
            match self.cas(c, new, &rmw) {
                Ok(()) => return done,
                Err(now) => c = now,
            }
        }
    }

    /// Take back a suspend whose request was the suspender's own (a
    /// withdrawal of two mutual suspends): as [`StopWord::resume`], unless
    /// another suspend merged in since (`MERGED`), which stands: then
    /// nothing changes. A kill is not a suspend's to take back.
    #[inline]
    pub fn withdraw(&self, rmw: impl Fn(Rmw)) -> Resumed {
        let mut c = self.0.load(Ordering::Acquire);
        loop {
            let (new, done) = match c & FLAGS {
                INACTIVE => (c & !FLAGS, Resumed::Claimed),
                STOPME => (c | RESUMED, Resumed::Cancelled),
                // Merged, killed, cancelled already, or running.
                _ => return Resumed::NotSuspended,
            };
            match self.cas(c, new, &rmw) {
                Ok(()) => return done,
                Err(now) => c = now,
            }
        }
    }

    /// Whether a request stands that nobody has met (cancelled or not):
    /// one load and one bit test, the owner's test before
    /// [`StopWord::meet`].
    #[inline(always)]
    pub fn pending(&self) -> bool {
        self.0.load(Ordering::Acquire) & STOPME != 0
    }

    /// Whether a request nobody has met stands, or the thread is killed
    /// (stopped or not): one load.
    #[inline(always)]
    pub fn pending_or_killed(&self) -> bool {
        self.0.load(Ordering::Acquire) & (STOPME | KILLED) != 0
    }

    /// A request nobody has met: `Some(cancelled)`.
    #[inline(always)]
    pub fn requested(&self) -> Option<bool> {
        let c = self.0.load(Ordering::Acquire);
        (c & STOPME != 0).then_some(c & RESUMED != 0)
    }

    /// The owner meets a request ([`StopWord::pending`] said so): if it
    /// was cancelled, clear it and return `true` (the thread goes on);
    /// otherwise `stop(s)` the thread — make it inactive, out of every
    /// queue — and publish it stopped (`false`). If a resume cancels the
    /// request meanwhile, `undo(s)` is run and the thread goes on (`true`).
    /// With no request at all, nothing happens (`true`).
    pub fn meet<S>(&self, s: &mut S, stop: impl FnOnce(&mut S), undo: impl FnOnce(&mut S), rmw: impl Fn(Rmw)) -> bool {
        let mut c = self.0.load(Ordering::Acquire);
        let mut stop = Some(stop);
        let mut stopped = false;
        loop {
            if c & STOPME == 0 {
                break;
            }
            if c & RESUMED != 0 {
                match self.cas(c, c & !FLAGS, &rmw) {
                    Ok(()) => break,
                    Err(now) => c = now,
                }
                continue;
            }
            if let Some(stop) = stop.take() {
                stop(s);
                stopped = true;
            }
            // Publishing is the release: the thread is touched no more.
            match self.cas(c, (c & !FLAGS) | (c & (KILLED | MERGED)) | INACTIVE, &rmw) {
                Ok(()) => return false,
                Err(now) => c = now,
            }
        }
        if stopped {
            undo(s);
        }
        true
    }

    /// Whether the thread is stopped ([`Resumed::Claimed`] would claim it).
    pub fn is_inactive(&self) -> bool {
        self.0.load(Ordering::Acquire) & INACTIVE != 0
    }

    /// The thread was made inactive (`true`: claimable by a resume) or
    /// runnable (`false`) by someone who excludes every other user of the
    /// word; any request is dropped.
    pub fn set_inactive(&self, inactive: bool) {
        let c = self.0.load(Ordering::Relaxed) & !FLAGS;
        self.0.store(if inactive { c | INACTIVE } else { c }, Ordering::Release);
    }

    /// The owner stops the thread on its own account (a fault nobody can
    /// answer) while requesters may use the word: after stopping it, publish
    /// `INACTIVE` (release) whatever was asked meanwhile. A pending request
    /// is met by this stop; a cancelled one has nothing left to cancel,
    /// since the thread stops for another reason. A kill stays. A request
    /// met this way is marked `MERGED`: the stop is the owner's own, so a
    /// withdrawal of that request ([`StopWord::withdraw`]) must leave the
    /// thread stopped (only a resume restarts it). One CAS when
    /// uncontended.
    pub fn stop(&self, rmw: impl Fn(Rmw)) {
        let mut c = self.0.load(Ordering::Relaxed);
        loop {
            let merged = if c & STOPME != 0 { MERGED } else { c & MERGED };
            match self.cas(c, (c & !FLAGS) | (c & KILLED) | merged | INACTIVE, &rmw) {
                Ok(()) => return,
                Err(now) => c = now,
            }
        }
    }

    /// A new thread of core `home`, stopped (excluding every other user of
    /// the word, as [`StopWord::set_inactive`]): whatever the word's last
    /// thread left goes, its kill too.
    pub fn reset(&self, home: usize) {
        let home = home.min(u16::MAX as usize) as u32;
        self.0.store(INACTIVE | (home << HOME_SHIFT), Ordering::Release);
    }

    /// The thread's home core.
    pub fn home(&self) -> usize {
        (self.0.load(Ordering::Acquire) >> HOME_SHIFT) as usize
    }

    /// Set the home core (excluding every other user of the word, as
    /// [`StopWord::set_inactive`]). Cores above 2^16 - 1 are not
    /// representable and saturate.
    pub fn set_home(&self, core: usize) {
        let core = core.min(u16::MAX as usize) as u32;
        let c = self.0.load(Ordering::Relaxed) & ((1 << HOME_SHIFT) - 1);
        self.0.store(c | (core << HOME_SHIFT), Ordering::Release);
    }

    /// Whether the flags are a state the protocol can reach: never
    /// `STOPME` with `INACTIVE`, `RESUMED` only with `STOPME` (or with
    /// `INACTIVE|KILLED`: a resume a withdrawn kill honours), `KILLED` only
    /// with `STOPME` or `INACTIVE`, never `WAITING` with `GHOST` or
    /// `INACTIVE`. (The word, for the message.)
    pub fn check(&self) -> Result<(), u32> {
        let c = self.0.load(Ordering::Acquire);
        let killed_ok = c & KILLED == 0 || c & (STOPME | INACTIVE) != 0;
        let resumed_ok = c & RESUMED == 0 || c & STOPME != 0 || c & (INACTIVE | KILLED) == INACTIVE | KILLED;
        let merged_ok = c & MERGED == 0 || (c & RESUMED == 0 && c & (STOPME | INACTIVE) != 0);
        let bound_ok = c & (WAITING | GHOST) != WAITING | GHOST && !(c & WAITING != 0 && c & INACTIVE != 0);
        let ok = !(c & INACTIVE != 0 && c & STOPME != 0) && resumed_ok && killed_ok && merged_ok && bound_ok;
        if ok {
            Ok(())
        } else {
            Err(c)
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn quiet(_: Rmw) {}

    #[test]
    fn suspend_meet_resume() {
        let w = StopWord::new();
        w.set_home(3);
        assert_eq!(w.suspend(quiet), Suspended::Requested { home: 3 });
        assert_eq!(w.suspend(quiet), Suspended::Already);
        assert_eq!(w.requested(), Some(false));
        let mut log = Vec::new();
        assert!(!w.meet(&mut log, |l| l.push("stop"), |l| l.push("undo"), quiet));
        assert_eq!(log, ["stop"]);
        assert!(w.is_inactive() && w.requested().is_none());
        assert_eq!(w.suspend(quiet), Suspended::Already);
        assert_eq!(w.resume(quiet), Resumed::Claimed);
        assert_eq!(w.resume(quiet), Resumed::NotSuspended);
        assert_eq!((w.home(), w.check()), (3, Ok(())));
    }

    #[test]
    fn a_resume_before_the_owner_cancels_and_a_suspend_restores() {
        let w = StopWord::new();
        assert!(matches!(w.suspend(quiet), Suspended::Requested { .. }));
        assert_eq!(w.resume(quiet), Resumed::Cancelled);
        assert_eq!(w.requested(), Some(true));
        assert_eq!(w.suspend(quiet), Suspended::Renewed);
        assert_eq!(w.requested(), Some(false));
        assert_eq!(w.suspend(quiet), Suspended::Already);
        assert_eq!(w.resume(quiet), Resumed::Cancelled);
        let mut log = Vec::new();
        assert!(w.meet(&mut log, |l| l.push("stop"), |l| l.push("undo"), quiet));
        assert!(log.is_empty() && w.requested().is_none() && !w.is_inactive());
    }

    #[test]
    fn counts_one_cas_per_uncontended_operation() {
        let w = StopWord::new();
        let n = core::cell::Cell::new(0);
        let count = |_: Rmw| n.set(n.get() + 1);
        w.suspend(count);
        w.meet(&mut (), |_| {}, |_| {}, count);
        w.resume(count);
        assert_eq!(n.get(), 3);
    }

    #[test]
    fn a_kill_is_a_suspend_no_resume_undoes() {
        let w = StopWord::new();
        w.set_home(2);
        assert_eq!(w.kill(quiet), Killed::Requested { home: 2 });
        assert_eq!((w.kill(quiet), w.suspend(quiet)), (Killed::Already, Suspended::Already));
        assert_eq!(w.resume(quiet), Resumed::NotSuspended);
        assert_eq!(w.requested(), Some(false));
        assert!(!w.meet(&mut (), |_| {}, |_| {}, quiet));
        assert!(w.is_inactive() && w.is_killed());
        assert_eq!(w.resume(quiet), Resumed::NotSuspended);
        w.stop(quiet);
        assert!(w.is_killed() && w.check().is_ok());
        // Withdrawn: the kill's own request goes as a resume would take it.
        assert_eq!(w.unkill(true, quiet), Resumed::Claimed);
        assert!(!w.is_inactive() && !w.is_killed() && w.requested().is_none());
        assert_eq!(w.unkill(true, quiet), Resumed::NotSuspended);
    }

    #[test]
    fn a_resume_of_a_killed_stopped_thread_takes_effect_if_the_kill_is_withdrawn() {
        let w = StopWord::new();
        w.set_inactive(true);
        assert_eq!(w.kill(quiet), Killed::Stopped);
        assert_eq!(w.resume(quiet), Resumed::NotSuspended);
        assert!(w.is_inactive() && w.is_killed() && w.check().is_ok());
        assert_eq!(w.resume(quiet), Resumed::NotSuspended);
        // A suspend after it stops the thread again.
        assert_eq!(w.suspend(quiet), Suspended::Already);
        assert_eq!(w.unkill(false, quiet), Resumed::NotSuspended);
        assert!(w.is_inactive() && !w.is_killed() && w.check().is_ok());
        assert_eq!(w.kill(quiet), Killed::Stopped);
        assert_eq!(w.resume(quiet), Resumed::NotSuspended);
        assert_eq!(w.unkill(false, quiet), Resumed::Claimed);
        assert!(!w.is_inactive() && !w.is_killed() && w.check().is_ok());
    }

    #[test]
    fn a_withdrawn_kill_leaves_a_stopped_thread_stopped_and_cancels_its_own_request() {
        let w = StopWord::new();
        w.set_inactive(true);
        assert_eq!(w.kill(quiet), Killed::Stopped);
        assert_eq!(w.unkill(false, quiet), Resumed::NotSuspended);
        assert!(w.is_inactive() && !w.is_killed());
        assert_eq!(w.resume(quiet), Resumed::Claimed);
        assert!(matches!(w.kill(quiet), Killed::Requested { .. }));
        assert_eq!(w.unkill(true, quiet), Resumed::Cancelled);
        assert_eq!((w.requested(), w.check()), (Some(true), Ok(())));
        // A standing request, cancelled or not, is not the kill's to take.
        assert_eq!(w.kill(quiet), Killed::Already);
        assert!(w.meet(&mut (), |_| {}, |_| {}, quiet));
        w.set_home(5);
        assert!(matches!(w.kill(quiet), Killed::Requested { home: 5 }));
        w.reset(4);
        assert!(w.is_inactive() && !w.is_killed() && w.home() == 4);
    }

    #[test]
    fn a_withdrawal_leaves_a_suspend_that_merged_in() {
        let w = StopWord::new();
        assert!(matches!(w.suspend(quiet), Suspended::Requested { .. }));
        assert_eq!(w.withdraw(quiet), Resumed::Cancelled);
        assert!(w.meet(&mut (), |_| {}, |_| {}, quiet));
        // Requested, then merged into: the withdrawal leaves both.
        assert!(matches!(w.suspend(quiet), Suspended::Requested { .. }));
        assert_eq!(w.suspend(quiet), Suspended::Already);
        assert_eq!(w.withdraw(quiet), Resumed::NotSuspended);
        assert!(!w.meet(&mut (), |_| {}, |_| {}, quiet));
        assert!(w.is_inactive() && w.check().is_ok());
        assert_eq!(w.withdraw(quiet), Resumed::NotSuspended);
        // A resume undoes every suspend.
        assert_eq!(w.resume(quiet), Resumed::Claimed);
        // Met first, then merged into: still left.
        assert!(matches!(w.suspend(quiet), Suspended::Requested { .. }));
        assert!(!w.meet(&mut (), |_| {}, |_| {}, quiet));
        assert_eq!(w.suspend(quiet), Suspended::Already);
        assert_eq!(w.withdraw(quiet), Resumed::NotSuspended);
        assert!(w.is_inactive());
        assert_eq!(w.resume(quiet), Resumed::Claimed);
        // A kill's request merged into: its withdrawal leaves the suspend.
        assert!(matches!(w.kill(quiet), Killed::Requested { .. }));
        assert_eq!(w.suspend(quiet), Suspended::Already);
        assert_eq!(w.unkill(true, quiet), Resumed::NotSuspended);
        assert_eq!((w.requested(), w.is_killed(), w.check()), (Some(false), false, Ok(())));
    }

    #[test]
    fn a_bound_receiver_is_claimed_once_and_its_ghost_collected_once() {
        let w = StopWord::new();
        assert!(!w.needs_look());
        assert_eq!(w.claim_taken(quiet), Claim::Owned);
        w.set_waiting(quiet);
        assert!(w.needs_look() && w.is_waiting());
        assert!(w.claim_for_signal(quiet));
        assert!(!w.claim_for_signal(quiet) && w.is_ghost() && w.check().is_ok());
        // The suspension protocol leaves the ghost alone.
        assert!(matches!(w.suspend(quiet), Suspended::Requested { .. }));
        assert!(!w.meet(&mut (), |_| {}, |_| {}, quiet));
        assert!(w.is_ghost() && w.is_inactive());
        assert_eq!(w.resume(quiet), Resumed::Claimed);
        assert_eq!(w.claim_taken(quiet), Claim::Ghost);
        assert_eq!(w.claim_taken(quiet), Claim::Owned);
        assert!(!w.needs_look());
        // A taker first: the signal finds nothing to claim.
        w.set_waiting(quiet);
        assert_eq!(w.claim_taken(quiet), Claim::Owned);
        assert!(!w.claim_for_signal(quiet));
        w.set_waiting(quiet);
        w.set_home(3);
        assert!(w.is_waiting() && w.home() == 3);
        w.clear_wait_bits(quiet);
        assert!(!w.is_waiting() && !w.is_ghost() && w.check().is_ok());
    }

    #[test]
    fn management_writes_keep_the_other_half() {
        let w = StopWord::new();
        w.set_inactive(true);
        w.set_home(70_000);
        assert!(w.is_inactive());
        assert_eq!(w.home(), u16::MAX as usize);
        w.set_inactive(false);
        assert_eq!(w.home(), u16::MAX as usize);
        assert_eq!(w.resume(quiet), Resumed::NotSuspended);
    }
}
