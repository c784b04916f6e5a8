//! `cnode.rs` under the `lockfree` regime (see `common::Bkl`).

#[path = "cnode.rs"]
mod suite;
