//! Sixteen databases: what `FLUSHDB`, `FLUSHALL`, `SWAPDB`, `MOVE` and
//! `COPY ... DB` do to them, and the `WATCH` touches each owes.
//!
//! The store's accessors act on the selected database and note the keys a
//! write changes there; the operations here reach other databases, or whole
//! ones, so they touch watched keys themselves, with Redis's rules: emptying
//! a database (`FLUSHDB`, `FLUSHALL`) touches the watched keys it held,
//! `SWAPDB` touches the watched keys either database holds (watches stay
//! with the database index, not the data), and `MOVE` and `COPY` touch the
//! keys they write. Likewise for clients blocked on lists: a key these
//! create, or that `SWAPDB` brings into a database, is signalled ready for
//! the clients waiting for it there.

use super::store::{Db, Entry, Store, DATABASES};

impl Store {
    /// Touches `key` of database `db` for its watchers, now (for changes
    /// the accessors do not see: another database, a whole database).
    pub(crate) fn touch_key(&mut self, db: usize, key: &[u8]) {
        if self.watches.active() {
            self.watches.touch(db, key);
        }
    }

    /// The keys of database `db`, how many have a deadline, and their
    /// average time to live in milliseconds, at `now_ms` (expired keys are
    /// reclaimed first), for `INFO`.
    pub(crate) fn db_counts(&mut self, db: usize, now_ms: u64) -> (usize, usize, u64) {
        let selected = std::mem::replace(&mut self.db, db);
        let counts = (self.len(now_ms), self.expiring(), self.average_ttl(now_ms));
        self.db = selected;
        counts
    }

    /// Empties database `db` (`FLUSHDB`; `FLUSHALL` empties each), touching
    /// the watched keys it held.
    pub(crate) fn flush_db(&mut self, db: usize) {
        if self.watches.active() {
            let held: Vec<Vec<u8>> = self
                .watches
                .watched_in(db)
                .filter(|key| self.dbs[db].keys.contains_key(*key))
                .map(<[u8]>::to_vec)
                .collect();
            for key in held {
                self.watches.touch(db, &key);
            }
        }
        // A fresh database gives the memory back.
        self.dbs[db] = Db::default();
    }

    /// Exchanges the data of databases `a` and `b` (`SWAPDB`): each client
    /// keeps its database index and sees the other data. Watched keys that
    /// either database holds are touched; expired ones are reclaimed first,
    /// so that an expired key counts as absent (as Redis's expired-at-watch
    /// flags make it).
    pub(crate) fn swap_dbs(&mut self, a: usize, b: usize, now_ms: u64) {
        if a == b {
            return;
        }
        if self.watches.active() {
            let watched: Vec<(usize, Vec<u8>)> = [a, b]
                .into_iter()
                .flat_map(|db| self.watches.watched_in(db).map(move |key| (db, key.to_vec())))
                .collect();
            for (_, key) in &watched {
                self.expire_key_in(a, key, now_ms);
                self.expire_key_in(b, key, now_ms);
            }
            for (db, key) in watched {
                if self.dbs[a].keys.contains_key(&key) || self.dbs[b].keys.contains_key(&key) {
                    self.watches.touch(db, &key);
                }
            }
        }
        self.dbs.swap(a, b);
        for db in [a, b] {
            let arrived: Vec<Vec<u8>> =
                self.waited_in(db).filter(|key| self.dbs[db].keys.contains_key(*key)).map(<[u8]>::to_vec).collect();
            for key in arrived {
                self.signal_key_ready_in(db, &key);
            }
        }
    }

    /// Moves the live `key` of the selected database to database `to`, with
    /// its deadline (`MOVE`); whether it moved (not if missing here or
    /// present there).
    pub(crate) fn move_key(&mut self, key: &[u8], to: usize, now_ms: u64) -> bool {
        let from = self.db;
        if !self.contains(key, now_ms) {
            return false;
        }
        self.expire_key_in(to, key, now_ms);
        if self.dbs[to].keys.contains_key(key) {
            return false;
        }
        let Some(entry) = self.dbs[from].take(key) else {
            return false;
        };
        self.dbs[to].put(key, entry);
        self.touch_key(from, key);
        self.touch_key(to, key);
        self.signal_key_ready_in(to, key);
        true
    }

