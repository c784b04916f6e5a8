//! Blocked clients: `BLPOP`, `BRPOP`, `BLMOVE` and `BRPOPLPUSH` waiting
//! for a list to be pushed, as Redis 7.0's `blocked.c` does it.
//!
//! The store has no threads and no clock, so blocking is bookkeeping. A
//! blocking pop that finds every key empty writes no reply: the store
//! records the client (its id, its keys, what it will do with an element,
//! its deadline and protocol) at the back of each key's queue, and the
//! connection stops executing the client's later requests (it keeps them,
//! as Redis keeps the query buffer) until the client is unblocked.
//!
//! A key that comes into existence while clients wait for it (`LPUSH`,
//! `LMOVE`'s destination, a `RENAME` — anything that creates it, as Redis's
//! `dbAdd` does) is *signalled ready*. After the command that created it
//! completes — after `EXEC` for a transaction, so that a transaction is
//! atomic to the waiters too — [`Store::serve_ready_keys`] serves the
//! waiters of each ready key, oldest first, for as long as the list has
//! elements; a `BLMOVE` that creates its destination makes that key ready
//! in turn. A served client's reply goes to [`Store::take_outbox`] and its
//! id to [`Store::take_unblocked`], so that the server lets its connection
//! run the requests that waited.
//!
//! Time comes from the caller (the timeout argument is read by
//! [`super::timeout`]): [`Store::expire_blocked`] answers every
//! client whose deadline has passed with Redis's timeout reply (the null
//! array, `_` in RESP3), and [`Store::next_block_deadline`] says when that
//! next needs doing. [`Store::forget_client`] drops the state of a client
//! that disconnected.
//!
//! Inside `EXEC` (Redis's `CLIENT_DENY_BLOCKING`) nothing blocks: the
//! command answers as if its timeout had passed at once.
//!
//! A client waits for keys of the database it had selected, so keys are
//! waited for and signalled as (database, key); a waiter is served with its
//! database selected, and as a write: the keys serving changes (a
//! `BLMOVE` destination) touch their watchers, as Redis's push does.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use super::encode::{write_null, write_null_array, Protocol};
use super::list::End;
use super::store::{Store, DATABASES};

/// What a blocked client does with the element it gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// `BLPOP`/`BRPOP`: pop from this end, reply `[key, element]`.
    Pop(End),
    /// `BLMOVE`/`BRPOPLPUSH`: pop from `from`, push at `to` of
    /// `destination`, reply the element.
    Move {
        /// The end popped.
        from: End,
        /// The end of the destination pushed.
        to: End,
        /// The destination key.
        destination: Vec<u8>,
    },
}

/// One blocked client.
#[derive(Clone, Debug)]
struct Blocked {
    /// The database its keys are in (the one it had selected).
    db: usize,
    /// The keys it waits for, without repeats, in the order given.
    keys: Vec<Vec<u8>>,
    wait: Wait,
    /// When it times out (absolute milliseconds); `None`: never.
    deadline: Option<u64>,
    /// The protocol its reply is written in.
    protocol: Protocol,
    /// Its place in the queues of its keys (blocking order).
    seq: u64,
}

/// The blocked clients and the keys they wait for.
#[derive(Debug, Default)]
pub(crate) struct Blocking {
    /// Blocked clients by id.
    clients: HashMap<u64, Blocked>,
    /// Per database, each key waited for and its waiters by blocking
    /// order (→ client id).
    waiters: [HashMap<Vec<u8>, BTreeMap<u64, u64>>; DATABASES],
    /// Keys signalled ready and not served yet, as (database, key), in
    /// signal order.
    ready: VecDeque<(usize, Vec<u8>)>,
    /// The same keys, to signal each at most once.
    ready_set: HashSet<(usize, Vec<u8>)>,
    /// Every finite deadline, with its client id, earliest first.
    deadlines: BTreeSet<(u64, u64)>,
    /// Clients unblocked since the last [`Store::take_unblocked`].
    unblocked: Vec<u64>,
    /// The next blocking order number.
    next_seq: u64,
    /// Set while `EXEC` runs: blocking commands answer at once.
    deny: bool,
}

/// Appends the reply of a blocking list command whose time ran out.
pub(crate) fn write_timeout(out: &mut Vec<u8>, protocol: Protocol) {
    match protocol {
        Protocol::Resp2 => write_null_array(out),
        Protocol::Resp3 => write_null(out, Protocol::Resp3),
    }
}

impl Store {
    /// Whether the client `id` is blocked (its connection holds its later
    /// requests until it is not).
    pub fn is_blocked(&self, id: u64) -> bool {
        !self.blocking.clients.is_empty() && self.blocking.clients.contains_key(&id)
    }

