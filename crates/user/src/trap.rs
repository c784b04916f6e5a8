//! The trap: how user code enters the kernel on a given platform.
//!
//! A platform supplies one [`Trap`] per running user thread. On the hosted
//! platform it is the thread's `granule_hosted::UserCtx` (a coroutine yield);
//! on bare metal it would be a `syscall` instruction and a pointer to the
//! thread's IPC buffer. Everything else in this crate is written against the
//! trait, so programs do not know which platform runs them.

use granule_kernel::{FaultKind, IpcBuffer, SyscallArgs};

/// A user thread's way into the kernel.
pub trait Trap {
    /// Enter the kernel with the four argument words; returns when the kernel
    /// runs this thread again, with the results in [`Trap::ipc_buffer`].
    fn syscall(&mut self, args: SyscallArgs);

    /// This thread's IPC buffer.
    fn ipc_buffer(&mut self) -> &mut IpcBuffer;

    /// Raise the fault `kind` as the hardware would (a memory access no
    /// mapping allows); returns once the thread's fault handler let it go
    /// on (`granule_hosted::UserCtx::fault`).
    fn fault(&mut self, kind: FaultKind);
}

impl<T: Trap + ?Sized> Trap for &mut T {
    #[inline(always)]
    fn syscall(&mut self, args: SyscallArgs) {
        (**self).syscall(args)
    }

    #[inline(always)]
    fn ipc_buffer(&mut self) -> &mut IpcBuffer {
        (**self).ipc_buffer()
    }

    fn fault(&mut self, kind: FaultKind) {
        (**self).fault(kind)
    }
}

#[cfg(feature = "hosted")]
impl Trap for granule_hosted::UserCtx<'_> {
    #[inline(always)]
    fn syscall(&mut self, args: SyscallArgs) {
        granule_hosted::UserCtx::syscall(self, args)
    }

    #[inline(always)]
    fn ipc_buffer(&mut self) -> &mut IpcBuffer {
        granule_hosted::UserCtx::ipc_buffer(self)
    }

    fn fault(&mut self, kind: FaultKind) {
        granule_hosted::UserCtx::fault(self, kind)
    }
}
