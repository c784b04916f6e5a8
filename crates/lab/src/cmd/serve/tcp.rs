//! The TCP far side of `granule serve`: the virtual card's cable, plugged
//! into real sockets on 127.0.0.1.
//!
//! Like network hardware, it is not part of the machine: a `mio` event loop
//! ([`Loop`]) and the [`Cable`], the small part the machine touches. The
//! loop runs turn by turn ([`Loop::step`]) in the idle loop of the driver's
//! core ([`polled`](super::polled)), the way a poll-mode driver shares a
//! core with its stack.
//!
//! * **Receive** (clients → kernel). A connection is named by a 16-bit id
//!   (its "client port", see [`ids`](super::ids)); KV server `i` by port
//!   `base + i`, where its listener is. Bytes read from a socket are cut into
//!   packets of at most `PAYLOAD_MAX` bytes (`dst` = the server's port, `src`
//!   = the connection's id), put on the card's receive ring, and after each
//!   batch the card interrupts. A client that closes sends a `FIN` packet.
//! * **Transmit** (kernel → clients). The driver's doorbell write calls
//!   [`Cable::transmit`] on the driver's core: it only moves the descriptors
//!   from the card's transmit ring to a queue the loop owns and, if the loop
//!   is asleep, wakes it (one `eventfd` write; none while the loop is
//!   awake — and since the driver runs on the loop's own core, the loop is
//!   never asleep then: the doorbell wake-ups count stays 0). The loop copies each payload to its connection's output and
//!   frees the buffer; a `FIN` from the server closes the connection once its
//!   output is written.
//! * **Wake-ups** (for blocked clients' timeouts). A KV server whose
//!   clients wait in `BLPOP` with a timeout publishes when it wants to be
//!   woken (`ServerState::wake_at_ms`); once that time passes the loop puts
//!   one `TICK` packet for the server's port on the receive ring, and its
//!   stack answers the server's pending call with a wake-up. The loop's
//!   poll never sleeps past the earliest such time.
//! * **Backpressure, never loss.** Bytes are read only while a packet buffer
//!   can take them: when the pool runs low or the ring is full, the loop
//!   keeps what it read and stops reading (the client's TCP window then
//!   stops the client) until the next transmit wake-up or [`RETRY`]. The
//!   loop leaves half the pool to the servers' replies: were every buffer
//!   holding requests, a stack waiting for a buffer to send a reply would
//!   never get one. A client that does not read its replies stops being read
//!   once [`OUT_CAP`] bytes of them wait for it.
//!
//! Both queues between the machine and the loop are granule-sync's
//! single-producer single-consumer Synthesis queues of descriptors: the
//! loop is the only producer of the receive ring, the driver the only
//! caller of `transmit` (the only producer of [`Cable`]'s queue).

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use granule_hosted::nic::{FarSide, Nic};
use granule_sync::lockfree::SpscQueue;
use granule_user::kv::KvSystem;
use granule_user::net::packet::{PacketPool, FIN, PAYLOAD_MAX, TICK};
use mio::event::Event;
use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token, Waker};

use super::conn::{Conn, Input, LINGER};
use super::ids::Ids;

/// The token of the loop's waker.
pub const WAKER: Token = Token(usize::MAX);
/// Listener `i`'s token is `LISTENER_BASE + i`; a connection's is its id.
const LISTENER_BASE: usize = 1 << 16;
/// Most bytes read from one socket per turn.
const READ_CHUNK: usize = 16 << 10;
/// Replies waiting for one client beyond which its requests are not read.
pub const OUT_CAP: usize = 64 << 20;
/// How soon to retry reading after the packet pool or the ring was full.
pub const RETRY: Duration = Duration::from_millis(1);
/// How soon to retry accepting after an error (e.g. out of descriptors).
const ACCEPT_RETRY: Duration = Duration::from_millis(10);
/// Events one poll takes.
const EVENTS: usize = 1024;
/// Descriptors the transmit queue holds (more than the pool has buffers,
/// so it never fills).
const SENT_SLOTS: usize = 4096;

