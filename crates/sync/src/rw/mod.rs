//! Reader-writer locks: many cores may read at once, a writer runs alone.
//!
//! A kernel whose common paths only *read* shared structure (look up a
//! capability, check an endpoint's state) and whose rare paths rebuild it
//! (create or delete objects) wants readers never to wait for each other. Two
//! designs with opposite costs sit here, and the experiments measure both.
//!
//! **Big-reader lock** ([`BrLock`]). One ordinary kernel lock per core, each
//! in its own cache line. A reader takes only its own core's lock: in the
//! common case that is one atomic read-modify-write on a line no other core
//! touches, so readers on different cores never move a line between caches.
//! A writer takes every core's lock, in index order, so it pays `cores`
//! acquisitions and pulls every core's line. This is Linux's old `brlock`
//! (Corbet, "Big reader locks", LWN 378911) and what the seeds' fine-grained
//! seL4 wraps the whole kernel in: IPC runs under the read side (with
//! per-object ticket locks inside it), resource management under the write
//! side.
//!
//! **Shared/exclusive lock** ([`Sx`]). FreeBSD's `sx(9)`: one word holds an
//! exclusive bit, a writer-waiting bit and the number of sharers. Every reader
//! changes the shared word, so under read load its line bounces between the
//! reading cores — cheap in memory, costly in coherence traffic. In exchange
//! it offers what a brlock cannot: `try_upgrade` (sole sharer becomes the
//! writer) and `downgrade` (the writer becomes a sharer without letting another
//! writer in).
//!
//! | lock | read side | write side | readers wait for | upgrade/downgrade |
//! |---|---|---|---|---|
//! | [`BrLock`] | own core's lock (one RMW, core-local line) | all `cores` locks in order | a writer holding or acquiring their core's lock | no |
//! | [`Sx`] | CAS on the shared word | CAS on the shared word | a writer holding *or waiting* (writer preference) | yes |
//!
//! Both follow the kernel locks' conventions ([`crate::lock`]): acquisitions
//! that may wait take a spin hook, called once per spin iteration so a waiting
//! core keeps serving IPIs, and report whether they were contended. Both are
//! written in safe code over [`crate::primitive`]'s atomics; misuse (releasing
//! what one does not hold) can break the lock, never memory safety, and is
//! caught by debug assertions where the lock can see it.
//!
//! Neither lock is recursive: a core that holds the read side and asks for it
//! again can deadlock behind a waiting writer, and a reader that asks for the
//! write side deadlocks with itself.

mod brlock;
mod profiled_sx;
mod sx;

pub use brlock::BrLock;
pub use profiled_sx::ProfiledSx;
pub use sx::Sx;
#[cfg(not(loom))]
pub use sx::{RawSx, SxRwLock};