    /// Copies the live `source` of the selected database to `destination`
    /// of database `to`, with its deadline (`COPY`); whether it copied (not
    /// if `source` is missing, or `destination` exists and not `replace`).
    pub(crate) fn copy_key(
        &mut self,
        source: &[u8],
        to: usize,
        destination: &[u8],
        replace: bool,
        now_ms: u64,
    ) -> bool {
        let Some(value) = self.get(source, now_ms).cloned() else {
            return false;
        };
        let deadline = self.dbs[self.db].keys.get(source).and_then(|entry| entry.deadline);
        self.expire_key_in(to, destination, now_ms);
        if self.dbs[to].keys.contains_key(destination) && !replace {
            return false;
        }
        self.dbs[to].put(destination, Entry { value, deadline });
        self.touch_key(to, destination);
        self.signal_key_ready_in(to, destination);
        true
    }
}

/// Whether `index` names a database.
pub(crate) fn is_db(index: i64) -> bool {
    usize::try_from(index).is_ok_and(|index| index < DATABASES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::{Session, Ttl, Value};

    fn run(store: &mut Store, session: &mut Session, now: u64, command: &str) -> String {
        let words: Vec<&[u8]> = command.split(' ').map(str::as_bytes).collect();
        let mut out = Vec::new();
        let _ = store.execute_in(session, &words, now, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn each_session_reads_and_writes_its_selected_database() {
        let mut store = Store::new();
        let (mut a, mut b) = (Session::new(), Session::new());
        assert_eq!(run(&mut store, &mut a, 0, "SET k zero"), "+OK\r\n");
        assert_eq!(run(&mut store, &mut b, 0, "SELECT 3"), "+OK\r\n");
        assert_eq!(b.db(), 3);
        assert_eq!(run(&mut store, &mut b, 0, "GET k"), "$-1\r\n");
        assert_eq!(run(&mut store, &mut b, 0, "SET k three PX 10"), "+OK\r\n");
        assert_eq!(run(&mut store, &mut a, 0, "GET k"), "$4\r\nzero\r\n");
        assert_eq!(run(&mut store, &mut b, 0, "DBSIZE"), ":1\r\n");
        // Outside a command the store reads database 0.
        assert_eq!(store.len(0), 1);
        assert_eq!(store.snapshot(0).len(), 1);
        assert_eq!(store.db_counts(3, 0), (1, 1, 10));
        assert_eq!(store.db_counts(3, 11), (0, 0, 0));
        assert_eq!(store.db, 0);
    }

    #[test]
    fn swap_flush_move_and_copy_reach_other_databases() {
        let mut store = Store::new();
        store.set_string(b"a", b"1", Ttl::At(100), 0);
        store.swap_dbs(0, 5, 0);
        assert_eq!(store.len(0), 0);
        assert_eq!(store.db_counts(5, 0), (1, 1, 100));
        store.swap_dbs(5, 0, 0);
        assert!(store.move_key(b"a", 2, 0));
        assert!(!store.move_key(b"a", 2, 0));
        store.db = 2;
        assert_eq!(store.deadline(b"a", 0), Some(Some(100)));
        assert!(store.copy_key(b"a", 0, b"b", false, 0));
        assert!(!store.copy_key(b"a", 0, b"b", false, 0));
        store.db = 0;
        store.insert(b"b", Value::String(b"x".to_vec()), Ttl::Clear, 0);
        store.db = 2;
        assert!(store.copy_key(b"a", 0, b"b", true, 0));
        store.db = 0;
        assert_eq!(store.deadline(b"b", 0), Some(Some(100)));
        store.flush_db(2);
        assert_eq!(store.db_counts(2, 0), (0, 0, 0));
        assert_eq!(store.len(0), 1);
        store.flush();
        assert_eq!(store.len(0), 0);
    }

    #[test]
    fn database_indexes_are_checked() {
        assert!(is_db(0) && is_db(15));
        assert!(!is_db(16) && !is_db(-1) && !is_db(i64::MAX));
    }
}
