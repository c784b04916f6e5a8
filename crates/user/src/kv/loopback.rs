//! The loopback network of `granule kv`: the seeds' "virtual network
//! processor" on core 0. When the driver writes the card's transmit
//! doorbell, every posted packet is put on the receive ring as it is (its
//! destination port already names the stack it goes to) and the card
//! interrupts — all on the driver's core, inside its doorbell write.
//! (The receive ring has more slots than the pool has buffers, so it is
//! never full and nothing is dropped.)

use std::sync::Weak;

use granule_hosted::nic::{FarSide, Nic};

use super::system::KvSystem;

/// The loopback far side.
#[derive(Debug)]
pub struct Loopback {
    kv: Weak<KvSystem>,
}

impl Loopback {
    /// The loopback network of `kv`'s card.
    pub fn new(kv: Weak<KvSystem>) -> Self {
        Self { kv }
    }
}

impl FarSide for Loopback {
    fn transmit(&self, nic: &Nic) {
        let mut any = false;
        while let Some(desc) = nic.take_transmitted() {
            if nic.deliver(desc).is_err() {
                if let Some(kv) = self.kv.upgrade() {
                    if let Some(pool) = kv.pool.get() {
                        pool.free(desc);
                    }
                }
            }
            any = true;
        }
        if any {
            nic.interrupt();
        }
    }
}
