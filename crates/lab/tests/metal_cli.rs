//! `granule metal` end to end: `metal run` builds the bare-metal image,
//! boots it under QEMU and prints one `metal_pingpong` record per core and
//! regime, each read back through the record type that read it off the
//! serial line; the image's refusals and missing programs are one clear
//! line; `metal image` makes a GRUB ISO holding a multiboot2 image that
//! boots. Behaviour only, never timings (QEMU's mean nothing).
//!
//! The tests that boot skip, saying why, where `qemu-system-x86_64` or the
//! `x86_64-unknown-none` target is missing; the ISO test also where
//! grub-mkrescue, GRUB's BIOS files or xorriso are.

#[allow(dead_code)]
mod common;
#[allow(dead_code)]
#[path = "../src/cmd/metal/record.rs"]
mod record;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{granule, of_kind, records};
use record::MetalPingpongRecord;

/// The regimes `--regime all` runs, in the image's order.
const ALL: [&str; 6] = ["none", "bkl", "bkl-ticket", "bkl-mcs", "fine", "lockfree"];

/// Whether `program flag` runs here.
fn have(program: &str, flag: &str) -> bool {
    Command::new(program).arg(flag).stdin(Stdio::null()).output().is_ok()
}

/// Why the image cannot be built and booted here, if it cannot.
fn cannot_boot() -> Option<&'static str> {
    if !have("qemu-system-x86_64", "--version") {
        return Some("qemu-system-x86_64 is not installed (Debian package `qemu-system-x86`)");
    }
    let Ok(sysroot) = Command::new("rustc").args(["--print", "sysroot"]).output() else {
        return Some("rustc is not on PATH to build the image with");
    };
    let sysroot = String::from_utf8_lossy(&sysroot.stdout).trim().to_string();
    if !Path::new(&sysroot).join("lib/rustlib/x86_64-unknown-none").is_dir() {
        return Some("the x86_64-unknown-none target is not installed (rustup target add x86_64-unknown-none)");
    }
    None
}

/// Whether the image can boot here; if not, says the test is skipped.
fn can_boot(test: &str) -> bool {
    match cannot_boot() {
        Some(why) => {
            eprintln!("{test}: skipped, {why}");
            false
        }
        None => true,
    }
}

/// `granule args` with PATH set to `path`: (success, stdout, stderr).
fn granule_with_path(args: &[&str], path: &str) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_granule")).args(args).env("PATH", path).output().expect("run granule");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// The last line of stderr: the `granule: error:` line of a failed run
/// (cargo's build output comes before it).
fn error_line(err: &str) -> &str {
    let line = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
    assert!(line.starts_with("granule: error: "), "{err}");
    line
}

#[test]
fn run_prints_one_record_per_core_and_regime_that_reads_back() {
    if !can_boot("run_prints_one_record_per_core_and_regime_that_reads_back") {
        return;
    }
    let dir = tempfile::tempdir().expect("scratch directory");
    let log = dir.path().join("serial.log");
    let log_arg = log.display().to_string();
    let args =
        ["metal", "run", "--cores", "2", "--rounds", "20", "--check", "every", "--format", "json", "--out", &log_arg];
    let (ok, out, err) = granule(&args);
    assert!(ok, "granule metal run failed: {err}");
    assert!(err.contains("timings under QEMU's software emulation (TCG) mean nothing"), "{err}");
    let rs = records(&out);
    assert_eq!(rs[0]["record"], "machine", "{out}");
    let pingpong: Vec<MetalPingpongRecord> = of_kind(&rs, "metal_pingpong")
        .into_iter()
        .map(|r| serde_json::from_value(r.clone()).unwrap_or_else(|e| panic!("{r} does not read back: {e}")))
        .collect();
    assert_eq!(rs.len(), 1 + pingpong.len(), "only the machine and metal_pingpong records: {out}");
    let got: Vec<(&str, usize)> = pingpong.iter().map(|r| (r.regime.as_str(), r.core)).collect();
    let want: Vec<(&str, usize)> = ALL.iter().flat_map(|&r| [(r, 0), (r, 1)]).collect();
    assert_eq!(got, want, "one record per core and regime, in the image's order");
    for r in &pingpong {
        assert_eq!((r.platform.as_str(), r.cores, r.round_trips), ("qemu-tcg", 2, 20), "{r:?}");
    }
    // The serial log holds the whole boot, the very lines the records are.
    let text = std::fs::read_to_string(&log).expect("the serial log");
    assert!(text.contains("command line \"regime=all rounds=20 cores=2 check=every\""), "{text}");
    assert!(text.contains("granule-metal: 2 cores running on qemu-tcg") && text.ends_with("granule-metal: passed\n"));
    for line in out.lines().skip(1) {
        assert!(text.contains(line), "{line} is not in the serial log");
    }

    // The table, on one core: the records and what their timings are worth.
    let (ok, out, err) = granule(&["metal", "run", "--cores", "1", "--rounds", "10", "--regime", "lockfree"]);
    assert!(ok, "granule metal run (table) failed: {err}");
    assert!(out.contains("== metal_pingpong =="), "{out}");
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with("qemu-tcg"))
        .unwrap_or_else(|| panic!("no lockfree row: {out}"));
    assert_eq!(
        row.split_whitespace().take(6).collect::<Vec<_>>(),
        ["qemu-tcg", "lockfree", "user", "1", "0", "10"],
        "{out}"
    );
    assert!(out.contains("mean nothing") && out.contains("Real numbers come from real hardware"), "{out}");
}

