//! `CLIENT`: a connection's name and id, and the introspection tools read
//! — `CLIENT LIST`, `CLIENT INFO`, `CLIENT KILL` — as Redis 7.0 has them.
//!
//! `CLIENT LIST` writes one line per client in Redis 7.0's format and field
//! order (`id addr laddr fd name age idle flags db sub psub ssub multi qbuf
//! qbuf-free argv-mem multi-mem rbs rbp obl oll omem tot-mem events cmd user
//! redir resp`), from the client registry. Values the store knows are real:
//! ids, names, ages and idle times (whole seconds of store time, as Redis
//! counts them), flags (`P` subscribed, `x` in `MULTI`, `b` blocked, `e`
//! no-evict, `N` none), subscription counts, the queued commands of an
//! open transaction, the last command's full name, the protocol, and the
//! current command's argument bytes (`argv-mem`). Addresses and the socket
//! are the server's to tell ([`Store::set_client_address`]); unknown, they
//! read `?:0` and `fd=-1`, as Redis shows a connection it cannot name. The
//! buffers belong to the connection, not the store, so their fields (`qbuf`
//! to `tot-mem`) read 0 and `events` is empty — what Redis shows for a
//! client without a socket. Every client is the `default` user (there are
//! no ACLs) and none tracks keys (`redir=-1`).
//!
//! `CLIENT KILL` takes Redis's old form (`CLIENT KILL addr`: `+OK` or `No
//! such client`, and a client may kill itself) and its filters (`ID`,
//! `ADDR`, `LADDR`, `TYPE`, `USER`, `SKIPME`: the count killed). A killed
//! client leaves the registry at once; the server closes its connection
//! ([`Store::take_killed`]). Killing oneself closes the connection after
//! the reply.

use super::clients::{Client, ClientKind};
use super::command::{c_string, write_ok, Flow, SYNTAX};
use super::encode::{write_bulk, write_error, write_integer, write_null, write_verbatim};
use super::number::parse_i64;
use super::pubsub::write_help;
use super::server::{valid_client_name, LOADING_STALE};
use super::store::Store;
use super::table::{spec, Call, Flags, Spec, NO_KEYS};

/// Flags of the subcommands about one's own connection.
const OWN: Flags = Flags::NOSCRIPT.or(LOADING_STALE);
/// Flags of the administrative subcommands.
const ADMIN: Flags = Flags::ADMIN.or(OWN);

/// `CLIENT` and its subcommands.
pub(crate) const CLIENT_COMMANDS: &[Spec] = &[
    spec("client", -2, Flags::CONTAINER, NO_KEYS, |_, _| {}),
    spec("client|id", 2, OWN, NO_KEYS, |_, c| {
        write_integer(c.out, i64::try_from(c.session.id).unwrap_or(i64::MAX));
    }),
    spec("client|getname", 2, OWN, NO_KEYS, |s, c| match &c.session.name {
        Some(name) => write_bulk(c.out, name),
        None => write_null(c.out, s.protocol),
    }),
    spec("client|setname", 3, OWN, NO_KEYS, |s, c| s.cmd_client_setname(c)),
    spec("client|setinfo", 4, OWN, NO_KEYS, |_, c| client_setinfo(c)),
    spec("client|info", 2, OWN, NO_KEYS, |s, c| {
        let mut text = String::new();
        if let Some(client) = s.clients.get(c.session.id) {
            write_client_line(&mut text, client, c.now, c.args);
        }
        write_verbatim(c.out, text.as_bytes(), s.protocol);
    }),
    spec("client|list", -2, ADMIN, NO_KEYS, |s, c| s.cmd_client_list(c)),
    spec("client|kill", -3, ADMIN, NO_KEYS, |s, c| s.cmd_client_kill(c)),
    spec("client|no-evict", 3, ADMIN, NO_KEYS, |s, c| {
        let on = if c.args[2].eq_ignore_ascii_case(b"on") {
            true
        } else if c.args[2].eq_ignore_ascii_case(b"off") {
            false
        } else {
            return write_error(c.out, SYNTAX);
        };
        s.clients.entry(c.session.id, c.now).no_evict = on;
        write_ok(c.out);
    }),
    spec("client|getredir", 2, OWN, NO_KEYS, |_, c| write_integer(c.out, -1)),
    spec("client|help", 2, LOADING_STALE, NO_KEYS, |_, c| write_help(c.out, CLIENT_HELP)),
];

