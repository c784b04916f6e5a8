//! Every behavioural suite under `rtm` over real RTM where the CPU has it (elsewhere every transaction aborts).
//! The regime is picked from this target's name (`common/pick.rs`).

mod common;
mod suites;
