//! A network stack: one process per application (a KV server or a load
//! client), as in the seeds, turning packets into per-connection byte
//! streams cut at request boundaries, and the application's bytes into
//! packets.
//!
//! **What it does:** connections are pairs of ports (this stack's port and
//! the peer's); a connection appears with its first packet and ends with a
//! packet flagged `FIN` (either way). Incoming payloads are appended to the
//! connection's stream in arrival order; the application is handed whole
//! frames only — RESP requests for a server's stack, RESP replies for a
//! client's — as many as fit its area, from one connection at a time, taking
//! connections in turn. Bytes that cannot be framed (a protocol error, or a
//! prefix longer than the request limit) are handed over as they are, so the
//! application's parser answers the error. Outgoing bytes are cut into
//! packets of at most `PAYLOAD_MAX` bytes and queued to the driver.
//!
//! **What it does not do** (there is no TCP/IP here, unlike the seeds' lwIP):
//! no retransmission, reordering, checksums, windows or congestion control —
//! the virtual network neither loses nor reorders packets. A stream that grows
//! past four request limits because its application does not keep up is
//! closed (its unanswered requests were never acknowledged).
//!
//! **Kernel entries.** The stack answers its application's calls with
//! `ReplyRecv`; while the application waits for bytes it `Wait`s on its
//! notification, which the driver signals after queueing packets for it. It
//! `Signal`s the driver's notification for the packets it queued for the
//! driver once it has nothing more to hand its application (just before it
//! waits), or once [`TX_BATCH`] packets wait: the replies to a burst of
//! requests leave in one driver turn, as a server's event loop writes its
//! replies after serving every ready request, rather than each waking the
//! driver (two more kernel entries and two switches per reply).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use granule_kernel::{MessageInfo, Word};
use granule_sync::lockfree::{MpscQueue, SpscQueue};

use super::area::Area;
use super::packet::{PacketPool, FIN, PAYLOAD_MAX, TICK};
use super::socket::{CLOSE, CLOSED, SEND_RECV, TICKED};
use crate::env::{CPtr, Env};
use crate::trap::Trap;

/// How a stack finds frame boundaries in a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// RESP requests, at most this many bytes each (a server's stack).
    Requests(usize),
    /// RESP replies (a client's stack).
    Replies,
}

impl Framing {
    /// Length of the first whole frame of `buf`: `Ok(None)` if incomplete,
    /// `Err` if it cannot be framed.
    fn frame_len(self, buf: &[u8]) -> Result<Option<usize>, ()> {
        match self {
            Self::Requests(max) => crate::resp::request_len(buf, max).map_err(drop),
            Self::Replies => crate::resp::reply_len(buf, usize::MAX).map_err(drop),
        }
    }

    fn limit(self) -> usize {
        match self {
            Self::Requests(max) => max,
            Self::Replies => 64 << 20,
        }
    }
}

/// Everything a stack thread needs (built by the root task).
#[derive(Clone, Debug)]
pub struct StackSpec {
    /// This stack's port.
    pub port: u16,
    /// How to cut streams.
    pub framing: Framing,
    /// The endpoint the application calls.
    pub ep: CPtr,
    /// The reply object the stack receives calls with.
    pub reply: CPtr,
    /// The notification the driver signals when it queued packets here.
    pub ntfn: CPtr,
    /// The driver's notification (badged: "stacks queued packets").
    pub driver: CPtr,
    /// Packets from the driver.
    pub rx: Arc<SpscQueue>,
    /// Packets to the driver (shared by every stack).
    pub tx: Arc<MpscQueue>,
    /// The packet buffers.
    pub pool: Arc<PacketPool>,
    /// The area shared with the application.
    pub area: Area,
}

#[derive(Debug, Default)]
struct Conn {
    buf: Vec<u8>,
    start: usize,
    fin: bool,
    /// In the `turn` queue.
    queued: bool,
}

impl Conn {
    fn pending(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start > 64 << 10 && self.start * 2 > self.buf.len() {
            self.buf.drain(..self.start);
            self.start = 0;
        }
    }
}

/// Packets queued for the driver after which the stack signals it even
/// though it has more to hand its application.
pub const TX_BATCH: usize = 32;

struct Stack<'a> {
    spec: &'a StackSpec,
    /// Packets queued for the driver since it was last signalled.
    unsignalled: usize,
    /// Connections by peer port (looked up for every packet).
    conns: HashMap<u16, Conn, foldhash::fast::FixedState>,
    turn: VecDeque<u16>,
    /// Connections whose stream outgrew the limit: to be reset.
    overflowed: Vec<u16>,
    /// A `TICK` packet arrived: wake the application once.
    ticked: bool,
}

/// The stack thread's program: serve the application's calls forever.
pub fn run<T: Trap>(env: &mut Env<T>, spec: &StackSpec) {
    let mut st = Stack {
        spec,
        unsignalled: 0,
        conns: HashMap::default(),
        turn: VecDeque::new(),
        overflowed: Vec::new(),
        ticked: false,
    };
    let mut info = match env.recv(spec.ep, spec.reply) {
        Ok(r) => r.info,
        Err(e) => panic!("stack {}: recv: {e}", spec.port),
    };
    loop {
        let (label, conn, len, flags) = {
            let m = env.msg();
            (info.label(), m[0] as u16, m[1] as usize, m[2])
        };
        let data_len = len.min(spec.area.to_stack.capacity());
        if data_len > 0 || flags & CLOSE != 0 {
            st.transmit(env, conn, data_len, flags & CLOSE != 0);
        }
        let (conn, n, flags) = if label == SEND_RECV {
            st.deliver(env)
        } else {
            // A send alone: nothing to wait for, the bytes leave now.
            st.signal_driver(env);
            (conn, 0, 0)
        };
        let m = env.msg();
        m[0] = conn as Word;
        m[1] = n as Word;
        m[2] = flags;
        info = match env.reply_recv(spec.ep, MessageInfo::new(0, 0, 0, 3), spec.reply) {
            Ok(r) => r.info,
            Err(e) => panic!("stack {}: reply_recv: {e}", spec.port),
        };
    }
}