/// `--experiment ipc` and `scale` run granule-user's ping-pong (the hosted
/// experiments' programs) in the image and print the hosted experiments'
/// record kinds, each saying `platform: qemu-tcg`.
#[test]
fn ipc_and_scale_print_the_hosted_record_kinds_marked_with_their_platform() {
    if !can_boot("ipc_and_scale_print_the_hosted_record_kinds_marked_with_their_platform") {
        return;
    }
    let args = ["metal", "run", "--experiment", "ipc", "--runs", "2", "--rounds", "50", "--format", "json"];
    let (ok, out, err) = granule(&args);
    assert!(ok, "granule metal run --experiment ipc failed: {err}");
    let rs = records(&out);
    let ipc = of_kind(&rs, "ipc");
    assert_eq!(rs.len(), 1 + ipc.len(), "only the machine and ipc records: {out}");
    let regimes: Vec<&str> = ipc.iter().map(|r| r["regime"].as_str().unwrap_or("?")).collect();
    assert_eq!(regimes, ALL, "{out}");
    for r in &ipc {
        assert_eq!(
            (r["platform"].as_str(), r["runs"].as_u64(), r["words"].as_u64()),
            (Some("qemu-tcg"), Some(2), Some(1))
        );
        assert!(r["round_trip_cycles_mean"].as_f64().is_some_and(|c| c > 0.0), "{r}");
    }
    assert_eq!(ipc[0]["ratio_to_none"].as_f64(), Some(1.0), "none against itself");

    let args = ["metal", "run", "--experiment", "scale", "--regime", "bkl", "--cores", "2", "--runs", "2"];
    let (ok, out, err) = granule(&[&args[..], &["--delay", "500", "--rounds", "50", "--format", "json"]].concat());
    assert!(ok, "granule metal run --experiment scale failed: {err}");
    let rs = records(&out);
    let scale = of_kind(&rs, "scale");
    assert_eq!(scale.len(), 2, "one per run: {out}");
    for (i, r) in scale.iter().enumerate() {
        assert_eq!(
            (r["regime"].as_str(), r["cores"].as_u64(), r["run"].as_u64()),
            (Some("bkl"), Some(2), Some(i as u64 + 1))
        );
        assert_eq!((r["delay_cycles"].as_u64(), r["platform"].as_str()), (Some(500), Some("qemu-tcg")));
        assert!(r["round_trips_per_sec"].as_f64().is_some_and(|x| x > 0.0), "{r}");
    }
}

#[test]
fn rtm_is_refused_with_the_images_reason() {
    if !can_boot("rtm_is_refused_with_the_images_reason") {
        return;
    }
    let (ok, out, err) = granule(&["metal", "run", "--regime", "rtm", "--cores", "1", "--rounds", "10"]);
    assert!(!ok, "rtm ran under QEMU's emulation, which has no RTM: {out}");
    let line = error_line(&err);
    assert!(line.contains("the image failed under QEMU (exit status 3)"), "{line}");
    assert!(line.contains("regime rtm refused: RTM lock elision needs Intel RTM"), "{line}");
    assert!(!out.contains("metal_pingpong"), "{out}");
}

