//! # A Redis-compatible store, written from the protocol up
//!
//! This module is a small Redis: the RESP wire protocol, sixteen in-memory
//! databases of strings, hashes, lists, sets and sorted sets with key
//! expiry, and the commands real clients use — enough that `redis-cli`,
//! `redis-benchmark` and the usual client libraries drive it unmodified. It
//! is pure code: no sockets, no threads, no clock. Bytes go in, bytes come out, and the
//! current time is an argument. That is what lets the same code serve a TCP
//! port (`granule serve`) and run inside the user threads of the hosted
//! microkernel (a key-value server fed by a network stack), and what makes
//! every behaviour testable without a network or a sleep.
//!
//! The pieces, in the order a request meets them:
//!
//! * [`parse`] turns bytes into a [`Request`] — incrementally (a request may
//!   arrive in any number of pieces), bounded ([`Limits`]: nothing is
//!   allocated from a length the client claims), and without copying the
//!   arguments of a RESP frame.
//! * [`connection`] is one client's loop: buffer, parse, execute, reply,
//!   for every pipelined request in order; a protocol error closes it.
//! * [`command`] executes one request against the [`Store`] and writes one
//!   reply, matching Redis 7's reply types and error texts (its table and
//!   the hot path's string and key commands; [`strings`] and [`lcs`] hold
//!   the other string commands, [`hashes`] the hash commands, [`zsets`],
//!   [`zrange`] and [`zsetops`] the sorted-set commands, [`sets`] the set
//!   commands, [`lists`] the list commands, [`scan`] `KEYS` and the `SCAN`
//!   family, [`keyspace`] the database and key commands, [`object`]
//!   `OBJECT` and `MEMORY`, [`server`] the connection and server commands
//!   and `INFO`, [`multi`] transactions and `WATCH`; [`glob`] is the
//!   pattern matcher of `KEYS`, `SCAN` and `CONFIG GET`).
//! * [`store`] is the keyspace and its expiry: sixteen databases, each
//!   client acting on the one it selected; deadlines are absolute
//!   milliseconds, expired keys vanish on access and are reclaimed in
//!   bounded batches; [`hash`], [`list`], [`set`] and [`zset`] are its
//!   collection types, and [`random`] its seeded source of random draws.
//!   [`databases`] holds what reaches across databases, [`watch`] who
//!   watches which key, [`blocking`] who waits for which list.
//! * [`encode`] writes RESP2 and, for clients, reads replies back; [`number`]
//!   is Redis's exact integer and float syntax, [`long_double`] the C
//!   `long double` arithmetic of `INCRBYFLOAT`.
//!
//! The design follows Redis where clients can observe it (reply bytes,
//! error texts, option conflicts, float formatting, `HGETALL` order of small
//! hashes) and departs from it where they cannot or should not: no
//! persistence, `DBSIZE` counting only live keys. Connections
//! speak RESP2 and switch to RESP3 on `HELLO 3` (redis-py 8 insists on it);
//! only the few reply types RESP3 adds differ. The
//! hot path — a pipelined `GET` or `SET` — parses without allocating,
//! looks the command up without allocating, and reuses a string's buffer
//! when overwriting it.

mod bignum;
pub mod blocking;
pub mod command;
pub mod connection;
pub mod databases;
pub mod encode;
pub mod glob;
pub mod hash;
pub mod hashes;
pub mod keyspace;
pub mod lcs;
pub mod list;
pub mod lists;
pub mod long_double;
pub mod multi;
pub mod number;
pub mod object;
pub mod parse;
pub mod random;
pub mod scan;
pub mod server;
pub mod session;
pub mod set;
pub mod sets;
pub mod store;
pub mod strings;
pub mod table;
pub mod timeout;
pub mod watch;
pub mod zrange;
pub mod zset;
pub mod zsetops;
pub mod zsets;

pub use command::Flow;
pub use connection::Connection;
pub use encode::{encode_command, parse_reply, reply_len, Protocol, Reply};
pub use parse::{parse_request, request_len, Limits, Parser, ProtocolError, Request};
pub use session::{ServerInfo, Session};
pub use store::{Snapshot, Stats, Store, Ttl, Value};
