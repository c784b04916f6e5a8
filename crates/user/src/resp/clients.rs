//! The client registry: what the store knows about every connected client.
//!
//! A command sees only its own client's [`Session`](super::session::Session);
//! some need the others too — `PUBLISH` writes to each subscriber in that
//! subscriber's protocol, `CLIENT LIST` describes every connection,
//! `CLIENT KILL` finds clients by id or address, `INFO` counts them. The
//! registry holds, per client id, what those commands read: the protocol,
//! the name, the database, its subscriptions, its transaction, when it
//! connected and when it last sent a command (and which). Sessions update
//! it as they change (`HELLO`, `CLIENT SETNAME`, `SELECT`, `RESET`…).
//!
//! A client is registered when its connection opens
//! ([`Store::open_client`], or at its first command), and forgotten when the
//! server closes it ([`Store::forget_client`]). What only the server around
//! the store knows — the peer's and the local address, the socket — it may
//! set ([`Store::set_client_address`]); until then `CLIENT LIST` answers
//! what Redis answers for an unknown value: `?:0` for an address and `-1`
//! for a descriptor (what Redis shows for a connection it cannot name).
//!
//! A killed client (`CLIENT KILL`) leaves the registry at once, as
//! Redis frees it at once, and waits in a list for the server to close its
//! connection ([`Store::take_killed`]).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::encode::Protocol;
use super::pubsub::Subscriptions;
use super::session::Session;
use super::store::Store;

/// One client as the registry knows it.
#[derive(Clone, Debug)]
pub(crate) struct Client {
    /// Its id (`CLIENT ID`).
    pub(crate) id: u64,
    /// The protocol its replies and pushes are written in.
    pub(crate) protocol: Protocol,
    /// Its name (`CLIENT SETNAME`).
    pub(crate) name: Option<Vec<u8>>,
    /// The database it selected.
    pub(crate) db: i64,
    /// When it connected (store time, milliseconds).
    pub(crate) created_ms: u64,
    /// When it last sent a command.
    pub(crate) last_ms: u64,
    /// Full name of the last command it sent (`NULL` before any, as Redis).
    pub(crate) last_command: &'static str,
    /// Its channels and patterns.
    pub(crate) subscriptions: Subscriptions,
    /// Commands queued by its open `MULTI`, if one is open.
    pub(crate) multi: Option<usize>,
    /// Waiting in a blocking command.
    pub(crate) blocked: bool,
    /// `CLIENT NO-EVICT ON`.
    pub(crate) no_evict: bool,
    /// The peer's address (`ip:port`), if the server told it.
    pub(crate) address: Option<String>,
    /// The local address the client connected to, if the server told it.
    pub(crate) local_address: Option<String>,
    /// The socket's descriptor, if the server told it.
    pub(crate) fd: Option<i64>,
}

impl Client {
    fn new(id: u64, now: u64) -> Client {
        Client {
            id,
            protocol: Protocol::Resp2,
            name: None,
            db: 0,
            created_ms: now,
            last_ms: now,
            last_command: "NULL",
            subscriptions: Subscriptions::default(),
            multi: None,
            blocked: false,
            no_evict: false,
            address: None,
            local_address: None,
            fd: None,
        }
    }

    /// Whether Redis would flag it `P`: subscribed to anything.
    pub(crate) fn in_pubsub(&self) -> bool {
        self.subscriptions.total() > 0
    }

    /// The peer's address as `CLIENT LIST` shows it.
    pub(crate) fn address(&self) -> &str {
        self.address.as_deref().unwrap_or(UNKNOWN_ADDRESS)
    }

    /// The local address as `CLIENT LIST` shows it.
    pub(crate) fn local_address(&self) -> &str {
        self.local_address.as_deref().unwrap_or(UNKNOWN_ADDRESS)
    }

    /// Redis's client type (`CLIENT LIST TYPE`, `CLIENT KILL TYPE`).
    pub(crate) fn kind(&self) -> ClientKind {
        if self.in_pubsub() {
            ClientKind::PubSub
        } else {
            ClientKind::Normal
        }
    }

    /// The `flags=` letters of `CLIENT LIST`, in Redis's order.
    pub(crate) fn flag_letters(&self) -> String {
        let mut flags = String::new();
        for (set, letter) in
            [(self.in_pubsub(), 'P'), (self.multi.is_some(), 'x'), (self.blocked, 'b'), (self.no_evict, 'e')]
        {
            if set {
                flags.push(letter);
            }
        }
        if flags.is_empty() {
            flags.push('N');
        }
        flags
    }
}

/// What Redis shows for an address it cannot tell.
pub(crate) const UNKNOWN_ADDRESS: &str = "?:0";

/// Redis's client types. Only normal and pub/sub clients exist here: there
/// is no replication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClientKind {
    /// `normal`.
    Normal,
    /// `pubsub`.
    PubSub,
    /// `master`, `replica` or `slave`: never matches a client here.
    Replication,
}

