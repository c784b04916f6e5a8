//! The keyspace: Redis's sixteen databases, with key expiry.
//!
//! A [`Store`] holds [`DATABASES`] databases, each mapping keys to
//! [`Value`]s — strings, hashes, lists, sets, sorted sets — each with an
//! optional
//! absolute deadline in milliseconds. The store never reads a clock: every
//! operation that may look at a deadline takes `now_ms` from the caller, so
//! a store is deterministic and tests can move time at will.
//!
//! Every accessor ([`Store::get`], [`Store::insert`], [`Store::len`],
//! [`Store::snapshot`]…) acts on the *selected* database: while a command
//! executes, that is the executing client's (`SELECT`), which
//! [`Store::execute_in`] sets the way it sets the client's protocol; outside
//! a command it is database 0. So command handlers never name a database,
//! and the hot path pays one array index for having sixteen.
//!
//! Expiry follows Redis. A key whose deadline has passed (`now_ms >
//! deadline`) is invisible: the next access removes it (lazy expiry), and
//! [`Store::active_expire`] reclaims a bounded number of them in deadline
//! order for a caller that wants memory back without waiting for accesses.
//! Deadlines sit in a second index ordered by time, so that reclamation
//! never scans live keys and `INFO` can count keys with a deadline exactly.
//! Unlike Redis, `DBSIZE` and [`Store::len`] reclaim every expired key
//! first, so they count only live keys.
//!
//! Writes are where `WATCH` learns of changes: while a write command runs
//! and some client watches a key, the accessors that change a key note it,
//! and the notes become touches once the command has answered without an
//! error (`watch.rs`). A key that expires touches its watchers at once, as
//! Redis's expiry does.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::blocking::Blocking;
use super::encode::Protocol;
use super::hash::Hash;
use super::list::List;
use super::random::Random;
use super::session::{ServerInfo, Session};
use super::set::Set;
use super::watch::Watches;
use super::zset::ZSet;

/// How many databases a store holds (Redis's default `databases 16`).
pub const DATABASES: usize = 16;

/// A value.
#[derive(Clone, Debug)]
pub enum Value {
    /// A byte string (also what `INCR` counts in).
    String(Vec<u8>),
    /// A field → value map.
    Hash(Hash),
    /// A sorted set.
    ZSet(ZSet),
    /// A set.
    Set(Set),
    /// A list.
    List(List),
}

impl Value {
    /// The type's name as `TYPE` replies it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::String(_) => "string",
            Value::Hash(_) => "hash",
            Value::ZSet(_) => "zset",
            Value::Set(_) => "set",
            Value::List(_) => "list",
        }
    }
}

/// What a write does to the key's deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ttl {
    /// Remove it (a plain `SET`).
    Clear,
    /// Keep it (`SET ... KEEPTTL`).
    Keep,
    /// Set it to this absolute time in milliseconds.
    At(u64),
}

/// A value as plain data, for comparing a store against a model.
#[derive(Clone, Debug, PartialEq)]
pub enum Snapshot {
    /// A string's bytes.
    String(Vec<u8>),
    /// A hash's fields, sorted.
    Hash(BTreeMap<Vec<u8>, Vec<u8>>),
    /// A sorted set's `(score, member)` pairs in order.
    ZSet(Vec<(f64, Vec<u8>)>),
    /// A set's members, sorted.
    Set(BTreeSet<Vec<u8>>),
    /// A list's elements, head first.
    List(Vec<Vec<u8>>),
}

/// Counters the store keeps for `INFO`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Commands executed (empty requests excluded).
    pub commands_processed: u64,
    /// Reads that found their key.
    pub keyspace_hits: u64,
    /// Reads that did not.
    pub keyspace_misses: u64,
    /// Keys removed because their deadline passed.
    pub expired_keys: u64,
}

