//! # granule-user: user-level code of the granule kernel
//!
//! User code talks to the kernel in one way only: a *trap* carrying four
//! argument words (system call number, capability pointer, message info,
//! reply capability), with everything else — message words, capabilities to
//! send, results and error codes — in the thread's IPC buffer. This crate
//! wraps that ABI (`granule_kernel::abi`) for programs:
//!
//! * [`Trap`](trap::Trap) is the platform's half: how a thread enters the
//!   kernel and where its IPC buffer is. The hosted platform's trap is a
//!   coroutine yield (feature `hosted`, on by default); a bare-metal one would
//!   be a `syscall` instruction.
//! * [`Env`](env::Env) is the program's half: one safe method per system call
//!   (send, call, recv, reply_recv, signal, wait, poll, yield…) and per object
//!   invocation (untyped retype; CNode copy, mint, move, delete, revoke; TCB
//!   configure, priority, affinity, suspend, resume, registers; IRQ handlers;
//!   frames), each returning `Result<_, Error>` with seL4's error codes. It
//!   reissues a call when the kernel asks for a restart, so programs never see
//!   the kernel's event-based restarts.
//! * [`Allocator`](alloc::Allocator) is the root task's bookkeeping of empty
//!   slots and untyped memory.
//! * [`pingpong`] holds the programs of the IPC experiments: a client that
//!   `Call`s and a server that answers with `ReplyRecv` after an exponentially
//!   distributed busy delay; [`hosted`] boots them on the hosted platform and
//!   samples their counters.
//! * The key-value macrobenchmark's programs: [`net`] (the NIC driver and a
//!   network stack per application, over Synthesis queues and shared frames),
//!   [`resp`] (the Redis protocol, a Redis-compatible store and its
//!   commands), [`ycsb`] (the YCSB core workload generator and the Redis
//!   binding's command sequences) and [`kv`] (the whole system: its root task,
//!   KV servers and load clients, booted on the hosted platform).
//!
//! **The user-program rule of the hosted platform.** A hosted user thread is
//! a coroutine that may be resumed by a different OS thread after every
//! system call (when the kernel migrates it). A program must therefore not
//! keep, across a system call, anything tied to the OS thread it ran on: a
//! reference into a thread-local (e.g. `rand::thread_rng()`), a guard of an
//! OS-thread-affine lock, a thread id. Programs here seed their own
//! generators and keep all their state on their stack.
//!
//! **Features.** Without `std` the crate is `no_std` (it needs `alloc`) and
//! holds what runs on any platform: [`trap`], [`env`](mod@env), [`alloc`],
//! [`build_status`], [`subsys`] and [`pingpong`] — the bare-metal platform
//! runs the same ping-pong programs through its own [`Trap`]. Feature `std`
//! adds the key-value programs ([`net`], [`resp`], [`ycsb`]), which use the
//! standard library's hash maps, `Arc` and error trait; feature `hosted`
//! (default, implies `std`) adds the hosted trap and what boots experiments
//! on the hosted platform ([`hosted`], [`kv`], `buildload`, `manage_load`).

#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_op_in_unsafe_fn)]

// The `alloc` crate under another name: `alloc` is the root task's
// allocator module below.
extern crate alloc as alloc_crate;

pub mod alloc;
pub mod build_status;
#[cfg(feature = "hosted")]
pub mod buildload;
pub mod env;
#[cfg(feature = "hosted")]
pub mod hosted;
#[cfg(feature = "hosted")]
pub mod kv;
#[cfg(feature = "hosted")]
pub mod manage_load;
#[cfg(feature = "std")]
pub mod net;
pub mod pingpong;
#[cfg(feature = "std")]
pub mod resp;
pub mod subsys;
pub mod trap;
#[cfg(feature = "std")]
pub mod ycsb;

pub use alloc::Allocator;
pub use env::{CPtr, Env, Received, NULL};
pub use trap::Trap;
