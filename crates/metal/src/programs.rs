//! The ring-3 programs of the ping-pong pairs, and the bare-metal `Trap`:
//! a `syscall` instruction.
//!
//! A program is entered as `entry(ipc_buffer, arg)` with `arg` packing the
//! pair's endpoint slot (bits 0..16), reply slot (16..32) and the client's
//! number of calls (32..64). It never returns. The client checks every
//! reply (label 2, its word plus one) and executes `ud2` on a wrong one,
//! which the fault report turns into a failed run; after its last call it
//! writes [`DONE`] in its buffer's first word and waits on the endpoint for
//! ever, leaving its core idle. The fault pair: a thread that loads from
//! an unmapped address, and its fault handler, which receives the fault
//! message and reports it the same way.

use granule_kernel::abi::{MessageInfo, Sysno, Word};
use granule_kernel::IpcBuffer;

/// The word a client leaves in its IPC buffer when it made all its calls.
pub const DONE: Word = 0xd0_e0d0_e0d0;

/// The programs, by entry word (what the root writes into `REG_PC`).
pub const PROGRAMS: [extern "C" fn(*mut IpcBuffer, u64) -> !; 4] = [server, client, fault_handler, faulter];
/// The server's entry word.
pub const SERVER: Word = 0;
/// The client's entry word.
pub const CLIENT: Word = 1;
/// The fault handler's entry word.
pub const FAULT_HANDLER: Word = 2;
/// The faulting thread's entry word.
pub const FAULTER: Word = 3;

/// Where the faulting thread loads from: above the 4 GiB the boot page
/// tables map, so the load page-faults.
pub const UNMAPPED: Word = 0x10_0000_0000;

/// Packs a pair's start argument.
pub fn arg(ep: Word, reply: Word, calls: u64) -> Word {
    ep | reply << 16 | calls << 32
}

/// A system call from ring 3: number, capability, message info, fourth word.
fn trap(sysno: Sysno, cptr: Word, info: Word, extra: Word) {
    // SAFETY: `syscall` enters the kernel through `user.rs`'s entry, which
    // saves and restores every register but `rcx` and `r11` (the CPU's).
    unsafe {
        core::arch::asm!(
            "syscall",
            in("rdi") sysno.word(),
            in("rsi") cptr,
            in("rdx") info,
            in("r10") extra,
            out("rcx") _,
            out("r11") _,
            options(nostack),
        );
    }
}

/// The server: receive, then reply with the word plus one and receive
/// again, for ever.
extern "C" fn server(ipc: *mut IpcBuffer, arg: u64) -> ! {
    let (ep, reply) = (arg & 0xffff, (arg >> 16) & 0xffff);
    trap(Sysno::Recv, ep, 0, reply);
    loop {
        // SAFETY: the thread's own IPC buffer, which the kernel writes only
        // during this thread's system calls.
        unsafe { (*ipc).msg[0] = (*ipc).msg[0].wrapping_add(1) };
        trap(Sysno::ReplyRecv, ep, MessageInfo::new(2, 0, 0, 1).word(), reply);
    }
}

/// The client: `calls` calls, each reply checked.
extern "C" fn client(ipc: *mut IpcBuffer, arg: u64) -> ! {
    let (ep, calls) = (arg & 0xffff, arg >> 32);
    for i in 0..calls {
        // SAFETY: as in `server`.
        unsafe { (*ipc).msg[0] = i * 2 };
        trap(Sysno::Call, ep, MessageInfo::new(1, 0, 0, 1).word(), 0);
        // SAFETY: as in `server`.
        let (tag, word) = unsafe { (MessageInfo((*ipc).tag), (*ipc).msg[0]) };
        if tag.label() != 2 || word != i * 2 + 1 {
            // SAFETY: `ud2` faults; the fault report ends the run as failed.
            unsafe { core::arch::asm!("ud2", options(nomem, nostack)) };
        }
    }
    // SAFETY: as in `server`.
    unsafe { (*ipc).msg[0] = DONE };
    loop {
        trap(Sysno::Recv, ep, 0, 0);
    }
}

/// The fault handler: receives one fault message on the endpoint and
/// leaves its label and first word (the address, for a memory-access
/// fault) in its buffer after [`DONE`]. It never answers, so the faulting
/// thread stays blocked.
extern "C" fn fault_handler(ipc: *mut IpcBuffer, arg: u64) -> ! {
    let (ep, reply) = (arg & 0xffff, (arg >> 16) & 0xffff);
    trap(Sysno::Recv, ep, 0, reply);
    // SAFETY: as in `server`.
    unsafe {
        let (label, word) = (MessageInfo((*ipc).tag).label(), (*ipc).msg[0]);
        (*ipc).msg[1] = label;
        (*ipc).msg[2] = word;
        (*ipc).msg[0] = DONE;
    }
    loop {
        trap(Sysno::Recv, ep, 0, reply);
    }
}

/// The faulting thread: one load from [`UNMAPPED`].
extern "C" fn faulter(_ipc: *mut IpcBuffer, _arg: u64) -> ! {
    // SAFETY: none is needed to fault: the load raises a page fault, which
    // the kernel turns into a message to this thread's fault handler.
    let _ = unsafe { core::ptr::read_volatile(UNMAPPED as *const u64) };
    loop {
        trap(Sysno::Yield, 0, 0, 0);
    }
}
