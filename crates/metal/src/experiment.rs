//! The experiment the command line names (`experiment=pingpong`, the
//! default; `user-fault`, a ring-3 thread per core whose page fault the
//! kernel sends to its fault handler, another ring-3 thread; `fuzz`,
//! system calls with garbage arguments from ring 3; `serial-irq`, the
//! serial line's interrupt delivered to a ring-3 thread; or
//! `kernel-fault`, which faults in the kernel on purpose to show the fault
//! report), under the regime it names:
//! `regime=none|bkl|bkl-ticket|bkl-mcs|fine|lockfree|rtm|all` (default
//! `all`), `rounds=N` round trips per core (default 10,000), `cores=N`
//! (default: every core the MADT lists, at most [`crate::MAX_CORES`]),
//! `check=every|end` (default `end`, see below), `threads=user|kernel`
//! (default `user`).
//!
//! **Ping-pong pairs.** The root task, driven by core 0, creates one
//! endpoint, one reply object and two threads (a server and a client, both
//! at priority 200) for every core, sets their affinity and resumes them.
//! With `threads=user` (the default) the threads are the ring-3 programs
//! of `programs.rs`, entered with `sysretq` and trapping with `syscall`
//! (`user.rs`); each core runs whichever of its threads the kernel chose
//! and makes the entry of each system call it traps with. With
//! `threads=kernel` each core performs its threads' entries itself (the
//! server's first `Recv`, then `ReplyRecv`; the client's `Call`), which
//! measures the kernel's path alone, as the `roundtrip` example does on
//! Linux. Replies are checked either way. The kernel decides everything
//! else — which thread runs, the
//! direct switches, the cross-core wake-ups (each exit plan's `ipis` sent
//! as interrupts, `irq.rs`) — exactly as behind a `syscall` instruction. A
//! core with nothing to run halts until an interrupt; timer ticks enter the
//! kernel as ticks.
//!
//! **Invariants.** The kernel's invariant checker runs once at the end of
//! every run, and with `check=every` (what the tests boot) also after every
//! entry: on one core under every regime, on more under the lock regimes
//! (the check takes the kernel like any entry). Under `none` and
//! `lockfree` on several cores it runs at the end only: their entries do
//! not exclude a checker reading the whole kernel.
//!
//! Each core prints one `metal_pingpong` JSON line: regime, threads, cores, core,
//! round trips, cycles per round trip from the time-stamp counter, and the
//! IPIs and timer ticks the core took during the regime's run (the root's
//! resumes of other cores' threads wake them with IPIs), with
//! `platform` `qemu-tcg` when QEMU's software emulation runs us (its
//! timings mean nothing).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, Ordering};

use granule_kernel::abi::{
    InvocationLabel, MessageInfo, ObjectType, Sysno, Word, CAP_FIRST_UNTYPED, CAP_INIT_CNODE, CAP_IRQ_CONTROL,
    FAULT_MEMORY_ACCESS,
};
use granule_kernel::{
    BigLock, BootConfig, CoreHandle, CoreMask, ExitPlan, FaultKind, Fine, Kernel, LockFree, NoLock, Regime, SpaceId,
    StartInfo, SyscallArgs, ThreadId, ThreadStatus, Transactional,
};
use granule_sync::lock::{Clh, Mcs, Ticket};
use granule_sync::profile::NoStats;

use crate::boot_info::BootInfo;
use crate::user::{self, UserContext};
use crate::{irq, paging, println, programs, smp};

/// Every regime `regime=all` runs, in order.
const ALL: [&str; 6] = ["none", "bkl", "bkl-ticket", "bkl-mcs", "fine", "lockfree"];

/// Runs what the command line asks; `Err` says what failed.
pub fn run(boot: &BootInfo) -> Result<(), String> {
    let scenario = match boot.arg("experiment").unwrap_or("pingpong") {
        "pingpong" => Scenario::PingPong,
        "user-fault" => Scenario::UserFault,
        "fuzz" => Scenario::Fuzz,
        "serial-irq" => Scenario::SerialIrq,
        "shootdown" => Scenario::Shootdown,
        "remote-stall" => Scenario::RemoteStall,
        "kernel-fault" => {
            // The fault report's own test: an invalid opcode in the kernel.
            println!("granule-metal: faulting on purpose (experiment=kernel-fault)");
            // SAFETY: `ud2` raises #UD, whose handler reports and ends the run.
            unsafe { core::arch::asm!("ud2", options(nomem, nostack)) };
            return Err("ud2 did not fault".into());
        }
        other => {
            return Err(format!(
                "experiment={other}: `pingpong`, `user-fault`, `fuzz`, `serial-irq`, `shootdown`, `remote-stall` or `kernel-fault`"
            ))
        }
    };
    let number = |key: &str, default: usize| -> Result<usize, String> {
        boot.arg(key).map_or(Ok(default), |v| v.parse().map_err(|_| format!("{key}={v}: not a number")))
    };
    let want = boot.arg("cores").map(|v| v.parse::<usize>()).transpose().map_err(|_| "cores=: not a number")?;
    if want == Some(0) {
        return Err("cores=0: at least one core is needed".into());
    }
    let rounds = number("rounds", 10_000)?.max(1);
    let user = match boot.arg("threads").unwrap_or("user") {
        "user" => true,
        "kernel" if scenario != Scenario::PingPong => return Err("this experiment needs threads=user".into()),
        "kernel" => false,
        other => return Err(format!("threads={other}: `user` (ring 3) or `kernel` (driven by each core)")),
    };
    let every = match boot.arg("check").unwrap_or("end") {
        "every" => true,
        "end" => false,
        other => return Err(format!("check={other}: `every` (after every entry) or `end`")),
    };
    let cores = smp::start_cores(boot.rsdp, want)?;
    if scenario == Scenario::RemoteStall && cores < 2 {
        return Err(
            "experiment=remote-stall needs at least 2 cores (it deletes a thread running on another one)".into()
        );
    }
    let platform = platform();
    println!("granule-metal: {cores} cores running on {platform}");
    // Every core's timer ticks (each core halts until it has seen two).
    smp::run_on_all(cores, &|core| {
        let mut ticks = 0;
        while ticks < 2 {
            ticks += u32::from(irq::wait(core) & irq::TICK != 0);
        }
    });
    println!("granule-metal: the timer ticks on every core");
    let regimes: Vec<&str> = match boot.arg("regime").unwrap_or("all") {
        "all" => ALL.to_vec(),
        one => alloc::vec![one],
    };
    let alone = regimes.len() == 1;
    for name in regimes {
        if scenario == Scenario::RemoteStall && name == "none" {
            // Core 0 deletes core 1's thread while core 1 may enter the
            // kernel for a tick: two cores on one object, which `none`'s
            // contract rules out (it would be a data race, not a result).
            let why = "regime none: remote-stall skipped (its contract forbids two cores touching one thread)";
            if alone {
                return Err(why.into());
            }
            println!("granule-metal: {why}");
            continue;
        }
        // The serial line interrupts one core: its experiment runs on core 0.
        let on = if scenario == Scenario::SerialIrq { 1 } else { cores };
        let pairs = Pairs { cores: on, rounds, platform, regime: name, every, user, scenario };
        match name {
            // SAFETY: each core's pair touches only its own objects and its
            // own core's state once the root, alone on core 0, built them;
            // the cores drive only their own handles (`NoLock`'s contract).
            "none" => pairs.run(unsafe { NoLock::new() }),
            "bkl" => pairs.run(BigLock::<Clh>::new(cores)),
            "bkl-ticket" => pairs.run(BigLock::<Ticket>::new(cores)),
            "bkl-mcs" => pairs.run(BigLock::<Mcs>::new(cores)),
            "fine" => pairs.run(Fine::<NoStats>::new(&config(cores))),
            "lockfree" => pairs.run(LockFree::new(cores)),
            "rtm" => match Transactional::<granule_sync::rtm::Rtm>::new(cores) {
                Ok(r) => pairs.run(r),
                Err(e) => Err(format!("regime rtm refused: {e}")),
            },
            other => {
                Err(format!("regime={other}: not one of none, bkl, bkl-ticket, bkl-mcs, fine, lockfree, rtm, all"))
            }
        }?;
    }
    Ok(())
}

