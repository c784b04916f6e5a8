//! [`RetryPolicy`]: how often an elided acquisition retries a transaction
//! after each kind of abort before it takes the lock.

use crate::profile::AbortCause;

/// Retry budgets per abort cause, and a cap on transaction attempts.
///
/// One elided acquisition runs at most `max_attempts` transactions. After an
/// abort of cause *c* it retries only if fewer than `budget(c)` earlier
/// aborts of this acquisition had cause *c* (and the cap is not reached);
/// otherwise it falls back to the lock. So if every attempt aborts with the
/// same cause *c*, an acquisition makes exactly
/// `min(budget(c) + 1, max_attempts)` attempts ([`Self::attempts_if_always`]).
/// Before each retry it waits until the lock is free (see
/// [`super::Elided`]).
///
/// `max_attempts = 0` never starts a transaction: every acquisition falls
/// back at once (a baseline that still counts fallbacks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RetryPolicy {
    /// Retries after conflict aborts.
    pub conflict: u32,
    /// Retries after capacity aborts.
    pub capacity: u32,
    /// Retries after finding the lock held inside the transaction.
    pub lock_busy: u32,
    /// Retries after any other abort (status 0, other explicit codes, debug).
    pub other: u32,
    /// Transactions attempted per acquisition, at most.
    pub max_attempts: u32,
}

impl RetryPolicy {
    /// The defaults, and why:
    ///
    /// * **conflict: 3.** A conflict means another core touched our lines;
    ///   its critical section is short (a system call), so after it finishes
    ///   a retry usually commits. A few retries, not many: repeated conflicts
    ///   mean the data really are shared and the lock serialises better
    ///   (glibc's `retry_try_xbegin` is 3 too).
    /// * **capacity: 0.** The footprint does not shrink on retry, so a
    ///   capacity abort almost always repeats (the hardware leaves the
    ///   "retry" bit clear); retrying only doubles the wasted work.
    /// * **lock busy: 3.** We abort because a core holds the fallback lock.
    ///   Since each retry first waits for the lock to be free, it usually
    ///   finds it free; a few retries keep one fallback from sending every
    ///   other core to the lock too (the "lemming effect"), and the cap keeps
    ///   a continuously held lock from starving us.
    /// * **other: 1.** Status 0 covers transient causes (an interrupt, a
    ///   timer tick) and permanent ones (a page fault, which a transaction
    ///   never resolves; an unsupported instruction). One retry absorbs the
    ///   transient kind at the cost of one wasted attempt for the permanent.
    /// * **max attempts: 5,** bounding the work thrown away per acquisition
    ///   whatever mix of causes occurs.
    pub const DEFAULT: Self = Self { conflict: 3, capacity: 0, lock_busy: 3, other: 1, max_attempts: 5 };

    /// One attempt, no retries: fall back after the first abort.
    pub const NO_RETRY: Self = Self { conflict: 0, capacity: 0, lock_busy: 0, other: 0, max_attempts: 1 };

    /// Never attempt a transaction.
    pub const NEVER: Self = Self { conflict: 0, capacity: 0, lock_busy: 0, other: 0, max_attempts: 0 };

    /// Retries allowed after aborts of `cause`.
    pub const fn budget(&self, cause: AbortCause) -> u32 {
        match cause {
            AbortCause::Conflict => self.conflict,
            AbortCause::Capacity => self.capacity,
            AbortCause::LockBusy => self.lock_busy,
            AbortCause::Other => self.other,
        }
    }

    /// Transactions one acquisition attempts when every attempt aborts with
    /// `cause`.
    pub const fn attempts_if_always(&self, cause: AbortCause) -> u32 {
        let wanted = self.budget(cause).saturating_add(1);
        if wanted < self.max_attempts {
            wanted
        } else {
            self.max_attempts
        }
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What to do next during one acquisition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// Start (another) transaction.
    Attempt,
    /// Give up and take the lock.
    Fallback,
}

/// The retry state of one acquisition (lives in registers, on the stack).
#[derive(Debug)]
pub(super) struct Attempts<'p> {
    policy: &'p RetryPolicy,
    made: u32,
    retried: [u32; 4],
}

impl<'p> Attempts<'p> {
    pub(super) fn new(policy: &'p RetryPolicy) -> Self {
        Self { policy, made: 0, retried: [0; 4] }
    }

    /// Before an attempt: may we start one? Counts it if so.
    pub(super) fn start(&mut self) -> Next {
        if self.made >= self.policy.max_attempts {
            return Next::Fallback;
        }
        self.made += 1;
        Next::Attempt
    }

    /// After an abort of `cause`: retry (spending budget) or fall back?
    pub(super) fn aborted(&mut self, cause: AbortCause) -> Next {
        let used = &mut self.retried[cause.index()];
        if *used >= self.policy.budget(cause) || self.made >= self.policy.max_attempts {
            return Next::Fallback;
        }
        *used += 1;
        Next::Attempt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Attempts made when every attempt aborts with `cause`, by the state
    /// machine itself.
    fn simulate(policy: &RetryPolicy, cause: AbortCause) -> u32 {
        let mut a = Attempts::new(policy);
        let mut n = 0;
        while a.start() == Next::Attempt {
            n += 1;
            if a.aborted(cause) == Next::Fallback {
                break;
            }
        }
        n
    }

    #[test]
    fn attempts_match_the_documented_formula() {
        let policies = [
            RetryPolicy::DEFAULT,
            RetryPolicy::NO_RETRY,
            RetryPolicy::NEVER,
            RetryPolicy { conflict: 10, capacity: 2, lock_busy: 0, other: 7, max_attempts: 4 },
            RetryPolicy { conflict: u32::MAX, capacity: 0, lock_busy: 1, other: 0, max_attempts: 3 },
        ];
        for p in &policies {
            for c in AbortCause::ALL {
                assert_eq!(simulate(p, c), p.attempts_if_always(c), "{p:?} {c:?}");
            }
        }
    }

    #[test]
    fn budgets_are_per_cause() {
        let p = RetryPolicy { conflict: 1, capacity: 0, lock_busy: 1, other: 0, max_attempts: 10 };
        let mut a = Attempts::new(&p);
        assert_eq!(a.start(), Next::Attempt);
        assert_eq!(a.aborted(AbortCause::Conflict), Next::Attempt);
        assert_eq!(a.start(), Next::Attempt);
        assert_eq!(a.aborted(AbortCause::LockBusy), Next::Attempt);
        assert_eq!(a.start(), Next::Attempt);
        assert_eq!(a.aborted(AbortCause::Conflict), Next::Fallback);
    }

    #[test]
    fn defaults_fall_back_at_once_on_capacity() {
        assert_eq!(RetryPolicy::default().attempts_if_always(AbortCause::Capacity), 1);
    }
}
