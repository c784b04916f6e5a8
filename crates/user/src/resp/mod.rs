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
//!   reply, matching Redis 7's reply types and error texts. [`table`] is
//!   the command table (subcommands included, `client|list`), and each
//!   family keeps its commands and its part of the table in its own file:
//!   [`command`] the hot path's string and key commands, [`strings`] and
//!   [`lcs`] the other string commands, [`hashes`] the hash commands,
//!   [`zsets`], [`zrange`] and [`zsetops`] the sorted-set commands,
//!   [`sets`] the set commands, [`lists`] the list commands (and
//!   [`blocking`] the clients blocked in `BLPOP` and its kin, with
//!   [`timeout`] reading their timeouts), [`scan`] `KEYS` and the `SCAN`
//!   family, [`keyspace`] the databases and the key commands, [`object`]
//!   `OBJECT` and `MEMORY`, [`multi`] transactions and `WATCH` (with
//!   [`watch`] who watches which key), [`server`] the connection commands,
//!   [`pubsub`] publish/subscribe, [`client_command`] `CLIENT`, [`config`]
//!   `CONFIG`, [`info`] `INFO` (with [`memory`]'s estimate),
//!   [`command_info`] `COMMAND` (with [`catalog`], what Redis says of each
//!   command), and [`scripting`] the scripting commands, which answer one
//!   error; [`glob`] is the pattern matcher of `KEYS`, `SCAN`, `CONFIG GET`
//!   and channel patterns.
//! * [`store`] is the keyspace and its expiry: sixteen databases, each
//!   client acting on the one it selected ([`databases`] holds what reaches
//!   across them); deadlines are absolute milliseconds, expired keys vanish
//!   on access and are reclaimed in bounded batches; [`hash`], [`list`],
//!   [`set`] and [`zset`] are its collection types, and [`random`] its
//!   seeded source of random draws. [`clients`] is its registry of
//!   connected clients (protocol, name, database, subscriptions, last
//!   command): what one client's command needs to know of the others. Bytes
//!   for other clients (published messages, a blocked client's late reply)
//!   wait in the store's outbox, and clients ended by `CLIENT KILL` in its
//!   list of the killed, until the server around the store delivers and
//!   closes.
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
pub mod catalog;
pub mod client_command;
pub mod clients;
pub mod command;
pub mod command_info;
pub mod config;
pub mod connection;
pub mod databases;
pub mod encode;
mod getkeys;
pub mod glob;
pub mod hash;
pub mod hashes;
pub mod info;
pub mod keyspace;
pub mod lcs;
pub mod list;
pub mod lists;
pub mod long_double;
pub mod memory;
pub mod multi;
pub mod number;
pub mod object;
pub mod parse;
pub mod pubsub;
pub mod random;
pub mod scan;
pub mod scripting;
pub mod server;
pub mod session;
pub mod set;
pub mod sets;
pub mod store;
pub mod strings;
pub mod table;
#[cfg(test)]
mod testing;
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
