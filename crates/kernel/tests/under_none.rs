//! Every behavioural suite under `none` (no lock: sound here because the suites enter the kernel from one thread, one entry at a time).
//! The regime is picked from this target's name (`common/mod.rs`, from the list in `granule_verify::regimes`).

mod common;
mod suites;
