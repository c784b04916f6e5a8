//! One module per command.

pub mod info;
pub mod ipc;
pub mod kv;
pub mod locks;
pub mod model;
pub mod quaject;
pub mod scale;
pub mod serve;
pub mod serve_bench;
pub mod suite;
pub mod verify;

use anyhow::{bail, Context, Result};
use clap::Args;

use crate::output::Format;

/// Options every command has.
#[derive(Clone, Debug, Args)]
pub struct Common {
    /// Output format: a human table, JSON Lines (machine record first), or CSV.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Parse core counts: a range `1..N` (inclusive) or a list `1,2,4`, every
/// count positive and at most `max` (`why_max` says where the limit comes
/// from).
pub fn parse_counts(s: &str, max: usize, why_max: &str) -> Result<Vec<usize>> {
    let s = s.trim();
    let out: Vec<usize> = if let Some((lo, hi)) = s.split_once("..") {
        let lo: usize = lo.trim().parse().with_context(|| format!("bad core range `{s}`"))?;
        let hi: usize = hi.trim().trim_start_matches('=').parse().with_context(|| format!("bad core range `{s}`"))?;
        (lo..=hi).collect()
    } else {
        s.split(',')
            .map(|x| x.trim().parse::<usize>())
            .collect::<Result<_, _>>()
            .with_context(|| format!("bad core list `{s}`"))?
    };
    if out.is_empty() || out.contains(&0) {
        bail!("--cores needs positive core counts, e.g. 1..2 or 1,2");
    }
    if let Some(&c) = out.iter().find(|&&c| c > max) {
        bail!("{c} cores: {why_max}");
    }
    Ok(out)
}
