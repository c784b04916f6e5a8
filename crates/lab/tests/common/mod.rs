//! Helpers shared by the command-line tests: run `granule`, parse JSON Lines,
//! and headless Chromium for the report's browser tests ([`browser`]).

// Only the browser tests use it; every other test target compiles it too.
#[allow(dead_code)]
pub mod browser;

use std::process::Command;

use serde_json::Value;

/// Run the `granule` binary: (success, stdout, stderr).
pub fn granule(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_granule")).args(args).output().expect("run granule");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Parse JSON Lines output, failing on any malformed line.
pub fn records(stdout: &str) -> Vec<Value> {
    stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}"))).collect()
}

/// The records of one kind.
pub fn of_kind<'a>(rs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    rs.iter().filter(|r| r["record"] == kind).collect()
}
