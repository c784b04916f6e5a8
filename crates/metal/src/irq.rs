//! Interrupts: the IPI that carries an exit plan's cross-core requests, the
//! local APIC timer's tick, and the spurious vector.
//!
//! The kernel is entered one entry at a time per core, so an interrupt
//! never enters it: the handler only records the reason in this core's
//! pending word and signals end of interrupt; the core's loop takes the
//! word between entries and makes the entry (`Kernel::ipi`,
//! `Kernel::timer_tick`). A core with nothing to run waits in `hlt` for
//! the next interrupt ([`wait`]), so a cross-core wake-up really travels
//! as an interrupt from one core's exit plan to the other core.
//!
//! An interrupt from ring 3 arrives on the core's `TSS.rsp0` stack and
//! swaps GS to the per-core words. One that needs the kernel (the IPI, the
//! timer, the serial line) then takes the thread off the CPU: its
//! registers go into its context and its core's loop makes the entry, so a
//! thread computing without system calls is preempted, stalled or
//! destroyed like any other (`user.rs`). The TLB shootdown (`paging.rs`)
//! needs no entry and returns to the thread. From ring 0 the stubs save
//! the registers a call may clobber (the System V caller-saved set; the
//! target has no SSE state and no red zone) and `iretq`.

use core::arch::global_asm;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use granule_kernel::CoreMask;

use crate::{apic, ioapic, percore, serial, MAX_CORES};

/// The IPI vector.
pub const IPI_VECTOR: u8 = 0xf0;
/// The local APIC timer's vector.
pub const TIMER_VECTOR: u8 = 0xf1;
/// The spurious-interrupt vector (no end of interrupt).
pub const SPURIOUS_VECTOR: u8 = 0xff;

/// The timer's period in its clock's ticks after the divide by 16: about
/// 10 ms under QEMU (whose APIC timer counts at 1 GHz), about 100 ms on a
/// 100 MHz APIC bus.
pub const TIMER_COUNT: u32 = 625_000;

/// The serial line's vector (COM1's line, routed by the I/O APIC).
pub const SERIAL_VECTOR: u8 = 0xe4;

/// A pending word bit: the serial line interrupted (its line is masked
/// until the kernel's exit plan acknowledges it).
pub const SERIAL: u32 = 4;

/// The last byte the serial line's interrupt took from the UART (+1; 0:
/// none yet).
static SERIAL_BYTE: AtomicU32 = AtomicU32::new(0);

/// The last byte taken from the serial line by its interrupt, if any.
pub fn serial_byte() -> Option<u8> {
    SERIAL_BYTE.load(Ordering::Relaxed).checked_sub(1).map(|b| b as u8)
}

/// A pending word bit: an IPI arrived.
pub const IPI: u32 = 1;
/// A pending word bit: the timer ticked.
pub const TICK: u32 = 2;

/// Each core's pending reasons.
static PENDING: [AtomicU32; MAX_CORES] = [const { AtomicU32::new(0) }; MAX_CORES];
/// Each core's interrupts taken, by kind: IPIs, ticks.
static TAKEN: [[AtomicU64; 2]; MAX_CORES] = [const { [AtomicU64::new(0), AtomicU64::new(0)] }; MAX_CORES];

global_asm!(
    r#"
    .macro irq_stub name, vector, leave
    .balign 16
    .global \name
\name:
    testb $3, 8(%rsp)
    jz 1f
    .if \leave
    /* From ring 3, an interrupt that needs the kernel: the thread leaves
       for its core's loop through the fault path's frame (error 0, the
       vector), which `kernel_fault` hands to `user_interrupted`. */
    pushq $0
    pushq $\vector
    jmp fault_common
    .else
    swapgs
    .endif
1:
    pushq %rax
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    movl $\vector, %edi
    call interrupt_taken
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rax
    testb $3, 8(%rsp)
    jz 2f
    swapgs
2:
    iretq
    .endm

    .section .text
    irq_stub irq_ipi, 0xf0, 1
    irq_stub irq_timer, 0xf1, 1
    irq_stub irq_serial, 0xe4, 1
    irq_stub irq_tlb, 0xf2, 0
    .balign 16
    .global irq_spurious
irq_spurious:
    iretq
    "#,
    options(att_syntax)
);

unsafe extern "C" {
    fn irq_ipi();
    fn irq_timer();
    fn irq_serial();
    fn irq_tlb();
    fn irq_spurious();
}