/// What the machine sees of the far side: a queue of transmitted
/// descriptors and the loop's wake-up.
#[derive(Debug)]
pub struct Cable {
    sent: SpscQueue,
    armed: AtomicBool,
    stop: AtomicBool,
    waker: Waker,
    wakeups: AtomicU64,
}

impl Cable {
    /// A cable that wakes its loop with `waker` (registered as [`WAKER`]).
    pub fn new(waker: Waker) -> Self {
        Self {
            sent: SpscQueue::new(SENT_SLOTS),
            armed: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            waker,
            wakeups: AtomicU64::new(0),
        }
    }

    /// Ask the loop to stop.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.waker.wake();
    }

    /// Whether the loop was asked to stop.
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Make the loop's poll return now (or its next one at once).
    pub fn wake_loop(&self) {
        let _ = self.waker.wake();
    }

    /// Wake the loop if it is (about to be) asleep. Dekker's pattern with
    /// the loop: it arms, then looks at the queue; this puts, then looks at
    /// the arm; the fences make at least one of them see the other's write.
    fn wake(&self) {
        fence(Ordering::SeqCst);
        if self.armed.load(Ordering::Relaxed) && self.armed.swap(false, Ordering::AcqRel) {
            self.wakeups.fetch_add(1, Ordering::Relaxed);
            let _ = self.waker.wake();
        }
    }
}

impl FarSide for Cable {
    fn transmit(&self, nic: &Nic) {
        let mut any = false;
        // The only producer: room seen here stays room for the put.
        while self.sent.len() < self.sent.capacity() {
            let Some(desc) = nic.take_transmitted() else { break };
            let _ = self.sent.put(desc);
            any = true;
        }
        if any {
            self.wake();
        }
    }
}

/// What the loop counted.
#[derive(Clone, Debug, Default)]
pub struct Totals {
    /// Connections accepted.
    pub accepted: u64,
    /// Connections refused (over `--max-clients` or out of ids).
    pub refused: u64,
    /// Most clients connected at once (lingering connections aside).
    pub peak: usize,
    /// Connections whose client had not closed when the loop stopped.
    pub open_at_stop: usize,
    /// Bytes read from clients.
    pub bytes_in: u64,
    /// Bytes written to clients.
    pub bytes_out: u64,
    /// Packets put on the receive ring.
    pub packets_in: u64,
    /// Packets taken from the transmit ring.
    pub packets_out: u64,
    /// Packets for connections that were gone (freed unread).
    pub orphans: u64,
    /// Reply bytes never written because their client was gone.
    pub unwritten: u64,
    /// Accept calls that failed (other than for lack of connections).
    pub accept_errors: u64,
    /// Times the loop polled its sockets.
    pub polls: u64,
    /// Times the driver's doorbell woke the loop.
    pub wakeups: u64,
}

/// The packet side of the loop: the pool and the card's receive ring.
#[derive(Debug)]
struct Wire {
    pool: Arc<PacketPool>,
    nic: Arc<Nic>,
    /// Free buffers left to the servers' replies.
    reserve: usize,
    /// Packets delivered since the last interrupt.
    delivered: bool,
    packets: u64,
}

impl Wire {
    /// Put one packet on the receive ring; false when the pool or the ring
    /// has no room (nothing was sent).
    fn send(&mut self, dst: u16, src: u16, flags: u16, bytes: &[u8]) -> bool {
        if self.pool.free_now() <= self.reserve {
            return false;
        }
        let Some(desc) = self.pool.alloc() else { return false };
        self.pool.write(desc, dst, src, flags, bytes);
        if self.nic.deliver(desc).is_err() {
            self.pool.free(desc);
            return false;
        }
        self.delivered = true;
        self.packets += 1;
        true
    }
}

/// What one turn of reading a connection did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pump {
    /// Nothing more to do now.
    Done,
    /// More may be readable: come back.
    More,
    /// The pool or the ring is full: retry later.
    Blocked,
}