/// One database: its keys and the index of their deadlines.
#[derive(Debug, Default)]
pub(crate) struct Db {
    /// The keys, expired ones included until reclaimed. Hashed with
    /// foldhash seeded at random per process (`docs/serve.md`, "Key
    /// hashing"): std's SipHash-1-3 was about 5 % of a `SET`'s user-space
    /// instructions.
    pub(crate) keys: HashMap<Vec<u8>, Entry, foldhash::fast::RandomState>,
    /// Every key with a deadline, by deadline.
    pub(crate) deadlines: BTreeSet<(u64, Vec<u8>)>,
}

/// A key's value and deadline.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    /// The value.
    pub(crate) value: Value,
    /// When the key expires (absolute milliseconds), if ever.
    pub(crate) deadline: Option<u64>,
}

impl Db {
    /// Removes `key` if its deadline passed before `now_ms`; whether it did.
    fn expire_key(&mut self, key: &[u8], now_ms: u64) -> bool {
        let deadline = match self.keys.get(key) {
            Some(Entry { deadline: Some(deadline), .. }) if now_ms > *deadline => *deadline,
            _ => return false,
        };
        if let Some((owned, _)) = self.keys.remove_entry(key) {
            self.deadlines.remove(&(deadline, owned));
        }
        true
    }

    /// Removes the key whose deadline passed first, if one passed before
    /// `now_ms`; its name.
    fn pop_expired(&mut self, now_ms: u64) -> Option<Vec<u8>> {
        match self.deadlines.first() {
            Some(&(deadline, _)) if now_ms > deadline => {}
            _ => return None,
        }
        let (_, key) = self.deadlines.pop_first()?;
        self.keys.remove(&key);
        Some(key)
    }

    /// Removes `key` (expired or not) with its deadline; its entry.
    pub(crate) fn take(&mut self, key: &[u8]) -> Option<Entry> {
        let (owned, entry) = self.keys.remove_entry(key)?;
        if let Some(deadline) = entry.deadline {
            self.deadlines.remove(&(deadline, owned));
        }
        Some(entry)
    }

    /// Stores `entry` under `key`, replacing any entry there (in place:
    /// one look-up when the key exists, as a repeated `SET` finds it).
    pub(crate) fn put(&mut self, key: &[u8], entry: Entry) {
        let new_deadline = entry.deadline;
        let old_deadline = match self.keys.get_mut(key) {
            Some(old) => std::mem::replace(old, entry).deadline,
            None => {
                self.keys.insert(key.to_vec(), entry);
                None
            }
        };
        // The old deadline goes first: the new one may be the same pair.
        if let Some(deadline) = old_deadline {
            self.deadlines.remove(&(deadline, key.to_vec()));
        }
        if let Some(deadline) = new_deadline {
            self.deadlines.insert((deadline, key.to_vec()));
        }
    }

    /// Whether `key` is here and not expired at `now_ms`.
    pub(crate) fn is_live(&self, key: &[u8], now_ms: u64) -> bool {
        self.keys.get(key).is_some_and(|entry| !expired(entry, now_ms))
    }

    fn insert_new(&mut self, key: &[u8], value: Value, ttl: Ttl) {
        let deadline = match ttl {
            Ttl::At(deadline) => Some(deadline),
            Ttl::Clear | Ttl::Keep => None,
        };
        if let Some(deadline) = deadline {
            self.deadlines.insert((deadline, key.to_vec()));
        }
        self.keys.insert(key.to_vec(), Entry { value, deadline });
    }

    /// Applies `ttl` to the existing `key`, keeping the index in step.
    fn retime(&mut self, key: &[u8], ttl: Ttl) {
        let Some(entry) = self.keys.get_mut(key) else {
            return;
        };
        let old = entry.deadline;
        entry.deadline = match ttl {
            Ttl::Clear => None,
            Ttl::Keep => old,
            Ttl::At(deadline) => Some(deadline),
        };
        if entry.deadline == old {
            return;
        }
        let new = entry.deadline;
        if let Some(old) = old {
            self.deadlines.remove(&(old, key.to_vec()));
        }
        if let Some(new) = new {
            self.deadlines.insert((new, key.to_vec()));
        }
    }
}

