//! `granule report`: the suite's page again from `results.jsonl` files,
//! without running anything. One file: its page, exactly as the suite
//! wrote it (both through [`crate::suite::results_file`], which also says
//! how bad lines are skipped; they are named on standard error here).
//! Several: one page comparing the machines ([`crate::suite::compare`]).

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::Args as ClapArgs;

use crate::suite::results_file::{read_results, write_report};

/// The most results files one comparison takes.
pub const MAX_FILES: usize = 8;

/// Options of `granule report`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    /// `results.jsonl` files written by `granule suite`: one regenerates its
    /// page; two to 8 draw one page comparing the machines, one series per
    /// machine in every figure.
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Directory for the page and its SVG files (created if missing; files
    /// in it are replaced). Default: the directory of the one file; required
    /// when comparing.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Run `granule report`.
pub fn run(a: &Args) -> Result<()> {
    if a.files.len() > MAX_FILES {
        bail!("{} results files given: `granule report` compares at most {MAX_FILES}", a.files.len());
    }
    let mut all = Vec::new();
    for f in &a.files {
        let r = read_results(f)?;
        for s in &r.skipped {
            eprintln!("granule: warning: {s}");
        }
        all.push(r);
    }
    let out = match (&a.out, all.as_slice()) {
        (Some(o), _) => o.clone(),
        (None, [one]) => one.path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        (None, _) => bail!("--out is required when comparing several results files"),
    };
    let index = out.join("index.html");
    match all.as_slice() {
        [one] => {
            let (n, _) = write_report(&out, &one.records)?;
            if n == 0 {
                bail!(
                    "{}: no record the report draws (wrote {} with its tables empty)",
                    one.path.display(),
                    index.display()
                );
            }
            println!("report: {} ({n} figures, from {})", index.display(), one.path.display());
        }
        many => {
            let n = crate::suite::compare::write(&out, many)?;
            println!("comparison of {} machines: {} ({n} figures)", many.len(), index.display());
        }
    }
    Ok(())
}