/// The event loop.
#[derive(Debug)]
pub struct Loop {
    poll: Poll,
    /// Each server's listener, and whether it may have connections waiting.
    listeners: Vec<(TcpListener, bool)>,
    cable: Arc<Cable>,
    wire: Wire,
    base_port: u16,
    max_clients: usize,
    conns: Vec<Option<Box<Conn>>>,
    ids: Ids,
    to_read: VecDeque<u16>,
    dirty: Vec<u16>,
    lingering: Vec<u16>,
    scratch: Vec<u8>,
    /// The poll's event buffer (taken while events are handled).
    events: Option<Events>,
    /// The system (the servers' wake-up times, its clock).
    kv: Arc<KvSystem>,
    /// Per server, the wake-up time last sent a `TICK` for.
    ticked: Vec<u64>,
    blocked: bool,
    accept_warned: bool,
    t: Totals,
}

impl Loop {
    /// A loop serving `listeners` (server `i` on port `base_port + i`)
    /// through `cable`, with the machine's `pool` and the system `kv` (its
    /// card, its servers' wake-up times).
    pub fn new(
        poll: Poll,
        listeners: Vec<TcpListener>,
        cable: Arc<Cable>,
        pool: Arc<PacketPool>,
        kv: Arc<KvSystem>,
        base_port: u16,
        max_clients: usize,
    ) -> io::Result<Self> {
        let mut ls = Vec::new();
        for (i, mut l) in listeners.into_iter().enumerate() {
            poll.registry().register(&mut l, Token(LISTENER_BASE + i), Interest::READABLE)?;
            ls.push((l, true));
        }
        let last = base_port.saturating_add(ls.len().saturating_sub(1) as u16);
        let reserve = pool.count() / 2;
        let nic = kv.nic.clone();
        let ticked = vec![u64::MAX; kv.servers.len()];
        Ok(Self {
            poll,
            listeners: ls,
            cable,
            wire: Wire { pool, nic, reserve, delivered: false, packets: 0 },
            base_port,
            max_clients,
            conns: (0..=usize::from(u16::MAX)).map(|_| None).collect(),
            ids: Ids::new(base_port..=last),
            to_read: VecDeque::new(),
            dirty: Vec::new(),
            lingering: Vec::new(),
            scratch: vec![0; READ_CHUNK],
            events: Some(Events::with_capacity(EVENTS)),
            kv,
            ticked,
            blocked: false,
            accept_warned: false,
            t: Totals::default(),
        })
    }

    /// One turn of the loop: poll the sockets (waiting up to
    /// [`Loop::timeout`] for an event, a transmit wake-up or a stop), then
    /// accept, move replies to their sockets, write, read requests into
    /// packets and interrupt the card. An error of the poll itself (other
    /// than an interruption) is returned.
    pub fn step(&mut self) -> io::Result<()> {
        let mut timeout = self.timeout();
        self.cable.armed.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !self.cable.sent.is_empty() || self.cable.stopping() {
            timeout = Some(Duration::ZERO);
        }
        self.t.polls += 1;
        let mut events = self.events.take().unwrap_or_else(|| Events::with_capacity(EVENTS));
        let polled = self.poll.poll(&mut events, timeout);
        self.cable.armed.store(false, Ordering::Relaxed);
        if let Err(e) = polled {
            self.events = Some(events);
            return if e.kind() == io::ErrorKind::Interrupted { Ok(()) } else { Err(e) };
        }
        for ev in events.iter() {
            self.event(ev);
        }
        self.events = Some(events);
        if self.cable.stopping() {
            return Ok(());
        }
        for i in 0..self.listeners.len() {
            if self.listeners[i].1 {
                self.accept(i);
            }
        }
        self.take_replies();
        self.write_dirty();
        self.read_clients();
        self.tick_servers();
        if std::mem::take(&mut self.wire.delivered) {
            self.wire.nic.interrupt();
        }
        self.expire_lingering();
        Ok(())
    }

    /// Move the packets the servers sent into their sockets now (freeing
    /// their buffers), without polling.
    pub fn send_replies(&mut self) {
        self.take_replies();
        self.write_dirty();
    }

    /// Stop: close every socket and return the counts.
    pub fn finish(mut self) -> Totals {
        self.close_all();
        self.t.packets_in = self.wire.packets;
        self.t.wakeups = self.cable.wakeups.load(Ordering::Relaxed);
        self.t
    }

