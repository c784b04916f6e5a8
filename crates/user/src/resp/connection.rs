//! One client's connection: its input buffer and the pipelining loop.
//!
//! Bytes arrive in arbitrary pieces — half a command, or fifty pipelined
//! commands at once (`redis-benchmark -P 16`). [`Connection::feed`] appends
//! a piece, then parses and executes every complete request in order,
//! writing the replies in the same order; an incomplete request stays
//! buffered until the rest arrives. The usual case — whole requests in the
//! piece, nothing pending — is parsed straight from the caller's bytes,
//! without copying them.
//!
//! A protocol error ends the connection as in Redis: the replies of the
//! requests before it, then `-ERR Protocol error: <message>`, then
//! [`Flow::Close`]. So does `QUIT`. The buffer never holds more than one
//! incomplete request, and the parser bounds that by `max_request` —
//! except while the client is blocked (`BLPOP` on empty lists): then, as
//! in Redis, its later requests wait unexecuted in the buffer, up to
//! [`BLOCKED_INPUT_REQUESTS`] times `max_request` bytes (past that the
//! connection closes, as Redis closes a client over its query buffer
//! limit), until the store unblocks it and the server calls
//! [`Connection::feed`] again ([`Store::take_unblocked`]). After each
//! request the store serves the clients blocked on keys it created.

use super::command::Flow;
use super::encode::write_error;
use super::multi::{self, Multi};
use super::parse::{Limits, Parser};
use super::session::Session;
use super::store::Store;

/// Input buffers larger than this are released once empty.
const KEEP_BUFFER: usize = 64 * 1024;

/// How many largest requests a blocked client's buffer holds.
pub const BLOCKED_INPUT_REQUESTS: usize = 16;

/// One client connection.
#[derive(Debug, Default)]
pub struct Connection {
    /// Bytes of the incomplete request at the front of the stream.
    pending: Vec<u8>,
    parser: Parser,
    limits: Limits,
    session: Session,
    commands: u64,
    closed: bool,
    /// An open `MULTI`.
    multi: Option<Multi>,
}

impl Connection {
    /// A connection whose requests are bounded by `limits` (the `Default`
    /// connection uses `Limits::default()`).
    pub fn new(limits: Limits) -> Self {
        Connection { limits, ..Connection::default() }
    }

    /// A connection whose client the store registers now, at `now_ms`
    /// (so that it is listed, counted and addressable before its first
    /// command; a server then tells the store its addresses with
    /// [`Store::set_client_address`]). Close it with
    /// [`Store::forget_client`].
    pub fn open(limits: Limits, store: &mut Store, now_ms: u64) -> Self {
        let mut connection = Connection::new(limits);
        connection.session.id = store.open_client(now_ms);
        connection
    }

    /// Takes the next bytes from the client, executes every request they
    /// complete against `store` at time `now_ms`, and appends the replies
    /// to `out`. After [`Flow::Close`] the caller sends `out` and closes;
    /// later input is ignored.
    pub fn feed(&mut self, input: &[u8], store: &mut Store, now_ms: u64, out: &mut Vec<u8>) -> Flow {
        if self.closed {
            return Flow::Close;
        }
        if self.session.id == 0 {
            self.session.id = store.next_client_id();
        }
        if store.is_blocked(self.session.id) {
            // Redis reads a blocked client's input but runs none of it.
            self.pending.extend_from_slice(input);
            if self.pending.len() > BLOCKED_INPUT_REQUESTS.saturating_mul(self.limits.max_request) {
                store.forget_client(self.session.id);
                self.pending = Vec::new();
                self.closed = true;
                return Flow::Close;
            }
            return Flow::Continue;
        }
        if self.pending.is_empty() {
            // Nothing buffered: parse the caller's bytes in place.
            let (used, flow) = self.run(input, store, now_ms, out);
            if flow == Flow::Continue {
                self.pending.extend_from_slice(&input[used..]);
            }
            return flow;
        }
        self.pending.extend_from_slice(input);
        let buffer = std::mem::take(&mut self.pending);
        let (used, flow) = self.run(&buffer, store, now_ms, out);
        self.pending = buffer;
        if flow == Flow::Close {
            self.pending.clear();
        } else {
            self.pending.drain(..used);
        }
        if self.pending.is_empty() && self.pending.capacity() > KEEP_BUFFER {
            self.pending = Vec::new();
        }
        flow
    }

    /// Bytes received but not yet part of a complete request.
    pub fn pending_bytes(&self) -> usize {
        self.pending.len()
    }

    /// Requests executed on this connection (empty ones excluded).
    pub fn commands_processed(&self) -> u64 {
        self.commands
    }

    /// The client's session (name, id).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The client id, which [`Store::take_outbox`] addresses (assigned by
    /// the store at the first [`Connection::feed`], 0 before).
    pub fn id(&self) -> u64 {
        self.session.id
    }

