//! # granule-kernel: one microkernel, several ways to lock it
//!
//! granule is an seL4-style microkernel written to measure how coarse kernel
//! locking can be. The kernel is ordinary seL4 in miniature: **objects**
//! (threads, endpoints, notifications, CNodes, untyped memory, reply objects,
//! frames, address spaces, IRQ handlers) named by **capabilities**; synchronous
//! **IPC** through endpoints; **per-core schedulers** with 256 priorities; and
//! short **two-phase system calls**.
//!
//! **Two phases.** Every system call is first *decoded*: `decode_x` reads the
//! caller's arguments — raw words, mere allegations — and kernel state,
//! validates everything, and returns either a typed [`abi::Error`] or an
//! operation (`Op`) that names every object it will touch. Then it is
//! *executed*: `invoke_x` cannot fail. A call that must wait (a receive with no
//! sender, a remote core that must first be stalled) blocks or restarts: the
//! kernel keeps no per-thread kernel stack (event-based, one stack per core).
//!
//! **Regimes.** A regime plugs in as types: its entry and exit, its drive
//! (what an entry grants and so how it proceeds, `drive/`) and its wait
//! representation (`waits.rs`), which the general code asks at the few
//! places where representations differ. The kernel is generic over the
//! regime ([`Kernel<R: Regime>`](Kernel)) and monomorphised, so [`NoLock`]
//! (no lock code at all) and [`BigLock`] (one CLH, ticket or MCS lock around
//! the whole kernel) run exactly the same kernel work. [`LockFree`] runs the
//! IPC paths without locks, on compare-and-swap words beside the objects,
//! and everything else as serialised management operations that exclude
//! them; everything only it needs — its gate, drive, words, per-core state,
//! shared decoders and invariants — is in `lockfree/`, and the general
//! kernel names none of it.
//! [`Fine`] takes a big-reader lock's read side plus ticket locks on exactly
//! the objects an IPC, notification or interrupt entry touches, each held
//! by the decoder and resolvers just before they read it (`hold.rs`), and
//! the write side for everything else. [`Transactional`] runs each entry as one Intel RTM transaction with
//! the big lock as fallback. See `docs/regimes.md`.
//!
//! **Deferred operations.** A kernel entry never acts outside kernel memory:
//! it returns an [`ExitPlan`] — the thread to run next, the cores to
//! interrupt, the interrupt lines to acknowledge — which the platform performs
//! after the lock is released. This keeps the critical section short (and
//! makes a transactional regime possible later).
//!
//! **Memory and soundness.** Objects live in typed slabs sized at boot and
//! charged to untyped memory when retyped. A capability holds a slab index
//! plus a generation, so a stale capability is detected and never followed;
//! a reference's index is below its slab's capacity by construction and a
//! live slot's generation says it holds its object, so following one is a
//! single comparison (`object/slab.rs`).
//! Every slab slot and every core's scheduler state is an `UnsafeCell`
//! reached only through an access context (`Ctx`) that exists while the regime
//! grants its core access; the context hands out one `&mut` at a time, so the
//! borrow checker rules out aliasing within a core, and the regime's contract
//! rules it out between cores. No `&mut` to the whole kernel ever exists.
//!
//! **Cores.** Each core has a current thread (or its idle thread), ready
//! queues (a priority bitmap plus a FIFO per level), a pending-IPI word and an
//! idle-cycle counter. Threads run only on their affinity core and move only
//! when `TcbSetAffinity` asks. A wake-up for another core enqueues the thread
//! there and interrupts that core if it is idle or the thread outranks its
//! current one. Suspending, migrating or deleting a thread that runs on another
//! core first *stalls* that core (see `sched.rs`).
//!
//! The platform (the hosted Linux one in `granule-hosted`, a bare-metal one
//! later) calls the entry points of [`Kernel`] as a core, with that core's
//! [`CoreHandle`], and performs the returned [`ExitPlan`]. Common IPC
//! (`Call`, `ReplyRecv` to a waiting partner on the same core, and `Signal`
//! and `Wait` on a notification whose waiter, if any, waits for the same
//! core) takes a fast path: the one decoder, then guard checks and a point of
//! no return (`fastpath.rs`); where the guards decline, the general path takes the
//! call. `lockfree`'s shared path has its own for `Call` and `ReplyRecv`,
//! whose point of no return is the compare-and-swap that takes the partner
//! (`lockfree/fastpath.rs`). The kernel path is the big lock's hold time, so it is measured in
//! instructions (`granule ipc --instructions`; `docs/kernel.md`).
//!
//! Source map: `abi.rs` (the user/kernel ABI), `kernel.rs` (boot and entry
//! points), `state.rs` (kernel state and the access context, generic over
//! the wait representation without naming its trait, so that `waits.rs`
//! can name the context), `boot.rs` (the root thread and its objects),
//! `sched/`
//! (`core_state.rs`: a core's scheduler state as data; `mod.rs`: the
//! scheduling), `decode.rs` (the one decoder), `syscall.rs` (the one
//! system-call handler: decode → resolve and lock set → execute or
//! invoke), `rendezvous.rs` (the one executor, `Ctx::execute`),
//! `fastpath.rs`,
//! `ipc.rs` (the resolvers), `object/*.rs` (one file per object type, with
//! its invocations; the TCB as data is `thread.rs`), `regime/*.rs`,
//! `lockfree/*.rs` (the `lockfree` regime, whole), `exit.rs`, `error.rs` (error
//! conventions), `invariants.rs`. Plain values that cross modules live in
//! leaf files that import nothing above them: `args.rs` (what an entry is
//! given), `config.rs`, `ids.rs` (`ThreadId`, `ObjectId`), `outcome.rs`,
//! `introspect.rs`, `counter.rs`; so no two kernel files import each other
//! in a circle.
//! Design notes and deviations from seL4: `docs/kernel.md`,
//! `docs/lockfree-kernel.md`.

#![no_std]
#![forbid(unsafe_op_in_unsafe_fn)]

extern crate alloc;

pub mod abi;
mod args;
mod boot;
mod config;
mod counter;
mod decode;
mod drive;
mod error;
mod exec;
pub mod exit;
mod fastpath;
mod fault;
mod hold;
mod ids;
mod introspect;
mod invariants;
mod ipc;
mod kernel;
mod lockfree;
mod object;
mod outcome;
mod rendezvous;

pub mod regime;
mod sched;
mod spin;
mod state;
mod subsys;
mod syscall;
pub mod translation;
mod violation;
mod waits;

pub use abi::{Error, IpcBuffer, MessageInfo, Word};
pub use args::{FaultKind, SyscallArgs};
pub use config::{BootConfig, BootError};
pub use exit::{CoreMask, ExitPlan, IrqMask, StartInfo};
pub use ids::ThreadId;
pub use introspect::{BootInfo, CoreStats, KlogCounts, ThreadInfo, ThreadStatus};
pub use kernel::{CoreHandle, Kernel};
pub use regime::{
    BigLock, CountingLockFree, Fine, FineOptions, LockFree, LockSet, LockTarget, NoLock, Regime, RmwCounts,
    Transactional,
};
pub use subsys::SubsystemLocking;
pub use translation::{SpaceId, Translation, Translations};
pub use violation::InvariantViolation;
