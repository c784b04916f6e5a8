//! Boots the bare-metal image under QEMU's software emulation (TCG) and
//! checks what it prints on its serial line and its exit status.
//!
//! Skips, saying why, where `qemu-system-x86_64` or the
//! `x86_64-unknown-none` target is missing (`.ci/run` installs both).
//! Timings under TCG mean nothing; only behaviour is checked.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// QEMU's status for a run that passed: the image writes 0x10 to
/// `isa-debug-exit`, which exits with `2 * 0x10 + 1`.
const PASSED: i32 = 33;
/// The status for a failed run (0x01 written).
const FAILED: i32 = 3;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Why these tests cannot run here, if they cannot.
fn missing() -> Option<String> {
    if Command::new("qemu-system-x86_64").arg("--version").output().is_err() {
        return Some("qemu-system-x86_64 not on PATH (Debian: apt-get install qemu-system-x86)".into());
    }
    let sysroot = Command::new("rustc").args(["--print", "sysroot"]).output().ok()?;
    let sysroot = String::from_utf8_lossy(&sysroot.stdout).trim().to_string();
    if !Path::new(&sysroot).join("lib/rustlib/x86_64-unknown-none").exists() {
        return Some("the x86_64-unknown-none target is not installed (rustup target add x86_64-unknown-none)".into());
    }
    None
}

/// The image, built once per test process into `target/metal`.
fn image() -> &'static Path {
    static IMAGE: OnceLock<PathBuf> = OnceLock::new();
    IMAGE.get_or_init(|| {
        let target_dir = workspace().join("target/metal");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .current_dir(workspace())
            .args(["build", "-p", "granule-metal", "--release", "--target", "x86_64-unknown-none"])
            .env("CARGO_TARGET_DIR", &target_dir)
            // The image's relocation model comes from .cargo/config.toml,
            // which RUSTFLAGS from the outside would replace.
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the bare-metal image failed");
        target_dir.join("x86_64-unknown-none/release/granule-metal")
    })
}

/// This test's turn to boot: one boot at a time (see [`boot`]).
fn turn() -> std::sync::MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// QEMU booting the image on `cpus` CPUs with `cmdline`, its serial line
/// on standard input and output, its debug-exit device at port 0xf4.
fn qemu(cpus: usize, cmdline: &str) -> Command {
    let mut c = Command::new("qemu-system-x86_64");
    c.args(["-accel", "tcg,thread=multi", "-m", "256M", "-display", "none", "-serial", "stdio", "-no-reboot"])
        .args(["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", "-smp", &cpus.to_string()])
        .arg("-kernel")
        .arg(image())
        .args(["-append", cmdline]);
    c
}

/// One boot: its exit status and serial log.
struct Boot {
    status: i32,
    log: String,
}

/// Boots the image on `cpus` CPUs with `cmdline`, within `limit`. One
/// boot at a time: the emulated CPUs are host threads, and several boots
/// at once would share the host's few CPUs among all of them.
fn boot(cpus: usize, cmdline: &str, limit: Duration) -> Boot {
    let _turn = turn();
    let mut child = qemu(cpus, cmdline)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("qemu starts");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("qemu waits") {
            break s.code().unwrap_or(-1);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("qemu output");
            panic!(
                "{cpus} CPUs, {cmdline:?}: no exit within {limit:?}; serial log:\n{}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().expect("qemu output");
    let log = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    Boot { status, log: log + &String::from_utf8_lossy(&out.stderr) }
}

/// The `metal_pingpong` records of `log` for `regime`.
fn records<'a>(log: &'a str, regime: &str) -> Vec<&'a str> {
    let tag = format!("\"regime\":\"{regime}\"");
    log.lines().filter(|l| l.starts_with("{\"record\":\"metal_pingpong\"") && l.contains(&tag)).collect()
}

/// The integer field `key` of a record line.
fn number(line: &str, key: &str) -> u64 {
    let at = line.find(&format!("\"{key}\":")).unwrap_or_else(|| panic!("no {key} in {line}")) + key.len() + 3;
    line[at..].chars().take_while(char::is_ascii_digit).collect::<String>().parse().expect("a number")
}