/// The boot configuration of a run on `cores` cores: slabs sized for the
/// pairs (two threads, an endpoint and a reply object per core) with room
/// to spare, so that the invariant checker, which visits every slot, stays
/// quick enough to run after every entry under emulation.
fn config(cores: usize) -> BootConfig {
    let mut cfg = BootConfig::new(cores);
    cfg.root_priority = 100;
    cfg.root_cnode_bits = 8;
    cfg.max_threads = 64;
    cfg.max_endpoints = 32;
    cfg.max_replies = 32;
    cfg.max_notifications = 8;
    cfg.max_cnodes = 8;
    cfg.max_frames = 16;
    cfg.max_vspaces = 4;
    cfg.max_untypeds = 16;
    cfg.max_page_tables = 16;
    cfg.sysctl_max_nodes = 256;
    cfg
}

/// `qemu-tcg` under QEMU's software emulation (its CPUID hypervisor leaf
/// says `TCGTCGTCGTCG`), `hypervisor` under another one, else `bare-metal`.
fn platform() -> &'static str {
    let leaf1 = core::arch::x86_64::__cpuid(1);
    if leaf1.ecx & (1 << 31) == 0 {
        return "bare-metal";
    }
    // The hypervisor range exists when bit 31 is set.
    let h = core::arch::x86_64::__cpuid(0x4000_0000);
    let mut sig = [0u8; 12];
    for (i, w) in [h.ebx, h.ecx, h.edx].iter().enumerate() {
        sig[i * 4..i * 4 + 4].copy_from_slice(&w.to_le_bytes());
    }
    if &sig == b"TCGTCGTCGTCG" {
        "qemu-tcg"
    } else {
        "hypervisor"
    }
}

/// One ping-pong run: a pair per core.
struct Pairs {
    cores: usize,
    rounds: usize,
    platform: &'static str,
    regime: &'static str,
    /// Check the invariants after every entry (`check=every`).
    every: bool,
    /// The pairs' threads run in ring 3 (`threads=user`), not driven.
    user: bool,
    /// What each core's pair of threads is.
    scenario: Scenario,
}

/// What each core's pair of threads is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scenario {
    /// A server and a client (`experiment=pingpong`).
    PingPong,
    /// A thread that faults and its fault handler (`experiment=user-fault`).
    UserFault,
    /// A fuzzer making `rounds` system calls with garbage arguments, and its
    /// rescuer (`experiment=fuzz`).
    Fuzz,
    /// On core 0 only: a user thread woken by the serial line's interrupt
    /// through an IRQ handler object and a notification
    /// (`experiment=serial-irq`); its pair's other thread only waits.
    SerialIrq,
    /// On the target core (1, or 0 alone): a reader in an address space of
    /// its own and its fault handler; the root maps a frame there, the
    /// reader reads it through its page tables, the root unmaps it (a TLB
    /// shootdown of exactly the space's cores) and the reader's next read
    /// faults. The other cores run ping-pong pairs in no space
    /// (`experiment=shootdown`).
    Shootdown,
    /// On core 1: a thread computing without system calls, which the root
    /// deletes from core 0 (a stall IPI takes core 1 out of ring 3 first);
    /// the other cores run ping-pong pairs (`experiment=remote-stall`).
    RemoteStall,
}

/// The core the shootdown and remote-stall experiments aim at.
fn target_core(cores: usize) -> usize {
    usize::from(cores > 1)
}

/// What the root does from core 0 while the pairs run, once its threads
/// are done and the kernel chooses it.
#[derive(Clone, Copy, Debug)]
enum RootWork {
    /// When the reader on `target` saw the frame: unmap it, check that the
    /// page left `space`'s table, and signal `note` to wake the reader.
    Unmap { frame: Word, note: Word, target: usize, space: SpaceId },
    /// When the spinner on `target` runs: delete its TCB capability
    /// `victim` (restarting until its core is stalled).
    Delete { victim: Word, thread: ThreadId, target: usize },
}