#[test]
fn bad_options_are_usage_errors() {
    for args in [
        &["metal", "run", "--regime", "bogus"][..],
        &["metal", "run", "--regime", "bkl,fine"],
        &["metal", "run", "--cores", "17"],
        &["metal", "run", "--check", "always"],
        &["metal", "run", "--experiment", "fuzz"],
        &["metal", "image", "--regime", "rtm-fallback"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_granule")).args(args).output().expect("run granule");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "granule {args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("granule: error: invalid value"), "{err}");
        assert!(err.contains(args[3]), "{err}");
    }
}

#[test]
fn missing_programs_are_named_with_their_debian_package() {
    let (ok, _, err) = granule_with_path(&["metal", "run"], "/nonexistent/granule-no-qemu");
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(error_line(&err).contains("qemu-system-x86_64 is not on PATH"), "{err}");
    assert!(err.contains("apt-get install qemu-system-x86"), "{err}");
    let (ok, _, err) = granule_with_path(&["metal", "image"], "/nonexistent/granule-no-grub");
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(error_line(&err).contains("grub-mkrescue is not on PATH"), "{err}");
    assert!(err.contains("apt-get install grub-pc-bin xorriso mtools"), "{err}");
    // A toolchain without the image's target (a `rustc` whose sysroot has
    // none): say the rustup command.
    if have("qemu-system-x86_64", "--version") {
        let out = Command::new(env!("CARGO_BIN_EXE_granule"))
            .args(["metal", "run"])
            .env("RUSTC", "echo")
            .output()
            .expect("run granule");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(error_line(&err).contains("the Rust target x86_64-unknown-none is not installed"), "{err}");
        assert!(err.contains("rustup target add x86_64-unknown-none"), "{err}");
    }
}

/// Boot `iso` under QEMU from its CD drive: (exit status, serial log).
fn boot_cdrom(iso: &Path, limit: Duration) -> (Option<i32>, String) {
    let mut child = Command::new("qemu-system-x86_64")
        .args(["-accel", "tcg,thread=multi", "-smp", "2", "-m", "256M", "-display", "none", "-serial", "stdio"])
        .args(["-no-reboot", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", "-cdrom"])
        .arg(iso)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("qemu starts");
    let start = Instant::now();
    while child.try_wait().expect("qemu waits").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("qemu output");
    let log = String::from_utf8_lossy(&out.stdout).replace('\r', "") + &String::from_utf8_lossy(&out.stderr);
    (out.status.code(), log)
}

#[test]
fn image_makes_a_grub_iso_that_boots_the_multiboot2_image() {
    let test = "image_makes_a_grub_iso_that_boots_the_multiboot2_image";
    if !can_boot(test) {
        return;
    }
    let bios_grub = Path::new("/usr/lib/grub/i386-pc").is_dir();
    if !have("grub-mkrescue", "--version") || !have("xorriso", "-version") || !bios_grub {
        eprintln!("{test}: skipped, GRUB for BIOS or xorriso is not installed (Debian: grub-pc-bin xorriso mtools)");
        return;
    }
    let dir = tempfile::tempdir().expect("scratch directory");
    let iso: PathBuf = dir.path().join("granule.iso");
    let iso_arg = iso.display().to_string();
    let (ok, out, err) =
        granule(&["metal", "image", "--out", &iso_arg, "--regime", "bkl", "--rounds", "10", "--cores", "2"]);
    assert!(ok, "granule metal image failed: {err}");
    assert!(out.starts_with(&format!("wrote {iso_arg} (")), "{out}");
    assert!(out.contains("`regime=bkl rounds=10 cores=2`") && out.contains("COM1, 115200 8N1"), "{out}");
    assert!(std::fs::metadata(&iso).expect("the ISO").len() > 0);

    // The ISO holds the image and a menu entry booting it with the command line.
    let files = dir.path().join("files");
    let extracted = Command::new("xorriso")
        .args(["-osirrox", "on", "-indev"])
        .arg(&iso)
        .args(["-extract", "/boot"])
        .arg(&files)
        .output()
        .expect("xorriso runs");
    assert!(extracted.status.success(), "{}", String::from_utf8_lossy(&extracted.stderr));
    let cfg = std::fs::read_to_string(files.join("grub/grub.cfg")).expect("grub.cfg in the ISO");
    assert!(cfg.contains("multiboot2 /boot/granule-metal regime=bkl rounds=10 cores=2\n"), "{cfg}");
    if have("grub-file", "--help") {
        let image = files.join("granule-metal");
        let ok = Command::new("grub-file").arg("--is-x86-multiboot2").arg(&image).status().expect("grub-file runs");
        assert!(ok.success(), "grub-file does not take {} for a multiboot2 image", image.display());
    }

    // GRUB boots it (multiboot2), and it runs what the menu entry says.
    let (status, log) = boot_cdrom(&iso, Duration::from_secs(300));
    assert_eq!(status, Some(33), "log:\n{log}");
    assert!(log.contains("granule-metal: booted by multiboot2"), "{log}");
    let bkl = log.lines().filter(|l| l.starts_with("{\"record\":\"metal_pingpong\"") && l.contains("\"bkl\"")).count();
    assert_eq!(bkl, 2, "one bkl record per core; log:\n{log}");
}
