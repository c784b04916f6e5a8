//! One client's TCP connection as the far side keeps it: the socket, the
//! bytes read from it that are not yet in packets, the replies not yet
//! written to it, and where it is in its life.
//!
//! **Life of a connection.** Both directions end with a `FIN`:
//!
//! * the client closes (a read returns 0 or fails): the bytes already read
//!   go to the server, then a `FIN` packet; the socket stays open for the
//!   replies still on their way ([`LINGER`] after the last one, then it is
//!   closed) unless writing fails first;
//! * the server closes (`QUIT`, a protocol error): its `FIN` packet comes
//!   after its last reply; the far side stops reading, answers with a `FIN`
//!   of its own (so that nothing the client sent meanwhile lingers in the
//!   server's stack), writes out what it holds and closes the socket.
//!
//! The connection is forgotten, and its id released, once the socket is
//! closed and the `FIN` to the server is sent.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::time::{Duration, Instant};

use mio::net::TcpStream;

/// How long a connection whose client closed its side is kept open for
/// replies still on their way, after the last one arrived.
pub const LINGER: Duration = Duration::from_millis(500);

/// What a read did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// Bytes arrived (at the start of the buffer).
    Bytes(usize),
    /// Nothing to read now.
    Empty,
    /// The client closed its side (it may still read).
    Eof,
    /// The socket failed.
    Failed,
}

/// A client connection.
#[derive(Debug)]
pub struct Conn {
    /// The socket (`None` once closed).
    pub stream: Option<TcpStream>,
    /// The KV server's port (the packets' destination).
    pub server: u16,
    held: Vec<u8>,
    held_start: usize,
    out: Vec<u8>,
    out_start: usize,
    /// The socket may have bytes to read (readiness is edge-triggered: set
    /// by an event, cleared when a read would block).
    pub readable: bool,
    /// The socket may take more bytes (as `readable`).
    pub writable: bool,
    /// An event said the client closed or the socket failed: read until
    /// that is seen, even after a short read.
    pub hup: bool,
    /// In the loop's queue of connections to read.
    pub queued: bool,
    /// In the loop's list of connections to write.
    pub dirty: bool,
    /// The client closed its side (or the socket failed): read no more.
    pub eof: bool,
    /// The server closed the connection: close after writing what is held.
    pub server_fin: bool,
    /// The far side's `FIN` went to the server.
    pub fin_sent: bool,
    /// When a lingering connection (see [`LINGER`]) is closed.
    pub linger_until: Option<Instant>,
}

impl Conn {
    /// A new connection to the server on port `server`.
    pub fn new(stream: TcpStream, server: u16) -> Self {
        Self {
            stream: Some(stream),
            server,
            held: Vec::new(),
            held_start: 0,
            out: Vec::new(),
            out_start: 0,
            readable: true,
            writable: true,
            hup: false,
            queued: false,
            dirty: false,
            eof: false,
            server_fin: false,
            fin_sent: false,
            linger_until: None,
        }
    }

    /// Bytes read from the client that are not yet in packets.
    pub fn held(&self) -> &[u8] {
        &self.held[self.held_start..]
    }

    /// `n` held bytes went into packets.
    pub fn consume_held(&mut self, n: usize) {
        self.held_start += n;
        if self.held_start >= self.held.len() {
            self.held.clear();
            self.held_start = 0;
        }
    }

    /// Keep `bytes` (read, not yet in packets).
    pub fn hold(&mut self, bytes: &[u8]) {
        self.held.extend_from_slice(bytes);
    }

    /// Bytes waiting to be written to the client.
    pub fn pending_out(&self) -> usize {
        self.out.len() - self.out_start
    }

    /// Queue `bytes` for the client.
    pub fn queue_out(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
    }

    /// Read what the socket has, up to `buf.len()` bytes.
    pub fn read(&mut self, buf: &mut [u8]) -> Input {
        let Some(s) = self.stream.as_mut() else { return Input::Failed };
        loop {
            return match s.read(buf) {
                Ok(0) => Input::Eof,
                Ok(n) => {
                    // A stream socket returns less than asked only when it
                    // had no more: the next bytes raise a new edge.
                    if n < buf.len() && !self.hup {
                        self.readable = false;
                    }
                    Input::Bytes(n)
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.readable = false;
                    Input::Empty
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => Input::Failed,
            };
        }
    }

    /// Write what is queued until the socket would block: the bytes
    /// written, or the error that broke the connection.
    pub fn flush(&mut self) -> io::Result<usize> {
        let Some(s) = self.stream.as_mut() else { return Ok(0) };
        let mut done = 0;
        while self.out_start < self.out.len() && self.writable {
            match s.write(&self.out[self.out_start..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.out_start += n;
                    done += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.writable = false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.out_start == self.out.len() {
            self.out.clear();
            self.out_start = 0;
            // Give back the memory of a burst of large replies.
            if self.out.capacity() > 1 << 20 {
                self.out = Vec::new();
            }
        } else if self.out_start > 1 << 20 && self.out_start * 2 > self.out.len() {
            self.out.drain(..self.out_start);
            self.out_start = 0;
        }
        Ok(done)
    }

    /// Close the socket: end the stream after what was written, then throw
    /// away what the client sent meanwhile (so that closing does not reset
    /// the connection under the client's last replies). Returns the bytes
    /// left unwritten.
    pub fn close(&mut self, scratch: &mut [u8]) -> usize {
        let unwritten = self.pending_out();
        if let Some(mut s) = self.stream.take() {
            let _ = s.shutdown(Shutdown::Write);
            for _ in 0..16 {
                match s.read(scratch) {
                    Ok(n) if n > 0 => {}
                    _ => break,
                }
            }
        }
        self.out = Vec::new();
        self.out_start = 0;
        self.held = Vec::new();
        self.held_start = 0;
        self.readable = false;
        self.writable = false;
        self.eof = true;
        unwritten
    }

    /// Whether it can be forgotten: socket closed and `FIN` sent.
    pub fn finished(&self) -> bool {
        self.stream.is_none() && self.fin_sent
    }
}