/// Each core's handle, taken by that core alone.
struct Handles(Vec<UnsafeCell<CoreHandle>>);

// SAFETY: core `i` uses only `self.0[i]`, and `run_on_all` runs each core's
// part on that core alone.
unsafe impl Sync for Handles {}

impl Pairs {
    fn run<R: Regime>(&self, regime: R) -> Result<(), String> {
        let cores = self.cores;
        let (mut k, boot, hs) = Kernel::boot(config(cores), regime).map_err(|e| format!("boot: {e:?}"))?;
        k.set_translations(&paging::HARDWARE);
        let handles = Handles(hs.into_iter().map(UnsafeCell::new).collect());
        let before: Vec<(u64, u64)> = (0..cores).map(irq::taken).collect();
        let check = self.every && (cores == 1 || !matches!(self.regime, "none" | "lockfree"));
        // SAFETY: core 0's handle, used by core 0 alone until the per-core
        // part starts (and by core 0 in it).
        let h0 = unsafe { &mut *handles.0[0].get() };
        let root = Root { k: &k, me: boot.root_thread, check };
        let plan = k.ipi(h0);
        root.entered(h0, plan)?;
        let mut free = boot.first_free_slot;
        let mut pairs = Vec::with_capacity(cores);
        let mut work = None;
        let shot_before: Vec<u64> = (0..cores).map(paging::shootdowns_taken).collect();
        VICTIM_DELETED.store(false, Ordering::Relaxed);
        for core in 0..cores {
            let programs = match self.scenario {
                Scenario::PingPong => Programs {
                    server: programs::SERVER,
                    client: programs::CLIENT,
                    calls: self.rounds as u64,
                    fault_handler: false,
                },
                Scenario::UserFault => Programs {
                    server: programs::FAULT_HANDLER,
                    client: programs::FAULTER,
                    calls: 0,
                    fault_handler: true,
                },
                Scenario::SerialIrq => {
                    let pair = root.build_pair(h0, &mut free, core, None)?;
                    pairs.push(root.build_serial(h0, &mut free, pair)?);
                    continue;
                }
                Scenario::Shootdown if core == target_core(cores) => {
                    let programs = Programs {
                        server: programs::FAULT_HANDLER,
                        client: programs::READER,
                        calls: 0,
                        fault_handler: true,
                    };
                    let pair = root.build_pair(h0, &mut free, core, Some(programs))?;
                    work = Some(root.build_reader(h0, &mut free, core, pair)?);
                    pairs.push(pair);
                    continue;
                }
                Scenario::RemoteStall if core == target_core(cores) => {
                    let programs = Programs {
                        server: programs::SERVER,
                        client: programs::SPINNER,
                        calls: 0,
                        fault_handler: false,
                    };
                    let pair = root.build_pair(h0, &mut free, core, Some(programs))?;
                    root.start_at(h0, pair.client_cap, programs::SPINNER, core as Word)?;
                    programs::SPINNING[core].store(0, Ordering::Relaxed);
                    work = Some(RootWork::Delete { victim: pair.client_cap, thread: pair.client, target: core });
                    pairs.push(pair);
                    continue;
                }
                Scenario::Shootdown | Scenario::RemoteStall => Programs {
                    server: programs::SERVER,
                    client: programs::CLIENT,
                    calls: self.rounds as u64,
                    fault_handler: false,
                },
                Scenario::Fuzz => {
                    programs::FUZZ_TARGET.store(self.rounds as u64, Ordering::Relaxed);
                    programs::FUZZ_CALLS[core].store(0, Ordering::Relaxed);
                    programs::FUZZ_UNTYPED_RESULTS[core].store(0, Ordering::Relaxed);
                    programs::FUZZ_OK[core].store(0, Ordering::Relaxed);
                    programs::FUZZ_RESTARTS[core].store(0, Ordering::Relaxed);
                    let pair = root.build_pair(h0, &mut free, core, None)?;
                    pairs.push(root.build_fuzz(h0, &mut free, core, pair)?);
                    continue;
                }
            };
            pairs.push(root.build_pair(h0, &mut free, core, self.user.then_some(programs))?);
        }
        // The other cores' pairs first (the root keeps core 0), then core
        // 0's server, which runs at once and waits in `Recv`, giving core 0
        // back to the root, which resumes core 0's client last.
        for p in pairs.iter().skip(1) {
            root.invoke(h0, p.server_cap, InvocationLabel::TcbResume, &[])?;
            root.invoke(h0, p.client_cap, InvocationLabel::TcbResume, &[])?;
        }
        let mut drivers: Vec<UnsafeCell<Driver<'_, R>>> =
            pairs.iter().map(|&pair| UnsafeCell::new(Driver::new(&k, pair, self.rounds, check, self.user))).collect();
        // The root has nothing left to do but `work`: core 0 idles when it
        // is chosen.
        drivers[0].get_mut().root = Some(boot.root_thread);
        drivers[0].get_mut().work = work;
        if let Some(RootWork::Delete { target, .. }) = work {
            drivers[target].get_mut().victim = true;
        }
        let first = drivers[0].get_mut();
        first.follow(root.invoke_to(h0, pairs[0].server_cap, InvocationLabel::TcbResume, &[])?);
        first.step(h0)?;
        first.follow(root.invoke_to(h0, pairs[0].client_cap, InvocationLabel::TcbResume, &[])?);
        let failed = AtomicBool::new(false);
        let mut drivers = PerCore(drivers);
        let drive = |core: usize| {
            let (handles, drivers) = (&handles, &drivers);
            // SAFETY: this core's own handle and driver (see `PerCore`).
            let (h, d) = unsafe { (&mut *handles.0[core].get(), &mut *drivers.0[core].get()) };
            d.outcome = d.run(h, core, &failed);
            if d.outcome.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
        };
        if self.scenario == Scenario::SerialIrq {
            println!("granule-metal: waiting for a byte on the serial line");
        }
        smp::run_on_all(cores, &drive);
        // The first failure's own reason, not another core's "stopped".
        let first = drivers.0.iter_mut().enumerate().find_map(|(core, d)| match &d.get_mut().outcome {
            Err(e) if e != STOPPED => Some(format!("{} on core {core}: {e}", self.regime)),
            _ => None,
        });
        if let Some(e) = first {
            return Err(e);
        }
        k.check_invariants(h0).map_err(|v| format!("{}: an invariant broke during the run: {v:?}", self.regime))?;
        for (core, d) in drivers.0.into_iter().enumerate() {
            let d = d.into_inner();
            let cycles = d.outcome.map_err(|e| format!("{} on core {core}: {e}", self.regime))?;
            let now = irq::taken(core);
            let (ipis, ticks) = (now.0 - before[core].0, now.1 - before[core].1);
            if self.scenario == Scenario::SerialIrq {
                let byte = irq::serial_byte().map_or(-1, i64::from);
                println!(
                    "{{\"record\":\"metal_serial_irq\",\"platform\":\"{}\",\"regime\":\"{}\",\"core\":{core},\"byte\":{byte},\"badge\":{}}}",
                    self.platform, self.regime, d.report[0]
                );
                continue;
            }
            if self.scenario == Scenario::Fuzz {
                let calls = programs::FUZZ_CALLS[core].load(Ordering::Relaxed).min(self.rounds as u64);
                let untyped = programs::FUZZ_UNTYPED_RESULTS[core].load(Ordering::Relaxed);
                let ok = programs::FUZZ_OK[core].load(Ordering::Relaxed);
                let restarts = programs::FUZZ_RESTARTS[core].load(Ordering::Relaxed);
                println!(
                    "{{\"record\":\"metal_fuzz\",\"platform\":\"{}\",\"regime\":\"{}\",\"cores\":{cores},\"core\":{core},\"calls\":{calls},\"succeeded\":{ok},\"untyped_results\":{untyped},\"restarts\":{restarts}}}",
                    self.platform, self.regime
                );
                if untyped != 0 {
                    return Err(format!(
                        "{} on core {core}: {untyped} results neither success nor a typed error",
                        self.regime
                    ));
                }
                continue;
            }
            if self.scenario == Scenario::UserFault {
                let [label, addr] = d.report;
                if label != FAULT_MEMORY_ACCESS || addr != programs::UNMAPPED {
                    return Err(format!(
                        "{} on core {core}: the fault handler got label {label} for address {addr:#x}, not {FAULT_MEMORY_ACCESS} for {:#x}",
                        self.regime,
                        programs::UNMAPPED
                    ));
                }
                println!(
                    "{{\"record\":\"metal_user_fault\",\"platform\":\"{}\",\"regime\":\"{}\",\"cores\":{cores},\"core\":{core},\"label\":{label},\"addr\":{addr}}}",
                    self.platform, self.regime
                );
                continue;
            }
            if self.scenario == Scenario::Shootdown && core == target_core(cores) {
                self.shootdown_record(core, d.report, &shot_before, work)?;
                continue;
            }
            if self.scenario == Scenario::RemoteStall && core == target_core(cores) {
                if let Some(RootWork::Delete { thread, .. }) = work {
                    if let Some(info) = k.thread_info(h0, thread) {
                        return Err(format!("{}: the deleted thread outlived its core's stall: {info:?}", self.regime));
                    }
                }
                println!(
                    "{{\"record\":\"metal_remote_stall\",\"platform\":\"{}\",\"regime\":\"{}\",\"cores\":{cores},\"core\":{core},\"deleted\":true,\"ipis\":{ipis}}}",
                    self.platform, self.regime
                );
                continue;
            }
            println!(
                "{{\"record\":\"metal_pingpong\",\"platform\":\"{}\",\"regime\":\"{}\",\"threads\":\"{}\",\"cores\":{cores},\"core\":{core},\"round_trips\":{},\"cycles_per_round_trip\":{:.1},\"ipis\":{ipis},\"ticks\":{ticks}}}",
                self.platform,
                self.regime,
                if self.user { "user" } else { "kernel" },
                self.rounds,
                cycles as f64 / self.rounds as f64
            );
        }
        Ok(())
    }
}

