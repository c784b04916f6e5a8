//! `random.rs` under the `lockfree` regime (see `common::Bkl`).

#[path = "random.rs"]
mod suite;
