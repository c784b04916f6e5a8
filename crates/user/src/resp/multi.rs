//! Transactions: `MULTI`, then queued commands, then `EXEC` (or `DISCARD`),
//! and `WATCH`, which makes `EXEC` conditional.
//!
//! Client libraries use them unasked — redis-py's `pipeline()` wraps its
//! commands in `MULTI`/`EXEC` by default — so a server real clients drive
//! must have them. Between `MULTI` and `EXEC` each command is checked (a
//! known name, a valid argument count) and answered `+QUEUED`; a command
//! that fails the check is answered with its error and makes `EXEC` answer
//! `-EXECABORT` (Redis ≥ 2.6.5). `EXEC` with arguments is refused with
//! `-EXECABORT` itself, inside a transaction or not, and ends the
//! transaction and the client's watches (Redis's `rejectCommand`, which
//! aborts whenever the refused command is `EXEC`). `EXEC` runs the queue
//! in order and answers an array of the replies; the store is
//! single-threaded, so nothing runs in between. Errors at run time are
//! ordinary elements of that array, as in
//! Redis. The queue is bounded: past `max_bytes` of queued arguments the
//! transaction fails. `RESET` and `QUIT` are never queued: they run at
//! once, and the transaction ends with the connection's state, as in Redis.
//! The client registry follows the transaction (`multi=` and the `x` flag
//! of `CLIENT LIST`).
//!
//! `WATCH key ...` (before `MULTI`: inside it is an error that does not
//! abort the transaction) makes the next `EXEC` answer the null array —
//! `*-1`, or `_` in RESP3 — if any watched key changed in between: written
//! by any client, the watcher included; expired (or, as Redis 7.0 checks at
//! `EXEC`, past its deadline); or flushed, swapped, moved or renamed away. A
//! key that had already expired when watched counts as absent. `EXEC`,
//! `DISCARD`, `UNWATCH` and `RESET` end every watch of the client. The
//! bookkeeping is `watch.rs`; the store notes the keys write commands
//! change.

use super::command::{write_ok, Flow};
use super::encode::{write_array_header, write_error, write_null_array, write_simple, Protocol};
use super::session::Session;
use super::store::Store;
use super::table::{spec, Call, Flags, Spec, NO_KEYS};

/// Flags of `WATCH` and `UNWATCH`.
const WATCH_FLAGS: Flags = Flags::NOSCRIPT.or(Flags::LOADING).or(Flags::STALE).or(Flags::FAST).or(Flags::ALLOW_BUSY);

/// Flags of `MULTI` and `DISCARD` (Redis 7.0's).
const MULTI_FLAGS: Flags = WATCH_FLAGS;

/// Flags of `EXEC` (Redis 7.0's).
const EXEC_FLAGS: Flags = Flags::NOSCRIPT.or(Flags::LOADING).or(Flags::STALE).or(Flags::SKIP_SLOWLOG);

/// The commands of this file in the table. `MULTI`, `EXEC` and `DISCARD`
/// are [`handle`]d, with any arguments, before the table is consulted: their
/// entries are what `COMMAND` and the subscribed context read (arity,
/// flags, the name), and never run.
pub(crate) const MULTI_COMMANDS: &[Spec] = &[
    spec("multi", 1, MULTI_FLAGS, NO_KEYS, handled_first),
    spec("exec", 1, EXEC_FLAGS, NO_KEYS, handled_first),
    spec("discard", 1, MULTI_FLAGS, NO_KEYS, handled_first),
    spec("watch", -2, WATCH_FLAGS, (1, -1, 1), |s, c| s.cmd_watch(c)),
    spec("unwatch", 1, WATCH_FLAGS, NO_KEYS, |s, c| {
        s.watches.forget(c.session.id);
        write_ok(c.out);
    }),
];

/// The table's handler of `MULTI`, `EXEC` and `DISCARD`, which [`handle`]
/// answers before any table look-up; were it ever reached, the client
/// would get an error, not a transaction's reply.
fn handled_first(_: &mut Store, c: &mut Call<'_, '_>) {
    write_error(c.out, b"ERR transaction commands are run by the connection, not the command table");
}

