//! # A Redis-compatible store, written from the protocol up
//!
//! This module is a small Redis: the RESP wire protocol, one in-memory
//! database of strings, hashes and sorted sets with key expiry, and the
//! commands real clients use — enough that `redis-cli`, `redis-benchmark`
//! and the usual client libraries drive it unmodified. It is pure code: no
//! sockets, no threads, no clock. Bytes go in, bytes come out, and the
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
//!   reply, matching Redis 7's reply types and error texts; [`table`] is
//!   the command table (subcommands included, `client|list`), and each
//!   family keeps its commands and its part of the table in its own file:
//!   [`command`] the string and key commands, [`collections`] the hash and
//!   sorted-set commands, [`server`] the connection commands, [`pubsub`]
//!   publish/subscribe, [`client_command`] `CLIENT`, [`config`] `CONFIG`,
//!   [`info`] `INFO` (with [`memory`]'s estimate), [`command_info`]
//!   `COMMAND` (with [`catalog`], what Redis says of each command), and
//!   [`scripting`] the scripting commands, which answer one error.
//! * [`store`] is the keyspace and its expiry: deadlines are absolute
//!   milliseconds, expired keys vanish on access and are reclaimed in
//!   bounded batches; [`hash`] and [`zset`] are its two collection types.
//!   [`clients`] is its registry of connected clients (protocol, name,
//!   subscriptions, last command): what one client's command needs to know
//!   of the others. Bytes for other clients (published messages) wait in
//!   the store's outbox, and clients ended by `CLIENT KILL` in its list of
//!   the killed, until the server around the store delivers and closes.
//! * [`encode`] writes RESP2 and, for clients, reads replies back; [`number`]
//!   is Redis's exact integer and float syntax.
//!
//! The design follows Redis where clients can observe it (reply bytes,
//! error texts, option conflicts, float formatting, `HGETALL` order of small
//! hashes) and departs from it where they cannot or should not: one
//! database, no persistence, `DBSIZE` counting only live keys. Connections
//! speak RESP2 and switch to RESP3 on `HELLO 3` (redis-py 8 insists on it);
//! only the few reply types RESP3 adds differ. The
//! hot path — a pipelined `GET` or `SET` — parses without allocating,
//! looks the command up without allocating, and reuses a string's buffer
//! when overwriting it.

pub mod catalog;
pub mod client_command;
pub mod clients;
pub mod collections;
pub mod command;
pub mod command_info;
pub mod config;
pub mod connection;
pub mod encode;
pub mod hash;
pub mod info;
pub mod memory;
pub mod multi;
pub mod number;
pub mod parse;
pub mod pubsub;
pub mod scripting;
pub mod server;
pub mod session;
pub mod store;
pub mod table;
pub mod zset;

pub use command::Flow;
pub use connection::Connection;
pub use encode::{encode_command, parse_reply, reply_len, Protocol, Reply};
pub use parse::{parse_request, request_len, Limits, Parser, ProtocolError, Request};
pub use session::{ServerInfo, Session};
pub use store::{Snapshot, Stats, Store, Ttl, Value};
