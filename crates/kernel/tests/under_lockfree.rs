//! Every behavioural suite under `lockfree` (Synthesis-style shared paths).
//! The regime is picked from this target's name (`common/pick.rs`).

mod common;
mod suites;
