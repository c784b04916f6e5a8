//! One module per command.

pub mod info;
pub mod ipc;
pub mod kv;
pub mod locks;
pub mod metal;
pub mod model;
pub mod quaject;
pub mod report;
pub mod scale;
pub mod serve;
pub mod serve_bench;
pub mod subsystems;
pub mod suite;
pub mod synthesis;
pub mod verify;

use clap::Args;

use crate::output::Format;

/// Options every command has.
#[derive(Clone, Debug, Args)]
pub struct Common {
    /// Output format: a human table, JSON Lines (machine record first), or CSV.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}
