//! Running the `roundtrip` example under callgrind, and reading the
//! instruction total off valgrind's report.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The program this measurement needs, and where to get it.
const VALGRIND_MISSING: &str = "valgrind is not on PATH, and `granule ipc --instructions` counts instructions with \
     its callgrind tool: install it (Debian/Ubuntu: `apt-get install valgrind`) and run again";

/// valgrind's version line (`valgrind-3.19.0`), or the error saying to
/// install it.
pub fn valgrind_version() -> Result<String> {
    let out = match Command::new("valgrind").arg("--version").output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(VALGRIND_MISSING),
        Err(e) => return Err(e).context("could not run `valgrind --version`"),
    };
    if !out.status.success() {
        bail!("`valgrind --version` failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Instructions of one run of `bin iterations regime` under callgrind
/// (`--callgrind-out-file=/dev/null`: only the total is wanted). The run
/// must succeed and the example must report `regime`, which it silently
/// skips if it does not know it.
pub fn instructions(bin: &Path, iterations: u64, regime: &str) -> Result<u64> {
    let out = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(bin)
        .arg(iterations.to_string())
        .arg(regime)
        .output();
    let out = match out {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(VALGRIND_MISSING),
        Err(e) => return Err(e).context("could not start valgrind"),
    };
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        bail!("callgrind run of {} {iterations} {regime} failed ({}): {}", bin.display(), out.status, tail(&stderr));
    }
    if !stdout.contains(&format!("  {regime} ")) {
        let printed = if stdout.trim().is_empty() { "nothing" } else { stdout.trim() };
        bail!("{} {iterations} {regime} did not run regime {regime}; it printed {printed}", bin.display());
    }
    match total(&stderr) {
        Some(ir) => Ok(ir),
        None => bail!("no instruction total (`Collected :` or `I   refs:`) in valgrind's report: {}", tail(&stderr)),
    }
}

/// The last lines of a report, for an error message.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines[lines.len().saturating_sub(6)..].join(" | ")
}

/// The instruction total valgrind printed on stderr: the first number of
/// callgrind's `Collected :` line (its first event is `Ir`), else the `I
/// refs:` line of the summary (digits grouped by commas). Lines carry the
/// `==PID==` prefix.
pub fn total(stderr: &str) -> Option<u64> {
    let bodies = || stderr.lines().map(body);
    let collected = bodies().find_map(|l| value_after(l, "Collected"));
    collected.or_else(|| bodies().find_map(|l| value_after(l.strip_prefix('I')?, "refs")))
}

/// A report line without its `==PID==` prefix, trimmed.
fn body(line: &str) -> &str {
    let line = line.trim();
    let rest = line.strip_prefix("==").and_then(|r| r.split_once("==")).map_or(line, |(_, rest)| rest);
    rest.trim()
}

/// The first number after `label` (then optional spaces and a `:`), commas
/// allowed between digits.
fn value_after(line: &str, label: &str) -> Option<u64> {
    let rest = line.trim_start().strip_prefix(label)?.trim_start().strip_prefix(':')?;
    let word = rest.split_whitespace().next()?;
    if word.starts_with(',') || word.ends_with(',') || word.contains(",,") {
        return None;
    }
    word.replace(',', "").parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What valgrind 3.19 printed for `roundtrip 1000 none`.
    const REPORT: &str = "==4170== Callgrind, a call-graph generating cache profiler
==4170== Command: target/release/examples/roundtrip 1000 none
==4170== 
==4170== Events    : Ir
==4170== Collected : 5863868
==4170== 
==4170== I   refs:      5,863,868
";

    #[test]
    fn the_total_is_read_from_collected_or_from_i_refs() {
        assert_eq!(total(REPORT), Some(5_863_868));
        // Without the `Collected` line: the summary, commas and all.
        assert_eq!(total("==7== I   refs:  27,201,109\n"), Some(27_201_109));
        assert_eq!(total("==7== I refs: 1,000\n"), Some(1000));
        // Several events: the first is Ir.
        assert_eq!(total("==9== Events    : Ir Dr\n==9== Collected : 42 17\n"), Some(42));
        // No prefix at all.
        assert_eq!(total("Collected : 12\n"), Some(12));
        // `Collected` wins over the summary when they disagree.
        assert_eq!(total("==1== Collected : 10\n==1== I   refs: 11\n"), Some(10));
    }

    #[test]
    fn no_total_means_none() {
        for bad in [
            "",
            "==1== Events    : Ir\n",
            "==1== Collected :\n",
            "==1== Collected : lots\n",
            "==1== I   refs:  -5\n",
            "==1== I   refs:  ,5\n",
            "==1== I   refs:  5,,0\n",
            "==1== I   refs:  99999999999999999999999\n",
            "==1== D   refs:  1,000\n",
        ] {
            assert_eq!(total(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_tail_of_a_report_is_its_last_lines() {
        assert_eq!(tail("a\n\n b \nc\n"), "a | b | c");
        assert_eq!(tail(""), "");
        assert_eq!(tail(&"x\n".repeat(20)), ["x"; 6].join(" | "));
    }
}