macro_rules! skip_if_missing {
    () => {
        if let Some(why) = missing() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

/// Ping-pong pairs on every core under `regime`, their threads in ring 3
/// (`threads=user`) or driven by the core (`threads=kernel`), the invariant
/// checker after every entry where it can run, correct replies checked by
/// the image (a ring-3 client faults on a wrong one).
fn pingpong(cpus: usize, regime: &str, threads: &str) {
    let cmdline = format!("regime={regime} rounds=100 check=every threads={threads}");
    let b = boot(cpus, &cmdline, Duration::from_secs(120));
    assert_eq!(b.status, PASSED, "{cpus} CPUs, {regime}: status {}; log:\n{}", b.status, b.log);
    assert!(b.log.contains(&format!("{cpus} cores running on qemu-tcg")), "{}", b.log);
    assert!(b.log.contains("the timer ticks on every core"), "{}", b.log);
    let r = records(&b.log, regime);
    assert_eq!(r.len(), cpus, "one record per core; log:\n{}", b.log);
    for (core, line) in r.iter().enumerate() {
        let expect = format!("\"threads\":\"{threads}\",\"cores\":{cpus},\"core\":{core},\"round_trips\":100");
        assert!(line.contains(&expect), "{line}");
        assert!(line.contains("\"platform\":\"qemu-tcg\""), "{line}");
        // The root, on core 0, resumes every other core's threads: each of
        // those cores sleeps in `hlt` until that wake-up's IPI arrives.
        if core > 0 {
            assert!(number(line, "ipis") >= 1, "core {core} took no IPI: {line}");
        }
    }
}

#[test]
fn ring_3_pingpong_on_1_2_and_4_cpus_under_none_bkl_fine_and_lockfree() {
    skip_if_missing!();
    for cpus in [1, 2, 4] {
        for regime in ["none", "bkl", "fine", "lockfree"] {
            pingpong(cpus, regime, "user");
        }
    }
}

#[test]
fn kernel_driven_pingpong_on_2_cpus_under_every_lock_regime() {
    skip_if_missing!();
    for regime in ["bkl", "fine", "lockfree"] {
        pingpong(2, regime, "kernel");
    }
}

#[test]
fn every_regime_runs_in_one_boot() {
    skip_if_missing!();
    let b = boot(2, "regime=all rounds=50 check=every", Duration::from_secs(120));
    assert_eq!(b.status, PASSED, "log:\n{}", b.log);
    for regime in ["none", "bkl", "bkl-ticket", "bkl-mcs", "fine", "lockfree"] {
        assert_eq!(records(&b.log, regime).len(), 2, "{regime}; log:\n{}", b.log);
    }
}

#[test]
fn a_ring_3_page_fault_reaches_its_handler_under_every_regime_on_2_cpus() {
    skip_if_missing!();
    let b = boot(2, "regime=all experiment=user-fault check=every", Duration::from_secs(120));
    assert_eq!(b.status, PASSED, "log:\n{}", b.log);
    for regime in ["none", "bkl", "bkl-ticket", "bkl-mcs", "fine", "lockfree"] {
        let tag = format!("\"regime\":\"{regime}\"");
        let faults: Vec<&str> = b.log.lines().filter(|l| l.contains("metal_user_fault") && l.contains(&tag)).collect();
        assert_eq!(faults.len(), 2, "{regime}: one per core; log:\n{}", b.log);
        for line in faults {
            // FAULT_MEMORY_ACCESS (3) at the faulting thread's address.
            assert_eq!(number(line, "label"), 3, "{line}");
            assert_eq!(number(line, "addr"), 0x10_0000_0000, "{line}");
        }
    }
}

/// The lines of `log` with record kind `kind` for `regime`.
fn kind<'a>(log: &'a str, kind: &str, regime: &str) -> Vec<&'a str> {
    let (k, tag) = (format!("{{\"record\":\"{kind}\""), format!("\"regime\":\"{regime}\""));
    log.lines().filter(|l| l.starts_with(&k) && l.contains(&tag)).collect()
}

/// Under every regime in one boot on 1, 2 and 4 CPUs: a frame mapped in a
/// reader's own address space appears in that space's real page table
/// (the image checks the entry) and the reader reads it at 512 GiB plus
/// the page's address; unmapped, it leaves the table, a TLB shootdown
/// interrupts exactly the cores in the space's bitmap (the reader's core 1,
/// none on one CPU; never the cores running other spaces), and the
/// reader's next read faults to its handler at that address. The other
/// cores run ping-pong pairs meanwhile, the invariant checker after every
/// entry.
#[test]
fn a_tlb_shootdown_interrupts_exactly_the_cores_that_ran_the_space() {
    skip_if_missing!();
    for cpus in [1, 2, 4] {
        let b = boot(cpus, "regime=all experiment=shootdown rounds=50 check=every", Duration::from_secs(180));
        assert_eq!(b.status, PASSED, "{cpus} CPUs; log:\n{}", b.log);
        let window = (1u64 << 39) + 0x5000;
        for regime in ["none", "bkl", "bkl-ticket", "bkl-mcs", "fine", "lockfree"] {
            let shot = kind(&b.log, "metal_shootdown", regime);
            assert_eq!(shot.len(), 1, "{cpus} CPUs, {regime}; log:\n{}", b.log);
            let line = shot[0];
            let target = usize::from(cpus > 1);
            let expect = if cpus > 1 { 1u64 << target } else { 0 };
            assert_eq!(number(line, "core"), target as u64, "{line}");
            assert_eq!(number(line, "shot_down"), expect, "{line}");
            assert_eq!(number(line, "took_shootdown"), expect, "{line}");
            assert_eq!(number(line, "fault_addr"), window, "{line}");
            assert_eq!(number(line, "vaddr"), window, "{line}");
            assert_eq!(records(&b.log, regime).len(), cpus - 1, "{regime}: the other cores' pairs");
        }
    }
}

