//! x86 I/O ports: the serial line, QEMU's debug-exit device.

use core::arch::asm;

/// Writes `value` to I/O port `port`.
///
/// # Safety
/// `port` must be a device register whose write of `value` has no effect
/// on memory the program relies on (the serial line, the debug-exit port).
pub unsafe fn out8(port: u16, value: u8) {
    // SAFETY: the caller vouches for the port (see the contract above).
    unsafe { asm!("out dx, al", in("dx") port, in("al") value, options(nomem, nostack, preserves_flags)) }
}

/// Writes `value` to the 32-bit I/O port `port`.
///
/// # Safety
/// As for [`out8`].
pub unsafe fn out32(port: u16, value: u32) {
    // SAFETY: the caller vouches for the port (see the contract above).
    unsafe { asm!("out dx, eax", in("dx") port, in("eax") value, options(nomem, nostack, preserves_flags)) }
}

/// Reads I/O port `port`.
///
/// # Safety
/// `port` must be a device register whose read has no effect on memory the
/// program relies on.
pub unsafe fn in8(port: u16) -> u8 {
    let value: u8;
    // SAFETY: the caller vouches for the port (see the contract above).
    unsafe { asm!("in al, dx", out("al") value, in("dx") port, options(nomem, nostack, preserves_flags)) }
    value
}
