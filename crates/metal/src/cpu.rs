//! Each core's descriptor tables: a GDT (kernel code and data, user data
//! and code in the order `sysret` expects, and the TSS), the TSS with a
//! separate stack for double faults, and the IDT whose exception vectors
//! lead to [`crate::fault`]'s report.
//!
//! GDT selectors: `0x08` kernel code, `0x10` kernel data, `0x18 | 3` user
//! data, `0x20 | 3` user code, `0x28` the TSS (two slots).

use core::arch::asm;
use core::cell::UnsafeCell;
use core::mem::size_of;

use crate::MAX_CORES;

/// Kernel code selector.
pub const KERNEL_CODE: u16 = 0x08;
/// Kernel data selector.
pub const KERNEL_DATA: u16 = 0x10;
const TSS_SELECTOR: u16 = 0x28;

/// The 64-bit TSS: only the interrupt stack table is used here.
#[repr(C, packed(4))]
#[derive(Clone, Copy, Default)]
struct Tss {
    reserved0: u32,
    rsp: [u64; 3],
    reserved1: u64,
    ist: [u64; 7],
    reserved2: u64,
    reserved3: u16,
    iomap_base: u16,
}

/// One IDT gate.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Gate {
    offset_lo: u16,
    selector: u16,
    ist: u8,
    flags: u8,
    offset_mid: u16,
    offset_hi: u32,
    reserved: u32,
}

impl Gate {
    /// A present ring-0 interrupt gate to `at` in kernel code, on
    /// interrupt stack `ist` (0: the current or `TSS.rsp0` stack).
    fn interrupt(at: u64, ist: u8) -> Self {
        Gate {
            offset_lo: at as u16,
            selector: KERNEL_CODE,
            ist,
            flags: 0x8e,
            offset_mid: (at >> 16) as u16,
            offset_hi: (at >> 32) as u32,
            reserved: 0,
        }
    }
}

/// Bytes of each core's double-fault stack.
const FAULT_STACK: usize = 16 * 1024;

/// One core's tables, its double-fault stack, and the stack interrupts
/// from ring 3 arrive on (`TSS.rsp0`).
#[repr(C, align(16))]
struct CoreTables {
    gdt: [u64; 7],
    tss: Tss,
    fault_stack: [u8; FAULT_STACK],
    ring0_stack: [u8; FAULT_STACK],
}

/// Every core's tables. Core `i` writes only entry `i`, once, before it
/// loads them (see [`init`]).
struct Tables(UnsafeCell<[CoreTables; MAX_CORES]>);

// SAFETY: each core touches only its own entry (the contract of `init`).
unsafe impl Sync for Tables {}

static TABLES: Tables = Tables(UnsafeCell::new(
    [const { CoreTables { gdt: [0; 7], tss: Tss::ZERO, fault_stack: [0; FAULT_STACK], ring0_stack: [0; FAULT_STACK] } };
        MAX_CORES],
));

impl Tss {
    const ZERO: Tss =
        Tss { reserved0: 0, rsp: [0; 3], reserved1: 0, ist: [0; 7], reserved2: 0, reserved3: 0, iomap_base: 0 };
}

/// The IDT, shared by all cores: written once by the boot core.
struct Idt(UnsafeCell<[Gate; 256]>);

// SAFETY: written only by the boot core before any other core runs
// (`init_idt`), read-only afterwards.
unsafe impl Sync for Idt {}

static IDT: Idt = Idt(UnsafeCell::new(
    [Gate { offset_lo: 0, selector: 0, ist: 0, flags: 0, offset_mid: 0, offset_hi: 0, reserved: 0 }; 256],
));

unsafe extern "C" {
    /// The 32 exception stubs' addresses (`fault.rs`).
    static fault_stubs: [u64; 32];
}

#[repr(C, packed)]
struct Pointer {
    limit: u16,
    base: u64,
}

/// Fills the IDT's exception gates (vector 8, double fault, runs on IST 1)
/// and the interrupt gates of `irq.rs`.
///
/// # Safety
/// Called once, by the boot core, before any core loads the IDT.
pub unsafe fn init_idt() {
    // SAFETY: the caller's contract: nobody else touches the IDT yet.
    let idt = unsafe { &mut *IDT.0.get() };
    for (v, gate) in idt.iter_mut().enumerate().take(32) {
        // SAFETY: `fault_stubs` is an immutable table of code addresses.
        let at = unsafe { fault_stubs[v] };
        *gate = Gate::interrupt(at, if v == 8 { 1 } else { 0 });
    }
    for (v, at) in crate::irq::stubs() {
        idt[usize::from(v)] = Gate::interrupt(at, 0);
    }
}

/// Loads core `core`'s GDT (reloading every segment register), its TSS and
/// the IDT.
///
/// # Safety
/// Called once per core, by that core, with `core < MAX_CORES`, after
/// [`init_idt`].
pub unsafe fn init(core: usize) {
    // SAFETY: the caller's contract: entry `core` is this core's alone.
    let t = unsafe { &mut (*TABLES.0.get())[core] };
    t.tss = Tss::ZERO;
    t.tss.ist[0] = t.fault_stack.as_ptr() as u64 + FAULT_STACK as u64;
    t.tss.rsp[0] = t.ring0_stack.as_ptr() as u64 + FAULT_STACK as u64;
    t.tss.iomap_base = size_of::<Tss>() as u16;
    let tss = &raw const t.tss as u64;
    let limit = (size_of::<Tss>() - 1) as u64;
    t.gdt = [
        0,
        0x00af_9a00_0000_ffff, // kernel code: 64-bit, ring 0
        0x00cf_9200_0000_ffff, // kernel data
        0x00cf_f200_0000_ffff, // user data: ring 3
        0x00af_fa00_0000_ffff, // user code: 64-bit, ring 3
        // Available 64-bit TSS, present; base and limit split as the SDM says.
        (limit & 0xffff)
            | ((tss & 0xff_ffff) << 16)
            | (0x89 << 40)
            | (((limit >> 16) & 0xf) << 48)
            | (((tss >> 24) & 0xff) << 56),
        tss >> 32,
    ];
    let gdt = Pointer { limit: (size_of::<[u64; 7]>() - 1) as u16, base: t.gdt.as_ptr() as u64 };
    let idt = Pointer { limit: (size_of::<[Gate; 256]>() - 1) as u16, base: IDT.0.get() as u64 };
    // SAFETY: the tables are valid and live for ever (statics); the far
    // return reloads CS with the kernel code selector of the new GDT, the
    // data selectors are reloaded, and the TSS descriptor is available.
    unsafe {
        asm!(
            "lgdt [{gdt}]",
            "push {code}",
            "lea {tmp}, [rip + 2f]",
            "push {tmp}",
            "retfq",
            "2:",
            "mov ds, {data:x}",
            "mov es, {data:x}",
            "mov ss, {data:x}",
            "ltr {tss:x}",
            "lidt [{idt}]",
            gdt = in(reg) &raw const gdt,
            idt = in(reg) &raw const idt,
            code = in(reg) u64::from(KERNEL_CODE),
            data = in(reg) KERNEL_DATA,
            tss = in(reg) TSS_SELECTOR,
            tmp = out(reg) _,
        );
    }
}
