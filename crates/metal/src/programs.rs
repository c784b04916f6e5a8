//! The ring-3 programs: the hosted platform's ping-pong server and client
//! (`granule_user::pingpong`, run through `trap.rs`'s `Trap`), and the
//! image's own test programs, written against the bare ABI.
//!
//! A program is entered as `entry(ipc_buffer, arg)` with `arg` packing the
//! pair's endpoint slot (bits 0..16), reply slot (16..32) and the client's
//! number of calls (32..64). It never returns. The client checks every
//! reply (label 2, its word plus one) and executes `ud2` on a wrong one,
//! which the fault report turns into a failed run; after its last call it
//! writes [`DONE`] in its buffer's first word and waits on the endpoint for
//! ever, leaving its core idle. The fault pair: a thread that loads from
//! an unmapped address, and its fault handler, which receives the fault
//! message and reports it the same way. The fuzz pair: a thread making
//! system calls with garbage arguments, and its rescuer.

use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use granule_kernel::abi::{Error, InvocationLabel, MessageInfo, Sysno, Word};
use granule_kernel::IpcBuffer;
use granule_user::env::Env;
use granule_user::pingpong::PingPong;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::trap::MetalTrap;
use crate::MAX_CORES;

/// The word a client leaves in its IPC buffer when it made all its calls.
pub const DONE: Word = 0xd0_e0d0_e0d0;

/// The programs, by entry word (what the root writes into `REG_PC`).
pub const PROGRAMS: [extern "C" fn(*mut IpcBuffer, u64) -> !; 11] =
    [server, client, fault_handler, faulter, rescuer, fuzzer, irq_waiter, reader, spinner, pp_server, pp_client];
/// The server's entry word.
pub const SERVER: Word = 0;
/// The client's entry word.
pub const CLIENT: Word = 1;
/// The fault handler's entry word.
pub const FAULT_HANDLER: Word = 2;
/// The faulting thread's entry word.
pub const FAULTER: Word = 3;
/// The fuzzer's rescuer's entry word.
pub const RESCUER: Word = 4;
/// The fuzzer's entry word.
pub const FUZZER: Word = 5;
/// The serial interrupt's waiter's entry word.
pub const IRQ_WAITER: Word = 6;
/// The shootdown experiment's reader's entry word.
pub const READER: Word = 7;
/// The remote-stall experiment's spinner's entry word.
pub const SPINNER: Word = 8;
/// granule-user's ping-pong server's entry word.
pub const PP_SERVER: Word = 9;
/// granule-user's ping-pong client's entry word.
pub const PP_CLIENT: Word = 10;

/// Where the faulting thread loads from: above the 4 GiB the boot page
/// tables map, so the load page-faults.
pub const UNMAPPED: Word = 0x10_0000_0000;

/// Packs a pair's start argument.
pub fn arg(ep: Word, reply: Word, calls: u64) -> Word {
    ep | reply << 16 | calls << 32
}

