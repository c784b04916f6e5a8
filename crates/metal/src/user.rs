//! Ring 3: threads entered with `sysretq` and back through `syscall`.
//!
//! [`run_user`] saves the core's kernel registers on its stack, records
//! the stack pointer and the thread's [`UserContext`] in the per-core
//! words behind GS, loads the thread's registers and returns to ring 3.
//! The `syscall` entry swaps GS back to the per-core words, stores every
//! register of the thread into that context, returns to the kernel stack
//! and "returns" from `run_user`: to the core's loop a user thread runs
//! like a call that ends at its next system call, as a coroutine does on
//! the hosted platform. Interrupts are off from `run_user`'s start to
//! `sysretq` (which turns them on in ring 3 through the thread's flags)
//! and from `syscall` (`FMASK`) back to the kernel stack.
//!
//! Per-core words behind GS (`smp.rs`): 0 the core number, 8 the kernel
//! stack pointer saved by `run_user`, 16 scratch for the user stack
//! pointer at entry, 24 the running context.
//!
//! System-call ABI (the bare-metal `Trap`): `rdi` the system-call number,
//! `rsi` the capability, `rdx` the message-info word, `r10` the fourth
//! word (`rcx` and `r11` carry the return address and flags); results are
//! in the thread's IPC buffer, as everywhere.
//!
//! Address spaces: the identity map of the first 4 GiB (`boot.rs`) is in
//! every space and user accessible (the programs, their stacks and IPC
//! buffers live there); each VSpace's own pages are at 512 GiB in its own
//! tables (`paging.rs`), which the core's loop switches to before it runs
//! a thread.

use core::arch::global_asm;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use granule_kernel::SyscallArgs;

use crate::frame::Frame;
use crate::{percore, MAX_CORES};

/// A user thread's registers while it is not running.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct UserContext {
    pub rax: u64,
    pub rbx: u64,
    pub rcx: u64,
    pub rdx: u64,
    pub rsi: u64,
    pub rdi: u64,
    pub rbp: u64,
    pub r8: u64,
    pub r9: u64,
    pub r10: u64,
    pub r11: u64,
    pub r12: u64,
    pub r13: u64,
    pub r14: u64,
    pub r15: u64,
    pub rip: u64,
    pub rflags: u64,
    pub rsp: u64,
    /// Non-zero when the thread left ring 3 by a fault or an interrupt,
    /// not a `syscall`: every register is live, so it resumes by `iretq`
    /// (`sysretq` would lose `rcx` and `r11`).
    pub resume_by_iret: u64,
}

/// RFLAGS in ring 3: interrupts on (bit 9), the reserved bit 1.
const USER_RFLAGS: u64 = 0x202;

impl UserContext {
    /// A fresh thread at `entry(ipc_buffer, arg)` on the stack ending at
    /// `stack_top` (16-byte aligned; the entry sees it as after a call).
    pub fn start(entry: u64, stack_top: u64, ipc_buffer: u64, arg: u64) -> Self {
        Self { rip: entry, rsp: stack_top - 8, rdi: ipc_buffer, rsi: arg, rflags: USER_RFLAGS, ..Self::default() }
    }

    /// The system call the thread made (its argument registers).
    pub fn syscall_args(&self) -> SyscallArgs {
        SyscallArgs::new(self.rdi, self.rsi, self.rdx, self.r10)
    }
}