/// Redis's sixteen databases, and what the server keeps beside them.
#[derive(Debug, Default)]
pub struct Store {
    /// The databases, by index.
    pub(crate) dbs: [Db; DATABASES],
    /// The selected database: the executing client's while a command runs
    /// ([`Store::execute_in`] sets it), 0 otherwise.
    pub(crate) db: usize,
    pub(crate) stats: Stats,
    pub(crate) info: ServerInfo,
    /// The session of [`Store::execute`], which has no connection.
    pub(crate) session: Session,
    /// The protocol of the client whose command is executing.
    pub(crate) protocol: Protocol,
    last_client_id: u64,
    /// Bytes for other clients than the one whose command runs (published
    /// messages, a blocked client's reply), by client id, in the order
    /// they were written; the server delivers them ([`Store::take_outbox`]).
    pub(crate) outbox: Vec<(u64, Vec<u8>)>,
    /// Who watches which keys (`WATCH`).
    pub(crate) watches: Watches,
    /// Whether the executing command is a write while some client watches
    /// a key: the accessors then note the watched keys they change.
    tracking: bool,
    /// Watched keys the executing command changed, as (database, key).
    touched: Vec<(usize, Vec<u8>)>,
    /// Where random members come from (seeded once, never from the clock).
    pub(crate) random: Random,
    /// Clients blocked on lists, and the keys they wait for.
    pub(crate) blocking: Blocking,
    /// Every connected client (`clients.rs`).
    pub(crate) clients: super::clients::Clients,
    /// Channels and patterns with their subscribers (`pubsub.rs`).
    pub(crate) pubsub: super::pubsub::PubSub,
    /// The largest memory estimate `INFO` has reported.
    pub(crate) memory_peak: usize,
}

impl Store {
    /// An empty store.
    pub fn new() -> Self {
        Store::default()
    }

    /// Live keys of the selected database (database 0 outside a command) at
    /// `now_ms` (its expired keys are reclaimed first).
    pub fn len(&mut self, now_ms: u64) -> usize {
        self.active_expire(now_ms, usize::MAX);
        self.dbs[self.db].keys.len()
    }

    /// Whether no key of the selected database is live at `now_ms`.
    pub fn is_empty(&mut self, now_ms: u64) -> bool {
        self.len(now_ms) == 0
    }

    /// Keys of the selected database that have a deadline (expired ones
    /// included until reclaimed).
    pub fn expiring(&self) -> usize {
        self.dbs[self.db].deadlines.len()
    }

    /// The average time to live of the selected database's keys with a
    /// deadline at `now_ms`, in milliseconds (0 if there is none), as
    /// `INFO`'s `avg_ttl`.
    pub fn average_ttl(&self, now_ms: u64) -> u64 {
        let live = self.dbs[self.db].deadlines.iter().filter(|(deadline, _)| *deadline >= now_ms);
        let (count, total) =
            live.fold((0u128, 0u128), |(n, sum), (deadline, _)| (n + 1, sum + u128::from(deadline - now_ms)));
        total.checked_div(count).map_or(0, |average| u64::try_from(average).unwrap_or(u64::MAX))
    }

    /// Removes up to `budget` keys of the selected database whose deadline
    /// passed before `now_ms`, earliest first; how many it removed.
    pub fn active_expire(&mut self, now_ms: u64, budget: usize) -> usize {
        let mut removed = 0;
        while removed < budget {
            let Some(key) = self.dbs[self.db].pop_expired(now_ms) else {
                break;
            };
            self.count_expired(self.db, &key);
            removed += 1;
        }
        removed
    }

    /// Removes every key of every database (`FLUSHALL`).
    pub fn flush(&mut self) {
        for db in 0..DATABASES {
            self.flush_db(db);
        }
    }