/// A transaction being queued.
#[derive(Debug, Default)]
pub struct Multi {
    queued: Vec<Vec<Vec<u8>>>,
    bytes: usize,
    failed: bool,
}

/// What a command means to the transaction state.
enum Verb {
    Multi,
    Exec,
    Discard,
    Watch,
    /// `RESET` or `QUIT`: runs at once and ends the transaction.
    Leave,
    Other,
}

fn verb(name: &[u8]) -> Verb {
    if name.eq_ignore_ascii_case(b"WATCH") {
        Verb::Watch
    } else if name.eq_ignore_ascii_case(b"MULTI") {
        Verb::Multi
    } else if name.eq_ignore_ascii_case(b"EXEC") {
        Verb::Exec
    } else if name.eq_ignore_ascii_case(b"DISCARD") {
        Verb::Discard
    } else if name.eq_ignore_ascii_case(b"RESET") || name.eq_ignore_ascii_case(b"QUIT") {
        Verb::Leave
    } else {
        Verb::Other
    }
}

/// Handle `args` if it belongs to transactions (`MULTI`, `EXEC`, `DISCARD`,
/// or any command while one is open); `None` if the caller should execute it
/// as usual.
pub fn handle(
    state: &mut Option<Multi>,
    args: &[&[u8]],
    store: &mut Store,
    session: &mut Session,
    now_ms: u64,
    max_bytes: usize,
    out: &mut Vec<u8>,
) -> Option<Flow> {
    let name = args.first()?;
    let single = args.len() == 1;
    let verb = verb(name);
    let verb_name = match verb {
        Verb::Multi if single => Some("multi"),
        Verb::Exec if single => Some("exec"),
        Verb::Discard if single => Some("discard"),
        _ => None,
    };
    if let Some(verb_name) = verb_name {
        // They run (if only to fail), so Redis counts them, and they are
        // the client's last command (`cmd=` of `CLIENT LIST`), even
        // after the commands an `EXEC` runs.
        store.stats.commands_processed += 1;
        store.touch_client(session, now_ms, verb_name);
    }
    match (verb, state.as_mut()) {
        (Verb::Multi, None) if single => {
            *state = Some(Multi::default());
            store.set_client_multi(session, now_ms, Some(0));
            write_simple(out, b"OK");
        }
        (Verb::Multi, Some(_)) if single => write_error(out, b"ERR MULTI calls can not be nested"),
        (Verb::Exec, None) if single => write_error(out, b"ERR EXEC without MULTI"),
        (Verb::Discard, None) if single => write_error(out, b"ERR DISCARD without MULTI"),
        (Verb::Discard, Some(_)) if single => {
            *state = None;
            store.watches.forget(session.id);
            store.set_client_multi(session, now_ms, None);
            write_simple(out, b"OK");
        }
        // With keys, inside a transaction: refused, and the transaction
        // goes on (without keys it is queued and fails on arity below).
        (Verb::Watch, Some(_)) if !single => write_error(out, b"ERR WATCH inside MULTI is not allowed"),
        (Verb::Exec, Some(_)) if single => {
            let multi = state.take().unwrap_or_default();
            let changed = store.watched_key_changed(session.id, now_ms);
            store.watches.forget(session.id);
            if multi.failed {
                store.set_client_multi(session, now_ms, None);
                write_error(out, b"EXECABORT Transaction discarded because of previous errors.");
                return Some(Flow::Continue);
            }
            if changed {
                store.set_client_multi(session, now_ms, None);
                match session.protocol() {
                    Protocol::Resp2 => write_null_array(out),
                    Protocol::Resp3 => out.extend_from_slice(b"_\r\n"),
                }
                return Some(Flow::Continue);
            }
            write_array_header(out, multi.queued.len());
            let mut flow = Flow::Continue;
            // Nothing blocks inside a transaction (Redis's CLIENT_DENY_BLOCKING).
            store.deny_blocking(true);
            for command in &multi.queued {
                let args: Vec<&[u8]> = command.iter().map(Vec::as_slice).collect();
                if store.execute_in(session, &args, now_ms, out) == Flow::Close {
                    flow = Flow::Close;
                }
            }
            store.deny_blocking(false);
            store.set_client_multi(session, now_ms, None);
            store.touch_client(session, now_ms, "exec");
            return Some(flow);
        }
        (Verb::Leave, _) => {
            if state.take().is_some() {
                store.set_client_multi(session, now_ms, None);
            }
            return None;
        }
        // With arguments, `EXEC` is refused as Redis refuses it whether or
        // not a transaction is open (`rejectCommand` → `execCommandAbort`):
        // the transaction, if any, is discarded, and so are the watches.
        (Verb::Exec, _) => {
            if state.take().is_some() {
                store.set_client_multi(session, now_ms, None);
            }
            store.watches.forget(session.id);
            write_error(
                out,
                b"EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command",
            );
        }
        (Verb::Multi | Verb::Discard, _) => {
            // With arguments: the ordinary arity error, and an open
            // transaction fails.
            let name = String::from_utf8_lossy(name).to_ascii_lowercase();
            write_error(out, format!("ERR wrong number of arguments for '{name}' command").as_bytes());
            if let Some(m) = state.as_mut() {
                m.failed = true;
            }
        }
        (Verb::Watch | Verb::Other, None) => return None,
        (Verb::Watch | Verb::Other, Some(m)) => {
            let size: usize = args.iter().map(|a| a.len() + 16).sum();
            if m.bytes + size > max_bytes {
                m.failed = true;
                write_error(out, b"ERR transaction too large");
            } else if let Some(spec) = Store::check(args, out) {
                m.bytes += size;
                m.queued.push(args.iter().map(|a| a.to_vec()).collect());
                store.set_client_multi(session, now_ms, Some(m.queued.len()));
                store.touch_client(session, now_ms, spec.text);
                write_simple(out, b"QUEUED");
            } else {
                m.failed = true;
            }
        }
    }
    Some(Flow::Continue)
}

