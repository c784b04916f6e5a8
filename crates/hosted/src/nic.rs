//! The virtual network card: descriptor rings, a doorbell register and an
//! interrupt line.
//!
//! A real NIC and its driver share *rings* of descriptors in memory: the
//! driver posts transmit descriptors and writes a doorbell register; the card
//! posts received packets and raises its interrupt. This device is that, with
//! the packets' bytes left to its users: a descriptor is one `u64` word (the
//! driver and the far side agree on what it names — a buffer of a packet pool
//! in shared frames, see `granule_user::net`), so the platform stays ignorant
//! of packet formats.
//!
//! * **Receive ring** (far side → driver): granule-sync's single-producer
//!   single-consumer Synthesis queue. The far side [`Nic::deliver`]s and then
//!   [`Nic::interrupt`]s; the driver [`Nic::take_received`]s in its handler.
//! * **Transmit ring** (driver → far side): the same kind of queue. The
//!   driver [`Nic::post`]s and then writes the doorbell ([`Nic::kick`]),
//!   which hands the ring to the far side's [`FarSide::transmit`].
//! * **The far side** is what the cable plugs into: the loopback "virtual
//!   network processor" of `granule kv` (which runs inside the kick, on the
//!   driver's core, like the seeds' network processor on core 0) or the TCP
//!   sockets of `granule serve` (an OS thread outside the machine).
//!
//! The interrupt line is an [`IrqWire`] registered in the
//! [`MachineConfig`](crate::MachineConfig) before boot, so the card can be
//! built (and handed to user programs) before the machine exists.

use std::sync::{Arc, OnceLock};

use granule_sync::lockfree::{Full, SpscQueue};

use crate::irq::IrqWire;

/// What the card's cable is plugged into.
pub trait FarSide: Send + Sync {
    /// The driver wrote the transmit doorbell: take what `nic`'s transmit
    /// ring holds ([`Nic::take_transmitted`]).
    fn transmit(&self, nic: &Nic);
}

/// A virtual network card.
pub struct Nic {
    rx: SpscQueue,
    tx: SpscQueue,
    irq: IrqWire,
    far: OnceLock<Arc<dyn FarSide>>,
}

impl std::fmt::Debug for Nic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nic")
            .field("line", &self.irq.line())
            .field("rx", &self.rx.len())
            .field("tx", &self.tx.len())
            .finish_non_exhaustive()
    }
}

impl Nic {
    /// A card with rings of `slots` descriptors each, interrupting on `irq`.
    pub fn new(slots: usize, irq: IrqWire) -> Self {
        Self { rx: SpscQueue::new(slots), tx: SpscQueue::new(slots), irq, far: OnceLock::new() }
    }

    /// Plug the cable in (once; later calls are ignored and return false).
    pub fn connect(&self, far: Arc<dyn FarSide>) -> bool {
        self.far.set(far).is_ok()
    }

    /// The interrupt line.
    pub fn line(&self) -> usize {
        self.irq.line()
    }

    /// Descriptors each ring holds.
    pub fn ring_slots(&self) -> usize {
        self.rx.capacity()
    }

    // ----- the far side ---------------------------------------------

    /// Put a received packet on the receive ring (the far side is the only
    /// producer). `Err` when the ring is full: the packet is not taken.
    pub fn deliver(&self, desc: u64) -> Result<(), Full> {
        self.rx.put(desc)
    }

    /// Raise the card's interrupt line (after delivering).
    pub fn interrupt(&self) {
        self.irq.raise();
    }

    /// The next descriptor the driver posted for transmission.
    pub fn take_transmitted(&self) -> Option<u64> {
        self.tx.get()
    }

    // ----- the driver -----------------------------------------------

    /// The next received packet (the driver is the only consumer).
    pub fn take_received(&self) -> Option<u64> {
        self.rx.get()
    }

    /// Post a packet for transmission (the driver is the only producer).
    pub fn post(&self, desc: u64) -> Result<(), Full> {
        self.tx.put(desc)
    }

    /// Write the transmit doorbell: the far side takes the posted packets.
    /// Without a far side the packets stay on the ring.
    pub fn kick(&self) {
        if let Some(far) = self.far.get() {
            far.transmit(self);
        }
    }
}
