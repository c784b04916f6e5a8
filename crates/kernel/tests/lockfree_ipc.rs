//! `ipc.rs` under the `lockfree` regime (see `common::Bkl`).

#[path = "ipc.rs"]
mod suite;
