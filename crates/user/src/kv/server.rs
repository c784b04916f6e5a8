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
//! `CLIENT KILL` ended. The store is locked for the batch only, never
//! across a system call.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use super::system::KvSystem;
use crate::env::Env;
use crate::net::socket::Socket;
use crate::resp::{Connection, Flow, Limits};
use crate::trap::Trap;

/// The open connections: by connection (the peer's port), and the
/// store's client ids that name them.
#[derive(Debug, Default)]
struct Connections {
    by_port: HashMap<u16, Connection>,
    ports: HashMap<u64, u16>,
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
        if got.closed {
            if let Some(id) = conns.remove(got.conn) {
                lock().forget_client(id);
            }
            continue;
        }
        let now = kv.now_ms();
        let Connections { by_port, ports } = &mut conns;
        let conn = by_port.entry(got.conn).or_insert_with(|| {
            st.connections.fetch_add(1, Ordering::Relaxed);
            let conn = Connection::open(limits, &mut lock(), now);
            ports.insert(conn.id(), got.conn);
            conn
        });
        let (flow, outbox, killed) = sock.incoming(&got, |bytes| {
            if kv.config.log_requests {
                st.log.lock().unwrap_or_else(|e| e.into_inner()).push((got.conn, bytes.to_vec()));
            }
            let mut store = lock();
            let flow = conn.feed(bytes, &mut store, now, &mut out);
            if flow == Flow::Close {
                store.forget_client(conn.id());
            }
            let outbox = if store.has_outbox() { store.take_outbox() } else { Vec::new() };
            (flow, outbox, store.take_killed())
        });
        if flow == Flow::Close {
            close = true;
            conns.remove(got.conn);
        }
        deliver(env, &sock, &conns, got.conn, outbox, &mut out, index);
        for id in killed {
            let Some(&port) = conns.ports.get(&id) else { continue };
            conns.remove(port);
            if port == got.conn {
                close = true;
            } else if let Err(e) = sock.send(env, port, &[], true) {
                panic!("server {index}: closing a killed client: {e}");
            }
        }
        st.batches.fetch_add(1, Ordering::Relaxed);
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
    let mut slot: HashMap<u16, usize> = HashMap::new();
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