/// `CLIENT HELP`'s lines: the subcommands this store has, in Redis's words.
const CLIENT_HELP: &[&str] = &[
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "HELP",
    "    Prints this help.",
];

/// `CLIENT SETINFO LIB-NAME|LIB-VER value` (Redis 7.2's, which redis-py
/// sends unasked).
fn client_setinfo(c: &mut Call<'_, '_>) {
    let (attribute, value) = (c.args[2], c.args[3]);
    let slot = if attribute.eq_ignore_ascii_case(b"lib-name") {
        &mut c.session.lib_name
    } else if attribute.eq_ignore_ascii_case(b"lib-ver") {
        &mut c.session.lib_version
    } else {
        let mut message = b"ERR Unrecognized option '".to_vec();
        message.extend_from_slice(c_string(attribute, usize::MAX));
        message.push(b'\'');
        return write_error(c.out, &message);
    };
    if !valid_client_name(value) {
        let mut message = b"ERR ".to_vec();
        message.extend_from_slice(c_string(attribute, usize::MAX));
        message.extend_from_slice(b" cannot contain spaces, newlines or special characters.");
        return write_error(c.out, &message);
    }
    *slot = (!value.is_empty()).then(|| value.to_vec());
    write_ok(c.out);
}

/// Appends `client`'s `CLIENT LIST` line (with its newline). `now` is the
/// store's time; `args` the current command, counted in `argv-mem` for the
/// client that sends it.
fn write_client_line(text: &mut String, client: &Client, now: u64, current: &[&[u8]]) {
    use std::fmt::Write as _;
    let name = client.name.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
    let seconds = |ms: u64| (now / 1000).saturating_sub(ms / 1000);
    let subs = &client.subscriptions;
    let multi = client.multi.map_or(-1, |queued| queued as i64);
    let _ = writeln!(
        text,
        "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} multi={} \
         qbuf=0 qbuf-free=0 argv-mem={} multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events= \
         cmd={} user=default redir=-1 resp={}",
        client.id,
        client.address(),
        client.local_address(),
        client.fd.unwrap_or(-1),
        name,
        seconds(client.created_ms),
        seconds(client.last_ms),
        client.flag_letters(),
        client.db,
        subs.channel_count(),
        subs.pattern_count(),
        subs.shard_count(),
        multi,
        current.iter().map(|arg| arg.len()).sum::<usize>(),
        client.last_command,
        if client.protocol == super::encode::Protocol::Resp3 { 3 } else { 2 },
    );
}

/// Which clients a `CLIENT KILL` with filters ends.
#[derive(Default)]
struct KillFilter<'a> {
    id: Option<u64>,
    kind: Option<ClientKind>,
    address: Option<&'a [u8]>,
    local_address: Option<&'a [u8]>,
    skip_me: bool,
}

impl KillFilter<'_> {
    fn matches(&self, client: &Client, me: u64) -> bool {
        self.address.map_or(true, |a| a == client.address().as_bytes())
            && self.local_address.map_or(true, |a| a == client.local_address().as_bytes())
            && self.kind.map_or(true, |k| k == client.kind())
            && self.id.map_or(true, |id| id == client.id)
            && !(self.skip_me && client.id == me)
    }
}

impl Store {
    /// `CLIENT SETNAME name` (an empty name removes it).
    fn cmd_client_setname(&mut self, c: &mut Call<'_, '_>) {
        let name = c.args[2];
        if !valid_client_name(name) {
            return write_error(c.out, b"ERR Client names cannot contain spaces, newlines or special characters.");
        }
        c.session.name = (!name.is_empty()).then(|| name.to_vec());
        self.clients.entry(c.session.id, c.now).name.clone_from(&c.session.name);
        write_ok(c.out);
    }

