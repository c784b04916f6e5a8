//! Every behavioural suite under the big lock (CLH).
//! The regime is picked from this target's name (`common/pick.rs`).

mod common;
mod suites;
