//! # granule-model: how far one big lock scales
//!
//! Two cores cannot show where a big kernel lock stops scaling; a model
//! can, if it is trustworthy. This crate is that model, in three parts that
//! check each other.
//!
//! **The analytic model** ([`analytic`]). The seeds model a big lock as a
//! *machine repairman* (seed 001 §4): `n` cores each think for a mean time
//! `a` outside the lock, then queue for the one lock, which serves a core for
//! a mean time `s`. The finite-source queue gives the probability of each
//! queue length, the lock's throughput `X(n) = (1 − P_0)/s`, its utilisation,
//! the mean number of cores at the lock and their response time, and the
//! knee `n* = 1 + a/s` past which adding cores adds nothing. The seeds assume
//! exponential service; a fixed kernel path is closer to constant, and the
//! exact finite-source M/G/1 solution (Takács) is here for that law too.
//! Everything is computed in log space, exact for thousands of cores.
//!
//! **The fit** ([`fit`]). Measured throughput against core count determines
//! `s` and `a` by least squares (Levenberg–Marquardt), with R², residuals and
//! standard errors; or `s` alone when `a` is known. The seeds fitted their
//! Xeon's first socket this way (s = 358, a = 1999 cycles) and predicted the
//! other delays from it.
//!
//! **The simulator** ([`sim`]). The model assumes the service time does not
//! depend on who waits or where. A real lock's hand-off is a cache-line
//! transfer whose cost depends on the two cores' distance ([`topology`]:
//! the seeds' two-socket Xeon, their quad-core ARM, or this machine's
//! measured matrix), and a ticket lock's hand-off grows with the number of
//! waiters. The discrete-event simulator runs `n` cores through think and
//! critical sections under a FIFO queue lock, a ticket lock, per-core fine
//! locks or RTM elision, and measures what the model predicts. With
//! exponential think times, no hand-off cost and a FIFO lock it must agree
//! with the analytic model: [`validate`] is that check, and any reader can
//! rerun it (`granule model validate`).
//!
//! Time is unit-free throughout: `s`, `a`, latencies and simulated time are
//! in one unit (cycles, for everything granule measures), and throughput is
//! per that unit. Nothing here depends on the rest of granule.

#![forbid(unsafe_code)]
#![forbid(unsafe_op_in_unsafe_fn)]

pub mod analytic;
pub mod dist;
pub mod error;
pub mod fit;
pub mod sim;
pub mod topology;
pub mod validate;

pub use analytic::{knee, FiniteSource, Repairman, Solution};
pub use dist::{Dist, ServiceLaw};
pub use error::Error;
pub use fit::{fit, fit_service, Fit, Point};
pub use sim::{simulate, Config, LockKind, Outcome};
pub use topology::Topology;
pub use validate::{validate, Row, Validation};