impl Store {
    /// `WATCH key [key ...]`: the client's next `EXEC` fails if one of the
    /// keys changes first. A key already expired is reclaimed now, so that
    /// it is watched as absent.
    fn cmd_watch(&mut self, c: &mut Call<'_, '_>) {
        let id = c.session.id;
        for key in &c.args[1..] {
            self.expire_key_in(self.db, key, c.now);
            self.watches.watch(id, self.db, key);
        }
        write_ok(c.out);
    }

    /// Whether a key client `id` watches has changed since: touched, or
    /// past its deadline now (Redis 7.0's `isWatchedKeyExpired`).
    pub(crate) fn watched_key_changed(&self, id: u64, now_ms: u64) -> bool {
        self.watches.is_dirty(id)
            || self
                .watches
                .keys_of(id)
                .any(|(db, key)| self.dbs[db].keys.contains_key(key) && !self.dbs[db].is_live(key, now_ms))
    }
}

#[cfg(test)]
mod tests {
    use crate::resp::testing::feed;
    use crate::resp::{Connection, Store};

    #[test]
    fn exec_runs_the_queue_in_order_and_discard_drops_it() {
        let (mut c, mut store) = (Connection::default(), Store::new());
        let got = feed(&mut c, &mut store, "MULTI\r\nINCR n\r\nINCR n\r\nGET n\r\nEXEC\r\n");
        assert_eq!(got, "+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n:1\r\n:2\r\n$1\r\n2\r\n");
        let got = feed(&mut c, &mut store, "MULTI\r\nINCR n\r\nDISCARD\r\nGET n\r\n");
        assert_eq!(got, "+OK\r\n+QUEUED\r\n+OK\r\n$1\r\n2\r\n");
    }

    #[test]
    fn watch_fails_exec_after_another_clients_write_and_is_forgotten_with_the_client() {
        let (mut a, mut b, mut store) = (Connection::default(), Connection::default(), Store::new());
        assert_eq!(feed(&mut a, &mut store, "WATCH k\r\n"), "+OK\r\n");
        assert!(store.watches.active());
        assert_eq!(feed(&mut b, &mut store, "SET other 1\r\n"), "+OK\r\n");
        assert_eq!(feed(&mut a, &mut store, "MULTI\r\nGET k\r\nEXEC\r\n"), "+OK\r\n+QUEUED\r\n*1\r\n$-1\r\n");
        assert!(!store.watches.active());
        feed(&mut a, &mut store, "WATCH k\r\n");
        feed(&mut b, &mut store, "SET k 1\r\n");
        assert!(store.watches.is_dirty(a.id()));
        assert_eq!(feed(&mut a, &mut store, "MULTI\r\nGET k\r\nEXEC\r\n"), "+OK\r\n+QUEUED\r\n*-1\r\n");
        assert!(!store.watches.is_dirty(a.id()));
        // A closed connection's watches go with it.
        feed(&mut a, &mut store, "WATCH k x\r\n");
        assert!(store.watches.active());
        store.forget_client(a.id());
        assert!(!store.watches.active());
        assert_eq!(store.watches.keys_of(a.id()).count(), 0);
    }

