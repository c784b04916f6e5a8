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

use anyhow::{bail, Result};
use clap::Args;

use crate::output::Format;

/// Options every command has.
#[derive(Clone, Debug, Args)]
pub struct Common {
    /// Output format: a human table, JSON Lines (machine record first), or CSV.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Refuse `most` threads on `cpus` CPUs unless `allowed` (`spinners` says
/// what spins), and note on stderr when it is allowed.
pub fn oversubscription(most: usize, cpus: usize, spinners: &str, allowed: bool) -> Result<()> {
    if most <= cpus.max(1) {
        return Ok(());
    }
    let why = format!(
        "{most} threads on {cpus} CPUs: {spinners}; a waiter spins while the thread it waits for is preempted, \
         so each hand-off can wait a whole scheduler quantum"
    );
    if !allowed {
        bail!("{why}; pass --oversubscribe to measure that anyway");
    }
    eprintln!("granule: note: oversubscribed: {why}; the figures measure the OS scheduler as much as the locks");
    Ok(())
}
