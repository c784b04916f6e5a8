//! The granule kernel's test platform: everything that drives a kernel
//! without a machine underneath it, so that tests can say what the user
//! threads and the cores do and then check what the kernel did.
//!
//! The kernel (`granule-kernel`) has no idea who calls it. A platform boots
//! it, keeps one [`granule_kernel::CoreHandle`] per core, enters it (system
//! calls, interrupts, ticks, IPIs, faults) and follows the exit plans it
//! returns: which thread each core runs next, which cores to interrupt. On
//! real hardware, or on `granule-hosted`'s pinned threads and coroutines,
//! that is the machine. Here the platform is a test, in two forms:
//!
//! * **One thread acts as every core** ([`sim::Sim`]): the test makes every
//!   entry itself, one at a time, in an order it chooses, acting as the user
//!   thread each core runs between entries, and the kernel's invariants are
//!   checked after every entry. The kernel's behavioural suites (its
//!   `tests/under_<regime>.rs` targets) are written this way.
//! * **One OS thread per core** ([`cores::core_loop`]): the cores run at the
//!   same time and the regime's synchronisation is what keeps the kernel
//!   whole. An [`cores::Actor`] says what each core does between entries.
//!   The kernel's stress tests run hand-written thread programs this way
//!   ([`sim::Sim::run_threads`]), after building their objects with `Sim`;
//!   `granule verify` runs generated programs this way ([`driver`]).
//!
//! Both speak to the kernel through one user-side encoder ([`encode`]): how
//! a system call or an object invocation is written into the registers and
//! the IPC buffer, and how its result is read back. Both boot from
//! [`config`], under a regime from the one list of regimes ([`regimes`]),
//! by name at run time or by type per test target.
//!
//! **`granule verify`** is the rest of the crate, and the `granule` command
//! calls it:
//!
//! * [`generate`] makes a program from a seed ([`program`] is its data);
//! * [`setup`] boots a kernel and builds the program's objects;
//! * [`driver`] runs it with one OS thread per core, the cores acting as
//!   the program's threads ([`user`]), and returns a [`record`];
//! * [`conservation`], [`linearize`] and the determinism comparison
//!   ([`check_program`]) judge the record; [`shrink`] minimises a failing
//!   program.
//!
//! Who uses it: the kernel's integration tests (a dev-dependency of
//! `granule-kernel`; `tests/common` picks the regime from the test target's
//! name), and `granule verify` in `crates/lab`, which adds the command line,
//! progress bars and records. Nothing here depends on the `granule`
//! command. `docs/verify.md` says what `granule verify` checks and what it
//! does not.

pub mod config;
pub mod conservation;
pub mod cores;
pub mod driver;
pub mod encode;
pub mod generate;
pub mod linearize;
pub mod program;
pub mod record;
pub mod regimes;
pub mod setup;
pub mod shrink;
pub mod sim;
pub mod user;

mod check;

pub use check::{applies, check_program, still_fails, Check, Finding, Options, ProgramResult, Stats, Violation};