/// Under every regime but `none` (whose contract forbids two cores
/// touching one thread: the image says it skips it), on 2 and 4 CPUs: core
/// 0 deletes a thread that computes in ring 3 on core 1 without system
/// calls; the stall IPI takes core 1 out of ring 3, the deletion completes
/// and the thread is gone, the invariant checker after every entry.
#[test]
fn deleting_a_thread_running_on_another_core_stalls_that_core() {
    skip_if_missing!();
    for cpus in [2, 4] {
        let b = boot(cpus, "regime=all experiment=remote-stall rounds=50 check=every", Duration::from_secs(180));
        assert_eq!(b.status, PASSED, "{cpus} CPUs; log:\n{}", b.log);
        assert!(b.log.contains("regime none: remote-stall skipped"), "{}", b.log);
        for regime in ["bkl", "bkl-ticket", "bkl-mcs", "fine", "lockfree"] {
            let stalls = kind(&b.log, "metal_remote_stall", regime);
            assert_eq!(stalls.len(), 1, "{cpus} CPUs, {regime}; log:\n{}", b.log);
            assert!(stalls[0].contains("\"core\":1,\"deleted\":true"), "{}", stalls[0]);
            assert!(number(stalls[0], "ipis") >= 1, "{}", stalls[0]);
        }
    }
    let b = boot(1, "regime=bkl experiment=remote-stall", Duration::from_secs(60));
    assert_eq!(b.status, FAILED, "log:\n{}", b.log);
    assert!(b.log.contains("needs at least 2 cores"), "{}", b.log);
}

/// granule-user's ping-pong programs, the very source the hosted `ipc` and
/// `scale` experiments run, built by the same root-task code and run in
/// ring 3 through the bare-metal trap: a pair on every core of 1, 2 and 4
/// CPUs (`scale`, servers delaying between calls) and one on core 0 twice
/// (`ipc`), under every regime with the invariant checker after every
/// entry; every reply checked by the client, and the round trips counted
/// in each core's window.
#[test]
fn the_hosted_ping_pong_programs_run_unchanged_on_every_core() {
    skip_if_missing!();
    let regimes = ["none", "bkl", "bkl-ticket", "bkl-mcs", "fine", "lockfree"];
    for cpus in [1, 2, 4] {
        let b = boot(
            cpus,
            "regime=all experiment=scale rounds=100 runs=1 delay=1000 check=every",
            Duration::from_secs(180),
        );
        assert_eq!(b.status, PASSED, "{cpus} CPUs; log:\n{}", b.log);
        for regime in regimes {
            let r = records(&b.log, regime);
            assert_eq!(r.len(), cpus, "{cpus} CPUs, {regime}: one line per core; log:\n{}", b.log);
            for (core, line) in r.iter().enumerate() {
                let expect = format!("\"cores\":{cpus},\"core\":{core},\"round_trips\":");
                assert!(line.contains(&expect), "{line}");
                assert!(
                    line.contains(
                        "\"experiment\":\"scale\",\"program\":\"granule-user\",\"run\":1,\"delay_cycles\":1000"
                    ),
                    "{line}"
                );
                assert!(number(line, "round_trips") >= 100, "{line}");
                assert!(number(line, "tsc_hz") > 0, "{line}");
            }
        }
    }
    let b = boot(2, "regime=all experiment=ipc rounds=200 runs=2", Duration::from_secs(180));
    assert_eq!(b.status, PASSED, "log:\n{}", b.log);
    for regime in regimes {
        let r = records(&b.log, regime);
        assert_eq!(r.len(), 2, "{regime}: one line per run; log:\n{}", b.log);
        for (run, line) in r.iter().enumerate() {
            assert!(line.contains("\"cores\":1,\"core\":0"), "{line}");
            assert!(
                line.contains(&format!("\"experiment\":\"ipc\",\"program\":\"granule-user\",\"run\":{}", run + 1)),
                "{line}"
            );
        }
    }
}

