//! Work a core does while it has no thread to run: a device's far side that
//! polls from the core it interrupts.
//!
//! The virtual NIC's far side (the TCP sockets of `granule serve`) could run
//! on an OS thread of its own, but on a machine where it shares a CPU with
//! the core it interrupts, every request then costs two sleeps and two
//! wake-ups: the far side's thread wakes for the socket and interrupts the
//! core, which wakes, serves, rings the doorbell, and the far side's thread
//! wakes again for the reply. Run from the core's idle loop instead, the far
//! side polls its sockets only when the core has nothing else to do — which
//! is exactly after it served what the far side delivered — and hands the
//! next request over by raising the interrupt line on its own core: no OS
//! thread changes at all. This is how a poll-mode driver shares a core with
//! its network stack (DPDK's run-to-completion model).
//!
//! The contract, for a core bound to an [`IdleWork`]:
//!
//! * when the core has no thread to run it marks itself sleeping and calls
//!   [`IdleWork::wait`] at once, instead of spinning and then parking its
//!   OS thread: the work does what is ready and waits for its own events
//!   (a far side's `epoll_wait` returns at once when a socket is ready, so
//!   spinning would only repeat polls, each one a system call);
//! * anyone who rings the core's doorbell while it sleeps calls
//!   [`IdleWork::wake`], which must make a `wait` in progress (or the next
//!   one) return promptly.

/// Work for a core's idle loop.
pub trait IdleWork: Send + Sync {
    /// Do what is ready, or wait until there may be work or until
    /// [`IdleWork::wake`]; may return early (the core looks at its doorbell
    /// and calls again).
    fn wait(&self);
    /// End a [`IdleWork::wait`] in progress, or make the next one return at
    /// once. Called from any thread.
    fn wake(&self);
}
