//! The time-stamp counter's rate, measured against the 8254 PIT's channel
//! 2 (1,193,182 Hz, on every PC and in QEMU) over about 10 ms: what turns
//! the records' cycles into seconds. Under QEMU's software emulation the
//! counter follows the host's clock loosely, so the rate is as functional
//! as every other timing there.

use crate::port::{in8, out8};

/// The PIT's input clock, Hz.
const PIT_HZ: u64 = 1_193_182;
/// The one-shot count: about 10 ms.
const COUNT: u16 = 11_932;

/// Time-stamp-counter ticks per second.
pub fn hz() -> u64 {
    // SAFETY: port 0x61 (the PIT channel 2 gate and output, the speaker
    // bit kept off) and the PIT's command and channel 2 ports; none of them
    // touches memory.
    let ticks = unsafe {
        let gate = in8(0x61);
        out8(0x61, (gate & !0x02) | 0x01);
        // Channel 2, low then high byte, mode 0 (interrupt on terminal count).
        out8(0x43, 0b1011_0000);
        out8(0x42, COUNT as u8);
        out8(0x42, (COUNT >> 8) as u8);
        let t0 = granule_sync::cycles::now();
        // The output (bit 5) rises when the count reaches zero.
        while in8(0x61) & 0x20 == 0 {
            core::hint::spin_loop();
        }
        granule_sync::cycles::now() - t0
    };
    ticks * PIT_HZ / u64::from(COUNT)
}
