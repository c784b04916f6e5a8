//! Every behavioural suite under `fine` (big-reader lock plus object locks).
//! The regime is picked from this target's name (`common/pick.rs`).

mod common;
mod suites;
