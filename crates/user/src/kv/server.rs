//! A KV server: a Redis-compatible store behind its network stack.
//!
//! Its loop is one `Call` to its stack per batch: "send these replies, then
//! give me the next requests" (the seeds' monolithic system call: two kernel
//! entries). Each connection has its own RESP state; requests are executed
//! in the order the stack hands them over, replies go back on the same
//! connection, and a connection the client closed (or that broke the
//! protocol) is forgotten — by the server and by the store's client
//! registry.
//!
//! A batch may also write to other connections: a `PUBLISH` to each
//! subscriber, in the store's outbox by client id. After the batch the
//! server sends each its bytes (one `SEND` call per connection, which does
//! not wait for input), then closes the connections of clients a
//! `CLIENT KILL` ended. A push may also answer clients blocked in `BLPOP`
//! and its kin (their replies are in the outbox too); each such client's
//! connection then runs the requests it held while blocked. A client
//! blocked with a timeout makes the server publish when it wants to be
//! woken (`ServerState::wake_at_ms`); the card's far side then sends a
//! wake-up, and the server answers the clients whose time ran out. The
//! store is locked for the batch only, never across a system call.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use foldhash::fast::FixedState;

use super::system::{KvSystem, ServerState};
use crate::env::Env;
use crate::net::socket::Socket;
use crate::resp::{Connection, Flow, Limits};
use crate::trap::Trap;

/// The open connections: by connection (the peer's port), and the
/// store's client ids that name them. (Keys are ports and ids, not chosen
/// by clients to collide: a fast fixed hash, as the stack's.)
#[derive(Debug, Default)]
struct Connections {
    by_port: HashMap<u16, Connection, FixedState>,
    ports: HashMap<u64, u16, FixedState>,
}

impl Connections {
    /// Forgets the connection on `port`; its client id, if it had one.
    fn remove(&mut self, port: u16) -> Option<u64> {
        let conn = self.by_port.remove(&port)?;
        self.ports.remove(&conn.id());
        Some(conn.id())
    }
}

/// Server `index`'s program.
pub fn run<T: Trap>(env: &mut Env<T>, kv: &KvSystem, index: usize) {
    let spec = kv.stacks.get().and_then(|s| s.get(index));
    let spec = spec.unwrap_or_else(|| panic!("server {index} started before the root task built it"));
    let Some(st) = kv.servers.get(index) else { panic!("no server {index}") };
    let sock = Socket { ep: spec.ep, area: spec.area };
    let limits = Limits::with_max_request(kv.config.max_request);
    let mut conns = Connections::default();
    let mut out = Vec::new();
    let (mut to, mut close) = (0u16, false);
    loop {
        let got = match sock.send_recv(env, to, &out, close) {
            Ok(g) => g,
            Err(e) => panic!("server {index}: send_recv: {e}"),
        };
        out.clear();
        to = got.conn;
        close = false;
        let lock = || st.store.lock().unwrap_or_else(|e| e.into_inner());
        let now = kv.now_ms();
        if got.tick {
            // A wake-up: answer the blocked clients whose time ran out.
            let after = {
                let mut store = lock();
                store.expire_blocked(now);
                after_batch(&mut store, &mut conns, now, st)
            };
            finish_batch(env, &sock, &mut conns, 0, after, &mut out, &mut close, index);
            continue;
        }
        if got.closed {
            if let Some(id) = conns.remove(got.conn) {
                let mut store = lock();
                store.forget_client(id);
                st.wake_at_ms.store(store.next_block_deadline().unwrap_or(u64::MAX), Ordering::Release);
            }
            continue;
        }
        let Connections { by_port, ports } = &mut conns;
        let conn = by_port.entry(got.conn).or_insert_with(|| {
            st.connections.fetch_add(1, Ordering::Relaxed);
            let conn = Connection::open(limits, &mut lock(), now);
            ports.insert(conn.id(), got.conn);
            conn
        });
        let (flow, mut store) = sock.incoming(&got, |bytes| {
            if kv.config.log_requests {
                st.log.lock().unwrap_or_else(|e| e.into_inner()).push((got.conn, bytes.to_vec()));
            }
            let mut store = lock();
            let flow = conn.feed(bytes, &mut store, now, &mut out);
            if flow == Flow::Close {
                store.forget_client(conn.id());
            }
            (flow, store)
        });
        let after = after_batch(&mut store, &mut conns, now, st);
        drop(store);
        if flow == Flow::Close {
            close = true;
            conns.remove(got.conn);
        }
        finish_batch(env, &sock, &mut conns, got.conn, after, &mut out, &mut close, index);
        st.batches.fetch_add(1, Ordering::Relaxed);
    }
}

