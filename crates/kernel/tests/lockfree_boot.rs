//! `boot.rs` under the `lockfree` regime (see `common::Bkl`).

#[path = "boot.rs"]
mod suite;