global_asm!(
    r#"
    .section .text
    .global run_user
run_user:
    cli
    pushq %rbx
    pushq %rbp
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, %gs:8
    movq %rdi, %gs:24
    cmpq $0, 144(%rdi)
    je 4f
    pushq $0x1b
    pushq 136(%rdi)
    pushq 128(%rdi)
    pushq $0x23
    pushq 120(%rdi)
4:
    movq 0(%rdi), %rax
    movq 8(%rdi), %rbx
    movq 24(%rdi), %rdx
    movq 32(%rdi), %rsi
    movq 48(%rdi), %rbp
    movq 56(%rdi), %r8
    movq 64(%rdi), %r9
    movq 72(%rdi), %r10
    movq 88(%rdi), %r12
    movq 96(%rdi), %r13
    movq 104(%rdi), %r14
    movq 112(%rdi), %r15
    cmpq $0, 144(%rdi)
    jne 5f
    movq 120(%rdi), %rcx
    movq 128(%rdi), %r11
    movq 136(%rdi), %rsp
    movq 40(%rdi), %rdi
    swapgs
    sysretq
5:
    movq 16(%rdi), %rcx
    movq 80(%rdi), %r11
    movq 40(%rdi), %rdi
    swapgs
    iretq

    .global syscall_entry
syscall_entry:
    swapgs
    movq %rsp, %gs:16
    movq %gs:24, %rsp
    movq %rax, 0(%rsp)
    movq %rbx, 8(%rsp)
    movq %rdx, 24(%rsp)
    movq %rsi, 32(%rsp)
    movq %rdi, 40(%rsp)
    movq %rbp, 48(%rsp)
    movq %r8, 56(%rsp)
    movq %r9, 64(%rsp)
    movq %r10, 72(%rsp)
    movq %r12, 88(%rsp)
    movq %r13, 96(%rsp)
    movq %r14, 104(%rsp)
    movq %r15, 112(%rsp)
    movq %rcx, 120(%rsp)
    movq %r11, 128(%rsp)
    movq %gs:16, %rax
    movq %rax, 136(%rsp)
    movq $0, 144(%rsp)
    jmp return_to_kernel

    /* Back to the kernel stack `run_user` left, after a system call's
       registers were stored above or a fault's by `fault_taken`. */
    .global return_to_kernel
return_to_kernel:
    movq %gs:8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbp
    popq %rbx
    sti
    retq
    "#,
    options(att_syntax)
);

unsafe extern "C" {
    fn run_user(ctx: *mut UserContext);
    fn syscall_entry();
    fn return_to_kernel() -> !;
}

/// How a ring-3 thread came back to its core.
#[derive(Clone, Copy, Debug)]
pub enum Trap {
    /// A `syscall` with these arguments.
    Syscall(SyscallArgs),
    /// A processor exception: its vector, error code, and CR2 (the address
    /// of a page fault).
    Fault { vector: u64, error: u64, addr: u64 },
    /// An interrupt that needs the kernel (recorded in the core's pending
    /// word, `irq.rs`): the loop enters the kernel for it, and the thread
    /// resumes where it was if the kernel runs it again.
    Interrupted,
}

/// Per core: a ring-3 thread is running (set by [`run`] around
/// `run_user`), and the fault that ended its run, if one did.
static IN_USER: [AtomicBool; MAX_CORES] = [const { AtomicBool::new(false) }; MAX_CORES];
static FAULT: [[AtomicU64; 4]; MAX_CORES] = [const { [const { AtomicU64::new(0) }; 4] }; MAX_CORES];

/// Runs the thread whose registers are `ctx` in ring 3 until its next
/// system call or fault; `ctx` then holds its registers at that point.
pub fn run(ctx: &mut UserContext) -> Trap {
    let core = percore::this_core();
    IN_USER[core].store(true, Ordering::Relaxed);
    // SAFETY: `ctx` is a user context this core owns (it runs no other
    // core's threads), its `rip` and `rsp` lie in the user-accessible map,
    // and `init` prepared this core's `syscall` entry and GS words.
    unsafe { run_user(ctx) };
    IN_USER[core].store(false, Ordering::Relaxed);
    let f = &FAULT[core];
    match f[0].swap(0, Ordering::Relaxed) {
        LEFT_BY_FAULT => {
            let get = |i: usize| f[i].load(Ordering::Relaxed);
            return Trap::Fault { vector: get(1), error: get(2), addr: get(3) };
        }
        LEFT_BY_INTERRUPT => return Trap::Interrupted,
        _ => {}
    }
    Trap::Syscall(ctx.syscall_args())
}