    /// Every live key of the selected database (database 0 outside a
    /// command) at `now_ms`, with its value as plain data.
    pub fn snapshot(&self, now_ms: u64) -> BTreeMap<Vec<u8>, Snapshot> {
        self.dbs[self.db]
            .keys
            .iter()
            .filter(|(_, entry)| !expired(entry, now_ms))
            .map(|(key, entry)| {
                let value = match &entry.value {
                    Value::String(data) => Snapshot::String(data.clone()),
                    Value::Hash(hash) => Snapshot::Hash(hash.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect()),
                    Value::ZSet(set) => Snapshot::ZSet(set.iter().map(|(s, m)| (s.get(), m.to_vec())).collect()),
                    Value::Set(set) => Snapshot::Set(set.iter().map(|m| m.to_vec()).collect()),
                    Value::List(list) => Snapshot::List(list.iter().map(<[u8]>::to_vec).collect()),
                };
                (key.clone(), value)
            })
            .collect()
    }

    /// Every key of every database with its value, expired ones included
    /// until reclaimed (what the store holds, for `INFO memory`).
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&[u8], &Value)> {
        self.dbs.iter().flat_map(|db| db.keys.iter()).map(|(key, entry)| (key.as_slice(), &entry.value))
    }

    /// The store's counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// What `INFO` reports about the server around the store.
    pub fn server_info_mut(&mut self) -> &mut ServerInfo {
        &mut self.info
    }

    /// The value of `key` at `now_ms`, counted as a keyspace hit or miss.
    pub fn get(&mut self, key: &[u8], now_ms: u64) -> Option<&Value> {
        self.expire_key(key, now_ms);
        let entry = self.dbs[self.db].keys.get(key);
        match entry {
            Some(_) => self.stats.keyspace_hits += 1,
            None => self.stats.keyspace_misses += 1,
        }
        entry.map(|entry| &entry.value)
    }

    /// Every live key of the selected database at `now_ms` with its value,
    /// in no particular order (`KEYS`, `SCAN`). Expired keys are skipped,
    /// not reclaimed.
    pub(crate) fn live_keys(&self, now_ms: u64) -> impl Iterator<Item = (&[u8], &Value)> + '_ {
        self.dbs[self.db]
            .keys
            .iter()
            .filter(move |(_, entry)| !expired(entry, now_ms))
            .map(|(key, entry)| (key.as_slice(), &entry.value))
    }

    /// The value of a live `key`, read without expiring it or counting a
    /// hit or miss (for reading several keys at once after
    /// [`Store::get`] has looked each up).
    pub(crate) fn peek(&self, key: &[u8], now_ms: u64) -> Option<&Value> {
        self.dbs[self.db].keys.get(key).filter(|entry| !expired(entry, now_ms)).map(|entry| &entry.value)
    }

    /// As [`Store::get_mut`], with the store's random number generator
    /// (`SPOP`: draw a member of the value and remove it).
    pub(crate) fn get_mut_and_random(&mut self, key: &[u8], now_ms: u64) -> (Option<&mut Value>, &mut Random) {
        self.expire_key(key, now_ms);
        if self.tracking && self.dbs[self.db].keys.contains_key(key) {
            self.note_watched(key);
        }
        (self.dbs[self.db].keys.get_mut(key).map(|entry| &mut entry.value), &mut self.random)
    }

    /// The value of `key` at `now_ms`, for modification in place (emptying
    /// a hash or sorted set this way leaves an empty value: remove the key).
    /// In a write command, counts as changing the key for `WATCH`.
    pub fn get_mut(&mut self, key: &[u8], now_ms: u64) -> Option<&mut Value> {
        self.expire_key(key, now_ms);
        if self.tracking && self.dbs[self.db].keys.contains_key(key) {
            self.note_watched(key);
        }
        self.dbs[self.db].keys.get_mut(key).map(|entry| &mut entry.value)
    }

    /// Whether `key` is live at `now_ms`.
    pub fn contains(&mut self, key: &[u8], now_ms: u64) -> bool {
        self.expire_key(key, now_ms);
        self.dbs[self.db].keys.contains_key(key)
    }

    /// Removes `key`; whether it was live.
    pub fn remove(&mut self, key: &[u8], now_ms: u64) -> bool {
        self.expire_key(key, now_ms);
        let removed = self.dbs[self.db].take(key).is_some();
        if removed {
            self.note_change(key);
        }
        removed
    }

    /// Sets `key` to `value` (replacing any value of any type); clients
    /// blocked on `key` are served after the command.
    pub fn insert(&mut self, key: &[u8], value: Value, ttl: Ttl, now_ms: u64) {
        self.expire_key(key, now_ms);
        self.note_change(key);
        let db = &mut self.dbs[self.db];
        match db.keys.get_mut(key) {
            Some(entry) => {
                entry.value = value;
                db.retime(key, ttl);
            }
            None => db.insert_new(key, value, ttl),
        }
        self.signal_key_ready(key);
    }

    /// Sets `key` to the string `data`, reusing the old string's buffer
    /// when there is one (the `SET` fast path: no allocation).
    pub fn set_string(&mut self, key: &[u8], data: &[u8], ttl: Ttl, now_ms: u64) {
        self.expire_key(key, now_ms);
        self.note_change(key);
        let db = &mut self.dbs[self.db];
        match db.keys.get_mut(key) {
            Some(entry) => {
                match &mut entry.value {
                    // Reuse the buffer unless that would keep a much larger one alive.
                    Value::String(old) if old.capacity() <= 2 * data.len() + 64 => {
                        old.clear();
                        old.extend_from_slice(data);
                    }
                    other => *other = Value::String(data.to_vec()),
                }
                db.retime(key, ttl);
            }
            None => {
                db.insert_new(key, Value::String(data.to_vec()), ttl);
                self.signal_key_ready(key);
            }
        }
    }

    /// The deadline of `key` at `now_ms`: `None` if the key is not live,
    /// `Some(None)` if it has no deadline.
    pub fn deadline(&mut self, key: &[u8], now_ms: u64) -> Option<Option<u64>> {
        self.expire_key(key, now_ms);
        self.dbs[self.db].keys.get(key).map(|entry| entry.deadline)
    }

    /// Removes the deadline of `key`, if it is live and has one (Redis's
    /// `removeExpire`): whether it had one. Only then is it a change for
    /// `WATCH`.
    pub(crate) fn persist(&mut self, key: &[u8], now_ms: u64) -> bool {
        let had = matches!(self.deadline(key, now_ms), Some(Some(_)));
        if had {
            self.set_deadline(key, Ttl::Clear, now_ms);
        }
        had
    }

    /// Changes the deadline of a live `key`; whether the key exists.
    pub fn set_deadline(&mut self, key: &[u8], ttl: Ttl, now_ms: u64) -> bool {
        self.expire_key(key, now_ms);
        let db = &mut self.dbs[self.db];
        if !db.keys.contains_key(key) {
            return false;
        }
        db.retime(key, ttl);
        self.note_change(key);
        true
    }

    /// The bytes written for other clients since the last call, by client
    /// id, oldest first. A server sends each to its client's connection
    /// (and drops those of clients that are gone).
    pub fn take_outbox(&mut self) -> Vec<(u64, Vec<u8>)> {
        std::mem::take(&mut self.outbox)
    }

    /// Whether bytes wait for other clients.
    pub fn has_outbox(&self) -> bool {
        !self.outbox.is_empty()
    }

    /// A fresh client id (1, 2, …), as `CLIENT ID` and `HELLO` report.
    pub fn next_client_id(&mut self) -> u64 {
        self.last_client_id += 1;
        self.last_client_id
    }

    /// Starts a command: `write` says whether it may change keys (its
    /// table flags); if so and some client watches a key, the accessors
    /// note the watched keys it changes.
    #[inline]
    pub(crate) fn begin_command(&mut self, write: bool) -> bool {
        self.tracking = write && self.watches.active();
        self.tracking
    }

    /// Ends a command that [`Store::begin_command`] tracked: the watched
    /// keys it changed are touched, unless it `failed` (a command that
    /// answers an error has changed nothing).
    #[cold]
    pub(crate) fn end_tracked_command(&mut self, failed: bool) {
        self.tracking = false;
        let touched = std::mem::take(&mut self.touched);
        if !failed {
            for (db, key) in &touched {
                self.watches.touch(*db, key);
            }
        }
        // Keep the buffer for the next tracked command.
        self.touched = touched;
        self.touched.clear();
    }

    /// Notes that the executing command changed `key` of the selected
    /// database, for `WATCH` (one test when nobody watches). The accessors
    /// that change keys call it; a handler that changes a key another way
    /// ([`Db::take`], [`Db::put`]) calls it itself.
    #[inline]
    pub(crate) fn note_change(&mut self, key: &[u8]) {
        if self.tracking {
            self.note_watched(key);
        }
    }

    /// Withdraws the note of `key`: the executing command reached it with
    /// [`Store::get_mut`] but changed nothing (`HDEL` of absent fields), so,
    /// as in Redis, its watchers are not touched.
    pub(crate) fn unchanged(&mut self, key: &[u8]) {
        if self.tracking {
            let db = self.db;
            self.touched.retain(|(noted_db, noted)| !(*noted_db == db && noted == key));
        }
    }

    /// Takes items out of the container at `key` (`HDEL`'s fields,
    /// `SREM`'s members) with `take`, which says how many went and whether
    /// the container is empty now, or `None` if `key` holds another type
    /// (then `None` here too). An emptied key goes; when nothing went, its
    /// watchers are left alone. How many went.
    pub(crate) fn remove_items(
        &mut self,
        key: &[u8],
        now_ms: u64,
        take: impl FnOnce(&mut Value) -> Option<(usize, bool)>,
    ) -> Option<usize> {
        let (removed, emptied) = match self.get_mut(key, now_ms) {
            None => (0, false),
            Some(value) => take(value)?,
        };
        if removed == 0 {
            self.unchanged(key);
        }
        if emptied {
            self.remove(key, now_ms);
        }
        Some(removed)
    }

    /// Notes `key` of the selected database if some client watches it.
    #[cold]
    fn note_watched(&mut self, key: &[u8]) {
        if self.watches.is_watched(self.db, key) {
            self.touched.push((self.db, key.to_vec()));
        }
    }

    /// Counts a key of database `db` that expired, and touches its
    /// watchers (Redis signals an expiry as a change).
    pub(crate) fn count_expired(&mut self, db: usize, key: &[u8]) {
        self.stats.expired_keys += 1;
        if self.watches.active() {
            self.watches.touch(db, key);
        }
    }

    /// Removes `key` of the selected database if its deadline passed (lazy
    /// expiry). Free when no key of the database has a deadline.
    fn expire_key(&mut self, key: &[u8], now_ms: u64) {
        let db = &mut self.dbs[self.db];
        if db.deadlines.is_empty() {
            return;
        }
        if db.expire_key(key, now_ms) {
            self.count_expired(self.db, key);
        }
    }

    /// Removes `key` of database `db` if its deadline passed.
    pub(crate) fn expire_key_in(&mut self, db: usize, key: &[u8], now_ms: u64) {
        if self.dbs[db].expire_key(key, now_ms) {
            self.count_expired(db, key);
        }
    }
}