/// What a batch left for connections other than the one answered.
#[derive(Debug, Default)]
struct After {
    /// Bytes by client id, in order.
    outbox: Vec<(u64, Vec<u8>)>,
    /// Clients `CLIENT KILL` ended.
    killed: Vec<u64>,
    /// Clients whose held requests closed their connection (`QUIT`).
    closed: Vec<u64>,
}

/// With the store locked after a batch: take the outbox and the killed
/// clients, run the requests each unblocked client held (until no client
/// is unblocked any more), and publish the next wake-up time.
fn after_batch(store: &mut crate::resp::Store, conns: &mut Connections, now: u64, st: &ServerState) -> After {
    let mut after = After::default();
    loop {
        after.outbox.extend(store.take_outbox());
        let unblocked = store.take_unblocked();
        if unblocked.is_empty() {
            break;
        }
        for id in unblocked {
            let Some(conn) = conns.ports.get(&id).and_then(|port| conns.by_port.get_mut(port)) else { continue };
            // Its late reply is already in the outbox; what it held follows.
            after.outbox.extend(store.take_outbox());
            let mut bytes = Vec::new();
            if conn.feed(&[], store, now, &mut bytes) == Flow::Close {
                store.forget_client(id);
                after.closed.push(id);
            }
            after.outbox.push((id, bytes));
        }
    }
    after.killed = store.take_killed();
    st.wake_at_ms.store(store.next_block_deadline().unwrap_or(u64::MAX), Ordering::Release);
    after
}

/// Sends what a batch left for other connections, then closes the
/// connections of killed clients and of clients that quit (the one being
/// answered, `current`, by setting `close`).
#[allow(clippy::too_many_arguments)]
fn finish_batch<T: Trap>(
    env: &mut Env<T>,
    sock: &Socket,
    conns: &mut Connections,
    current: u16,
    after: After,
    out: &mut Vec<u8>,
    close: &mut bool,
    index: usize,
) {
    if after.outbox.is_empty() && after.killed.is_empty() && after.closed.is_empty() {
        return;
    }
    deliver(env, sock, conns, current, after.outbox, out, index);
    for id in after.killed.into_iter().chain(after.closed) {
        let Some(&port) = conns.ports.get(&id) else { continue };
        conns.remove(port);
        if port == current {
            *close = true;
        } else if let Err(e) = sock.send(env, port, &[], true) {
            panic!("server {index}: closing client {id}: {e}");
        }
    }
}

/// Sends the store's outbox: each connection's bytes in order, one `SEND`
/// per connection; bytes for the connection being answered join its
/// reply (`out`), and bytes for clients gone are dropped.
fn deliver<T: Trap>(
    env: &mut Env<T>,
    sock: &Socket,
    conns: &Connections,
    current: u16,
    outbox: Vec<(u64, Vec<u8>)>,
    out: &mut Vec<u8>,
    index: usize,
) {
    let mut pending: Vec<(u16, Vec<u8>)> = Vec::new();
    let mut slot: HashMap<u16, usize, FixedState> = HashMap::default();
    for (id, bytes) in outbox {
        let Some(&port) = conns.ports.get(&id) else { continue };
        if port == current {
            out.extend_from_slice(&bytes);
        } else if let Some(&at) = slot.get(&port) {
            pending[at].1.extend_from_slice(&bytes);
        } else {
            slot.insert(port, pending.len());
            pending.push((port, bytes));
        }
    }
    for (port, bytes) in pending {
        if let Err(e) = sock.send(env, port, &bytes, false) {
            panic!("server {index}: send to {port}: {e}");
        }
    }
}