    /// Send a `TICK` to each server whose wake-up time passed (once per
    /// time it asked for; see `ServerState::wake_at_ms`).
    fn tick_servers(&mut self) {
        // The clock is read only when some server asked to be woken.
        let mut now = None;
        for (i, st) in self.kv.servers.iter().enumerate() {
            let at = st.wake_at_ms.load(Ordering::Acquire);
            // Past it, not at it: a deadline expires once the clock is
            // beyond it (`Store::expire_blocked`, as in Redis); a tick at
            // the deadline itself would wake the server for nothing, and
            // its wake-up time would never be sent again.
            if at == u64::MAX || self.ticked[i] == at || *now.get_or_insert_with(|| self.kv.now_ms()) <= at {
                continue;
            }
            if self.wire.send(self.base_port + i as u16, 0, TICK, &[]) {
                self.ticked[i] = at;
            }
        }
    }

    /// How long until the earliest server wake-up not yet sent is past.
    fn next_tick(&self) -> Option<Duration> {
        let at = self
            .kv
            .servers
            .iter()
            .zip(&self.ticked)
            .map(|(st, &sent)| (st.wake_at_ms.load(Ordering::Acquire), sent))
            .filter(|&(at, sent)| at != u64::MAX && at != sent)
            .map(|(at, _)| at)
            .min()?;
        Some(Duration::from_millis((at + 1).saturating_sub(self.kv.now_ms())))
    }

    /// How long the next poll may sleep.
    fn timeout(&self) -> Option<Duration> {
        if self.blocked {
            return Some(RETRY);
        }
        if !self.to_read.is_empty() {
            return Some(Duration::ZERO);
        }
        let mut t: Option<Duration> = self.next_tick();
        if self.listeners.iter().any(|l| l.1) {
            t = Some(ACCEPT_RETRY);
        }
        if self.lingering.is_empty() {
            return t;
        }
        let now = Instant::now();
        for &id in &self.lingering {
            if let Some(until) = self.conn(id).and_then(|c| c.linger_until) {
                let d = until.saturating_duration_since(now).max(Duration::from_millis(1));
                t = Some(t.map_or(d, |t| t.min(d)));
            }
        }
        t
    }

    fn conn(&self, id: u16) -> Option<&Conn> {
        self.conns[usize::from(id)].as_deref()
    }

    fn conn_mut(&mut self, id: u16) -> Option<&mut Conn> {
        self.conns[usize::from(id)].as_deref_mut()
    }

    fn enqueue(&mut self, id: u16) {
        if let Some(c) = self.conns[usize::from(id)].as_deref_mut() {
            if !c.queued {
                c.queued = true;
                self.to_read.push_back(id);
            }
        }
    }

    fn mark_dirty(&mut self, id: u16) {
        if let Some(c) = self.conns[usize::from(id)].as_deref_mut() {
            if !c.dirty {
                c.dirty = true;
                self.dirty.push(id);
            }
        }
    }

    fn event(&mut self, ev: &Event) {
        let t = ev.token();
        if t == WAKER {
            return;
        }
        if t.0 >= LISTENER_BASE {
            if let Some(l) = self.listeners.get_mut(t.0 - LISTENER_BASE) {
                l.1 = true;
            }
            return;
        }
        let Ok(id) = u16::try_from(t.0) else { return };
        let Some(c) = self.conn_mut(id) else { return };
        let (r, w) = (
            ev.is_readable() || ev.is_read_closed() || ev.is_error(),
            ev.is_writable() || ev.is_write_closed() || ev.is_error(),
        );
        if r {
            c.readable = true;
            c.hup |= ev.is_read_closed() || ev.is_error();
        }
        let out = w && c.pending_out() > 0;
        if w {
            c.writable = true;
        }
        if r {
            self.enqueue(id);
        }
        if out {
            self.mark_dirty(id);
        }
    }

