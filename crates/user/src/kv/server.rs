//! A KV server: a Redis-compatible store behind its network stack.
//!
//! Its loop is one `Call` to its stack per batch: "send these replies, then
//! give me the next requests" (the seeds' monolithic system call: two kernel
//! entries). Each connection has its own RESP state; requests are executed
//! in the order the stack hands them over, replies go back on the same
//! connection, and a connection the client closed (or that broke the
//! protocol) is forgotten, by the server and by the store.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use super::system::KvSystem;
use crate::env::Env;
use crate::net::socket::Socket;
use crate::resp::{Connection, Flow, Limits};
use crate::trap::Trap;

/// Server `index`'s program.
pub fn run<T: Trap>(env: &mut Env<T>, kv: &KvSystem, index: usize) {
    let spec = kv.stacks.get().and_then(|s| s.get(index));
    let spec = spec.unwrap_or_else(|| panic!("server {index} started before the root task built it"));
    let Some(st) = kv.servers.get(index) else { panic!("no server {index}") };
    let sock = Socket { ep: spec.ep, area: spec.area };
    let limits = Limits::with_max_request(kv.config.max_request);
    let mut conns: HashMap<u16, Connection> = HashMap::new();
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
        if got.closed {
            if let Some(gone) = conns.remove(&got.conn) {
                st.store.lock().unwrap_or_else(|e| e.into_inner()).forget_client(gone.id());
            }
            continue;
        }
        let conn = conns.entry(got.conn).or_insert_with(|| {
            st.connections.fetch_add(1, Ordering::Relaxed);
            Connection::new(limits)
        });
        let now = kv.now_ms();
        let flow = sock.incoming(&got, |bytes| {
            if kv.config.log_requests {
                st.log.lock().unwrap_or_else(|e| e.into_inner()).push((got.conn, bytes.to_vec()));
            }
            let mut store = st.store.lock().unwrap_or_else(|e| e.into_inner());
            conn.feed(bytes, &mut store, now, &mut out)
        });
        if flow == Flow::Close {
            close = true;
            if let Some(gone) = conns.remove(&got.conn) {
                st.store.lock().unwrap_or_else(|e| e.into_inner()).forget_client(gone.id());
            }
        }
        st.batches.fetch_add(1, Ordering::Relaxed);
    }
}