impl Pairs {
    /// Checks and prints the shootdown experiment's outcome on the reader's
    /// core `core`: the reader's fault at the unmapped page, and shootdown
    /// IPIs taken by exactly the space's other cores (the reader's core
    /// unless it is core 0, which unmapped).
    fn shootdown_record(
        &self,
        core: usize,
        report: [Word; 2],
        before: &[u64],
        work: Option<RootWork>,
    ) -> Result<(), String> {
        let Some(RootWork::Unmap { space, .. }) = work else { return Err("no unmap was planned".into()) };
        let window = paging::WINDOW + programs::READER_PAGE;
        let [label, addr] = report;
        if label != FAULT_MEMORY_ACCESS || addr != window {
            return Err(format!(
                "{}: after the unmap the reader's fault handler got label {label} for {addr:#x}, not {FAULT_MEMORY_ACCESS} for {window:#x}",
                self.regime
            ));
        }
        let expected = if core == 0 { CoreMask::EMPTY } else { CoreMask::single(core) };
        let shot = paging::last_shot(space);
        let mut took = CoreMask::EMPTY;
        for (c, b) in before.iter().enumerate() {
            if paging::shootdowns_taken(c) > *b {
                took.insert(c);
            }
        }
        if shot != expected || took != expected {
            return Err(format!(
                "{}: the unmap shot down cores {:#b} and cores {:#b} took a shootdown, not exactly {:#b}",
                self.regime, shot.0, took.0, expected.0
            ));
        }
        println!(
            "{{\"record\":\"metal_shootdown\",\"platform\":\"{}\",\"regime\":\"{}\",\"cores\":{},\"core\":{core},\"space\":{},\"vaddr\":{window},\"shot_down\":{},\"took_shootdown\":{},\"fault_addr\":{addr}}}",
            self.platform,
            self.regime,
            self.cores,
            space.index(),
            shot.0,
            took.0
        );
        Ok(())
    }
}