    /// `CLIENT LIST [TYPE type | ID id ...]`.
    fn cmd_client_list(&mut self, c: &mut Call<'_, '_>) {
        let args = c.args;
        let mut kind = None;
        let mut ids = None;
        if args.len() == 4 && args[2].eq_ignore_ascii_case(b"type") {
            match ClientKind::from_name(args[3]) {
                Some(found) => kind = Some(found),
                None => return write_unknown_type(c.out, args[3]),
            }
        } else if args.len() > 3 && args[2].eq_ignore_ascii_case(b"id") {
            let mut wanted = Vec::with_capacity(args.len() - 3);
            for arg in &args[3..] {
                match parse_i64(arg) {
                    Some(id) => wanted.push(id),
                    None => return write_error(c.out, b"ERR Invalid client ID"),
                }
            }
            ids = Some(wanted);
        } else if args.len() != 2 {
            return write_error(c.out, SYNTAX);
        }
        let me = c.session.id;
        let mut text = String::new();
        let mut write = |client: &Client| {
            let current: &[&[u8]] = if client.id == me { args } else { &[] };
            write_client_line(&mut text, client, c.now, current);
        };
        match ids {
            // In the order asked, as often as asked.
            Some(ids) => ids
                .iter()
                .filter_map(|&id| u64::try_from(id).ok().and_then(|id| self.clients.get(id)))
                .for_each(&mut write),
            None => self
                .clients
                .by_age()
                .into_iter()
                .filter(|client| kind.map_or(true, |k| k == client.kind()))
                .for_each(write),
        }
        write_verbatim(c.out, text.as_bytes(), self.protocol);
    }

    /// `CLIENT KILL addr` and `CLIENT KILL filter value ...`.
    fn cmd_client_kill(&mut self, c: &mut Call<'_, '_>) {
        let args = c.args;
        let me = c.session.id;
        let old_form = args.len() == 3;
        let mut filter = KillFilter { skip_me: !old_form, ..KillFilter::default() };
        if old_form {
            filter.address = Some(args[2]);
        } else {
            let mut i = 2;
            while i < args.len() {
                let (option, value) = (args[i], args.get(i + 1).copied());
                let Some(value) = value else { return write_error(c.out, SYNTAX) };
                if option.eq_ignore_ascii_case(b"id") {
                    match parse_i64(value).filter(|&id| id >= 1) {
                        Some(id) => filter.id = u64::try_from(id).ok(),
                        None => return write_error(c.out, b"ERR client-id should be greater than 0"),
                    }
                } else if option.eq_ignore_ascii_case(b"type") {
                    match ClientKind::from_name(value) {
                        Some(kind) => filter.kind = Some(kind),
                        None => return write_unknown_type(c.out, value),
                    }
                } else if option.eq_ignore_ascii_case(b"addr") {
                    filter.address = Some(value);
                } else if option.eq_ignore_ascii_case(b"laddr") {
                    filter.local_address = Some(value);
                } else if option.eq_ignore_ascii_case(b"user") {
                    if value != b"default" {
                        let mut message = b"ERR No such user '".to_vec();
                        message.extend_from_slice(c_string(value, usize::MAX));
                        message.push(b'\'');
                        return write_error(c.out, &message);
                    }
                } else if option.eq_ignore_ascii_case(b"skipme") {
                    if value.eq_ignore_ascii_case(b"yes") {
                        filter.skip_me = true;
                    } else if value.eq_ignore_ascii_case(b"no") {
                        filter.skip_me = false;
                    } else {
                        return write_error(c.out, SYNTAX);
                    }
                } else {
                    return write_error(c.out, SYNTAX);
                }
                i += 2;
            }
        }
        let victims: Vec<u64> = self
            .clients
            .by_age()
            .into_iter()
            .filter(|client| filter.matches(client, me))
            .map(|client| client.id)
            .collect();
        let mut close_me = false;
        for &id in &victims {
            if id == me {
                close_me = true;
            } else {
                self.kill_client(id);
            }
        }
        if old_form {
            if victims.is_empty() {
                write_error(c.out, b"ERR No such client");
            } else {
                write_ok(c.out);
            }
        } else {
            write_integer(c.out, victims.len() as i64);
        }
        if close_me {
            c.flow = Flow::Close;
        }
    }
}

