//! Every behavioural suite under `rtm` with every transaction aborting, so every entry takes the fallback lock.
//! The regime is picked from this target's name (`common/mod.rs`, from the list in `granule_verify::regimes`).

mod common;
mod suites;
