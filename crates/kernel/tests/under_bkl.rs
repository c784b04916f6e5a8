//! Every behavioural suite under the big lock (CLH).
//! The regime is picked from this target's name (`common/mod.rs`, from the list in `granule_verify::regimes`).

mod common;
mod suites;