impl ClientKind {
    /// The type called `name` (any case), as Redis names them.
    pub(crate) fn from_name(name: &[u8]) -> Option<ClientKind> {
        let lower = name.to_ascii_lowercase();
        match &lower[..] {
            b"normal" => Some(ClientKind::Normal),
            b"pubsub" => Some(ClientKind::PubSub),
            b"master" | b"replica" | b"slave" => Some(ClientKind::Replication),
            _ => None,
        }
    }
}

/// Hashes client ids (small sequential integers) by a multiplication, which
/// spreads them over every bit; no per-command SipHash.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn write_u64(&mut self, id: u64) {
        self.0 = id.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Every connected client: a slab of entries, and an index from id to
/// entry. A session remembers its entry's place, so the per-command update
/// ([`Clients::touch`]) is an array access, not a hash lookup.
#[derive(Debug, Default)]
pub(crate) struct Clients {
    slots: Vec<Option<Client>>,
    /// Empty places in `slots`.
    free: Vec<usize>,
    by_id: HashMap<u64, usize, BuildHasherDefault<IdHasher>>,
    /// Killed clients whose connection the server has not closed yet.
    killed: Vec<u64>,
    /// Clients ever registered (`total_connections_received`).
    pub(crate) registered: u64,
}

impl Clients {
    /// The place of client `id`, registered at `now` if it is not yet.
    fn place(&mut self, id: u64, now: u64) -> usize {
        if let Some(&at) = self.by_id.get(&id) {
            return at;
        }
        self.registered += 1;
        let client = Some(Client::new(id, now));
        let at = match self.free.pop() {
            Some(at) => {
                self.slots[at] = client;
                at
            }
            None => {
                self.slots.push(client);
                self.slots.len() - 1
            }
        };
        self.by_id.insert(id, at);
        at
    }

    /// The client `id`, registered at `now` if it is not yet.
    pub(crate) fn entry(&mut self, id: u64, now: u64) -> &mut Client {
        let at = self.place(id, now);
        self.slots[at].get_or_insert_with(|| Client::new(id, now))
    }

    /// Records that the session's client sends `command` (a full name) at
    /// `now`, registering it if needed.
    #[inline]
    pub(crate) fn touch(&mut self, session: &mut Session, now: u64, command: &'static str) {
        let client = match self.slots.get_mut(session.slot) {
            Some(Some(client)) if client.id == session.id => client,
            _ => {
                session.slot = self.place(session.id, now);
                self.entry(session.id, now)
            }
        };
        client.last_ms = now;
        client.last_command = command;
    }

    /// The client `id`, if connected.
    pub(crate) fn get(&self, id: u64) -> Option<&Client> {
        self.by_id.get(&id).and_then(|&at| self.slots[at].as_ref())
    }

    /// The client `id`, if connected, to change it.
    pub(crate) fn get_mut(&mut self, id: u64) -> Option<&mut Client> {
        let at = *self.by_id.get(&id)?;
        self.slots[at].as_mut()
    }

    /// Removes client `id`; what it was.
    pub(crate) fn remove(&mut self, id: u64) -> Option<Client> {
        let at = self.by_id.remove(&id)?;
        self.free.push(at);
        self.slots[at].take()
    }

    /// Clients connected.
    pub(crate) fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Clients waiting in a blocking command.
    pub(crate) fn blocked(&self) -> usize {
        self.slots.iter().flatten().filter(|client| client.blocked).count()
    }

    /// Every client, oldest (lowest id) first, as `CLIENT LIST` lists them.
    pub(crate) fn by_age(&self) -> Vec<&Client> {
        let mut clients: Vec<&Client> = self.slots.iter().flatten().collect();
        clients.sort_unstable_by_key(|client| client.id);
        clients
    }
}

impl Store {
    /// Registers a new client connected at `now_ms` and returns its id (a
    /// server calls it when it accepts a connection, before any command:
    /// see [`Connection::open`](super::Connection::open)).
    pub fn open_client(&mut self, now_ms: u64) -> u64 {
        let id = self.next_client_id();
        self.clients.entry(id, now_ms);
        id
    }

    /// Forgets client `id`, whose connection is closed: it stops waiting in
    /// a blocking command, its watched keys are forgotten, its
    /// subscriptions end and it leaves the registry. Unknown ids are
    /// ignored.
    pub fn forget_client(&mut self, id: u64) {
        self.forget_blocked(id);
        self.watches.forget(id);
        if let Some(client) = self.clients.remove(id) {
            self.unsubscribe_everything(id, &client.subscriptions);
        }
    }

    /// Ends client `id` as `CLIENT KILL` does: it is forgotten now and its
    /// connection waits for the server to close it ([`Store::take_killed`]).
    pub(crate) fn kill_client(&mut self, id: u64) {
        self.forget_client(id);
        self.clients.killed.push(id);
    }