    /// Clients blocked now.
    pub fn blocked_clients(&self) -> usize {
        self.blocking.clients.len()
    }

    /// Whether a command run now may block (not inside `EXEC`, and the
    /// client has an id to be answered at).
    pub(crate) fn may_block(&self, id: u64) -> bool {
        !self.blocking.deny && id != 0
    }

    /// Sets or clears Redis's `CLIENT_DENY_BLOCKING` for the commands that
    /// follow (`EXEC` sets it while it runs its queue).
    pub(crate) fn deny_blocking(&mut self, deny: bool) {
        self.blocking.deny = deny;
    }

    /// Blocks client `id` on `keys` (repeats are ignored) of the selected
    /// database until one of them can serve `wait`, or until `deadline`.
    pub(crate) fn block(&mut self, id: u64, keys: &[&[u8]], wait: Wait, deadline: Option<u64>, protocol: Protocol) {
        self.forget_blocked(id);
        let db = self.db;
        let blocking = &mut self.blocking;
        let seq = blocking.next_seq;
        blocking.next_seq += 1;
        let mut owned: Vec<Vec<u8>> = Vec::with_capacity(keys.len());
        for key in keys {
            if owned.iter().any(|k| k == key) {
                continue;
            }
            blocking.waiters[db].entry(key.to_vec()).or_default().insert(seq, id);
            owned.push(key.to_vec());
        }
        if let Some(at) = deadline {
            blocking.deadlines.insert((at, id));
        }
        blocking.clients.insert(id, Blocked { db, keys: owned, wait, deadline, protocol, seq });
    }

    /// Marks `key` ready if a client waits for it: its waiters are served
    /// after the current command ([`Store::serve_ready_keys`]). Whatever
    /// creates a key calls this (the keyspace does it on insertion), as
    /// Redis's `dbAdd` does; a key of another type than the waiters want
    /// serves nobody.
    pub fn signal_key_ready(&mut self, key: &[u8]) {
        self.signal_key_ready_in(self.db, key);
    }

    /// As [`Store::signal_key_ready`], for `key` of database `db` (`MOVE`,
    /// `COPY ... DB` and `SWAPDB` create keys in other databases).
    pub(crate) fn signal_key_ready_in(&mut self, db: usize, key: &[u8]) {
        let blocking = &mut self.blocking;
        if blocking.waiters[db].is_empty() || !blocking.waiters[db].contains_key(key) {
            return;
        }
        let ready = (db, key.to_vec());
        if blocking.ready_set.contains(&ready) {
            return;
        }
        blocking.ready_set.insert(ready.clone());
        blocking.ready.push_back(ready);
    }

