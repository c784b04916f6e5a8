//! The hosted platform's IPC experiments on bare metal: granule-user's
//! ping-pong (`granule_user::pingpong`, the very source `granule ipc` and
//! `granule scale` run as coroutines on Linux), built by the same root-task
//! code (`PingPong::build`, run through [`RootTrap`]) and run in ring 3
//! through the bare-metal trap (`trap.rs`).
//!
//! `experiment=ipc`: one pair on core 0, as `granule ipc` measures it;
//! `experiment=scale`: a pair on every core, the servers busy for an
//! exponential delay of mean `delay=` cycles between calls, as `granule
//! scale` measures each point. Each is repeated `runs=` times under every
//! regime, each run on a freshly booted kernel. Every core prints one
//! `metal_pingpong` line per run: the round trips its client counted in
//! its window (from the first round trip it saw to `rounds` later), the
//! window in time-stamp-counter cycles, the cycles it idled in it, and the
//! counter's rate, from which `granule metal run` makes `ipc` and `scale`
//! records.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::UnsafeCell;

use granule_kernel::abi::{InvocationLabel, MessageInfo, Sysno, Word, CAP_INIT_TCB};
use granule_kernel::{BootInfo, CoreHandle, FaultKind, IpcBuffer, Kernel, Regime, SyscallArgs};
use granule_user::env::Env;
use granule_user::pingpong::PingPong;
use granule_user::trap::Trap;

use super::driver::{Driver, Goal};
use super::root::{Next, Root};
use super::{Handles, Pairs, Scenario};
use crate::{irq, println, programs};

/// The root thread's trap: its system calls are core 0's entries, made
/// directly (core 0 drives the root task), with each plan performed.
struct RootTrap<'a, 'k, R: Regime> {
    root: &'a Root<'k, R>,
    h: &'a mut CoreHandle,
    /// The last plan's next thread for core 0.
    next: Option<Next>,
    /// The first thing that went wrong.
    error: Option<String>,
}

impl<R: Regime> Trap for RootTrap<'_, '_, R> {
    fn syscall(&mut self, args: SyscallArgs) {
        match self.root.syscall(self.h, args) {
            Ok(next) => self.next = Some(next),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
    }

    fn ipc_buffer(&mut self) -> &mut IpcBuffer {
        // SAFETY: the root is core 0's current thread while it builds, and
        // core 0 alone acts for it.
        unsafe { &mut *self.root.k.ipc_buffer(self.root.me) }
    }

    fn fault(&mut self, kind: FaultKind) {
        self.error.get_or_insert(format!("the root task raised {kind:?}"));
    }
}

impl Pairs {
    /// One run of granule-user's ping-pong on a booted kernel: the root
    /// builds the pairs and suspends itself, every core runs its pair until
    /// its client counted `rounds` more round trips, and each core prints
    /// its line.
    pub(super) fn run_hosted_programs<R: Regime>(
        &self,
        k: &Kernel<R>,
        boot: &BootInfo,
        handles: &Handles,
        check: bool,
    ) -> Result<(), String> {
        let cores = self.cores;
        let delay = if self.scenario == Scenario::Scale { self.delay as f64 } else { 0.0 };
        let pp: &'static PingPong =
            alloc::boxed::Box::leak(alloc::boxed::Box::new(PingPong::per_core(cores, delay, 1)));
        programs::set_pingpong(pp);
        let before: Vec<(u64, u64)> = (0..cores).map(irq::taken).collect();
        // SAFETY: core 0's handle, used by core 0 alone until the per-core
        // part starts (and by core 0 in it).
        let h0 = unsafe { &mut *handles.0[0].get() };
        let root = Root { k, me: boot.root_thread, check };
        let mut trap = RootTrap { root: &root, h: h0, next: None, error: None };
        let built = pp.build(&mut Env::new(&mut trap), boot, programs::PP_CLIENT, programs::PP_SERVER);
        if let Some(e) = trap.error.take() {
            return Err(e);
        }
        built.map_err(|e| format!("the root task's PingPong::build failed: {e:?}"))?;
        // The root is done: it suspends itself, and core 0 runs its pair.
        let info = MessageInfo::new(InvocationLabel::TcbSuspend.word(), 0, 0, 0);
        trap.syscall(SyscallArgs::new(Sysno::Call.word(), CAP_INIT_TCB, info.word(), 0));
        if let Some(e) = trap.error.take() {
            return Err(e);
        }
        let first = trap.next;
        let mut drivers: Vec<UnsafeCell<Driver<'_, R>>> = (0..cores)
            .map(|core| {
                let mut d = Driver::new(k, None, self.rounds, check, true);
                d.goal = Some(Goal::new(pp, core, self.rounds as u64));
                UnsafeCell::new(d)
            })
            .collect();
        if let Some(next) = first {
            drivers[0].get_mut().follow(next);
        }
        let drivers = super::drive_all(cores, handles, drivers, self.regime)?;
        if pp.bad_replies() != 0 {
            return Err(format!("{}: {} replies failed the client's check", self.regime, pp.bad_replies()));
        }
        let experiment = if self.scenario == Scenario::Scale { "scale" } else { "ipc" };
        for (core, d) in drivers.0.into_iter().enumerate() {
            let d = d.into_inner();
            let Some(Goal { measured: Some((window, trips)), idle_cycles, .. }) = d.goal else {
                return Err(format!("{} on core {core}: no round trips measured", self.regime));
            };
            let now = irq::taken(core);
            let (ipis, ticks) = (now.0 - before[core].0, now.1 - before[core].1);
            println!(
                "{{\"record\":\"metal_pingpong\",\"platform\":\"{}\",\"regime\":\"{}\",\"threads\":\"user\",\"cores\":{cores},\"core\":{core},\"round_trips\":{trips},\"cycles_per_round_trip\":{:.1},\"ipis\":{ipis},\"ticks\":{ticks},\"experiment\":\"{experiment}\",\"program\":\"granule-user\",\"run\":{},\"delay_cycles\":{},\"window_cycles\":{window},\"idle_cycles\":{idle_cycles},\"tsc_hz\":{}}}",
                self.platform,
                self.regime,
                window as f64 / trips.max(1) as f64,
                self.run,
                delay as Word,
                self.tsc_hz
            );
        }
        Ok(())
    }
}
