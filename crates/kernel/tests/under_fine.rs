//! Every behavioural suite under `fine` (big-reader lock plus object locks).
//! The regime is picked from this target's name (`common/mod.rs`, from the list in `granule_verify::regimes`).

mod common;
mod suites;
