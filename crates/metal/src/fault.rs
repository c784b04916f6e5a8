//! A fault: the 32 exception vectors' entry stubs save every register into
//! a [`Frame`] and call [`kernel_fault`], which prints the state on the
//! serial console and ends the run as failed. A fault in a ring-3 thread
//! goes back to its core's loop instead (`user.rs`), which enters the
//! kernel with it (`Kernel::fault`).
//!
//! Stub layout: vectors without a CPU-pushed error code push 0 in its
//! place, then every stub pushes its vector and jumps to the common part,
//! which pushes the fifteen general registers and passes the stack pointer
//! (the frame) to Rust.

use core::arch::global_asm;

use crate::exit::{exit, Outcome};
pub use crate::frame::Frame;
use crate::println;

/// The exceptions' names, by vector.
const NAMES: [&str; 32] = [
    "divide error",
    "debug",
    "NMI",
    "breakpoint",
    "overflow",
    "bound range",
    "invalid opcode",
    "device not available",
    "double fault",
    "coprocessor overrun",
    "invalid TSS",
    "segment not present",
    "stack fault",
    "general protection",
    "page fault",
    "reserved",
    "x87 error",
    "alignment check",
    "machine check",
    "SIMD error",
    "virtualization",
    "control protection",
    "reserved",
    "reserved",
    "reserved",
    "reserved",
    "reserved",
    "reserved",
    "hypervisor injection",
    "VMM communication",
    "security",
    "reserved",
];

global_asm!(
    r#"
    .macro fault_stub n, has_error
    .balign 16
fault_stub_\n:
    .if \has_error == 0
    pushq $0
    .endif
    pushq $\n
    jmp fault_common
    .endm

    .section .text
    fault_stub 0, 0
    fault_stub 1, 0
    fault_stub 2, 0
    fault_stub 3, 0
    fault_stub 4, 0
    fault_stub 5, 0
    fault_stub 6, 0
    fault_stub 7, 0
    fault_stub 8, 1
    fault_stub 9, 0
    fault_stub 10, 1
    fault_stub 11, 1
    fault_stub 12, 1
    fault_stub 13, 1
    fault_stub 14, 1
    fault_stub 15, 0
    fault_stub 16, 0
    fault_stub 17, 1
    fault_stub 18, 0
    fault_stub 19, 0
    fault_stub 20, 0
    fault_stub 21, 1
    fault_stub 22, 0
    fault_stub 23, 0
    fault_stub 24, 0
    fault_stub 25, 0
    fault_stub 26, 0
    fault_stub 27, 0
    fault_stub 28, 0
    fault_stub 29, 1
    fault_stub 30, 1
    fault_stub 31, 0

    .global fault_common
fault_common:
    testb $3, 24(%rsp)
    jz 1f
    swapgs
1:
    pushq %rax
    pushq %rbx
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %rbp
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, %rdi
    andq $-16, %rsp
    call kernel_fault
    ud2

    .section .rodata
    .balign 8
    .global fault_stubs
fault_stubs:
    .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    .quad fault_stub_\n
    .endr
    "#,
    options(att_syntax)
);

/// Reports a kernel fault and ends the run as failed.
#[unsafe(no_mangle)]
extern "C" fn kernel_fault(f: &Frame) -> ! {
    let cr2: u64;
    // SAFETY: reading CR2 has no side effects.
    unsafe { core::arch::asm!("mov {}, cr2", out(reg) cr2, options(nomem, nostack)) };
    if f.vector >= 32 {
        // An interrupt from ring 3 that needs the kernel (`irq.rs`).
        crate::user::interrupted(f);
    }
    if f.cs & 3 == 3 && crate::user::in_user_thread() {
        // A ring-3 thread's fault: the core's loop makes the kernel entry.
        crate::user::fault_taken(f, cr2);
    }
    let name = NAMES.get(f.vector as usize).copied().unwrap_or("?");
    let whose = if f.cs & 3 == 3 { "USER" } else { "KERNEL" };
    println!(
        "{whose} FAULT on core {}: vector {} ({name}), error {:#x}, rip {:#x}, cs {:#x}, rflags {:#x}, rsp {:#x}, ss {:#x}, cr2 {cr2:#x}",
        crate::percore::this_core(),
        f.vector,
        f.error,
        f.rip,
        f.cs,
        f.rflags,
        f.rsp,
        f.ss
    );
    println!(
        "  rax {:#x} rbx {:#x} rcx {:#x} rdx {:#x} rsi {:#x} rdi {:#x} rbp {:#x}",
        f.rax, f.rbx, f.rcx, f.rdx, f.rsi, f.rdi, f.rbp
    );
    println!(
        "  r8 {:#x} r9 {:#x} r10 {:#x} r11 {:#x} r12 {:#x} r13 {:#x} r14 {:#x} r15 {:#x}",
        f.r8, f.r9, f.r10, f.r11, f.r12, f.r13, f.r14, f.r15
    );
    exit(Outcome::Failed)
}
