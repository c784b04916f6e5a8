//! `notification.rs` under the `lockfree` regime (see `common::Bkl`).

#[path = "notification.rs"]
mod suite;
