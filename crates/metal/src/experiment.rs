//! The experiment the command line names (`experiment=pingpong`, the
//! default; `ipc` and `scale`, granule-user's ping-pong as the hosted
//! experiments run it (`experiment/hosted_programs.rs`); `user-fault`, a
//! ring-3 thread per core whose page fault the kernel sends to its fault
//! handler, another ring-3 thread; `fuzz`, system calls with garbage
//! arguments from ring 3; `serial-irq`, the serial line's interrupt
//! delivered to a ring-3 thread; `shootdown`, a frame mapped into and
//! unmapped from a second address space under a reader's feet;
//! `remote-stall`, a thread deleted while it computes on another core; or
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

use granule_kernel::abi::{InvocationLabel, Word, FAULT_MEMORY_ACCESS};
use granule_kernel::{
    BigLock, BootConfig, CoreHandle, CoreMask, Fine, Kernel, LockFree, NoLock, Regime, SpaceId, ThreadId, Transactional,
};
use granule_sync::lock::{Clh, Mcs, Ticket};
use granule_sync::profile::NoStats;

use crate::boot_info::BootInfo;
use crate::{irq, paging, println, programs, smp};

mod driver;
mod hosted_programs;
mod root;

use driver::{Driver, STOPPED, VICTIM_DELETED};
use root::{Programs, Root};

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
        "ipc" => Scenario::Ipc,
        "scale" => Scenario::Scale,
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
                "experiment={other}: `pingpong`, `ipc`, `scale`, `user-fault`, `fuzz`, `serial-irq`, `shootdown`, `remote-stall` or `kernel-fault`"
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
    let hosted_programs = matches!(scenario, Scenario::Ipc | Scenario::Scale);
    let runs = number("runs", if hosted_programs { 3 } else { 1 })?.max(1);
    let delay = number("delay", 0)? as u64;
    if !hosted_programs && (boot.arg("runs").is_some() || boot.arg("delay").is_some()) {
        return Err("runs= and delay= are for experiment=ipc and experiment=scale".into());
    }
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
    let tsc_hz = crate::tsc::hz();
    println!("granule-metal: the time-stamp counter runs at {tsc_hz} Hz");
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
        // The serial line interrupts one core, and `ipc` measures one core:
        // their experiments run on core 0.
        let on = if matches!(scenario, Scenario::SerialIrq | Scenario::Ipc) { 1 } else { cores };
        for run in 1..=runs {
            let pairs = Pairs { cores: on, rounds, platform, regime: name, every, user, scenario, run, delay, tsc_hz };
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
    /// The repetition (`ipc`, `scale`), from 1.
    run: usize,
    /// The servers' mean delay, cycles (`scale`).
    delay: u64,
    /// The time-stamp counter's rate.
    tsc_hz: u64,
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
    /// granule-user's ping-pong, one pair on core 0 (`experiment=ipc`).
    Ipc,
    /// granule-user's ping-pong, a pair on every core (`experiment=scale`).
    Scale,
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
        if matches!(self.scenario, Scenario::Ipc | Scenario::Scale) {
            return self.run_hosted_programs(&k, &boot, &handles, check);
        }
        let mut free = boot.first_free_slot;
        let mut pairs = Vec::with_capacity(cores);
        let mut work = None;
        let shot_before: Vec<u64> = (0..cores).map(paging::shootdowns_taken).collect();
        VICTIM_DELETED.store(false, Ordering::Relaxed);
        for core in 0..cores {
            let programs = match self.scenario {
                // Returned above: granule-user's root task builds them.
                Scenario::Ipc | Scenario::Scale => return Err("granule-user's pairs are not the root's".into()),
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
        let mut drivers: Vec<UnsafeCell<Driver<'_, R>>> = pairs
            .iter()
            .map(|&pair| UnsafeCell::new(Driver::new(&k, Some(pair), self.rounds, check, self.user)))
            .collect();
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
        if self.scenario == Scenario::SerialIrq {
            println!("granule-metal: waiting for a byte on the serial line");
        }
        let drivers = drive_all(cores, &handles, drivers, self.regime)?;
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

/// Runs every core's driver at once; the drivers afterwards, or the first
/// failure's own reason (not another core's "stopped").
fn drive_all<'k, R: Regime>(
    cores: usize,
    handles: &Handles,
    drivers: Vec<UnsafeCell<Driver<'k, R>>>,
    regime: &str,
) -> Result<PerCore<Driver<'k, R>>, String> {
    let failed = AtomicBool::new(false);
    let mut drivers = PerCore(drivers);
    let drive = |core: usize| {
        let drivers = &drivers;
        // SAFETY: this core's own handle and driver (see `PerCore`).
        let (h, d) = unsafe { (&mut *handles.0[core].get(), &mut *drivers.0[core].get()) };
        d.outcome = d.run(h, core, &failed);
        if d.outcome.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
    };
    smp::run_on_all(cores, &drive);
    let first = drivers.0.iter_mut().enumerate().find_map(|(core, d)| match &d.get_mut().outcome {
        Err(e) if e != STOPPED => Some(format!("{regime} on core {core}: {e}")),
        _ => None,
    });
    first.map_or(Ok(drivers), Err)
}

/// Per-core values, each taken by its core alone.
struct PerCore<T>(Vec<UnsafeCell<T>>);

// SAFETY: core `i` uses only entry `i` (`run_on_all` runs each core's part
// on that core), and the boot core reads them after every core finished.
unsafe impl<T: Send> Sync for PerCore<T> {}
