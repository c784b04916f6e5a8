//! `tcb.rs` under the `lockfree` regime (see `common::Bkl`).

#[path = "tcb.rs"]
mod suite;
