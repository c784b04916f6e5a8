//! Finding the kernel's `roundtrip` example (`crates/kernel/examples/
//! roundtrip.rs`), and building it when it is not there.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// The command that builds the example, as people type it.
pub const BUILD: &str = "cargo build --release -p granule-kernel --example roundtrip";

/// Where the example is: `given` (`--roundtrip-bin`) if any; else, where
/// the source tree this `granule` was built from is still there, built now
/// with [`BUILD`] (a no-op when it is up to date, so the count is always of
/// the kernel as the tree stands, never of a stale example); else the one
/// beside the running `granule` (`target/release/examples/roundtrip`). A
/// debug build of `granule` never takes the debug example beside it (its
/// counts would be a debug build's).
pub fn locate(given: Option<&Path>) -> Result<PathBuf> {
    if let Some(path) = given {
        if !path.is_file() {
            bail!("--roundtrip-bin {}: no such file", path.display());
        }
        return Ok(path.to_path_buf());
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("examples").join("roundtrip")))
        .filter(|path| path.is_file() && !cfg!(debug_assertions));
    // The source tree this granule was built from (`crates/lab`'s workspace).
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if workspace.join("Cargo.toml").is_file() {
        return build(&workspace);
    }
    beside.ok_or_else(|| {
        anyhow::anyhow!(
            "the roundtrip example is not beside granule and the source tree it was built from is gone: \
             build it with `{BUILD}` in the granule source tree, or give its path with --roundtrip-bin"
        )
    })
}

/// Build the example with cargo in `workspace` and return the executable
/// cargo reports.
fn build(workspace: &Path) -> Result<PathBuf> {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.args(["build", "--release", "-p", "granule-kernel", "--example", "roundtrip"])
        .arg("--message-format=json-render-diagnostics")
        .current_dir(workspace)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    eprintln!("granule: building the roundtrip example as the source tree stands: {BUILD}");
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "cargo is not on PATH to build the roundtrip example: build it with `{BUILD}` in the granule \
             source tree, or give its path with --roundtrip-bin"
        ),
        Err(e) => return Err(e).context("could not run cargo"),
    };
    if !out.status.success() {
        bail!("`{BUILD}` failed ({}); give a built example with --roundtrip-bin", out.status);
    }
    match executable(&String::from_utf8_lossy(&out.stdout)) {
        Some(path) if path.is_file() => Ok(path),
        _ => bail!("`{BUILD}` succeeded but named no roundtrip executable; give it with --roundtrip-bin"),
    }
}

/// The `roundtrip` executable in cargo's JSON messages (its
/// `compiler-artifact` message names it).
fn executable(messages: &str) -> Option<PathBuf> {
    messages.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find_map(|m| {
        let artifact = m.get("reason")?.as_str()? == "compiler-artifact";
        let named = m.get("target")?.get("name")?.as_str()? == "roundtrip";
        (artifact && named).then(|| m.get("executable")?.as_str().map(PathBuf::from)).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_executable_comes_from_the_roundtrip_artifact() {
        let messages = r#"{"reason":"compiler-artifact","target":{"name":"granule_kernel"},"executable":null}
not json
{"reason":"compiler-artifact","target":{"name":"roundtrip"},"executable":"/t/release/examples/roundtrip"}
{"reason":"build-finished","success":true}"#;
        assert_eq!(executable(messages), Some(PathBuf::from("/t/release/examples/roundtrip")));
        assert_eq!(executable(r#"{"reason":"build-finished","success":true}"#), None);
        let no_exe = r#"{"reason":"compiler-artifact","target":{"name":"roundtrip"},"executable":null}"#;
        assert_eq!(executable(no_exe), None);
    }

    #[test]
    fn a_given_path_must_exist() {
        let e = locate(Some(Path::new("/nonexistent/granule-roundtrip"))).unwrap_err();
        assert!(e.to_string().contains("--roundtrip-bin /nonexistent/granule-roundtrip: no such file"), "{e}");
    }
}
