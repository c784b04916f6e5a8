//! Every behavioural suite under the big lock with a ticket lock.
//! The regime is picked from this target's name (`common/pick.rs`).

mod common;
mod suites;
