//! The local APIC in xAPIC mode (memory-mapped registers at the address the
//! MADT gives, normally `0xfee00000`, inside the identity-mapped 4 GiB):
//! this core's APIC ID, enabling it, and the interrupt command register
//! that starts other cores. QEMU's TCG has no x2APIC, so xAPIC it is.

use granule_sync::cycles;

/// Default xAPIC base, used until the MADT says otherwise.
static BASE: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0xfee0_0000);

const ID: u64 = 0x20;
const EOI: u64 = 0xb0;
const LVT_TIMER: u64 = 0x320;
const TIMER_INITIAL: u64 = 0x380;
const TIMER_DIVIDE: u64 = 0x3e0;
const SPURIOUS: u64 = 0xf0;
const ICR_LOW: u64 = 0x300;
const ICR_HIGH: u64 = 0x310;
/// ICR delivery status: the previous command is still being sent.
const ICR_PENDING: u32 = 1 << 12;

/// Sets the registers' base (from the MADT). Boot core, before other cores
/// start.
pub fn set_base(base: u64) {
    BASE.store(base, core::sync::atomic::Ordering::Relaxed);
}

fn reg(off: u64) -> *mut u32 {
    (BASE.load(core::sync::atomic::Ordering::Relaxed) + off) as *mut u32
}

fn read(off: u64) -> u32 {
    // SAFETY: a local APIC register, identity mapped; reading ID, ICR or
    // the spurious vector register has no side effect.
    unsafe { reg(off).read_volatile() }
}

/// # Safety
/// Writing APIC registers signals other cores or changes this core's
/// interrupt delivery: the caller says why that is wanted.
unsafe fn write(off: u64, value: u32) {
    // SAFETY: a local APIC register, identity mapped (the caller's contract
    // covers the effect).
    unsafe { reg(off).write_volatile(value) }
}

/// This core's APIC ID.
pub fn id() -> u32 {
    read(ID) >> 24
}

/// Software-enables this core's APIC (spurious vector 0xff).
pub fn enable() {
    // SAFETY: enabling the APIC with a spurious vector; interrupts stay
    // masked (IF is clear), so nothing is delivered yet.
    unsafe { write(SPURIOUS, read(SPURIOUS) | 0x100 | 0xff) };
}

/// Waits about `cycles` time-stamp counter ticks.
pub fn delay(ticks: u64) {
    let start = cycles::now();
    while cycles::now().wrapping_sub(start) < ticks {
        core::hint::spin_loop();
    }
}

/// Signals end of interrupt (from an interrupt handler).
pub fn eoi() {
    // SAFETY: writing EOI ends the interrupt being handled on this core.
    unsafe { write(EOI, 0) };
}

/// Starts this core's timer: `vector` every `count` timer-clock ticks
/// (divide by 16), periodic.
pub fn start_timer(vector: u8, count: u32) {
    // SAFETY: the timer's vector has a handler (`irq.rs`), which only
    // records the tick.
    unsafe {
        write(TIMER_DIVIDE, 0x3);
        write(LVT_TIMER, (1 << 17) | u32::from(vector));
        write(TIMER_INITIAL, count);
    }
}

/// Sends the fixed interrupt `vector` to the core with `apic_id`.
pub fn send_ipi(apic_id: u32, vector: u8) {
    send_raw(apic_id, 0x4000 | u32::from(vector));
}

fn send_raw(apic_id: u32, low: u32) {
    // SAFETY: an interrupt to a present core (INIT and startup only to one
    // not yet started, the contract of `start_core`; fixed IPIs carry a
    // vector whose handler only records them). The ICR is written with
    // interrupts masked so that no handler's EOI falls between its halves.
    unsafe {
        let flags: u64;
        core::arch::asm!("pushfq; pop {}; cli", out(reg) flags, options(nomem));
        write(ICR_HIGH, apic_id << 24);
        write(ICR_LOW, low);
        if flags & (1 << 9) != 0 {
            core::arch::asm!("sti", options(nomem, nostack));
        }
    }
    while read(ICR_LOW) & ICR_PENDING != 0 {
        core::hint::spin_loop();
    }
}

/// INIT, then two startup IPIs at page `vector` (the trampoline at
/// `vector << 12`), the Intel MultiProcessor Specification's sequence with
/// its waits (10 ms, 200 µs), taken long for any clock of 3 GHz or less.
///
/// # Safety
/// `apic_id` is a present core that is not running, and the trampoline and
/// its hand-off words are in place.
pub unsafe fn start_core(apic_id: u32, vector: u8) {
    const MS: u64 = 3_000_000;
    send_raw(apic_id, 0x4500); // INIT, assert, level
    delay(10 * MS);
    for _ in 0..2 {
        send_raw(apic_id, 0x4600 | u32::from(vector)); // STARTUP
        delay(MS / 5);
    }
}