/// Per-core values, each taken by its core alone.
struct PerCore<T>(Vec<UnsafeCell<T>>);

// SAFETY: core `i` uses only entry `i` (`run_on_all` runs each core's part
// on that core), and the boot core reads them after every core finished.
unsafe impl<T: Send> Sync for PerCore<T> {}

/// A pair's objects: capabilities in the root's CNode, and its threads.
#[derive(Clone, Copy, Debug)]
struct Pair {
    ep: Word,
    reply: Word,
    server_cap: Word,
    client_cap: Word,
    server: ThreadId,
    client: ThreadId,
}

/// What an exit plan says about this core's next thread.
#[derive(Clone, Copy, Debug)]
struct Next {
    run: Option<ThreadId>,
    start: Option<StartInfo>,
    space: Option<SpaceId>,
}

/// The ring-3 programs of a pair (entry words), the client's calls, and
/// whether the server is the client's fault handler.
#[derive(Clone, Copy, Debug)]
struct Programs {
    server: Word,
    client: Word,
    calls: u64,
    fault_handler: bool,
}

/// Bytes of each ring-3 thread's stack.
const USER_STACK: usize = 16 * 1024;

/// The root task's part, driven by core 0.
struct Root<'k, R: Regime> {
    k: &'k Kernel<R>,
    me: ThreadId,
    check: bool,
}

