//! The registers of a thread or the kernel where an exception or an
//! interrupt stopped it, as the entry stubs (`fault.rs`) leave them on the
//! stack: a leaf, shared by the fault report and the ring-3 exit
//! (`user.rs`).

/// The registers at the fault, as the stubs leave them on the stack.
#[repr(C)]
#[derive(Debug)]
pub struct Frame {
    pub(crate) r15: u64,
    pub(crate) r14: u64,
    pub(crate) r13: u64,
    pub(crate) r12: u64,
    pub(crate) r11: u64,
    pub(crate) r10: u64,
    pub(crate) r9: u64,
    pub(crate) r8: u64,
    pub(crate) rbp: u64,
    pub(crate) rdi: u64,
    pub(crate) rsi: u64,
    pub(crate) rdx: u64,
    pub(crate) rcx: u64,
    pub(crate) rbx: u64,
    pub(crate) rax: u64,
    pub(crate) vector: u64,
    pub(crate) error: u64,
    pub(crate) rip: u64,
    pub(crate) cs: u64,
    pub(crate) rflags: u64,
    pub(crate) rsp: u64,
    pub(crate) ss: u64,
}
