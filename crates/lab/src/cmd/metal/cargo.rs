//! Building the bare-metal image (`crates/metal`) with cargo as the source
//! tree stands, into `target/metal`, where the image's own boot tests
//! (`crates/metal/tests/qemu.rs`) build it too.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

/// The target the image is built for.
pub const TARGET: &str = "x86_64-unknown-none";

/// The command that builds the image, as people type it.
pub const BUILD: &str = "cargo build -p granule-metal --release --target x86_64-unknown-none";

/// How to install the target.
const ADD_TARGET: &str = "rustup target add x86_64-unknown-none";

/// The source tree this `granule` was built from, which holds the image's
/// source.
fn workspace() -> Result<PathBuf> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if !workspace.join("crates/metal/Cargo.toml").is_file() {
        bail!(
            "the granule source tree this granule was built from ({}) is gone, and the bare-metal image is \
             built from it with `{BUILD}`: run granule from a checkout",
            workspace.display()
        );
    }
    Ok(workspace.canonicalize().unwrap_or(workspace))
}

/// Whether the toolchain that builds in `workspace` has [`TARGET`]'s
/// prebuilt `core` and `alloc`; the error says how to install it.
fn check_target(workspace: &Path) -> Result<()> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = match Command::new(&rustc).args(["--print", "sysroot"]).current_dir(workspace).output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "rustc is not on PATH, and the bare-metal image is built with a Rust toolchain (rustup) that has the \
             {TARGET} target: install rustup, then `{ADD_TARGET}`"
        ),
        Err(e) => return Err(e).context("could not run `rustc --print sysroot`"),
    };
    if !out.status.success() {
        bail!("`rustc --print sysroot` failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
    }
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !sysroot.join("lib/rustlib").join(TARGET).is_dir() {
        bail!("the Rust target {TARGET} is not installed, and the bare-metal image is built for it: `{ADD_TARGET}`");
    }
    Ok(())
}

/// Build the image and return its path. Cargo's own progress and errors go
/// to stderr. `RUSTFLAGS` from the environment is left out: the image's
/// relocation model comes from `.cargo/config.toml`, which it would replace.
pub fn build() -> Result<PathBuf> {
    let workspace = workspace()?;
    check_target(&workspace)?;
    let target_dir = workspace.join("target/metal");
    eprintln!("granule: building the bare-metal image as the source tree stands: {BUILD} (into target/metal)");
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "-p", "granule-metal", "--release", "--target", TARGET])
        .current_dir(&workspace)
        .env("CARGO_TARGET_DIR", &target_dir)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status();
    let status = match status {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            bail!("cargo is not on PATH, and the bare-metal image is built with `{BUILD}`")
        }
        Err(e) => return Err(e).context("could not run cargo"),
    };
    if !status.success() {
        bail!(
            "building the bare-metal image failed ({status}): `{BUILD}` in {}; cargo's errors are above",
            workspace.display()
        );
    }
    let image = target_dir.join(TARGET).join("release/granule-metal");
    if !image.is_file() {
        bail!("`{BUILD}` succeeded but left no image at {}", image.display());
    }
    Ok(image)
}