impl<R: Regime> Root<'_, R> {
    /// Checks the invariants after an entry if this run does.
    fn entered(&self, h: &mut CoreHandle, plan: ExitPlan) -> Result<Option<ThreadId>, String> {
        irq::send(plan.ipis);
        irq::acknowledge(plan.irq_acks);
        if self.check {
            self.k.check_invariants(h).map_err(|v| format!("invariant broken: {v:?}"))?;
        }
        Ok(plan.run)
    }

    /// The root's invocation of `cptr`; the thread core 0 runs next, and
    /// how it starts if it never ran.
    ///
    /// The root is core 0's current thread between entries, and core 0
    /// alone acts for it (so its IPC buffer is core 0's to use).
    fn invoke_to(&self, h: &mut CoreHandle, cptr: Word, label: InvocationLabel, args: &[Word]) -> Result<Next, String> {
        match self.try_invoke_to(h, cptr, label, args)? {
            (next, false) => Ok(next),
            (_, true) => Err(format!("the root's {label:?} asked for a restart")),
        }
    }

    /// As [`Self::invoke_to`], but a restart (the kernel must stall
    /// another core first) is not an error: `(next, restarted)`.
    fn try_invoke_to(
        &self,
        h: &mut CoreHandle,
        cptr: Word,
        label: InvocationLabel,
        args: &[Word],
    ) -> Result<(Next, bool), String> {
        // SAFETY: as in `invoke_to`.
        let b = unsafe { &mut *self.k.ipc_buffer(self.me) };
        b.msg[..args.len()].copy_from_slice(args);
        let info = MessageInfo::new(label.word(), 0, 0, args.len() as Word);
        let plan = self.k.syscall(h, SyscallArgs::new(Sysno::Call.word(), cptr, info.word(), 0));
        let next = Next { run: self.entered(h, plan)?, start: plan.start, space: plan.space };
        // SAFETY: as above.
        let b = unsafe { &*self.k.ipc_buffer(self.me) };
        if b.restart != 0 {
            return Ok((next, true));
        }
        b.result().map_err(|e| format!("the root's {label:?} failed: {e:?}"))?;
        Ok((next, false))
    }

    /// Makes thread `tcb` start at program `entry` with argument `arg`.
    fn start_at(&self, h: &mut CoreHandle, tcb: Word, entry: Word, arg: Word) -> Result<(), String> {
        // [resume 0, three registers: REG_PC, REG_SP (the platform gives
        // the stack), REG_ARG0]
        self.invoke(h, tcb, InvocationLabel::TcbWriteRegisters, &[0, 3, entry, 0, arg])
    }

    /// Makes core `core`'s new pair's client the shootdown experiment's
    /// reader: a VSpace of its own, a 4 KiB frame mapped there at
    /// [`programs::READER_PAGE`] (checked in the space's real page table)
    /// holding [`programs::MAGIC`], and a notification it waits on while
    /// the root unmaps the frame.
    fn build_reader(&self, h: &mut CoreHandle, free: &mut Word, core: usize, p: Pair) -> Result<RootWork, String> {
        let (space, frame, note) = (*free, *free + 1, *free + 2);
        *free += 3;
        let ut = CAP_FIRST_UNTYPED;
        self.invoke(h, ut, InvocationLabel::UntypedRetype, &[ObjectType::VSpace as Word, 0, 0, space, 1])?;
        self.invoke(h, ut, InvocationLabel::UntypedRetype, &[ObjectType::Frame as Word, 12, 0, frame, 1])?;
        self.invoke(h, ut, InvocationLabel::UntypedRetype, &[ObjectType::Notification as Word, 0, 0, note, 1])?;
        self.invoke(h, p.client_cap, InvocationLabel::TcbConfigure, &[CAP_INIT_CNODE, space])?;
        self.invoke(h, p.client_cap, InvocationLabel::TcbSetFaultHandler, &[p.ep])?;
        self.start_at(h, p.client_cap, programs::READER, note | (core as Word) << 16)?;
        programs::READER_SAW[core].store(0, Ordering::Relaxed);
        self.invoke(h, frame, InvocationLabel::FrameMap, &[space, programs::READER_PAGE])?;
        // SAFETY: the root's buffer, between its calls: the map's reply.
        let addr = unsafe { (*self.k.ipc_buffer(self.me)).msg[0] };
        let id = self.k.thread_info(h, p.client).and_then(|i| i.space).ok_or("the reader has no address space")?;
        match paging::walk(id, programs::READER_PAGE) {
            Some(a) if a == addr => {}
            other => return Err(format!("the mapped frame ({addr:#x}) is not in the space's page table: {other:x?}")),
        }
        // SAFETY: the frame's memory (the heap is identity mapped), 4 KiB
        // the frame owns; the kernel never touches a frame's contents and
        // the reader only reads it.
        unsafe { core::ptr::write_volatile(addr as *mut Word, programs::MAGIC) };
        Ok(RootWork::Unmap { frame, note, target: core, space: id })
    }

    /// As [`Self::invoke_to`], where the root keeps running.
    fn invoke(&self, h: &mut CoreHandle, cptr: Word, label: InvocationLabel, args: &[Word]) -> Result<(), String> {
        match self.invoke_to(h, cptr, label, args)?.run {
            Some(t) if t == self.me => Ok(()),
            other => Err(format!("after {label:?} core 0 runs {other:?}, not the root")),
        }
    }

    /// Makes core 0's new pair's client the serial line's user thread: a
    /// notification, an IRQ handler for the line (from the IRQ control
    /// capability) that signals it, and the line routed to core 0 and
    /// enabled at the UART.
    fn build_serial(&self, h: &mut CoreHandle, free: &mut Word, p: Pair) -> Result<Pair, String> {
        let (note, handler) = (*free, *free + 1);
        *free += 2;
        let ut = CAP_FIRST_UNTYPED;
        self.invoke(h, ut, InvocationLabel::UntypedRetype, &[ObjectType::Notification as Word, 0, 0, note, 1])?;
        let line = Word::from(crate::serial::IRQ);
        self.invoke(h, CAP_IRQ_CONTROL, InvocationLabel::IrqIssueIrqHandler, &[line, 0, handler])?;
        self.invoke(h, handler, InvocationLabel::IrqSetIrqHandler, &[note])?;
        for (t, entry, arg) in [
            (p.server_cap, programs::SERVER, programs::arg(p.ep, p.reply, 0)),
            (p.client_cap, programs::IRQ_WAITER, note | handler << 16),
        ] {
            self.invoke(h, t, InvocationLabel::TcbWriteRegisters, &[0, 3, entry, 0, arg])?;
        }
        crate::ioapic::route(crate::serial::IRQ, irq::SERIAL_VECTOR, smp::apic_id(0));
        crate::serial::enable_receive_interrupt();
        crate::ioapic::set_masked(crate::serial::IRQ, false);
        Ok(p)
    }

    /// Turns core `core`'s new pair into a fuzzer (the client's place) and
    /// its rescuer (the server's): a notification and a CNode of
    /// [`programs::FUZZ_SLOTS`] slots for the fuzzer holding its own TCB,
    /// the endpoint, the notification, the reply object and the CNode
    /// itself (slots 1 to 5), which is its whole CSpace; the rescuer keeps
    /// the root's CSpace and runs below the fuzzer (150 against 200).
    fn build_fuzz(&self, h: &mut CoreHandle, free: &mut Word, core: usize, p: Pair) -> Result<Pair, String> {
        let (note, cnode) = (*free, *free + 1);
        let ut = CAP_FIRST_UNTYPED;
        self.invoke(h, ut, InvocationLabel::UntypedRetype, &[ObjectType::Notification as Word, 0, 0, note, 1])?;
        self.invoke(h, ut, InvocationLabel::UntypedRetype, &[ObjectType::CNode as Word, 5, 0, cnode, 1])?;
        *free += 2;
        for (dest, src) in [(1, p.client_cap), (2, p.ep), (3, note), (5, cnode)] {
            // [dest_index, src_root (0: the root's CSpace), src_index, rights (all)]
            self.invoke(h, cnode, InvocationLabel::CNodeCopy, &[dest, 0, src, Word::MAX])?;
        }
        // A reply capability is not duplicated: it moves.
        self.invoke(h, cnode, InvocationLabel::CNodeMove, &[4, 0, p.reply])?;
        self.invoke(h, p.client_cap, InvocationLabel::TcbConfigure, &[cnode, 0])?;
        self.invoke(h, p.server_cap, InvocationLabel::TcbSetPriority, &[150])?;
        let fuzz = programs::fuzz_arg(core, false, core as u64 + 1);
        self.invoke(h, p.client_cap, InvocationLabel::TcbWriteRegisters, &[0, 3, programs::FUZZER, 0, fuzz])?;
        let rescue = p.client_cap | fuzz << 16;
        self.invoke(h, p.server_cap, InvocationLabel::TcbWriteRegisters, &[0, 3, programs::RESCUER, 0, rescue])?;
        Ok(p)
    }

    /// Creates core `core`'s pair in the slots from `*free` on; with
    /// `calls`, its threads start as the ring-3 programs (`programs.rs`).
    fn build_pair(
        &self,
        h: &mut CoreHandle,
        free: &mut Word,
        core: usize,
        user: Option<Programs>,
    ) -> Result<Pair, String> {
        let at = *free;
        for (i, ty) in [ObjectType::Endpoint, ObjectType::Reply, ObjectType::Tcb, ObjectType::Tcb].iter().enumerate() {
            self.invoke(h, CAP_FIRST_UNTYPED, InvocationLabel::UntypedRetype, &[*ty as Word, 0, 0, at + i as Word, 1])?;
        }
        *free += 4;
        let (server_cap, client_cap) = (at + 2, at + 3);
        for t in [server_cap, client_cap] {
            self.invoke(h, t, InvocationLabel::TcbConfigure, &[CAP_INIT_CNODE, 0])?;
            self.invoke(h, t, InvocationLabel::TcbSetPriority, &[200])?;
            self.invoke(h, t, InvocationLabel::TcbSetAffinity, &[core as Word])?;
        }
        if let Some(Programs { server, client, calls, fault_handler }) = user {
            let arg = programs::arg(at, at + 1, calls);
            for (t, entry) in [(server_cap, server), (client_cap, client)] {
                self.start_at(h, t, entry, arg)?;
            }
            if fault_handler {
                // The client's faults go to the pair's endpoint (its slot
                // in the root's CNode, the client's CSpace).
                self.invoke(h, client_cap, InvocationLabel::TcbSetFaultHandler, &[at])?;
            }
        }
        let mut id = |cap| self.k.thread_of_cap(h, self.me, cap).ok_or_else(|| format!("no thread behind slot {cap}"));
        Ok(Pair { ep: at, reply: at + 1, server_cap, client_cap, server: id(server_cap)?, client: id(client_cap)? })
    }
}