/// The stubs' addresses by vector, for the IDT: the APIC's vectors, and
/// the legacy PICs' spurious vectors (IRQ 7 and 15 after [`mask_legacy_pics`]).
pub fn stubs() -> [(u8, u64); 7] {
    let spurious = irq_spurious as *const () as u64;
    [
        (IPI_VECTOR, irq_ipi as *const () as u64),
        (TIMER_VECTOR, irq_timer as *const () as u64),
        (SERIAL_VECTOR, irq_serial as *const () as u64),
        (crate::paging::TLB_VECTOR, irq_tlb as *const () as u64),
        (SPURIOUS_VECTOR, spurious),
        (PIC_BASE + 7, spurious),
        (PIC_BASE + 15, spurious),
    ]
}

/// Where the legacy PICs' 16 lines are moved, away from the exceptions.
const PIC_BASE: u8 = 0x20;

/// Moves the two 8259 PICs' vectors to `PIC_BASE..PIC_BASE + 16` and masks
/// every line: without a loader that did it, their timer line would arrive
/// as vector 8 (double fault) as soon as interrupts are enabled. The local
/// APICs deliver everything this kernel uses.
pub fn mask_legacy_pics() {
    use crate::port::out8;
    // SAFETY: the 8259s' command and data ports (ICW1-4, then the masks);
    // programming them touches no memory.
    unsafe {
        out8(0x20, 0x11);
        out8(0xa0, 0x11);
        out8(0x21, PIC_BASE);
        out8(0xa1, PIC_BASE + 8);
        out8(0x21, 4);
        out8(0xa1, 2);
        out8(0x21, 1);
        out8(0xa1, 1);
        out8(0x21, 0xff);
        out8(0xa1, 0xff);
    }
}

/// Called by the stubs with interrupts off: record, count, end of interrupt.
#[unsafe(no_mangle)]
pub extern "C" fn interrupt_taken(vector: u32) {
    let core = percore::this_core();
    if vector == u32::from(crate::paging::TLB_VECTOR) {
        crate::paging::shootdown_taken(core);
        apic::eoi();
        return;
    }
    if vector == u32::from(SERIAL_VECTOR) {
        // Take the byte (the line falls), and mask the line until the
        // kernel's exit plan acknowledges the interrupt.
        if let Some(b) = serial::drain() {
            SERIAL_BYTE.store(u32::from(b) + 1, Ordering::Relaxed);
        }
        ioapic::set_masked(serial::IRQ, true);
        PENDING[core].fetch_or(SERIAL, Ordering::AcqRel);
        apic::eoi();
        return;
    }
    let (bit, kind) = if vector == u32::from(IPI_VECTOR) { (IPI, 0) } else { (TICK, 1) };
    PENDING[core].fetch_or(bit, Ordering::AcqRel);
    TAKEN[core][kind].fetch_add(1, Ordering::Relaxed);
    apic::eoi();
}

/// Takes this core's pending reasons (0: none).
pub fn take(core: usize) -> u32 {
    // A plain load first: the common answer is "none", without a write.
    if PENDING[core].load(Ordering::Relaxed) == 0 {
        return 0;
    }
    PENDING[core].swap(0, Ordering::AcqRel)
}

/// Waits with interrupts on until an interrupt left a reason for `core`;
/// returns it. Interrupts are checked and enabled without a gap (`sti;
/// hlt` takes an interrupt only after the `hlt`), so none is lost.
pub fn wait(core: usize) -> u32 {
    loop {
        // SAFETY: masking interrupts on this core only delays them.
        unsafe { core::arch::asm!("cli", options(nomem, nostack)) };
        let reasons = take(core);
        if reasons != 0 {
            enable();
            return reasons;
        }
        // SAFETY: `sti; hlt` waits for the next interrupt, whose handler
        // only records it (above).
        unsafe { core::arch::asm!("sti; hlt", options(nomem, nostack)) };
    }
}

/// Enables interrupts on this core.
pub fn enable() {
    // SAFETY: the IDT is loaded and every vector the APIC can deliver has a
    // stub; the handlers only record the interrupt.
    unsafe { core::arch::asm!("sti", options(nomem, nostack)) };
}

/// Unmasks the device lines an exit plan acknowledges (the serial line is
/// the only one routed).
pub fn acknowledge(lines: granule_kernel::IrqMask) {
    if lines.contains(serial::IRQ as usize) {
        ioapic::set_masked(serial::IRQ, false);
    }
}

/// Sends the IPI to every core in `cores` (an exit plan's `ipis`).
pub fn send(cores: CoreMask) {
    for c in cores.iter() {
        apic::send_ipi(percore::apic_id(c), IPI_VECTOR);
    }
}

/// Interrupts `core` took so far: (IPIs, ticks).
pub fn taken(core: usize) -> (u64, u64) {
    (TAKEN[core][0].load(Ordering::Relaxed), TAKEN[core][1].load(Ordering::Relaxed))
}