/// The fuzz records of a boot: every regime, one per core, `calls` calls
/// each, every result success or a typed error.
fn check_fuzz(b: &Boot, cpus: usize, calls: u64) {
    assert_eq!(b.status, PASSED, "log:\n{}", b.log);
    for regime in ["none", "bkl", "bkl-ticket", "bkl-mcs", "fine", "lockfree"] {
        let tag = format!("\"regime\":\"{regime}\"");
        let lines: Vec<&str> = b.log.lines().filter(|l| l.contains("metal_fuzz") && l.contains(&tag)).collect();
        assert_eq!(lines.len(), cpus, "{regime}: one per core; log:\n{}", b.log);
        for line in lines {
            assert_eq!(number(line, "calls"), calls, "{line}");
            assert_eq!(number(line, "untyped_results"), 0, "{line}");
            // Garbage mostly fails, but not all of it.
            assert!(number(line, "succeeded") > 0, "{line}");
        }
    }
}

#[test]
fn ring_3_garbage_system_calls_100_000_per_core_and_regime_on_2_cpus() {
    skip_if_missing!();
    // The invariant checker at the end of each regime's run (the next test
    // runs it after every entry).
    let b = boot(2, "regime=all experiment=fuzz rounds=100000 check=end", Duration::from_secs(240));
    check_fuzz(&b, 2, 100_000);
}

#[test]
fn ring_3_garbage_system_calls_with_the_invariant_checker_after_every_entry() {
    skip_if_missing!();
    let b = boot(1, "regime=all experiment=fuzz rounds=2000 check=every", Duration::from_secs(240));
    check_fuzz(&b, 1, 2000);
}

#[test]
fn the_serial_line_interrupt_reaches_a_user_thread_under_every_regime() {
    skip_if_missing!();
    let _turn = turn();
    let mut child = qemu(2, "regime=all experiment=serial-irq check=every")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("qemu starts");
    let (mut stdin, stdout) = (child.stdin.take().expect("stdin"), child.stdout.take().expect("stdout"));
    // A watchdog: the boot must end within two minutes (it kills QEMU
    // only while this boot still runs).
    let pid = child.id();
    let running = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let still = running.clone();
    let watchdog = std::thread::spawn(move || {
        let start = Instant::now();
        while still.load(std::sync::atomic::Ordering::Relaxed) {
            if start.elapsed() > Duration::from_secs(120) {
                let _ = Command::new("kill").arg(pid.to_string()).status();
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let mut log = String::new();
    let mut sent = Vec::new();
    for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
        let line = line.expect("serial line").replace('\r', "");
        if line.contains("waiting for a byte on the serial line") {
            // One byte per regime, each a different letter.
            let b = b'a' + sent.len() as u8;
            std::io::Write::write_all(&mut stdin, &[b]).expect("a byte to the serial line");
            std::io::Write::flush(&mut stdin).expect("flushed");
            sent.push(b);
        }
        log.push_str(&line);
        log.push('\n');
    }
    let status = child.wait().expect("qemu exits").code().unwrap_or(-1);
    running.store(false, std::sync::atomic::Ordering::Relaxed);
    let _ = watchdog.join();
    assert_eq!(status, PASSED, "log:\n{log}");
    let regimes = ["none", "bkl", "bkl-ticket", "bkl-mcs", "fine", "lockfree"];
    assert_eq!(sent.len(), regimes.len(), "log:\n{log}");
    for (regime, byte) in regimes.iter().zip(sent) {
        let tag = format!("\"regime\":\"{regime}\"");
        let line = log
            .lines()
            .find(|l| l.contains("metal_serial_irq") && l.contains(&tag))
            .unwrap_or_else(|| panic!("no serial-irq record for {regime}; log:\n{log}"));
        assert_eq!(number(line, "byte"), u64::from(byte), "{line}");
    }
}

#[test]
fn rtm_refuses_clearly_under_emulation() {
    skip_if_missing!();
    let b = boot(1, "regime=rtm rounds=10", Duration::from_secs(60));
    assert_eq!(b.status, FAILED, "log:\n{}", b.log);
    assert!(b.log.contains("regime rtm refused: RTM lock elision needs Intel RTM"), "log:\n{}", b.log);
}

#[test]
fn a_kernel_fault_prints_its_state_and_fails() {
    skip_if_missing!();
    let b = boot(1, "experiment=kernel-fault", Duration::from_secs(60));
    assert_eq!(b.status, FAILED, "log:\n{}", b.log);
    assert!(b.log.contains("KERNEL FAULT on core 0: vector 6 (invalid opcode)"), "log:\n{}", b.log);
    assert!(b.log.contains("rip 0x"), "log:\n{}", b.log);
}

#[test]
fn bad_command_lines_are_refused_with_the_reason() {
    skip_if_missing!();
    let b = boot(1, "regime=bogus", Duration::from_secs(60));
    assert_eq!(b.status, FAILED, "log:\n{}", b.log);
    assert!(b.log.contains("regime=bogus: not one of"), "log:\n{}", b.log);
}