    #[test]
    fn only_writes_that_answer_without_error_touch() {
        let (mut a, mut b, mut store) = (Connection::default(), Connection::default(), Store::new());
        feed(&mut b, &mut store, "SET s text\r\n");
        feed(&mut a, &mut store, "WATCH s\r\n");
        assert_eq!(feed(&mut b, &mut store, "INCR s\r\n"), "-ERR value is not an integer or out of range\r\n");
        assert_eq!(feed(&mut b, &mut store, "GET s\r\n"), "$4\r\ntext\r\n");
        assert!(!store.watches.is_dirty(a.id()));
        assert_eq!(feed(&mut b, &mut store, "APPEND s !\r\n"), ":5\r\n");
        assert!(store.watches.is_dirty(a.id()));
        // An expiry touches at once, even during a read.
        feed(&mut a, &mut store, "UNWATCH\r\n");
        let mut out = Vec::new();
        let _ = b.feed(b"SET e v PX 5\r\n", &mut store, 0, &mut out);
        let _ = a.feed(b"WATCH e\r\n", &mut store, 0, &mut out);
        let _ = b.feed(b"GET e\r\n", &mut store, 10, &mut out);
        assert!(store.watches.is_dirty(a.id()));
    }

    #[test]
    fn errors_abort_or_are_reported_like_redis() {
        let (mut c, mut store) = (Connection::default(), Store::new());
        assert_eq!(feed(&mut c, &mut store, "EXEC\r\n"), "-ERR EXEC without MULTI\r\n");
        assert_eq!(feed(&mut c, &mut store, "DISCARD\r\n"), "-ERR DISCARD without MULTI\r\n");
        let got = feed(&mut c, &mut store, "MULTI\r\nMULTI\r\nNOPE\r\nGET\r\nEXEC\r\nGET n\r\n");
        assert!(got.starts_with("+OK\r\n-ERR MULTI calls can not be nested\r\n-ERR unknown command 'NOPE'"), "{got}");
        assert!(got.contains("-ERR wrong number of arguments for 'get' command\r\n"), "{got}");
        assert!(got.ends_with("-EXECABORT Transaction discarded because of previous errors.\r\n$-1\r\n"), "{got}");
        // A run-time error is one element of EXEC's reply.
        let got = feed(&mut c, &mut store, "SET s x\r\nMULTI\r\nINCR s\r\nSET t y\r\nEXEC\r\n");
        assert!(got.ends_with("*2\r\n-ERR value is not an integer or out of range\r\n+OK\r\n"), "{got}");
    }

    #[test]
    fn exec_with_arguments_discards_the_transaction_and_the_watches() {
        let (mut a, mut b, mut store) = (Connection::default(), Connection::default(), Store::new());
        let abort = "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n";
        // Inside a transaction: it ends, its queue unrun.
        let got = feed(&mut a, &mut store, "MULTI\r\nINCR n\r\nEXEC now\r\nGET n\r\nEXEC\r\n");
        assert_eq!(got, format!("+OK\r\n+QUEUED\r\n{abort}$-1\r\n-ERR EXEC without MULTI\r\n"));
        // Outside one: the watches go.
        assert_eq!(feed(&mut a, &mut store, "WATCH k\r\nEXEC x y\r\n"), format!("+OK\r\n{abort}"));
        assert!(!store.watches.active());
        feed(&mut b, &mut store, "SET k 1\r\n");
        assert_eq!(feed(&mut a, &mut store, "MULTI\r\nGET k\r\nEXEC\r\n"), "+OK\r\n+QUEUED\r\n*1\r\n$1\r\n1\r\n");
    }
}
