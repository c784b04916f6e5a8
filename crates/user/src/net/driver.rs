//! The network driver (core 0): the only thread that touches the card.
//!
//! It sleeps on one notification with two badges: [`IRQ_BADGE`], which the
//! kernel signals when the card's interrupt line fires (the card's handler
//! capability is bound to it), and [`TX_BADGE`], which stacks signal after
//! queueing packets for it. Woken, it
//!
//! * moves every packet the stacks queued onto the card's transmit ring and
//!   writes the card's doorbell;
//! * drains the card's receive ring, demultiplexing each packet **by
//!   destination port** to that port's stack (its queue, then one `Signal`
//!   of its notification per wake-up), dropping packets for unknown ports;
//!   then acknowledges the interrupt (`IrqAckIrq`) — the seeds' two kernel
//!   entries per interrupt: the notification and the acknowledgement.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use granule_hosted::nic::Nic;
use granule_sync::lockfree::{MpscQueue, SpscQueue};

use super::packet::PacketPool;
use crate::env::{CPtr, Env};
use crate::trap::Trap;

/// Notification bit: the card interrupted.
pub const IRQ_BADGE: u64 = 1;
/// Notification bit: stacks queued packets to transmit.
pub const TX_BADGE: u64 = 2;

/// Where packets for one port go.
#[derive(Clone, Debug)]
pub struct Route {
    /// The destination port.
    pub port: u16,
    /// The stack's receive queue.
    pub queue: Arc<SpscQueue>,
    /// The stack's notification.
    pub ntfn: CPtr,
}

/// Everything the driver needs (built by the root task).
#[derive(Debug)]
pub struct DriverSpec {
    /// The card.
    pub nic: Arc<Nic>,
    /// The packet buffers.
    pub pool: Arc<PacketPool>,
    /// The driver's notification (both badges arrive here).
    pub ntfn: CPtr,
    /// The card's IRQ handler capability.
    pub irq_handler: CPtr,
    /// Packets the stacks queued for transmission.
    pub from_stacks: Arc<MpscQueue>,
    /// Demultiplexing table, sorted by port.
    pub routes: Vec<Route>,
    /// Packets received for no known port (dropped), and packets a full
    /// stack queue could not take (dropped).
    pub dropped: AtomicU64,
    /// Interrupts handled.
    pub interrupts: AtomicU64,
}

/// The driver thread's program.
pub fn run<T: Trap>(env: &mut Env<T>, d: &DriverSpec) {
    let mut signal = vec![false; d.routes.len()];
    loop {
        let bits = match env.wait(d.ntfn) {
            Ok(w) => w,
            Err(e) => panic!("driver: wait: {e}"),
        };
        // Transmit first: on the loopback network it feeds the receive ring.
        let mut posted = false;
        while let Some(desc) = d.from_stacks.get() {
            while d.nic.post(desc).is_err() {
                d.nic.kick();
            }
            posted = true;
        }
        if posted {
            d.nic.kick();
        }
        if bits & IRQ_BADGE != 0 {
            d.interrupts.fetch_add(1, Ordering::Relaxed);
            while let Some(desc) = d.nic.take_received() {
                let port = d.pool.header(desc).map_or(0, |h| h.dst);
                match d.routes.binary_search_by_key(&port, |r| r.port) {
                    Ok(i) if d.routes[i].queue.put(desc).is_ok() => signal[i] = true,
                    _ => {
                        d.pool.free(desc);
                        d.dropped.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            for (i, s) in signal.iter_mut().enumerate() {
                if std::mem::take(s) {
                    if let Err(e) = env.signal(d.routes[i].ntfn) {
                        panic!("driver: signal port {}: {e}", d.routes[i].port);
                    }
                }
            }
            if let Err(e) = env.irq_ack(d.irq_handler) {
                panic!("driver: irq ack: {e}");
            }
        }
    }
}