    /// Whether the connection is over (after `QUIT` or a protocol error).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Whether the client waits in a blocking command (its later requests
    /// wait with it).
    pub fn is_blocked(&self, store: &Store) -> bool {
        store.is_blocked(self.session.id)
    }

    /// Executes the complete requests at the front of `data`: how many
    /// bytes they took, and whether to go on.
    fn run(&mut self, data: &[u8], store: &mut Store, now_ms: u64, out: &mut Vec<u8>) -> (usize, Flow) {
        let mut used = 0;
        loop {
            let frame = &data[used..];
            // Nothing left: the parser is at a frame start (after a
            // complete request, or given no input), where no bytes parse
            // to nothing. Skipping that call saves a parse per request.
            if frame.is_empty() {
                return (used, Flow::Continue);
            }
            match self.parser.parse(frame, &self.limits) {
                Ok(None) => return (used, Flow::Continue),
                Ok(Some(len)) => {
                    used += len;
                    let request = self.parser.request();
                    if request.is_empty() {
                        continue;
                    }
                    self.commands += 1;
                    let (session, state) = (&mut self.session, &mut self.multi);
                    let max = 16 * self.limits.max_request;
                    let flow = request.with_args(frame, |args| {
                        if Store::refuse_in_pubsub_context(session, args, out) {
                            return Flow::Continue;
                        }
                        multi::handle(state, args, store, session, now_ms, max, out)
                            .unwrap_or_else(|| store.execute_in(session, args, now_ms, out))
                    });
                    if store.has_ready_keys() {
                        store.serve_ready_keys(now_ms);
                    }
                    if flow == Flow::Close {
                        self.closed = true;
                        return (used, Flow::Close);
                    }
                    if store.is_blocked(self.session.id) {
                        return (used, Flow::Continue);
                    }
                }
                Err(error) => {
                    write_error(out, format!("ERR Protocol error: {error}").as_bytes());
                    self.closed = true;
                    return (used, Flow::Close);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(connection: &mut Connection, store: &mut Store, input: &[u8]) -> (String, Flow) {
        let mut out = Vec::new();
        let flow = connection.feed(input, store, 0, &mut out);
        (String::from_utf8(out).unwrap(), flow)
    }

    #[test]
    fn pipelined_requests_are_answered_in_order() {
        let (mut connection, mut store) = (Connection::default(), Store::new());
        let input =
            b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\nGET k\r\n\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$4\r\nPI";
        let (replies, flow) = feed(&mut connection, &mut store, input);
        assert_eq!((replies.as_str(), flow), ("+OK\r\n$1\r\nv\r\n$1\r\nv\r\n", Flow::Continue));
        assert_eq!(connection.pending_bytes(), 10);
        assert_eq!(feed(&mut connection, &mut store, b"NG\r\n"), ("+PONG\r\n".into(), Flow::Continue));
        assert_eq!(connection.pending_bytes(), 0);
        assert_eq!(connection.commands_processed(), 4);
    }

    #[test]
    fn a_request_arriving_byte_by_byte_completes_once() {
        let (mut connection, mut store) = (Connection::default(), Store::new());
        let input = b"*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n";
        for &byte in &input[..input.len() - 1] {
            assert_eq!(feed(&mut connection, &mut store, &[byte]), (String::new(), Flow::Continue));
        }
        assert_eq!(feed(&mut connection, &mut store, b"\n"), ("$5\r\nhello\r\n".into(), Flow::Continue));
    }

    #[test]
    fn protocol_errors_and_quit_close_after_earlier_replies() {
        let (mut connection, mut store) = (Connection::default(), Store::new());
        let (replies, flow) = feed(&mut connection, &mut store, b"PING\r\n*1\r\n!4\r\nPING\r\nPING\r\n");
        assert_eq!(replies, "+PONG\r\n-ERR Protocol error: expected '$', got '!'\r\n");
        assert_eq!(flow, Flow::Close);
        assert!(connection.is_closed());
        assert_eq!(feed(&mut connection, &mut store, b"PING\r\n"), (String::new(), Flow::Close));

        let mut connection = Connection::default();
        assert_eq!(feed(&mut connection, &mut store, b"QUIT\r\nPING\r\n"), ("+OK\r\n".into(), Flow::Close));
    }

    #[test]
    fn an_oversized_frame_is_refused_before_it_is_buffered() {
        let limits = Limits::with_max_request(1024);
        let (mut connection, mut store) = (Connection::new(limits), Store::new());
        let (replies, flow) = feed(&mut connection, &mut store, b"*2\r\n$3\r\nGET\r\n$2000\r\n");
        assert_eq!((replies.as_str(), flow), ("-ERR Protocol error: invalid bulk length\r\n", Flow::Close));
        let mut connection = Connection::new(limits);
        let (replies, _) = feed(&mut connection, &mut store, b"*2\r\n$3\r\nSET\r\n$1010\r\n");
        assert_eq!(replies, "-ERR Protocol error: too big request\r\n");
    }
}
