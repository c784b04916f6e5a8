//! What each core knows about itself: its number and the ring-3 entry's
//! words behind GS, and every running core's APIC ID. A leaf: the
//! interrupt handlers, the ring-3 entry and the page tables read it without
//! reaching into how the cores were started (`smp.rs`).

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::MAX_CORES;

/// Each running core's APIC ID, by core number.
static APIC_IDS: [AtomicU32; MAX_CORES] = [const { AtomicU32::new(0) }; MAX_CORES];

/// Records core `core`'s APIC ID (`smp.rs`, as it starts the core).
pub fn record_apic_id(core: usize, id: u32) {
    APIC_IDS[core].store(id, Ordering::Relaxed);
}

/// The APIC ID of core `core` (a running core).
pub fn apic_id(core: usize) -> u32 {
    APIC_IDS[core].load(Ordering::Relaxed)
}

/// The per-core words behind GS: this core's number, then the words the
/// ring-3 entry and exit use (`user.rs`: kernel stack pointer, user stack
/// pointer at entry, running context).
#[repr(C)]
struct PerCore {
    index: AtomicU64,
    kernel_rsp: AtomicU64,
    user_rsp: AtomicU64,
    context: AtomicU64,
}

static PER_CORE: [PerCore; MAX_CORES] = {
    let mut a = [const {
        PerCore {
            index: AtomicU64::new(0),
            kernel_rsp: AtomicU64::new(0),
            user_rsp: AtomicU64::new(0),
            context: AtomicU64::new(0),
        }
    }; MAX_CORES];
    let mut i = 0;
    while i < MAX_CORES {
        a[i].index = AtomicU64::new(i as u64);
        i += 1;
    }
    a
};

/// Points this core's GS base at its per-core word.
///
/// # Safety
/// Called by core `core` itself, `core < MAX_CORES`, once at its start.
pub unsafe fn set_this_core(core: usize) {
    let at = &raw const PER_CORE[core] as u64;
    // SAFETY: IA32_GS_BASE (0xc0000101) takes any canonical address; the
    // per-core word is a static.
    unsafe {
        core::arch::asm!("wrmsr", in("ecx") 0xc000_0101u32, in("eax") at as u32, in("edx") (at >> 32) as u32, options(nostack));
    }
}

/// This core's number (0 for the boot core), read through GS.
pub fn this_core() -> usize {
    let index: u64;
    // SAFETY: GS points at this core's `PerCore` (set at its start; before
    // that, at address 0, which is mapped and reads as some number).
    unsafe { core::arch::asm!("mov {}, gs:[0]", out(reg) index, options(nostack, readonly, preserves_flags)) };
    index as usize
}

/// The ring-3 context `run_user` recorded for this core (`user.rs`).
pub fn running_context() -> u64 {
    PER_CORE[this_core()].context.load(Ordering::Relaxed)
}