/// Whether this core is running a ring-3 thread (a fault in ring 3 with
/// no thread behind it is the kernel's own bug).
pub fn in_user_thread() -> bool {
    IN_USER[percore::this_core()].load(Ordering::Relaxed)
}

/// How a thread left ring 3 other than by `syscall` (`FAULT[core][0]`).
const LEFT_BY_FAULT: u64 = 1;
/// See [`LEFT_BY_FAULT`].
const LEFT_BY_INTERRUPT: u64 = 2;

/// A ring-3 thread's fault (called by the fault report with GS already
/// the per-core words): its registers go into its context, the fault is
/// recorded for [`run`], and `run_user` returns.
pub fn fault_taken(f: &Frame, cr2: u64) -> ! {
    leave(f, LEFT_BY_FAULT, cr2)
}

/// An interrupt in ring 3 that needs the kernel (the IPI, the timer, the
/// serial line; their stubs reach it through the fault path, with GS the
/// per-core words and interrupts off): recorded and acknowledged (`irq.rs`), then the thread's
/// registers go into its context and `run_user` returns.
pub fn interrupted(f: &Frame) -> ! {
    crate::irq::interrupt_taken(f.vector as u32);
    leave(f, LEFT_BY_INTERRUPT, 0)
}

/// Leaves ring 3 for the core's loop: the registers at `f` into the
/// running context (resumed by `iretq`), `why` recorded for [`run`].
fn leave(f: &Frame, why: u64, cr2: u64) -> ! {
    let core = percore::this_core();
    // SAFETY: the context `run_user` recorded for this core, which the
    // core's loop does not touch until `run_user` returns.
    let ctx = unsafe { &mut *(percore::running_context() as *mut UserContext) };
    *ctx = UserContext {
        rax: f.rax,
        rbx: f.rbx,
        rcx: f.rcx,
        rdx: f.rdx,
        rsi: f.rsi,
        rdi: f.rdi,
        rbp: f.rbp,
        r8: f.r8,
        r9: f.r9,
        r10: f.r10,
        r11: f.r11,
        r12: f.r12,
        r13: f.r13,
        r14: f.r14,
        r15: f.r15,
        rip: f.rip,
        rflags: f.rflags,
        rsp: f.rsp,
        resume_by_iret: 1,
    };
    let slot = &FAULT[core];
    slot[1].store(f.vector, Ordering::Relaxed);
    slot[2].store(f.error, Ordering::Relaxed);
    slot[3].store(cr2, Ordering::Relaxed);
    slot[0].store(why, Ordering::Relaxed);
    // SAFETY: `run_user` saved the kernel stack pointer and callee-saved
    // registers this returns to; the fault's own stack is abandoned.
    unsafe { return_to_kernel() }
}

/// Prepares this core for `syscall`/`sysret`: EFER.SCE, the selectors
/// (`STAR`: kernel code 0x08; `sysret` takes user data 0x18 and user code
/// 0x20 from base 0x10), the entry (`LSTAR`) and the flags cleared at
/// entry (`FMASK`: TF, IF, DF).
///
/// # Safety
/// Called once per core, after `cpu::init` loaded its GDT.
pub unsafe fn init() {
    let wrmsr = |msr: u32, v: u64| {
        // SAFETY: the architectural MSRs named above, written with the
        // values the documentation above explains.
        unsafe {
            core::arch::asm!("wrmsr", in("ecx") msr, in("eax") v as u32, in("edx") (v >> 32) as u32, options(nostack));
        }
    };
    let efer: u64;
    // SAFETY: reading EFER has no side effect.
    unsafe {
        let (lo, hi): (u32, u32);
        core::arch::asm!("rdmsr", in("ecx") 0xc000_0080u32, out("eax") lo, out("edx") hi, options(nostack));
        efer = u64::from(hi) << 32 | u64::from(lo);
    }
    wrmsr(0xc000_0080, efer | 1);
    wrmsr(0xc000_0081, (0x10u64 << 48) | (0x08u64 << 32));
    wrmsr(0xc000_0082, syscall_entry as *const () as u64);
    wrmsr(0xc000_0084, 0x700);
}
