//! The lock kinds the simulator knows, and what a hand-off costs under each.
//!
//! * [`LockKind::Queue`] — a FIFO queue lock (CLH, MCS). Each waiter spins on
//!   its own line; the releaser writes the successor's line, so a hand-off
//!   costs exactly one transfer from the releasing core to the acquiring one.
//!   An acquisition of a free lock by a core other than the previous holder
//!   pays one transfer from the previous holder too (the lock's line and the
//!   kernel lines it guards were last written there); the same core again
//!   pays nothing.
//! * [`LockKind::Ticket`] — a FIFO ticket lock: every waiter spins on the one
//!   `now_serving` line. A release invalidates all `k` waiting copies and the
//!   waiters' re-reads are served one after another, in no particular order;
//!   the next ticket holder gets its copy after a uniformly random number of
//!   the others. Its hand-off costs the transfers to every waiter served
//!   before it plus its own — on average `(k+1)/2` transfers, growing with
//!   the number of waiters: the non-scalable lock of Boyd-Wickizer et al.,
//!   "Non-scalable locks are dangerous" (2012), whose throughput collapses
//!   past its peak.
//! * [`LockKind::Fine`] — fine-grained locking on disjoint objects: each core
//!   takes its own lock, which no other core touches; no waiting, no
//!   transfer. The ideal the seeds' fine and RTM kernels approach on the
//!   ping-pong benchmark.
//! * [`LockKind::Rtm`] — the critical section runs as a hardware transaction
//!   that reads the fallback lock (a [`LockKind::Queue`] lock). A transaction
//!   only starts while the fallback lock is free and unqueued (a core finding
//!   it held waits for it to be free, as elision retry loops do); it commits
//!   after its service time unless it aborts — at a uniformly random point
//!   with probability `abort`, or at once when any core acquires the fallback
//!   lock (the lock word it read changes). After `retries` aborts the core
//!   takes the fallback lock. Transactions on disjoint objects never
//!   conflict with each other and pay no transfer.

use std::fmt;

use crate::error::Error;

/// How the simulated cores serialise their critical sections.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LockKind {
    /// FIFO queue lock (CLH/MCS): one transfer per hand-off.
    Queue,
    /// Ticket lock: hand-off cost grows with the number of waiters.
    Ticket,
    /// Per-core locks on disjoint objects: no shared hand-off.
    Fine,
    /// RTM elision over a queue lock.
    Rtm {
        /// Probability that a transaction aborts by itself (capacity,
        /// interrupts, …), in `[0, 1]`.
        abort: f64,
        /// Aborts a core tolerates before it takes the fallback lock.
        retries: u32,
    },
}

impl LockKind {
    /// Parse `clh`, `mcs`, `queue`, `ticket`, `fine` or `rtm` (with the RTM
    /// parameters, ignored by the other kinds).
    pub fn parse(name: &str, abort: f64, retries: u32) -> Result<Self, Error> {
        match name {
            "clh" | "mcs" | "queue" => Ok(LockKind::Queue),
            "ticket" => Ok(LockKind::Ticket),
            "fine" => Ok(LockKind::Fine),
            "rtm" => {
                if !(0.0..=1.0).contains(&abort) {
                    return Err(Error::Invalid(format!("the abort probability must be in [0, 1], got {abort}")));
                }
                Ok(LockKind::Rtm { abort, retries })
            }
            other => Err(Error::Invalid(format!("unknown lock `{other}`; known locks: clh, mcs, ticket, fine, rtm"))),
        }
    }

    /// The name used in records.
    pub fn name(&self) -> &'static str {
        match self {
            LockKind::Queue => "queue",
            LockKind::Ticket => "ticket",
            LockKind::Fine => "fine",
            LockKind::Rtm { .. } => "rtm",
        }
    }

    /// Whether all cores share one lock that hands off between them.
    pub(crate) fn shared(&self) -> bool {
        !matches!(self, LockKind::Fine)
    }
}

impl fmt::Display for LockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockKind::Rtm { abort, retries } => write!(f, "rtm(abort {abort}, retries {retries})"),
            other => f.write_str(other.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse() {
        assert_eq!(LockKind::parse("clh", 0.0, 0).unwrap(), LockKind::Queue);
        assert_eq!(LockKind::parse("mcs", 0.0, 0).unwrap(), LockKind::Queue);
        assert_eq!(LockKind::parse("ticket", 0.0, 0).unwrap(), LockKind::Ticket);
        assert_eq!(LockKind::parse("fine", 0.5, 9).unwrap(), LockKind::Fine);
        assert_eq!(LockKind::parse("rtm", 0.1, 3).unwrap(), LockKind::Rtm { abort: 0.1, retries: 3 });
        assert!(LockKind::parse("rtm", 1.5, 3).is_err());
        assert!(LockKind::parse("spin", 0.0, 0).unwrap_err().to_string().contains("known locks"));
        assert!(!LockKind::Fine.shared() && LockKind::Ticket.shared());
    }
}
