//! YCSB: the Yahoo! Cloud Serving Benchmark's core workloads, against a
//! Redis-compatible store.
//!
//! YCSB (Cooper et al., SoCC 2010) measures a key–value store with six
//! *core workloads*, A to F ([`Workload`]): mixes of reads, updates,
//! inserts, short scans and read-modify-writes over records of ten 100-byte
//! fields, whose keys follow a skewed popularity. A run has two phases. The
//! *load* phase inserts `recordcount` records; each of the clients loads its
//! share ([`Generator::load_keys`], [`Generator::insert_op`]). The *run*
//! phase draws operations ([`Generator::next_op`]) and runs each as Redis
//! commands ([`Transaction`]).
//!
//! This module reproduces YCSB's `CoreWorkload` and its generators, so that
//! results can be set beside published YCSB numbers:
//!
//! * record `n`'s key is `"user"` + [`fnvhash64`]`(n)` (`insertorder=hashed`;
//!   record 0 is `user6284781860667377211`), its fields `field0` … `field9`,
//!   its values YCSB's random bytes;
//! * keys are picked by YCSB's scrambled Zipfian (θ = 0.99; workloads A, B,
//!   C, E, F), skewed-latest (D) or uniform generators ([`zipfian`]), and
//!   operations by YCSB's discrete chooser, with the proportions of YCSB's
//!   workload files;
//! * the commands are those of YCSB's Redis binding ([`transaction`]): hashes
//!   for records and the sorted set `_indices`, scored by Java's
//!   `String.hashCode` of the key, for scans.
//!
//! Where we depart from YCSB, and why:
//!
//! * **Updates write every field** ([`Config::write_all_fields`] is true by
//!   default; YCSB's `writeallfields` default is false): our experiments'
//!   update is `HSET key field0 v0 … field9 v9`. Set it to false for YCSB's
//!   one-field update.
//! * **Defaults**: `recordcount` 32 000 (the seeds' experiments), not 1000.
//! * **No shared insert counter.** YCSB's client threads share the counter of
//!   run-phase inserts; our clients run on different cores and share
//!   nothing, so each inserts its own interleaved stream of record numbers
//!   and picks keys among the records it knows ([`Generator`]). The popular
//!   loaded keys are the same for every client.
//! * **Random numbers** come from a seeded [`rand::rngs::SmallRng`] per client
//!   (YCSB: `ThreadLocalRandom`): a run is reproducible from its seed.
//! * **Redis commands**: `HSET` for the binding's `HMSET`, and the details in
//!   [`transaction`].
//!
//! The generators are YCSB's algorithms operation for operation, quirks
//! included (Gray et al.'s approximate Zipfian tail, the redraw of keys not
//! inserted yet, `η` fixed at the initial item count); [`zipfian`] lists
//! them.

pub mod drive;
pub mod generator;
pub mod transaction;
pub mod workload;
pub mod zipfian;

pub use generator::{field_name, key_name, random_value, Generator, Op, OpKind};
pub use transaction::{Failure, ReplyView, Transaction, View, INDEX_KEY};
pub use workload::{Config, Distribution, ParseWorkloadError, Workload, WorkloadSpec};
pub use zipfian::{fnvhash64, ScrambledZipfian, SkewedLatest, Zipfian, ZIPFIAN_CONSTANT};