    /// The keys of database `db` that clients wait for.
    pub(crate) fn waited_in(&self, db: usize) -> impl Iterator<Item = &[u8]> + '_ {
        self.blocking.waiters[db].keys().map(Vec::as_slice)
    }

    /// Whether keys wait to be served.
    pub fn has_ready_keys(&self) -> bool {
        !self.blocking.ready.is_empty()
    }

    /// Serves the clients blocked on every key signalled ready, key by key
    /// in signal order (keys that serving makes ready included), each
    /// key's clients oldest first while it has elements. Runs after each
    /// command (the connection calls it), never inside one; cheap when
    /// nothing is ready. Each key is served with its database selected, as
    /// a write (for `WATCH`).
    pub fn serve_ready_keys(&mut self, now_ms: u64) {
        let selected = self.db;
        while let Some(ready) = self.blocking.ready.pop_front() {
            self.blocking.ready_set.remove(&ready);
            let (db, key) = ready;
            self.db = db;
            let tracked = self.begin_command(true);
            self.serve_key(db, &key, now_ms);
            if tracked {
                self.end_tracked_command(false);
            }
        }
        self.db = selected;
    }

    /// Serves the clients blocked on `key` of database `db` (selected),
    /// oldest first, while it is a list with elements.
    fn serve_key(&mut self, db: usize, key: &[u8], now_ms: u64) {
        let mut after = None;
        loop {
            let Some(queue) = self.blocking.waiters[db].get(key) else { return };
            let next = match after {
                None => queue.iter().next(),
                Some(seq) => queue.range(seq + 1..).next(),
            };
            let Some((&seq, &id)) = next else { return };
            after = Some(seq);
            let Some(blocked) = self.blocking.clients.get(&id) else { return };
            let (wait, protocol) = (blocked.wait.clone(), blocked.protocol);
            let mut reply = Vec::new();
            if !self.serve_list_waiter(key, &wait, protocol, now_ms, &mut reply) {
                return;
            }
            self.unblock(id);
            self.outbox.push((id, reply));
        }
    }

    /// Answers every client whose deadline passed before `now_ms` with the
    /// timeout reply (into the outbox), earliest deadline first, and
    /// unblocks it.
    pub fn expire_blocked(&mut self, now_ms: u64) {
        while let Some(&(at, id)) = self.blocking.deadlines.first() {
            if now_ms <= at {
                break;
            }
            let Some(blocked) = self.unblock(id) else {
                self.blocking.deadlines.remove(&(at, id));
                continue;
            };
            let mut reply = Vec::new();
            write_timeout(&mut reply, blocked.protocol);
            self.outbox.push((id, reply));
        }
    }

    /// The earliest deadline of a blocked client: call
    /// [`Store::expire_blocked`] once the time is past it.
    pub fn next_block_deadline(&self) -> Option<u64> {
        self.blocking.deadlines.first().map(|&(at, _)| at)
    }

    /// The clients unblocked (served or timed out) since the last call, in
    /// order: the server runs the requests their connections held (e.g.
    /// `Connection::feed` with no new bytes).
    pub fn take_unblocked(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.blocking.unblocked)
    }

    /// Drops client `id`'s blocked state, if any, without answering it
    /// (it disconnected: part of [`Store::forget_client`]).
    pub(crate) fn forget_blocked(&mut self, id: u64) {
        if self.unblock(id).is_some() {
            self.blocking.unblocked.retain(|&other| other != id);
        }
    }

    /// Removes client `id` from every queue and deadline, and lists it as
    /// unblocked; its record.
    fn unblock(&mut self, id: u64) -> Option<Blocked> {
        let blocking = &mut self.blocking;
        let blocked = blocking.clients.remove(&id)?;
        let waiters = &mut blocking.waiters[blocked.db];
        for key in &blocked.keys {
            if let Some(queue) = waiters.get_mut(key) {
                queue.remove(&blocked.seq);
                if queue.is_empty() {
                    waiters.remove(key);
                }
            }
        }
        if let Some(at) = blocked.deadline {
            blocking.deadlines.remove(&(at, id));
        }
        if !blocking.unblocked.contains(&id) {
            blocking.unblocked.push(id);
        }
        Some(blocked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiters_queue_in_order_and_unblock_everywhere() {
        let mut store = Store::new();
        store.block(1, &[b"a", b"b", b"a"], Wait::Pop(End::Left), Some(50), Protocol::Resp2);
        store.block(2, &[b"b"], Wait::Pop(End::Right), None, Protocol::Resp3);
        store.block(3, &[b"a"], Wait::Pop(End::Left), Some(20), Protocol::Resp3);
        assert!(store.is_blocked(1) && store.is_blocked(2) && !store.is_blocked(4));
        assert_eq!(store.blocking.clients[&1].keys, vec![b"a".to_vec(), b"b".to_vec()]);
        let queue: Vec<u64> = store.blocking.waiters[0][&b"b"[..]].values().copied().collect();
        assert_eq!(queue, [1, 2]);
        assert_eq!(store.next_block_deadline(), Some(20));
        // Deadlines pass strictly after their time, earliest first.
        store.expire_blocked(20);
        assert!(store.outbox.is_empty());
        store.expire_blocked(51);
        assert_eq!(store.take_outbox(), vec![(3, b"_\r\n".to_vec()), (1, b"*-1\r\n".to_vec())]);
        assert_eq!(store.take_unblocked(), [3, 1]);
        assert_eq!(store.next_block_deadline(), None);
        assert!(!store.blocking.waiters[0].contains_key(&b"a"[..]));
        // A client that goes away leaves nothing behind.
        store.forget_client(2);
        assert!(store.blocking.waiters.iter().all(HashMap::is_empty) && store.blocking.clients.is_empty());
        assert!(store.take_unblocked().is_empty());
    }

    #[test]
    fn only_keys_waited_for_are_signalled_once() {
        let mut store = Store::new();
        store.signal_key_ready(b"k");
        assert!(!store.has_ready_keys());
        store.block(7, &[b"k"], Wait::Pop(End::Left), None, Protocol::Resp2);
        store.signal_key_ready(b"k");
        store.signal_key_ready(b"k");
        assert_eq!(store.blocking.ready.len(), 1);
        // Ready but still missing: nobody is served.
        store.serve_ready_keys(0);
        assert!(store.is_blocked(7) && !store.has_ready_keys());
    }
}