/// A system call from ring 3: number, capability, message info, fourth word.
fn trap(sysno: Sysno, cptr: Word, info: Word, extra: Word) {
    crate::trap::syscall(sysno.word(), cptr, info, extra);
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

/// Per core: system calls the fuzzer made, and results that were neither
/// success nor a typed error (there must be none). Ring 3 shares the
/// kernel's identity map, so the fuzzer counts here directly.
pub static FUZZ_CALLS: [AtomicU64; MAX_CORES] = [const { AtomicU64::new(0) }; MAX_CORES];
/// See [`FUZZ_CALLS`].
pub static FUZZ_UNTYPED_RESULTS: [AtomicU64; MAX_CORES] = [const { AtomicU64::new(0) }; MAX_CORES];
/// Per core: the fuzzer's calls that succeeded, and the rescuer's restarts.
pub static FUZZ_OK: [AtomicU64; MAX_CORES] = [const { AtomicU64::new(0) }; MAX_CORES];
/// See [`FUZZ_OK`].
pub static FUZZ_RESTARTS: [AtomicU64; MAX_CORES] = [const { AtomicU64::new(0) }; MAX_CORES];
/// The calls each fuzzer makes before it leaves [`DONE`].
pub static FUZZ_TARGET: AtomicU64 = AtomicU64::new(0);

/// The fuzzer's CSpace (its own CNode): slot 1 its own TCB, 2 an
/// endpoint, 3 a notification, 4 a reply object, 5 the CNode itself;
/// garbage capability pointers range over `0..FUZZ_SLOTS + 8`.
pub const FUZZ_SLOTS: Word = 32;

/// The fuzzer's start argument: its core, whether it may move between
/// cores (not under `none`, whose contract forbids two cores touching one
/// object), and a seed.
pub fn fuzz_arg(core: usize, may_migrate: bool, seed: u64) -> Word {
    core as Word | (may_migrate as Word) << 8 | seed << 16
}

/// The fuzzer: system calls with garbage arguments (number, capability
/// pointer, message info, fourth word, message words) from a seeded
/// generator; after each that returned, the result word must be success or
/// a typed error. It may block, suspend or reconfigure itself: its rescuer
/// restarts it (with a new seed) whenever its core has nothing else to do.
extern "C" fn fuzzer(ipc: *mut IpcBuffer, arg: u64) -> ! {
    let core = (arg & 0xff) as usize;
    let may_migrate = arg & 0x100 != 0;
    let mut rng = SmallRng::seed_from_u64(arg >> 16);
    loop {
        if FUZZ_CALLS[core].fetch_add(1, Ordering::Relaxed) >= FUZZ_TARGET.load(Ordering::Relaxed) {
            // SAFETY: as in `server`.
            unsafe { (*ipc).msg[0] = DONE };
            trap(Sysno::Yield, 0, 0, 0);
            continue;
        }
        let sysno = rng.gen_range(0..16u64);
        let cptr = rng.gen_range(0..FUZZ_SLOTS + 8);
        let mut label = rng.gen_range(0..26u64);
        if label == InvocationLabel::TcbSetAffinity.word() && !may_migrate {
            label = InvocationLabel::TcbSetPriority.word();
        }
        let info = if rng.gen_ratio(1, 8) {
            rng.gen::<u64>()
        } else {
            MessageInfo::new(label, 0, rng.gen_range(0..4), rng.gen_range(0..8)).word()
        };
        let extra = if rng.gen_ratio(1, 8) { rng.gen::<u64>() } else { rng.gen_range(0..FUZZ_SLOTS + 8) };
        // SAFETY: as in `server`.
        unsafe {
            let msg = &mut (*ipc).msg;
            for w in msg.iter_mut().take(6) {
                *w = if rng.gen_ratio(1, 8) { rng.gen::<u64>() } else { rng.gen_range(0..64) };
            }
            if !may_migrate && label == InvocationLabel::TcbSetPriority.word() {
                (*ipc).msg[0] = rng.gen_range(150..=255);
            }
            (*ipc).error = 0;
        }
        crate::trap::syscall(sysno, cptr, info, extra);
        // SAFETY: as in `server`.
        let w = unsafe { (*ipc).error };
        if w == 0 {
            FUZZ_OK[core].fetch_add(1, Ordering::Relaxed);
        } else if Error::result_from_word(w).err().map(Error::word) != Some(w) {
            FUZZ_UNTYPED_RESULTS[core].fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The fuzzer's rescuer, below the fuzzer's priority on its core: it runs
/// only when the fuzzer cannot (blocked, suspended, moved away or lowered),
/// and brings it back: its priority, its core, and a fresh start with a new
/// seed. `arg`: the fuzzer's TCB slot (bits 0..16) in the root's CNode and
/// the fuzzer's start argument (from bit 16).
extern "C" fn rescuer(ipc: *mut IpcBuffer, arg: u64) -> ! {
    let tcb = arg & 0xffff;
    let mut fuzz = arg >> 16;
    let core = fuzz & 0xff;
    let invoke = |label: InvocationLabel, args: &[Word]| {
        // SAFETY: as in `server`.
        let msg = unsafe { &mut (*ipc).msg };
        msg[..args.len()].copy_from_slice(args);
        trap(Sysno::Call, tcb, MessageInfo::new(label.word(), 0, 0, args.len() as Word).word(), 0);
    };
    loop {
        FUZZ_RESTARTS[core as usize].fetch_add(1, Ordering::Relaxed);
        fuzz = (fuzz & 0xffff)
            | ((fuzz >> 16).wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1) & 0xffff_ffff) << 16;
        invoke(InvocationLabel::TcbSetPriority, &[200]);
        invoke(InvocationLabel::TcbSetAffinity, &[core]);
        invoke(InvocationLabel::TcbWriteRegisters, &[1, 3, FUZZER, 0, fuzz]);
    }
}

/// The serial line's user thread: waits on the notification the line's
/// IRQ handler signals, acknowledges the interrupt (re-enabling the line),
/// and leaves the badge it received after [`DONE`]. `arg`: the
/// notification's slot (bits 0..16) and the IRQ handler's (16..32).
extern "C" fn irq_waiter(ipc: *mut IpcBuffer, arg: u64) -> ! {
    let (note, handler) = (arg & 0xffff, (arg >> 16) & 0xffff);
    trap(Sysno::Wait, note, 0, 0);
    // SAFETY: as in `server`.
    let badge = unsafe { (*ipc).badge };
    trap(Sysno::Call, handler, MessageInfo::new(InvocationLabel::IrqAckIrq.word(), 0, 0, 0).word(), 0);
    // SAFETY: as in `server`.
    unsafe {
        (*ipc).msg[1] = badge;
        (*ipc).msg[0] = DONE;
    }
    loop {
        trap(Sysno::Yield, 0, 0, 0);
    }
}

/// Where the shootdown experiment maps its frame in the reader's space
/// (the reader sees it at `paging::WINDOW` plus this).
pub const READER_PAGE: Word = 0x5000;
/// The word the root writes into the frame for the reader to find.
pub const MAGIC: Word = 0x6772_616e_756c_6521;
/// Per core: the reader found [`MAGIC`] through its space's page tables.
pub static READER_SAW: [AtomicU64; MAX_CORES] = [const { AtomicU64::new(0) }; MAX_CORES];

/// The shootdown experiment's reader, in an address space of its own:
/// reads [`READER_PAGE`] through the window until it finds [`MAGIC`],
/// says so in [`READER_SAW`], waits on the notification in `arg` (bits
/// 0..16; its core in 16..32) while the root unmaps the frame, then reads
/// again: the read must fault (its handler reports the address), and
/// `ud2` ends the run as failed if it does not.
extern "C" fn reader(_ipc: *mut IpcBuffer, arg: u64) -> ! {
    let (note, core) = (arg & 0xffff, ((arg >> 16) & 0xffff) as usize);
    let at = (crate::paging::WINDOW + READER_PAGE) as *const u64;
    // SAFETY: a load from this space's window: the frame mapped there, or a
    // page fault the kernel sends to the fault handler.
    while unsafe { core::ptr::read_volatile(at) } != MAGIC {
        core::hint::spin_loop();
    }
    READER_SAW[core % MAX_CORES].store(1, Ordering::Release);
    trap(Sysno::Wait, note, 0, 0);
    // SAFETY: as above; the frame is unmapped now, so this faults.
    let _ = unsafe { core::ptr::read_volatile(at) };
    // SAFETY: `ud2` faults; the fault report ends the run as failed.
    unsafe { core::arch::asm!("ud2", options(nomem, nostack)) };
    loop {
        trap(Sysno::Yield, 0, 0, 0);
    }
}

/// Per core: the spinner has run (the remote-stall experiment).
pub static SPINNING: [AtomicU64; MAX_CORES] = [const { AtomicU64::new(0) }; MAX_CORES];

/// The remote-stall experiment's victim: says it runs (its core in `arg`)
/// and computes for ever without a system call, until another core
/// deletes it and an interrupt takes its core away.
extern "C" fn spinner(_ipc: *mut IpcBuffer, arg: u64) -> ! {
    SPINNING[arg as usize % MAX_CORES].store(1, Ordering::Release);
    loop {
        core::hint::spin_loop();
    }
}

/// The granule-user ping-pong experiment the pair threads belong to (set
/// by the root before it starts them; one per kernel booted).
static PINGPONG: AtomicPtr<PingPong> = AtomicPtr::new(core::ptr::null_mut());

/// Makes `pp` the experiment [`PP_SERVER`] and [`PP_CLIENT`] threads run.
pub fn set_pingpong(pp: &'static PingPong) {
    PINGPONG.store(pp as *const PingPong as *mut PingPong, Ordering::Release);
}

/// The experiment set by [`set_pingpong`].
fn pingpong() -> &'static PingPong {
    let p = PINGPONG.load(Ordering::Acquire);
    // SAFETY: only `set_pingpong` stores here, a `&'static PingPong`, before
    // the root starts any thread that reads it.
    match unsafe { p.as_ref() } {
        Some(pp) => pp,
        None => panic!("no ping-pong experiment set"),
    }
}

/// granule-user's ping-pong server (`granule_user::pingpong::server`, the
/// hosted platform's program), through the bare-metal trap.
extern "C" fn pp_server(ipc: *mut IpcBuffer, arg: u64) -> ! {
    // SAFETY: `ipc` is this thread's own buffer, as its entry was given it.
    let mut env = Env::new(unsafe { MetalTrap::new(ipc) });
    granule_user::pingpong::server(&mut env, pingpong(), arg);
    loop {
        trap(Sysno::Yield, 0, 0, 0);
    }
}

/// granule-user's ping-pong client, as [`pp_server`].
extern "C" fn pp_client(ipc: *mut IpcBuffer, arg: u64) -> ! {
    // SAFETY: as in `pp_server`.
    let mut env = Env::new(unsafe { MetalTrap::new(ipc) });
    granule_user::pingpong::client(&mut env, pingpong(), arg);
    loop {
        trap(Sysno::Yield, 0, 0, 0);
    }
}