/// `-ERR Unknown client type '<name>'`.
fn write_unknown_type(out: &mut Vec<u8>, name: &[u8]) {
    let mut message = b"ERR Unknown client type '".to_vec();
    message.extend_from_slice(c_string(name, usize::MAX));
    message.push(b'\'');
    write_error(out, &message);
}

#[cfg(test)]
mod tests {
    use crate::resp::{Connection, Flow, Store};

    fn feed(c: &mut Connection, store: &mut Store, now: u64, input: &str) -> (String, Flow) {
        let mut out = Vec::new();
        let flow = c.feed(input.as_bytes(), store, now, &mut out);
        (String::from_utf8(out).unwrap(), flow)
    }

    #[test]
    fn client_list_describes_every_client_in_redis_format() {
        let mut store = Store::new();
        let (mut a, mut b) = (Connection::default(), Connection::default());
        let _ = feed(&mut a, &mut store, 1_000, "CLIENT SETNAME first\r\n");
        let _ = feed(&mut b, &mut store, 2_500, "SUBSCRIBE ch\r\n");
        store.set_client_address(a.id(), Some("10.0.0.1:5000"), Some("10.0.0.2:6379"));
        let (list, _) = feed(&mut a, &mut store, 9_999, "CLIENT LIST\r\n");
        let lines: Vec<&str> = list.split('\n').collect();
        assert_eq!(
            lines[1],
            "id=1 addr=10.0.0.1:5000 laddr=10.0.0.2:6379 fd=-1 name=first age=8 idle=0 flags=N db=0 sub=0 psub=0 \
             ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=10 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 \
             events= cmd=client|list user=default redir=-1 resp=2"
        );
        assert!(lines[2].starts_with("id=2 addr=?:0 laddr=?:0 fd=-1 name= age=7 idle=7 flags=P db=0 sub=1 "));
        assert!(lines[2].ends_with(" cmd=subscribe user=default redir=-1 resp=2"));
        assert_eq!(lines[3], "\r");
    }

    #[test]
    fn client_kill_finds_clients_and_records_them_for_the_server() {
        let mut store = Store::new();
        let (mut a, mut b) = (Connection::default(), Connection::default());
        let _ = feed(&mut a, &mut store, 0, "PING\r\n");
        let _ = feed(&mut b, &mut store, 0, "PING\r\n");
        assert_eq!(feed(&mut a, &mut store, 0, "CLIENT KILL ID 1\r\n").0, ":0\r\n");
        assert_eq!(feed(&mut a, &mut store, 0, "CLIENT KILL 1.2.3.4:5\r\n").0, "-ERR No such client\r\n");
        assert_eq!(
            feed(&mut a, &mut store, 0, "CLIENT KILL ID 0\r\n").0,
            "-ERR client-id should be greater than 0\r\n"
        );
        assert_eq!(feed(&mut a, &mut store, 0, "CLIENT KILL ID 2 SKIPME\r\n").0, "-ERR syntax error\r\n");
        assert_eq!(feed(&mut a, &mut store, 0, "CLIENT KILL TYPE x\r\n").0, "-ERR Unknown client type 'x'\r\n");
        assert_eq!(feed(&mut a, &mut store, 0, "CLIENT KILL USER bob\r\n").0, "-ERR No such user 'bob'\r\n");
        assert_eq!(feed(&mut a, &mut store, 0, "CLIENT KILL ID 2\r\n").0, ":1\r\n");
        assert_eq!(store.take_killed(), vec![2]);
        assert_eq!(store.connected_clients(), 1);
        assert_eq!(feed(&mut a, &mut store, 0, "CLIENT KILL ID 1 SKIPME no\r\n"), (":1\r\n".into(), Flow::Close));
        assert!(store.take_killed().is_empty());
    }
}
