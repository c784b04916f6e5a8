//! The I/O APIC: device lines routed to a core's local APIC. Its registers
//! are reached through a select register (offset 0) and a window (0x10) at
//! the address the MADT gives (normally `0xfec00000`, inside the
//! identity-mapped 4 GiB); redirection entry `n` is registers `0x10 + 2n`
//! (vector, mask bit 16) and `0x11 + 2n` (destination APIC ID in bits
//! 24..32). Lines are edge-triggered, active high, as ISA lines are.

use core::sync::atomic::{AtomicU64, Ordering};

/// The registers' base (the MADT's I/O APIC address, or the default).
static BASE: AtomicU64 = AtomicU64::new(0xfec0_0000);

/// Sets the registers' base. Boot core, before any line is routed.
pub fn set_base(base: u64) {
    BASE.store(base, Ordering::Relaxed);
}

fn write(reg: u32, value: u32) {
    let base = BASE.load(Ordering::Relaxed);
    // SAFETY: the I/O APIC's select and window registers, identity mapped;
    // the callers below write only redirection entries of lines this
    // platform routes.
    unsafe {
        (base as *mut u32).write_volatile(reg);
        ((base + 0x10) as *mut u32).write_volatile(value);
    }
}

fn read(reg: u32) -> u32 {
    let base = BASE.load(Ordering::Relaxed);
    // SAFETY: as in `write`; reading an entry has no side effect.
    unsafe {
        (base as *mut u32).write_volatile(reg);
        ((base + 0x10) as *const u32).read_volatile()
    }
}

/// Routes line `gsi` to `vector` on the core with `apic_id`, masked.
pub fn route(gsi: u32, vector: u8, apic_id: u32) {
    write(0x11 + 2 * gsi, apic_id << 24);
    write(0x10 + 2 * gsi, 1 << 16 | u32::from(vector));
}

/// Masks (`true`) or unmasks line `gsi`.
pub fn set_masked(gsi: u32, masked: bool) {
    let low = read(0x10 + 2 * gsi);
    write(0x10 + 2 * gsi, if masked { low | 1 << 16 } else { low & !(1 << 16) });
}
