//! The seeds' key-value macrobenchmark on the granule kernel (seed `002`
//! §4.3, seed `001` §5.2 and Figure 6), and the server side of
//! `granule serve`.
//!
//! ```text
//!  core 0:      driver ◀──▶ virtual NIC ◀──▶ far side (loopback network or TCP)
//!  core k ≥ 1:  KV server ◀─▶ its stack          (one per core; port base+k-1)
//!               client ×2 ◀─▶ their own stacks   (YCSB load, timing every request)
//! ```
//!
//! Everything but the card is a user thread of the kernel; every arrow
//! between threads is a kernel entry or a Synthesis queue (see
//! [`crate::net`]). With one core everything shares core 0. The root task
//! ([`build`]) creates the objects — frames for the packet pool and the
//! sockets' areas, endpoints, reply objects, notifications, the card's IRQ
//! handler — and starts the threads; [`KvSystem`] is what the outside world
//! reads while it runs: per-client operation counts and latency histograms,
//! per-server request counts, and (optionally) each server's log of the bytes
//! it executed, for checking its store against a replay.

pub mod build;
pub mod client;
pub mod loopback;
pub mod machine;
pub mod server;
pub mod system;

pub use machine::{boot, KvMachine, KvSample};
pub use system::{ClientStats, KvConfig, KvSystem, Mode, ServerState};
