//! `irq_frame.rs` under the `lockfree` regime (see `common::Bkl`).

#[path = "irq_frame.rs"]
mod suite;
