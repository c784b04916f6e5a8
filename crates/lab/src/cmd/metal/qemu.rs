//! Booting the image under QEMU's software emulation (TCG), as its boot
//! tests do (`crates/metal/tests/qemu.rs`):
//!
//! ```sh
//! qemu-system-x86_64 -accel tcg,thread=multi -m 256M -display none -serial stdio -no-reboot \
//!     -device isa-debug-exit,iobase=0xf4,iosize=0x04 -smp N -kernel IMAGE -append CMDLINE
//! ```
//!
//! The serial console (COM1) is QEMU's stdout, read a line at a time; the
//! image ends the run through the `isa-debug-exit` device, which turns what
//! it writes into QEMU's exit status: [`PASSED`] or [`FAILED`].

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// The emulator.
pub const QEMU: &str = "qemu-system-x86_64";

/// QEMU's status for a run that passed (the image writes 0x10 to
/// `isa-debug-exit`, which exits with `2 * 0x10 + 1`).
pub const PASSED: i32 = 33;

/// QEMU's status for a run that failed: a check, a refusal, a kernel fault
/// or a panic (0x01 written).
pub const FAILED: i32 = 3;

/// The program this command needs, and where to get it.
const QEMU_MISSING: &str = "qemu-system-x86_64 is not on PATH, and `granule metal run` boots the image under it: \
     install it (Debian/Ubuntu: `apt-get install qemu-system-x86`) and run again";

/// QEMU's version line, or the error saying to install it.
pub fn version() -> Result<String> {
    let out = match Command::new(QEMU).arg("--version").stdin(Stdio::null()).output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(QEMU_MISSING),
        Err(e) => return Err(e).with_context(|| format!("could not run `{QEMU} --version`")),
    };
    if !out.status.success() {
        bail!("`{QEMU} --version` failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or_default().trim().to_string())
}

/// QEMU's arguments for `image` on `cores` emulated CPUs with `cmdline`.
fn arguments(image: &Path, cores: usize, cmdline: &str) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = [
        "-accel",
        "tcg,thread=multi",
        "-m",
        "256M",
        "-display",
        "none",
        "-serial",
        "stdio",
        "-no-reboot",
        "-device",
        "isa-debug-exit,iobase=0xf4,iosize=0x04",
        "-smp",
    ]
    .iter()
    .map(Into::into)
    .collect();
    args.push(cores.to_string().into());
    args.push("-kernel".into());
    args.push(image.into());
    args.push("-append".into());
    args.push(cmdline.into());
    args
}

/// How a boot ended.
#[derive(Debug)]
pub struct Ended {
    /// QEMU's exit status; `None` if a signal ended it (or the timeout).
    pub status: Option<i32>,
    /// Whether the timeout ended it.
    pub timed_out: bool,
    /// The serial console, a line each (carriage returns taken off).
    pub serial: Vec<String>,
    /// What QEMU itself printed on stderr.
    pub stderr: String,
}

/// Boot `image` on `cores` CPUs with `cmdline`; `seen` is called with each
/// serial line as it arrives. QEMU is killed after `timeout`.
pub fn boot(image: &Path, cores: usize, cmdline: &str, timeout: Duration, mut seen: impl FnMut(&str)) -> Result<Ended> {
    let mut child = match Command::new(QEMU)
        .args(arguments(image, cores, cmdline))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(QEMU_MISSING),
        Err(e) => return Err(e).with_context(|| format!("could not start {QEMU}")),
    };
    let (stdout, mut stderr) = (child.stdout.take(), child.stderr.take());
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        let Some(stdout) = stdout else { return };
        let mut r = BufReader::new(stdout);
        let mut buf = Vec::new();
        while r.read_until(b'\n', &mut buf).is_ok_and(|n| n > 0) {
            let line = String::from_utf8_lossy(&buf).trim_end_matches(['\r', '\n']).to_string();
            if tx.send(line).is_err() {
                return;
            }
            buf.clear();
        }
    });
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(e) = stderr.as_mut() {
            let _ = e.read_to_string(&mut text);
        }
        text
    });
    let deadline = Instant::now() + timeout;
    let mut serial = Vec::new();
    let mut timed_out = false;
    // Lines until QEMU closes the serial console (it exits) or time is up.
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => {
                seen(&line);
                serial.push(line);
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                timed_out = true;
                break;
            }
        }
    }
    let status = loop {
        if timed_out {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        match child.try_wait().context("waiting for QEMU")? {
            Some(s) => break s.code(),
            None if Instant::now() >= deadline => timed_out = true,
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let _ = reader.join();
    // A line that came after the timeout (QEMU was killed, its pipe drained).
    serial.extend(rx.try_iter());
    let stderr = errors.join().unwrap_or_default();
    Ok(Ended { status, timed_out, serial, stderr })
}

/// The lines of a failed run that say why: every line but the records, the
/// banner, the core count and the final `FAILED`, without the image's
/// `granule-metal: ` prefix (so a regime's refusal reads `regime rtm
/// refused: …`, and a kernel fault gives its registers).
pub fn failure_lines(serial: &[String]) -> Vec<String> {
    serial
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && !l.starts_with('{'))
        .map(|l| l.strip_prefix("granule-metal: ").unwrap_or(l))
        .filter(|l| !l.starts_with("booted by ") && !l.contains(" cores running on ") && *l != "FAILED")
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(String::from).collect()
    }

    #[test]
    fn a_refusal_is_passed_through_without_the_prefix() {
        let log = lines(
            "granule-metal: booted by pvh, command line \"regime=rtm\", heap 253 MiB at 0x20e000\n\
             granule-metal: 1 cores running on qemu-tcg\n\
             granule-metal: regime rtm refused: RTM lock elision needs Intel RTM\n\
             granule-metal: FAILED\n",
        );
        assert_eq!(failure_lines(&log), ["regime rtm refused: RTM lock elision needs Intel RTM"]);
    }

    #[test]
    fn a_kernel_fault_gives_its_registers() {
        let log = lines(
            "granule-metal: booted by pvh, command line \"experiment=kernel-fault\", heap 253 MiB at 0x20e000\n\
             granule-metal: faulting on purpose (experiment=kernel-fault)\n\
             KERNEL FAULT on core 0: vector 6 (invalid opcode), error 0x0, rip 0x199193\n  rax 0x20e00b\n\
             {\"record\":\"metal_pingpong\"}\n\
             granule-metal: FAILED\n",
        );
        assert_eq!(
            failure_lines(&log),
            [
                "faulting on purpose (experiment=kernel-fault)",
                "KERNEL FAULT on core 0: vector 6 (invalid opcode), error 0x0, rip 0x199193",
                "rax 0x20e00b"
            ]
        );
    }

    #[test]
    fn the_arguments_are_the_boot_tests() {
        let args = arguments(Path::new("/i"), 2, "regime=bkl rounds=5");
        let words: Vec<&str> = args.iter().map(|a| a.to_str().unwrap_or_default()).collect();
        assert_eq!(
            words.join(" "),
            "-accel tcg,thread=multi -m 256M -display none -serial stdio -no-reboot \
             -device isa-debug-exit,iobase=0xf4,iosize=0x04 -smp 2 -kernel /i -append regime=bkl rounds=5"
        );
    }
}
