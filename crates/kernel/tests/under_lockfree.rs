//! Every behavioural suite under `lockfree` (Synthesis-style shared paths).
//! The regime is picked from this target's name (`common/mod.rs`, from the list in `granule_verify::regimes`).

mod common;
mod suites;
