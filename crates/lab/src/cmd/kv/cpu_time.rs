//! The CPU time a process has used (a server's, or this one's), read at
//! both ends of a measured window (`serve-bench`, `kv --linux`).
//!
//! Linux's CPU-time clock of the process (`clock_getcpuclockid(pid)`, then
//! `clock_gettime`): nanoseconds, over every thread of the process,
//! threads that have exited included. It is the total that utime + stime
//! of `/proc/<pid>/stat` split between them, without their 10 ms ticks: a
//! pipelined run is charged 15 to 40 ticks, so one tick was 2.5 to 7 % of
//! it. Where the clock cannot be read (a kernel that refuses it), the
//! ticks are read instead, and `serve-bench`'s setup record says which.

use anyhow::{Context, Result};
use nix::time::{clock_getcpuclockid, clock_gettime, ClockId};
use nix::unistd::Pid;

use crate::cmd::kv::linux::{process_ticks, USER_HZ};

/// How one process's CPU time is read.
#[derive(Clone, Copy, Debug)]
pub enum CpuClock {
    /// The process's CPU-time clock.
    Process(ClockId),
    /// utime + stime of `/proc/<pid>/stat`, in ticks.
    Ticks(u32),
}

impl CpuClock {
    /// The clock of process `pid`, or its ticks where the clock cannot be
    /// read.
    pub fn of(pid: u32) -> Self {
        let clock = i32::try_from(pid).ok().and_then(|p| clock_getcpuclockid(Pid::from_raw(p)).ok());
        match clock {
            Some(c) if clock_gettime(c).is_ok() => Self::Process(c),
            _ => Self::Ticks(pid),
        }
    }

    /// What the readings are, for the setup record.
    pub fn name(self) -> &'static str {
        match self {
            Self::Process(_) => "process CPU-time clock (ns)",
            Self::Ticks(_) => "/proc/<pid>/stat utime + stime (10 ms ticks)",
        }
    }

    /// CPU time used so far, seconds.
    pub fn read_s(self) -> Result<f64> {
        match self {
            Self::Process(c) => {
                let t = clock_gettime(c).context("reading a process CPU-time clock")?;
                Ok(t.tv_sec() as f64 + t.tv_nsec() as f64 * 1e-9)
            }
            Self::Ticks(pid) => Ok(process_ticks(pid)? as f64 / USER_HZ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_clock_moves_with_work() {
        let clock = CpuClock::of(std::process::id());
        assert!(matches!(clock, CpuClock::Process(_)), "{clock:?}");
        let before = clock.read_s().expect("read");
        // Work until the clock moves (a bounded number of steps).
        let mut x = 0u64;
        let mut after = before;
        for _ in 0..100_000 {
            if after > before {
                break;
            }
            for i in 0..10_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
            after = clock.read_s().expect("read");
        }
        assert!(after > before, "{before} -> {after}");
    }

    #[test]
    fn another_process_clock_is_readable() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().expect("sleep");
        let clock = CpuClock::of(child.id());
        let t = clock.read_s();
        let _ = child.kill();
        let _ = child.wait();
        assert!(matches!(clock, CpuClock::Process(_)), "{clock:?}");
        assert!(t.expect("read") >= 0.0);
    }

    #[test]
    fn a_missing_process_falls_back_to_ticks_which_fail_clearly() {
        let clock = CpuClock::of(u32::MAX);
        assert!(matches!(clock, CpuClock::Ticks(_)), "{clock:?}");
        assert!(clock.read_s().is_err());
    }
}
