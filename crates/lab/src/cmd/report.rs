//! `granule report`: the suite's page again from `results.jsonl` files,
//! without running anything. One file: its page, exactly as the suite
//! wrote it (both through [`crate::suite::results_file`], which also says
//! how bad lines are skipped; they are named on standard error here).
//! Several: one page comparing the machines ([`crate::suite::compare`]).
//!
//! It writes only where it is asked to (`--out`) or beside a suite's own
//! `results.jsonl`; any other file needs `--out`, so that a page is never
//! drawn over the suite's page from one step's records. It writes nothing
//! when it fails: the page and its figures are drawn into a staging
//! directory first ([`staging`]) and moved into place only once the whole
//! page is there.

mod staging;

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::Args as ClapArgs;

use crate::cmd::suite::SuiteRecord;
use crate::machine::MachineRecord;
use crate::suite::results_file::{read_results, write_report, Results};

/// The most results files one comparison takes.
pub const MAX_FILES: usize = 8;

/// The file name `granule suite` gives its records; only beside such a file
/// does `granule report` write without `--out`.
pub const RESULTS_FILE: &str = "results.jsonl";

/// Options of `granule report`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    /// `results.jsonl` files written by `granule suite`: one regenerates its
    /// page; two to 8 draw one page comparing the machines, one series per
    /// machine in every figure.
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Directory for the page and its SVG files (created if missing; files
    /// in it are replaced). Default: beside the one file when it is a
    /// suite's `results.jsonl`; required for any other file and when
    /// comparing.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Where the page goes: `--out`, else beside one suite `results.jsonl`;
/// anything else is refused before a file is read.
fn destination(a: &Args) -> Result<PathBuf> {
    if let Some(o) = &a.out {
        return Ok(o.clone());
    }
    let [one] = a.files.as_slice() else {
        bail!("--out is required when comparing several results files");
    };
    if one.file_name().and_then(|n| n.to_str()) != Some(RESULTS_FILE) {
        bail!(
            "{} is not a suite's {RESULTS_FILE}: without --out the page is written only beside a \
             {RESULTS_FILE} (it would replace that directory's index.html); give --out DIR to draw it elsewhere",
            one.display()
        );
    }
    Ok(one.parent().filter(|p| !p.as_os_str().is_empty()).map_or_else(|| PathBuf::from("."), Path::to_path_buf))
}

/// The file's machine and suite records that do not read into the structs
/// that write them (a field missing or of another type), as `FILE:LINE:
/// …`: the page then calls the machine unknown, or leaves out how the
/// suite ran ([`crate::suite::records`]).
fn unreadable_heads(r: &Results) -> Vec<String> {
    let name = r.path.display().to_string();
    let lines = || crate::typed::numbered(&r.records);
    let machine = crate::typed::read_records::<MachineRecord<'static>>(&name, lines()).err();
    let suite = crate::typed::read_records::<SuiteRecord<'static>>(&name, lines()).err();
    machine.into_iter().chain(suite).map(|e| format!("{e}")).collect()
}

/// Run `granule report`.
pub fn run(a: &Args) -> Result<()> {
    if a.files.len() > MAX_FILES {
        bail!("{} results files given: `granule report` compares at most {MAX_FILES}", a.files.len());
    }
    let out = destination(a)?;
    let mut all = Vec::new();
    for f in &a.files {
        let r = read_results(f)?;
        for s in r.skipped.iter().chain(&unreadable_heads(&r)) {
            eprintln!("granule: warning: {s}");
        }
        all.push(r);
    }
    let index = out.join("index.html");
    match all.as_slice() {
        [one] => {
            let n = staging::write_whole(&out, |dir| {
                let (n, _) = write_report(dir, &one.view()?)?;
                if n == 0 {
                    bail!("{}: no record the report draws (nothing written)", one.path.display());
                }
                Ok(n)
            })?;
            println!("report: {} ({n} figures, from {})", index.display(), one.path.display());
        }
        many => {
            let n = staging::write_whole(&out, |dir| crate::suite::compare::write(dir, many))?;
            println!("comparison of {} machines: {} ({n} figures)", many.len(), index.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(files: &[&str], out: Option<&str>) -> Args {
        Args { files: files.iter().map(PathBuf::from).collect(), out: out.map(PathBuf::from) }
    }

    #[test]
    fn only_a_results_file_is_drawn_in_place() {
        assert_eq!(destination(&args(&["d/results.jsonl"], None)).unwrap(), PathBuf::from("d"));
        assert_eq!(destination(&args(&["results.jsonl"], None)).unwrap(), PathBuf::from("."));
        for other in ["d/kv.jsonl", "d/info.csv", "d/results.jsonl.bak", "d/"] {
            let e = destination(&args(&[other], None)).unwrap_err().to_string();
            assert!(e.contains("--out"), "{other}: {e}");
        }
        assert_eq!(destination(&args(&["d/kv.jsonl"], Some("x"))).unwrap(), PathBuf::from("x"));
        let e = destination(&args(&["a/results.jsonl", "b/results.jsonl"], None)).unwrap_err().to_string();
        assert!(e.contains("--out"), "{e}");
    }
}
