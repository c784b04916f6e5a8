//! `stall.rs` under the `lockfree` regime (see `common::Bkl`).

#[path = "stall.rs"]
mod suite;