/// One core's part: it performs the entries of whichever of its pair's
/// threads the kernel runs there, as a `syscall` instruction would.
struct Driver<'k, R: Regime> {
    k: &'k Kernel<R>,
    pair: Pair,
    rounds: usize,
    check: bool,
    /// The thread the last entry's exit plan runs on this core.
    running: Option<ThreadId>,
    /// The address space it runs in.
    space: Option<SpaceId>,
    /// Whether the server made its first `Recv`.
    received: bool,
    /// Calls the client made.
    calls: usize,
    /// Cycles the round trips took, or what went wrong.
    outcome: Result<u64, String>,
    /// The pair runs in ring 3: its contexts (server, client), made at the
    /// plan's `start`, and their stacks.
    user: Option<[(UserContext, Vec<u8>); 2]>,
    /// A fresh start each of the pair's threads (server, client) was given
    /// by some exit plan and has not taken yet: a later plan (a tick's)
    /// may choose the thread again without it, as the kernel reports a
    /// start once.
    start: [Option<StartInfo>; 2],
    /// A ring-3 thread left [`programs::DONE`] in its buffer.
    done: bool,
    /// On core 0, the root, which has finished: chosen, it leaves the core
    /// idle.
    root: Option<ThreadId>,
    /// The two words after `DONE` (the fault handler's label and word).
    report: [Word; 2],
    /// On core 0: what the root still has to do (`RootWork`).
    work: Option<RootWork>,
    /// This core's client is the remote-stall experiment's victim: the
    /// core is done when the root deleted it and the core left it.
    victim: bool,
}

/// The root deleted the remote-stall experiment's victim.
static VICTIM_DELETED: AtomicBool = AtomicBool::new(false);

/// What a core's run says when it stopped because another core failed.
const STOPPED: &str = "stopped: another core failed";

/// Ticks a core may wait with nothing to run before its run fails.
const IDLE_TICKS: u32 = 3000;

impl<'k, R: Regime> Driver<'k, R> {
    fn new(k: &'k Kernel<R>, pair: Pair, rounds: usize, check: bool, user: bool) -> Self {
        let stacks = || (UserContext::default(), alloc::vec![0u8; USER_STACK]);
        Self {
            k,
            pair,
            rounds,
            check,
            running: None,
            space: None,
            received: false,
            calls: 0,
            outcome: Ok(0),
            user: user.then(|| [stacks(), stacks()]),
            start: [None; 2],
            done: false,
            report: [0; 2],
            root: None,
            work: None,
            victim: false,
        }
    }

    /// Takes the next thread from an exit plan.
    fn follow(&mut self, next: Next) {
        self.running = next.run;
        self.space = next.space;
        if let (Some(start), Some(t)) = (next.start, next.run) {
            let which = usize::from(t == self.pair.client);
            self.start[which] = Some(start);
        }
    }

    /// Whether this core's part is over.
    fn finished(&self) -> bool {
        if self.work.is_some() {
            return false;
        }
        if self.victim {
            return VICTIM_DELETED.load(Ordering::Acquire) && self.running != Some(self.pair.client);
        }
        if self.user.is_some() {
            self.done
        } else {
            self.calls >= self.rounds && self.running == Some(self.pair.client)
        }
    }

    /// Drives this core until its client made all its calls; the cycles
    /// from the first call to the last reply.
    fn run(&mut self, h: &mut CoreHandle, core: usize, failed: &AtomicBool) -> Result<u64, String> {
        let mut started = None;
        let mut idle_ticks = 0;
        while !self.finished() {
            if failed.load(Ordering::Relaxed) {
                return Err(STOPPED.into());
            }
            // Nothing to run: sleep until an interrupt (an IPI from the
            // core that makes a thread of ours runnable, or a tick).
            let rooted = self.root.is_some() && self.running == self.root;
            let idle = self.running.is_none() || (rooted && self.work.is_none());
            let reasons = if idle { irq::wait(core) } else { irq::take(core) };
            if reasons & irq::IPI != 0 {
                let plan = self.k.ipi(h);
                self.entered(h, plan)?;
            }
            if reasons & irq::TICK != 0 {
                let plan = self.k.timer_tick(h);
                self.entered(h, plan)?;
            }
            if reasons & irq::SERIAL != 0 {
                let plan = self.k.interrupt(h, crate::serial::IRQ as usize);
                self.entered(h, plan)?;
            }
            if self.root.is_some() && self.running == self.root && self.work.is_some() {
                self.root_work(h)?;
                continue;
            }
            if self.running.is_none() || self.running == self.root {
                idle_ticks += u32::from(reasons & irq::TICK != 0);
                if idle_ticks > IDLE_TICKS {
                    return Err(format!("core {core} idle for {IDLE_TICKS} ticks: its pair never became runnable"));
                }
                continue;
            }
            if started.is_none() && self.running == Some(self.pair.client) {
                started = Some(granule_sync::cycles::now());
            }
            self.step(h)?;
        }
        if self.user.is_none() {
            self.check_reply()?;
        }
        Ok(granule_sync::cycles::now() - started.unwrap_or(0))
    }