/// Whether `entry` is expired at `now_ms`.
fn expired(entry: &Entry, now_ms: u64) -> bool {
    entry.deadline.is_some_and(|deadline| now_ms > deadline)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(store: &mut Store, key: &[u8], now: u64) -> Option<Vec<u8>> {
        match store.get(key, now) {
            Some(Value::String(data)) => Some(data.clone()),
            _ => None,
        }
    }

    #[test]
    fn keys_expire_after_their_deadline_not_at_it() {
        let mut store = Store::new();
        store.set_string(b"k", b"v", Ttl::At(1000), 0);
        assert_eq!(store.expiring(), 1);
        assert_eq!(string(&mut store, b"k", 1000), Some(b"v".to_vec()));
        assert_eq!(string(&mut store, b"k", 1001), None);
        assert_eq!(store.expiring(), 0);
        assert_eq!(store.stats().expired_keys, 1);
        assert_eq!(store.stats().keyspace_hits, 1);
        assert_eq!(store.stats().keyspace_misses, 1);
    }

    #[test]
    fn rewriting_a_key_clears_or_keeps_its_deadline() {
        let mut store = Store::new();
        store.set_string(b"k", b"v", Ttl::At(10), 0);
        store.set_string(b"k", b"w", Ttl::Keep, 0);
        assert_eq!(store.deadline(b"k", 0), Some(Some(10)));
        store.set_string(b"k", b"x", Ttl::Clear, 0);
        assert_eq!(store.deadline(b"k", 0), Some(None));
        assert_eq!(store.expiring(), 0);
        assert_eq!(string(&mut store, b"k", 100), Some(b"x".to_vec()));
        // KEEPTTL on an expired key starts from nothing.
        store.set_string(b"k", b"y", Ttl::At(5), 0);
        store.set_string(b"k", b"z", Ttl::Keep, 6);
        assert_eq!(store.deadline(b"k", 6), Some(None));
    }

    #[test]
    fn active_expiry_is_bounded_and_in_deadline_order() {
        let mut store = Store::new();
        for i in 0..10u64 {
            store.set_string(format!("k{i}").as_bytes(), b"v", Ttl::At(100 - i), 0);
        }
        store.set_string(b"forever", b"v", Ttl::Clear, 0);
        assert_eq!(store.active_expire(95, 3), 3);
        assert!(!store.snapshot(0).contains_key(&b"k9"[..]));
        assert!(store.snapshot(0).contains_key(&b"k0"[..]));
        assert_eq!(store.active_expire(95, 100), 1);
        assert_eq!(store.len(1000), 1);
        assert_eq!(store.stats().expired_keys, 10);
    }

    #[test]
    fn writes_are_tracked_only_while_someone_watches() {
        let mut store = Store::new();
        assert!(!store.begin_command(true));
        store.set_string(b"k", b"v", Ttl::Clear, 0);
        assert!(store.touched.is_empty());
        store.watches.watch(1, 0, b"k");
        assert!(!store.begin_command(false));
        assert!(store.begin_command(true));
        store.set_string(b"other", b"v", Ttl::Clear, 0);
        store.set_string(b"k", b"v", Ttl::Clear, 0);
        assert_eq!(store.touched, vec![(0, b"k".to_vec())]);
        // A failed command touches nothing.
        store.end_tracked_command(true);
        assert!(!store.watches.is_dirty(1) && store.touched.is_empty());
        assert!(store.begin_command(true));
        assert!(store.remove(b"k", 0));
        store.end_tracked_command(false);
        assert!(store.watches.is_dirty(1));
    }

    #[test]
    fn snapshots_hide_expired_keys() {
        let mut store = Store::new();
        store.set_string(b"a", b"1", Ttl::At(10), 0);
        store.insert(b"h", Value::Hash(Hash::new()), Ttl::Clear, 0);
        assert_eq!(store.snapshot(10).len(), 2);
        assert_eq!(store.snapshot(11).len(), 1);
        assert!(store.remove(b"h", 11));
        assert!(!store.remove(b"h", 11));
        assert!(!store.remove(b"a", 11));
        assert!(store.is_empty(11));
    }
}