    /// Accept every connection waiting on listener `i`.
    fn accept(&mut self, i: usize) {
        loop {
            let (mut s, _) = match self.listeners[i].0.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.listeners[i].1 = false;
                    return;
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
                    ) =>
                {
                    continue
                }
                Err(e) => {
                    // Out of file descriptors, say: the connection waits in
                    // the listen queue; try again soon.
                    self.t.accept_errors += 1;
                    if !std::mem::replace(&mut self.accept_warned, true) {
                        eprintln!("granule serve: accepting on port {}: {e} (retrying)", self.base_port + i as u16);
                    }
                    return;
                }
            };
            // Lingering connections (their clients gone) do not count.
            let clients = self.ids.live().saturating_sub(self.lingering.len());
            let id = if clients < self.max_clients { self.ids.take() } else { None };
            let Some(id) = id else {
                let _ = s.write(b"-ERR max number of clients reached\r\n");
                self.t.refused += 1;
                continue;
            };
            let _ = s.set_nodelay(true);
            if self
                .poll
                .registry()
                .register(&mut s, Token(usize::from(id)), Interest::READABLE | Interest::WRITABLE)
                .is_err()
            {
                self.ids.release(id);
                self.t.accept_errors += 1;
                continue;
            }
            self.conns[usize::from(id)] = Some(Box::new(Conn::new(s, self.base_port + i as u16)));
            self.t.accepted += 1;
            self.t.peak = self.t.peak.max(clients + 1);
            // Read whatever came with the handshake.
            self.enqueue(id);
        }
    }

    /// Move every packet the servers sent into its connection's output.
    fn take_replies(&mut self) {
        let pool = Arc::clone(&self.wire.pool);
        while let Some(desc) = self.cable.sent.get() {
            self.t.packets_out += 1;
            let (conns, dirty, to_read) = (&mut self.conns, &mut self.dirty, &mut self.to_read);
            let taken = pool.read(desc, |h, payload| {
                let c = match conns[usize::from(h.dst)].as_deref_mut() {
                    Some(c) if c.stream.is_some() && !c.server_fin => c,
                    _ => return false,
                };
                c.queue_out(payload);
                if c.linger_until.is_some() {
                    c.linger_until = Some(Instant::now() + LINGER);
                }
                if h.flags & FIN != 0 {
                    // Read no more: the server will not; answer its FIN.
                    c.server_fin = true;
                    let n = c.held().len();
                    c.consume_held(n);
                    if !c.queued {
                        c.queued = true;
                        to_read.push_back(h.dst);
                    }
                }
                if !c.dirty {
                    c.dirty = true;
                    dirty.push(h.dst);
                }
                true
            });
            if taken != Some(true) {
                self.t.orphans += 1;
            }
            pool.free(desc);
        }
    }

    /// Write every connection that has new output.
    fn write_dirty(&mut self) {
        let mut dirty = std::mem::take(&mut self.dirty);
        for &id in &dirty {
            let Some(c) = self.conns[usize::from(id)].as_deref_mut() else { continue };
            c.dirty = false;
            match c.flush() {
                Ok(n) => self.t.bytes_out += n as u64,
                Err(_) => self.t.unwritten += c.close(&mut self.scratch) as u64,
            }
            // Reading stopped while the output was over its cap: resume.
            let resume = c.readable && !c.eof && c.pending_out() < OUT_CAP;
            if resume {
                self.enqueue(id);
            }
            self.settle(id);
        }
        // The list keeps its capacity (no allocation per reply); what the
        // turn marked dirty meanwhile stays on it.
        dirty.clear();
        dirty.append(&mut self.dirty);
        self.dirty = dirty;
    }

    /// Give each connection in the read queue one turn, until the pool or
    /// the ring is full.
    fn read_clients(&mut self) {
        self.blocked = false;
        for _ in 0..self.to_read.len() {
            let Some(id) = self.to_read.pop_front() else { break };
            let Some(c) = self.conns[usize::from(id)].as_deref_mut() else { continue };
            c.queued = false;
            match self.pump(id) {
                Pump::Done => {}
                Pump::More => self.enqueue(id),
                Pump::Blocked => {
                    if let Some(c) = self.conn_mut(id) {
                        c.queued = true;
                    }
                    self.to_read.push_front(id);
                    self.blocked = true;
                }
            }
            self.settle(id);
            if self.blocked {
                break;
            }
        }
    }

    /// One turn of connection `id`: its held bytes, then its FIN, then one
    /// read of its socket, into packets.
    fn pump(&mut self, id: u16) -> Pump {
        let Some(c) = self.conns[usize::from(id)].as_deref_mut() else { return Pump::Done };
        let wire = &mut self.wire;
        while !c.held().is_empty() {
            let n = c.held().len().min(PAYLOAD_MAX);
            if !wire.send(c.server, id, 0, &c.held()[..n]) {
                return Pump::Blocked;
            }
            c.consume_held(n);
        }
        if (c.eof || c.server_fin) && !c.fin_sent {
            if !wire.send(c.server, id, FIN, &[]) {
                return Pump::Blocked;
            }
            c.fin_sent = true;
            return Pump::Done;
        }
        if c.eof || c.server_fin || !c.readable || c.pending_out() >= OUT_CAP {
            return Pump::Done;
        }
        let scratch = &mut self.scratch;
        match c.read(scratch) {
            Input::Empty => Pump::Done,
            Input::Eof => {
                c.eof = true;
                Pump::More
            }
            Input::Failed => {
                self.t.unwritten += c.close(scratch) as u64;
                Pump::More
            }
            Input::Bytes(n) => {
                self.t.bytes_in += n as u64;
                let mut off = 0;
                while off < n {
                    let k = (n - off).min(PAYLOAD_MAX);
                    if !wire.send(c.server, id, 0, &scratch[off..off + k]) {
                        c.hold(&scratch[off..n]);
                        return Pump::Blocked;
                    }
                    off += k;
                }
                if c.readable {
                    Pump::More
                } else {
                    Pump::Done
                }
            }
        }
    }

    /// Close connection `id`'s socket if its life is over, start its
    /// lingering, or forget it.
    fn settle(&mut self, id: u16) {
        let Some(c) = self.conns[usize::from(id)].as_deref_mut() else { return };
        if c.stream.is_some() && c.pending_out() == 0 && (c.server_fin || (c.eof && c.fin_sent)) {
            match c.linger_until {
                _ if c.server_fin => self.t.unwritten += c.close(&mut self.scratch) as u64,
                None => {
                    c.linger_until = Some(Instant::now() + LINGER);
                    self.lingering.push(id);
                }
                Some(t) if Instant::now() >= t => self.t.unwritten += c.close(&mut self.scratch) as u64,
                Some(_) => {}
            }
        }
        if c.finished() {
            self.conns[usize::from(id)] = None;
            self.ids.release(id);
        } else if (c.eof || c.server_fin) && !c.fin_sent {
            self.enqueue(id);
        }
    }

    /// Close the lingering connections whose time is up.
    fn expire_lingering(&mut self) {
        if self.lingering.is_empty() {
            return;
        }
        let now = Instant::now();
        let ids = std::mem::take(&mut self.lingering);
        for id in ids {
            let Some(c) = self.conn(id) else { continue };
            if c.stream.is_none() || c.linger_until.is_none() {
                continue;
            }
            if c.linger_until.is_some_and(|t| now >= t) {
                self.settle(id);
            }
            if self.conn(id).is_some_and(|c| c.stream.is_some()) {
                self.lingering.push(id);
            }
        }
    }

    /// Stop accepting; write what each connection holds (without waiting)
    /// and close it.
    fn close_all(&mut self) {
        for (l, _) in &mut self.listeners {
            let _ = self.poll.registry().deregister(l);
        }
        self.listeners.clear();
        self.t.open_at_stop = self.conns.iter().flatten().filter(|c| c.stream.is_some() && !c.eof).count();
        for slot in &mut self.conns {
            if let Some(mut c) = slot.take() {
                c.writable = true;
                if let Ok(n) = c.flush() {
                    self.t.bytes_out += n as u64;
                }
                self.t.unwritten += c.close(&mut self.scratch) as u64;
            }
        }
    }
}