    /// One entry of the running thread: the server's `Recv` or `ReplyRecv`,
    /// or the client's next `Call`.
    fn step(&mut self, h: &mut CoreHandle) -> Result<(), String> {
        if self.user.is_some() {
            return self.step_user(h);
        }
        let p = self.pair;
        let args = if self.running == Some(p.server) {
            let tag = if self.received {
                // SAFETY: the server is this core's current thread between
                // entries, and only this core acts for it.
                let b = unsafe { &mut *self.k.ipc_buffer(p.server) };
                b.msg[0] = b.msg[0].wrapping_add(1);
                MessageInfo::new(2, 0, 0, 1).word()
            } else {
                0
            };
            let sysno = if self.received { Sysno::ReplyRecv } else { Sysno::Recv };
            self.received = true;
            SyscallArgs::new(sysno.word(), p.ep, tag, p.reply)
        } else if self.running == Some(p.client) {
            if self.calls > 0 {
                self.check_reply()?;
            }
            // SAFETY: the client is this core's current thread, as above.
            let b = unsafe { &mut *self.k.ipc_buffer(p.client) };
            b.msg[0] = self.calls as Word * 2;
            self.calls += 1;
            SyscallArgs::new(Sysno::Call.word(), p.ep, MessageInfo::new(1, 0, 0, 1).word(), 0)
        } else {
            return Err(format!("this core runs {:?}, which is not its pair's", self.running));
        };
        let plan = self.k.syscall(h, args);
        self.entered(h, plan)
    }

    /// Runs the chosen thread in ring 3 until its next system call, and
    /// makes that call's entry.
    fn step_user(&mut self, h: &mut CoreHandle) -> Result<(), String> {
        let p = self.pair;
        let (which, t) = match self.running {
            Some(t) if t == p.server => (0, t),
            Some(t) if t == p.client => (1, t),
            other => return Err(format!("this core runs {other:?}, which is not its pair's")),
        };
        let ipc = self.k.ipc_buffer(t);
        let Some(contexts) = self.user.as_mut() else { return Err("not a ring-3 run".into()) };
        let (ctx, stack) = &mut contexts[which];
        if let Some(start) = self.start[which].take() {
            let Some(&entry) = programs::PROGRAMS.get(start.entry as usize) else {
                return Err(format!("entry word {} names no program", start.entry));
            };
            let top = (stack.as_ptr() as u64 + stack.len() as u64) & !15;
            *ctx = UserContext::start(entry as *const () as u64, top, ipc as u64, start.arg);
        }
        paging::switch(self.space);
        let plan = match user::run(ctx) {
            user::Trap::Syscall(args) => {
                // SAFETY: the thread's buffer, between its system calls.
                let b = unsafe { &*ipc };
                if b.msg[0] == programs::DONE {
                    // The call is made all the same: the thread blocks or
                    // yields, and the core goes on to what the kernel
                    // chooses next (the root's work, on core 0).
                    self.done = true;
                    self.report = [b.msg[1], b.msg[2]];
                }
                self.k.syscall(h, args)
            }
            // A page fault (vector 14) is a memory access no mapping
            // allows (error bit 1: a write); anything else is `Other`.
            user::Trap::Fault { vector: 14, error, addr } => {
                self.k.fault(h, FaultKind::MemoryAccess { addr, write: error & 2 != 0 })
            }
            user::Trap::Fault { .. } => self.k.fault(h, FaultKind::Other),
            // The loop enters the kernel for the interrupt next.
            user::Trap::Interrupted => return Ok(()),
        };
        self.entered(h, plan)
    }

    /// The root's work, when its moment came (else nothing yet).
    fn root_work(&mut self, h: &mut CoreHandle) -> Result<(), String> {
        let (Some(work), Some(me)) = (self.work, self.root) else { return Ok(()) };
        let root = Root { k: self.k, me, check: self.check };
        match work {
            RootWork::Unmap { frame, note, target, space } => {
                if programs::READER_SAW[target].load(Ordering::Acquire) == 0 {
                    return Ok(());
                }
                let next = root.invoke_to(h, frame, InvocationLabel::FrameUnmap, &[])?;
                if let Some(a) = paging::walk(space, programs::READER_PAGE) {
                    return Err(format!("the unmapped frame ({a:#x}) is still in the space's page table"));
                }
                self.follow(next);
                self.work = None;
                let plan = self.k.syscall(h, SyscallArgs::new(Sysno::Signal.word(), note, 0, 0));
                self.entered(h, plan)
            }
            RootWork::Delete { victim, thread, target } => {
                if programs::SPINNING[target].load(Ordering::Acquire) == 0 {
                    return Ok(());
                }
                let (next, restarted) =
                    root.try_invoke_to(h, CAP_INIT_CNODE, InvocationLabel::CNodeDelete, &[victim])?;
                self.follow(next);
                if !restarted {
                    // Gone, or (`lockfree`, and any regime that finishes a
                    // running thread on its own core) a zombie until its
                    // core takes the stall IPI; checked gone at the end.
                    if let Some(info) = self.k.thread_info(h, thread).filter(|i| i.status != ThreadStatus::Zombie) {
                        return Err(format!("the deleted thread is still there: {info:?}"));
                    }
                    self.work = None;
                    VICTIM_DELETED.store(true, Ordering::Release);
                }
                Ok(())
            }
        }
    }

    /// The client's last call was answered with its word plus one.
    fn check_reply(&self) -> Result<(), String> {
        // SAFETY: the client is this core's current thread between entries.
        let b = unsafe { &*self.k.ipc_buffer(self.pair.client) };
        let sent = (self.calls as Word - 1) * 2;
        let tag = MessageInfo(b.tag);
        if tag.label() != 2 || b.msg[0] != sent + 1 {
            return Err(format!(
                "call {} answered with label {} and word {}, not 2 and {}",
                self.calls,
                tag.label(),
                b.msg[0],
                sent + 1
            ));
        }
        Ok(())
    }

    fn entered(&mut self, h: &mut CoreHandle, plan: ExitPlan) -> Result<(), String> {
        irq::send(plan.ipis);
        irq::acknowledge(plan.irq_acks);
        if self.check {
            self.k.check_invariants(h).map_err(|v| format!("invariant broken: {v:?}"))?;
        }
        self.follow(Next { run: plan.run, start: plan.start, space: plan.space });
        Ok(())
    }
}
