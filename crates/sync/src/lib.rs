//! # granule-sync: what a kernel locks with
//!
//! A multicore kernel has three ways to keep its shared state consistent, and
//! granule measures all of them on one kernel. This crate holds the
//! mechanisms, built and measured here before the kernel uses them.
//!
//! **Locks** ([`lock`]). A kernel lock is taken by a *core*, not by a thread:
//! every lock is built for a fixed number of cores and keeps one queue node
//! per core inside itself, each in its own cache line (seL4's layout for its
//! big kernel lock). Waiting runs a caller-supplied *spin hook*, because a
//! core that waits for the kernel lock must still answer inter-processor
//! interrupts. Test-and-test-and-set, ticket, CLH and MCS locks cover the
//! design space the seeds discuss: unfair vs FIFO, one shared line vs one line
//! per waiter.
//!
//! **Reader-writer locks** ([`rw`]). The fine-grained regime's big-reader lock
//! (per-core reader locks; a writer takes them all) and FreeBSD's
//! shared/exclusive lock with upgrade and downgrade.
//!
//! **Lock elision** ([`rtm`]). With Intel RTM a critical section can run as a
//! hardware transaction that only *reads* the lock word; two cores then run
//! the "same" critical section at once unless their data conflict. The CPU
//! must offer RTM and commit transactions; where it does not, elision refuses
//! to start instead of quietly becoming the plain lock.
//!
//! **Lock-free objects** ([`lockfree`]). Synthesis (Massalin & Pu, 1991) built
//! a kernel with no locks at all from a few compare-and-swap objects: a
//! counter, stacks, FIFO queues, lists. They are here with the same
//! operations, and with an *interference hook* between each read and its CAS,
//! so a benchmark can force exactly one retry.
//!
//! **Profiling** ([`profile`]). Every lock has a statistics type parameter.
//! [`profile::NoStats`] compiles to nothing; [`profile::Profile`] records
//! what FreeBSD's `LOCK_PROFILING` and Linux's `lock_stat` record, per
//! acquisition site.
//!
//! The crate is `no_std` + `alloc` so the kernel can use it on bare metal.
//! All atomics come from one module, [`primitive`], which `--cfg loom`
//! replaces with loom's model-checked types.

#![no_std]
#![forbid(unsafe_op_in_unsafe_fn)]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod cycles;
pub mod lock;
pub mod lockfree;
pub mod primitive;
pub mod profile;
pub mod rtm;
pub mod rw;