    /// The clients killed since the last call (by `CLIENT KILL`), whose
    /// connections the server must close.
    pub fn take_killed(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.clients.killed)
    }

    /// Tells the store the addresses of client `id`'s connection — the
    /// peer's and the local one, each `ip:port` — for `CLIENT LIST`,
    /// `CLIENT INFO` and `CLIENT KILL ADDR|LADDR`. Either may be `None`
    /// (unknown, shown as `?:0`). Unknown ids are ignored.
    pub fn set_client_address(&mut self, id: u64, peer: Option<&str>, local: Option<&str>) {
        if let Some(client) = self.clients.get_mut(id) {
            client.address = peer.map(str::to_owned);
            client.local_address = local.map(str::to_owned);
        }
    }

    /// Tells the store the socket descriptor of client `id`'s connection
    /// (`fd=` in `CLIENT LIST`; `-1` until told). Unknown ids are ignored.
    pub fn set_client_fd(&mut self, id: u64, fd: i64) {
        if let Some(client) = self.clients.get_mut(id) {
            client.fd = Some(fd);
        }
    }

    /// Marks client `id` as waiting in a blocking command, or no longer
    /// (`blocked_clients`, the `b` flag).
    #[allow(dead_code)] // The blocking commands are its users.
    pub(crate) fn set_client_blocked(&mut self, id: u64, blocked: bool) {
        if let Some(client) = self.clients.get_mut(id) {
            client.blocked = blocked;
        }
    }

    /// Records that the session's client sends `command` (a full name) at
    /// `now`, for commands that do not reach [`Store::execute_in`] (the
    /// transaction verbs, queued commands).
    pub(crate) fn touch_client(&mut self, session: &mut Session, now: u64, command: &'static str) {
        if session.id == 0 {
            session.id = self.next_client_id();
        }
        self.clients.touch(session, now, command);
    }

    /// Records the state of the session's transaction at `now`:
    /// `Some(queued)` while a `MULTI` is open (or its `EXEC` runs), `None`
    /// otherwise.
    pub(crate) fn set_client_multi(&mut self, session: &mut Session, now: u64, queued: Option<usize>) {
        if session.id == 0 {
            session.id = self.next_client_id();
        }
        self.clients.entry(session.id, now).multi = queued;
    }

    /// Clients connected now (registered and not forgotten).
    pub fn connected_clients(&self) -> usize {
        self.clients.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_register_once_and_list_in_id_order() {
        let mut clients = Clients::default();
        let (mut seven, mut three) = (Session::new(), Session::new());
        (seven.id, three.id) = (7, 3);
        clients.touch(&mut seven, 10, "get");
        clients.touch(&mut three, 20, "set");
        clients.touch(&mut seven, 30, "client|list");
        assert_eq!(clients.len(), 2);
        assert_eq!(clients.registered, 2);
        let listed: Vec<(u64, u64, u64, &str)> =
            clients.by_age().iter().map(|c| (c.id, c.created_ms, c.last_ms, c.last_command)).collect();
        assert_eq!(listed, vec![(3, 20, 20, "set"), (7, 10, 30, "client|list")]);
        assert!(clients.remove(3).is_some());
        assert!(clients.get(3).is_none());
        assert_eq!(clients.registered, 2);
        // A new client takes the free place; the old session's hint is stale.
        let mut four = Session::new();
        four.id = 4;
        clients.touch(&mut four, 40, "ping");
        clients.touch(&mut three, 50, "get");
        assert_eq!(clients.len(), 3);
        assert_eq!(clients.get(4).map(|c| c.last_ms), Some(40));
        assert_eq!(clients.get(3).map(|c| (c.created_ms, c.last_ms)), Some((50, 50)));
    }

    #[test]
    fn flags_follow_redis_letters() {
        let mut client = Client::new(1, 0);
        assert_eq!(client.flag_letters(), "N");
        client.multi = Some(0);
        client.no_evict = true;
        assert_eq!(client.flag_letters(), "xe");
        assert_eq!(client.address(), "?:0");
        assert_eq!(ClientKind::from_name(b"PubSub"), Some(ClientKind::PubSub));
        assert_eq!(ClientKind::from_name(b"replica"), Some(ClientKind::Replication));
        assert_eq!(ClientKind::from_name(b"other"), None);
    }

    #[test]
    fn killed_clients_leave_at_once_and_wait_for_their_server() {
        let mut store = Store::new();
        let a = store.open_client(0);
        let b = store.open_client(0);
        assert_eq!(store.connected_clients(), 2);
        store.kill_client(a);
        assert_eq!(store.connected_clients(), 1);
        assert_eq!(store.take_killed(), vec![a]);
        assert!(store.take_killed().is_empty());
        store.forget_client(a);
        store.forget_client(b);
        store.forget_client(99);
        assert_eq!(store.connected_clients(), 0);
    }
}
