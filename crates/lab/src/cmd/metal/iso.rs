//! `granule metal image`: the bare-metal image on a GRUB rescue ISO, for
//! real hardware (BIOS or CSM boot). The ISO holds the image as
//! `/boot/granule-metal` and a `grub.cfg` whose one menu entry boots it at
//! once with multiboot2 and the chosen command line, GRUB's own output on
//! the serial port too:
//!
//! ```text
//! set timeout=0
//! serial --unit=0 --speed=115200
//! terminal_input serial console
//! terminal_output serial console
//! menuentry "granule regime=all rounds=10000" {
//!   multiboot2 /boot/granule-metal regime=all rounds=10000
//!   boot
//! }
//! ```
//!
//! made with `grub-mkrescue -o OUT DIR` (Debian: grub-pc-bin for the BIOS
//! GRUB, xorriso for the ISO, mtools where GRUB's EFI files are installed).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;

use super::{cargo, command_line, MAX_CORES, MAX_ROUNDS};

/// What to install for the ISO, on Debian and Ubuntu.
const PACKAGES: &str = "Debian/Ubuntu: `apt-get install grub-pc-bin xorriso mtools`";

/// Where the BIOS GRUB's modules and images are (Debian's grub-pc-bin).
const BIOS_GRUB: &str = "/usr/lib/grub/i386-pc";

/// Options of `granule metal image`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    /// Where to write the ISO.
    #[arg(long, value_name = "FILE", default_value = "granule.iso")]
    pub out: PathBuf,
    /// The kernel's regime, or all (rtm runs where the CPU has
    /// Intel RTM, and refuses elsewhere).
    #[arg(long, default_value = "all", value_parser = super::regime_parser())]
    pub regime: String,
    /// Round trips per core, 1..=10^9.
    #[arg(long, default_value_t = 10_000, value_parser = crate::bounds::int::<u64>(1, MAX_ROUNDS))]
    pub rounds: u64,
    /// Cores to run pairs on, 1..=16 (default: every core the machine's
    /// ACPI tables list, at most 16).
    #[arg(long, value_parser = crate::bounds::int::<usize>(1, MAX_CORES))]
    pub cores: Option<usize>,
    #[command(flatten)]
    pub experiment: super::ExperimentArgs,
}

/// Whether `program` runs (`--version`, or `flag`).
fn runs(program: &str, flag: &str) -> bool {
    Command::new(program).arg(flag).stdin(Stdio::null()).output().is_ok()
}

/// The tools the ISO needs, or the error naming the packages.
fn check_tools() -> Result<()> {
    if !runs("grub-mkrescue", "--version") {
        bail!("grub-mkrescue is not on PATH, and the ISO is made with it: install it ({PACKAGES}) and run again");
    }
    if !runs("xorriso", "-version") {
        bail!(
            "xorriso is not on PATH, and grub-mkrescue writes the ISO with it: install it ({PACKAGES}) and run again"
        );
    }
    if !Path::new(BIOS_GRUB).is_dir() {
        bail!("GRUB for BIOS is not installed ({BIOS_GRUB} is missing), and the ISO boots with it: {PACKAGES}");
    }
    Ok(())
}

/// The GRUB configuration booting `/boot/granule-metal` with `cmdline`.
fn grub_cfg(cmdline: &str) -> String {
    format!(
        "set timeout=0\nserial --unit=0 --speed=115200\nterminal_input serial console\nterminal_output serial console\n\
         menuentry \"granule {cmdline}\" {{\n  multiboot2 /boot/granule-metal {cmdline}\n  boot\n}}\n"
    )
}

/// Run `granule metal image`.
pub fn run(a: &Args) -> Result<()> {
    let dir = a.out.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        bail!("--out {}: the directory {} does not exist", a.out.display(), dir.display());
    }
    check_tools()?;
    let image = cargo::build()?;
    let cmdline = command_line(&a.regime, a.rounds, a.cores, None) + &a.experiment.words();
    let staging = tempfile::tempdir().context("making a staging directory for the ISO")?;
    let grub = staging.path().join("boot/grub");
    std::fs::create_dir_all(&grub).context("staging the ISO")?;
    std::fs::copy(&image, staging.path().join("boot/granule-metal")).context("staging the image")?;
    std::fs::write(grub.join("grub.cfg"), grub_cfg(&cmdline)).context("staging grub.cfg")?;
    eprintln!(
        "granule: making the GRUB rescue ISO: grub-mkrescue -o {} (boot/granule-metal, boot/grub/grub.cfg)",
        a.out.display()
    );
    let out = Command::new("grub-mkrescue")
        .arg("-o")
        .arg(&a.out)
        .arg(staging.path())
        .stdin(Stdio::null())
        .output()
        .context("could not run grub-mkrescue")?;
    if !out.status.success() {
        let said: Vec<String> = String::from_utf8_lossy(&out.stderr)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        bail!(
            "grub-mkrescue failed ({}): {}; it needs GRUB for BIOS, xorriso and mtools ({PACKAGES})",
            out.status,
            said[said.len().saturating_sub(3)..].join(" | ")
        );
    }
    let size = std::fs::metadata(&a.out).with_context(|| format!("grub-mkrescue wrote no {}", a.out.display()))?.len();
    let cores =
        a.cores.map_or("every core the machine's ACPI tables list, at most 16".to_string(), |c| format!("{c} cores"));
    print!("{}", instructions(&a.out.display().to_string(), size, &cmdline, &cores));
    Ok(())
}

/// Where the ISO is, what it runs, and how to boot it and read its results.
fn instructions(iso: &str, size: u64, cmdline: &str, cores: &str) -> String {
    format!(
        "wrote {iso} ({:.1} MiB): a GRUB rescue image (BIOS or CSM boot) that boots the granule kernel at once\n\
         with `{cmdline}` ({cores}).\n\
         \n\
         Real hardware: write it to a USB stick (`dd if={iso} of=/dev/sdX bs=4M conv=fsync`, sdX the stick)\n\
         and boot the machine from it. Read the results on its first serial port (COM1, 115200 8N1) from\n\
         another machine over a null-modem cable, e.g. `picocom -b 115200 /dev/ttyUSB0`: one metal_pingpong\n\
         JSON line per core and regime with platform bare-metal, then `granule-metal: passed`. The machine\n\
         halts after its last line.\n\
         \n\
         Under QEMU (a check that it boots; timings there mean nothing):\n\
         qemu-system-x86_64 -cdrom {iso} -smp 2 -m 256M -display none -serial stdio -no-reboot \\\n    \
         -device isa-debug-exit,iobase=0xf4,iosize=0x04\n",
        size as f64 / (1024.0 * 1024.0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_menu_entry_boots_the_image_with_the_command_line_on_the_serial_port() {
        let cfg = grub_cfg("regime=bkl rounds=5 cores=2");
        assert!(cfg.contains("  multiboot2 /boot/granule-metal regime=bkl rounds=5 cores=2\n"), "{cfg}");
        assert!(cfg.contains("serial --unit=0 --speed=115200\n") && cfg.contains("terminal_output serial console\n"));
        assert!(cfg.starts_with("set timeout=0\n"), "{cfg}");
    }

    #[test]
    fn the_instructions_say_where_the_iso_is_and_how_to_read_the_serial_port() {
        let t = instructions("out/g.iso", 5 << 20, "regime=all rounds=10000", "2 cores");
        assert!(t.starts_with("wrote out/g.iso (5.0 MiB)"), "{t}");
        assert!(t.contains("COM1, 115200 8N1") && t.contains("qemu-system-x86_64 -cdrom out/g.iso"), "{t}");
    }
}
