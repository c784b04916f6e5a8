//! The bare-metal `Trap`: a `syscall` instruction, and the thread's IPC
//! buffer in the kernel's memory (which the identity map lets ring 3
//! reach). granule-user's programs run through it unchanged, as they run
//! through a coroutine yield on the hosted platform.

use granule_kernel::abi::Word;
use granule_kernel::{FaultKind, IpcBuffer, SyscallArgs};
use granule_user::trap::Trap;

/// A system call from ring 3: number, capability, message info, fourth
/// word (`user.rs`'s ABI).
pub fn syscall(sysno: Word, cptr: Word, info: Word, extra: Word) {
    // SAFETY: `syscall` enters the kernel through `user.rs`'s entry, which
    // saves and restores every register but `rcx` and `r11` (the CPU's).
    unsafe {
        core::arch::asm!(
            "syscall",
            in("rdi") sysno,
            in("rsi") cptr,
            in("rdx") info,
            in("r10") extra,
            out("rcx") _,
            out("r11") _,
            options(nostack),
        );
    }
}

/// The trap of a ring-3 thread whose IPC buffer is at `ipc` (its entry's
/// first argument).
pub struct MetalTrap {
    ipc: *mut IpcBuffer,
}

impl MetalTrap {
    /// The trap of the thread entered with `ipc`.
    ///
    /// # Safety
    /// `ipc` is the running thread's own IPC buffer, as its entry was given
    /// it, and the trap is used only by that thread.
    pub unsafe fn new(ipc: *mut IpcBuffer) -> Self {
        Self { ipc }
    }
}

impl Trap for MetalTrap {
    fn syscall(&mut self, args: SyscallArgs) {
        syscall(args.sysno, args.cptr, args.info, args.reply)
    }

    fn ipc_buffer(&mut self) -> &mut IpcBuffer {
        // SAFETY: `new`'s contract: the thread's own buffer, which the kernel
        // writes only during this thread's system calls.
        unsafe { &mut *self.ipc }
    }

    fn fault(&mut self, kind: FaultKind) {
        match kind {
            // A real access where no mapping allows one.
            FaultKind::MemoryAccess { addr, write: false } => {
                // SAFETY: the load faults (the caller names an unmapped
                // address); the kernel sends the fault to the handler.
                let _ = unsafe { core::ptr::read_volatile(addr as *const u64) };
            }
            FaultKind::MemoryAccess { addr, write: true } => {
                // SAFETY: as above, a store.
                unsafe { core::ptr::write_volatile(addr as *mut u64, 0) };
            }
            // SAFETY: `ud2` raises an invalid-opcode fault, which the
            // kernel sends to the thread's fault handler as `Other`.
            _ => unsafe { core::arch::asm!("ud2", options(nomem, nostack)) },
        }
    }
}
