//! User-level networking on the granule kernel: the seeds' driver and
//! network stacks (seed `002` §4.3, seed `001` Figure 6).
//!
//! ```text
//!  app ──Call──▶ stack ──packets──▶ driver ──tx ring──▶ card ▶ far side
//!  app ◀─reply── stack ◀─packets─── driver ◀─rx ring─── card ◀ (IRQ)
//! ```
//!
//! Every arrow that crosses threads is either a kernel entry (IPC,
//! `Signal`/`Wait` on notifications, the interrupt and its acknowledgement)
//! or one of granule-sync's Synthesis queues of the matching kind carrying
//! packet descriptors (seed `004` §3.2): stack → driver is multi-producer
//! single-consumer, driver → stack and the card's rings are
//! single-producer single-consumer, the buffer free list is
//! multi-producer multi-consumer. Bytes live in shared frames: packet
//! buffers ([`packet`]) and each socket's area ([`area`]).
//!
//! * [`packet`]: the buffer pool and the packet header (ports, length, FIN).
//! * [`area`], [`socket`]: the application's side (one `Call` per send-and-
//!   receive, bytes in the shared area).
//! * [`stack`]: a network stack per application: per-connection streams,
//!   request boundaries, packetisation.
//! * [`driver`]: the card's driver (hosted platform: the virtual NIC of
//!   `granule_hosted::nic`).

pub mod area;
#[cfg(feature = "hosted")]
pub mod driver;
pub mod packet;
pub mod socket;
pub mod stack;
