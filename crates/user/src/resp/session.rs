//! A client's session and what the server around the store knows: plain
//! values that the store, the commands and the connection share.

use super::encode::Protocol;

/// What a connection's client told about itself, and its id.
#[derive(Clone, Debug, Default)]
pub struct Session {
    /// 0 until the store assigns one (on first need).
    pub(super) id: u64,
    /// Where the store's client registry keeps this client (a hint it
    /// checks against the id).
    pub(super) slot: usize,
    pub(super) name: Option<Vec<u8>>,
    pub(super) lib_name: Option<Vec<u8>>,
    pub(super) lib_version: Option<Vec<u8>>,
    pub(super) protocol: Protocol,
    /// The selected database (`SELECT`), 0 at first; always below
    /// [`DATABASES`](super::store::DATABASES).
    pub(super) db: usize,
    /// Subscribed to some channel or pattern (Redis's `CLIENT_PUBSUB`): a
    /// RESP2 client is then limited to the subscription commands.
    pub(super) subscribed: bool,
}

impl Session {
    /// A session without name or id.
    pub fn new() -> Self {
        Session::default()
    }

    /// The client id, 0 if not assigned yet.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The name set by `CLIENT SETNAME` or `HELLO ... SETNAME`.
    pub fn name(&self) -> Option<&[u8]> {
        self.name.as_deref()
    }

    /// The protocol chosen with `HELLO` (RESP2 until then).
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The selected database (`SELECT`): 0 until the client selects another.
    pub fn db(&self) -> usize {
        self.db
    }

    /// Whether the client is subscribed to any channel or pattern.
    pub fn is_subscribed(&self) -> bool {
        self.subscribed
    }

    /// The library name and version set by `CLIENT SETINFO`.
    pub fn library(&self) -> (Option<&[u8]>, Option<&[u8]>) {
        (self.lib_name.as_deref(), self.lib_version.as_deref())
    }
}

/// What `INFO` reports beyond the store's own counters: facts only the
/// server around the store knows. `None` fields are left out.
#[derive(Clone, Debug, Default)]
pub struct ServerInfo {
    /// The serving process's id.
    pub process_id: Option<u32>,
    /// The TCP port served.
    pub tcp_port: Option<u16>,
    /// When the server started, in the store's clock (Unix milliseconds):
    /// `INFO` reports the uptime from it.
    pub started_ms: Option<u64>,
    /// Most clients the server accepts at once (`maxclients`).
    pub max_clients: Option<u64>,
    /// Extra `name:value` lines for the `server` section (e.g. the kernel
    /// regime a hosted server runs under).
    pub extra: Vec<(String, String)>,
}