impl Stack<'_> {
    /// Packetise the application's `len` bytes to `conn` (and a `FIN` if
    /// `close`), queue them to the driver and signal it.
    fn transmit<T: Trap>(&mut self, env: &mut Env<T>, conn: u16, len: usize, close: bool) {
        let spec = self.spec;
        let mut off = 0;
        while off < len || (close && off == len) {
            let n = (len - off).min(PAYLOAD_MAX);
            let last = off + n == len;
            let flags = if close && last { FIN } else { 0 };
            let desc = loop {
                match spec.pool.alloc() {
                    Some(d) => break d,
                    // Every buffer is in flight: free the ones queued here
                    // (their bytes join their streams), let the driver and
                    // the far side drain theirs, then try again.
                    None => {
                        self.receive();
                        let _ = env.signal(spec.driver);
                        let _ = env.yield_now();
                    }
                }
            };
            spec.area.to_stack.read(off + n, |b| spec.pool.write(desc, conn, spec.port, flags, &b[off..off + n]));
            while spec.tx.put(desc).is_err() {
                let _ = env.signal(spec.driver);
                let _ = env.yield_now();
            }
            off += n;
            self.unsignalled += 1;
            if last {
                break;
            }
        }
        if close && self.conns.remove(&conn).is_some_and(|c| c.queued) {
            self.turn.retain(|&c| c != conn);
        }
        if self.unsignalled >= TX_BATCH {
            self.signal_driver(env);
        }
    }

    /// Tell the driver about the packets queued for it, if any.
    fn signal_driver<T: Trap>(&mut self, env: &mut Env<T>) {
        if std::mem::take(&mut self.unsignalled) > 0 {
            let _ = env.signal(self.spec.driver);
        }
    }

    /// Take every packet the driver queued here. A stream that would grow
    /// past four request limits (its application does not keep up) is
    /// marked for a reset: its bytes are dropped, which loses nothing
    /// acknowledged (none of them was answered).
    fn receive(&mut self) {
        let spec = self.spec;
        let limit = 4 * spec.framing.limit();
        while let Some(desc) = spec.rx.get() {
            let Self { conns, overflowed, turn, ticked, .. } = self;
            spec.pool.read(desc, |h, payload| {
                if h.flags & TICK != 0 {
                    *ticked = true;
                    return;
                }
                let c = conns.entry(h.src).or_default();
                let overflow = c.pending().len() + payload.len() > limit;
                if !overflow && !c.fin {
                    c.buf.extend_from_slice(payload);
                }
                if overflow && !c.fin {
                    overflowed.push(h.src);
                }
                c.fin |= h.flags & FIN != 0 || overflow;
                if !c.queued {
                    c.queued = true;
                    turn.push_back(h.src);
                }
            });
            spec.pool.free(desc);
        }
    }

    /// Reset the connections that overflowed: a `FIN` tells the peer.
    fn reset_overflowed<T: Trap>(&mut self, env: &mut Env<T>) {
        while let Some(conn) = self.overflowed.pop() {
            self.transmit(env, conn, 0, true);
        }
    }

    /// Wait until some connection has whole frames (or closed), or a tick
    /// came, copy the frames to the application's area; returns
    /// (connection, bytes, reply flags: [`CLOSED`], [`TICKED`] or 0).
    fn deliver<T: Trap>(&mut self, env: &mut Env<T>) -> (u16, usize, Word) {
        loop {
            self.receive();
            self.reset_overflowed(env);
            if std::mem::take(&mut self.ticked) {
                return (0, 0, TICKED);
            }
            if let Some((conn, n, closed)) = self.next_delivery() {
                return (conn, n, if closed { CLOSED } else { 0 });
            }
            // Nothing to hand over: the queued replies leave now.
            self.signal_driver(env);
            if let Err(e) = env.wait(self.spec.ntfn) {
                panic!("stack {}: wait: {e}", self.spec.port);
            }
        }
    }

    fn next_delivery(&mut self) -> Option<(u16, usize, bool)> {
        let spec = self.spec;
        let cap = spec.area.to_app.capacity();
        for _ in 0..self.turn.len() {
            let conn = self.turn.pop_front()?;
            let Some(c) = self.conns.get_mut(&conn) else { continue };
            c.queued = false;
            let pending = c.pending();
            let mut n = 0;
            let mut raw = false;
            while n < pending.len() && n < cap {
                match spec.framing.frame_len(&pending[n..]) {
                    Ok(Some(k)) if n + k <= cap => n += k,
                    Ok(Some(_)) => {
                        // A frame larger than the area: hand it over in
                        // pieces (the application's parser reassembles).
                        raw = n == 0;
                        break;
                    }
                    Ok(None) => {
                        raw = n == 0 && (pending.len() >= spec.framing.limit() || c.fin);
                        break;
                    }
                    Err(()) => {
                        raw = n == 0;
                        break;
                    }
                }
            }
            if raw {
                n = pending.len().min(cap);
            }
            if n > 0 {
                spec.area.to_app.write(&pending[..n]);
                c.consume(n);
                if !c.pending().is_empty() || c.fin {
                    c.queued = true;
                    self.turn.push_back(conn);
                }
                return Some((conn, n, false));
            }
            if c.fin {
                self.conns.remove(&conn);
                return Some((conn, 0, true));
            }
        }
        None
    }
}
