//! # granule-hosted: the kernel's platform on Linux
//!
//! The kernel (`granule-kernel`) knows nothing of Linux. It asks a platform
//! to be its hardware: cores that enter it on traps and interrupts, contexts
//! to switch between, interrupt lines, a cycle counter. This crate is that
//! platform, built from OS threads and coroutines, so the kernel's locking can
//! be measured with real cores racing for real cache lines.
//!
//! **Cores** ([`core`](crate::core)) are OS threads, one per simulated core,
//! each pinned to a distinct CPU, taken in the order of [`placement`]. A core's thread stack is its kernel stack;
//! its loop *is* the kernel's entry and exit path: resume the chosen user
//! context, take its trap, call the kernel, and perform the returned
//! `ExitPlan` — ring other cores, unmask interrupt lines, create contexts —
//! only after the kernel returned, that is, after its lock was released.
//!
//! **User threads** ([`thread`]) are stackful coroutines (`corosensei`). A
//! system call is a yield that carries the four argument words; results are in
//! the thread's IPC buffer, as the kernel ABI says. Any core may resume any
//! context — threads migrate when the kernel moves them — but never two at
//! once: the [`context`] table gives each context one owning core, handed
//! over on request, which is what makes a coroutine safe to move between OS
//! threads (the full contract is in `context.rs`). A user thread that panics
//! is a *fault*: the kernel stops the thread and the machine runs on.
//!
//! **Interrupts** ([`doorbell`], [`irq`]). Each core has a doorbell: a word of
//! pending reasons (IPI, device interrupt, timer, shutdown, context hand-off)
//! that other threads set, and a wake-up for a core that parked in its idle
//! loop. A core samples its doorbell at kernel entry and while idle:
//! preemption happens at kernel entry only (a documented limitation — a user
//! thread computing without system calls is not interrupted). Device lines
//! are masked from delivery until the handler acknowledges them.
//!
//! **Time** ([`clock`]) is the CPU's cycle counter, calibrated to nanoseconds
//! once per process. The idle loop counts its cycles, which gives each core's
//! utilisation, as in the seeds' measurements.
//!
//! **The machine** ([`Machine`]) boots the kernel, starts the root task on
//! core 0 — a Rust closure that owns all untyped memory and builds the
//! experiment through system calls — and shuts down cleanly within a bound.
//! User programs are registered in the [`MachineConfig`] before boot; their
//! entry words are what the root task writes into a thread's `REG_PC`. A
//! device's far side may run in a core's idle loop ([`idle_work`]).

#![forbid(unsafe_op_in_unsafe_fn)]

pub mod clock;
pub mod context;
mod core;
pub mod doorbell;
pub mod idle_work;
pub mod irq;
mod machine;
pub mod nic;
pub mod placement;
pub mod thread;

pub use idle_work::IdleWork;
pub use irq::IrqWire;
pub use machine::{FaultRecord, Machine, MachineConfig, MachineError, StuckCores};
pub use thread::{ProgramFn, RootFn, UserCtx};

// Re-exported so users of the platform name the same kernel types.
pub use granule_kernel;
