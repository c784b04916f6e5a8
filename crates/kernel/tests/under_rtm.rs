//! Every behavioural suite under `rtm` over real RTM where the CPU has it (elsewhere every transaction aborts).
//! The regime is picked from this target's name (`common/mod.rs`, from the list in `granule_verify::regimes`).

mod common;
mod suites;
