//! `WATCH`'s bookkeeping: which clients watch which keys, and whose next
//! `EXEC` must fail because a watched key changed.
//!
//! A watch names a key of one database (the one selected when `WATCH` ran),
//! as in Redis, so `SWAPDB` does not carry watches along with the data. When
//! a key changes (a write command changed it, it expired, `FLUSHDB` or
//! `SWAPDB` replaced it) every client watching it becomes *dirty* and stops
//! watching anything — its `EXEC` will answer the null array whatever else
//! happens, exactly as Redis's `touchWatchedKey` unwatches a client it
//! marks `CLIENT_DIRTY_CAS`. `EXEC`, `DISCARD` and `UNWATCH` clear a
//! client's state; a client whose connection closed is forgotten.
//!
//! The store asks [`Watches::active`] before tracking a write: with nobody
//! watching, a write command costs one test.

use std::collections::HashMap;

use super::store::DATABASES;

/// One client's watches.
#[derive(Debug, Default)]
struct Watcher {
    /// The keys it watches, as (database, key), in the order watched.
    keys: Vec<(usize, Vec<u8>)>,
    /// A watched key changed: its next `EXEC` fails.
    dirty: bool,
}

/// Every client's watched keys.
#[derive(Debug, Default)]
pub(crate) struct Watches {
    /// Per database, each watched key and the clients watching it.
    by_key: [HashMap<Vec<u8>, Vec<u64>>; DATABASES],
    /// The clients that watch keys or are dirty.
    clients: HashMap<u64, Watcher>,
    /// How many (client, database, key) watches exist.
    count: usize,
}

impl Watches {
    /// Whether any client watches any key.
    #[inline]
    pub(crate) fn active(&self) -> bool {
        self.count > 0
    }

    /// Whether some client watches `key` of database `db`.
    pub(crate) fn is_watched(&self, db: usize, key: &[u8]) -> bool {
        self.by_key[db].contains_key(key)
    }

    /// The keys of database `db` that some client watches.
    pub(crate) fn watched_in(&self, db: usize) -> impl Iterator<Item = &[u8]> + '_ {
        self.by_key[db].keys().map(Vec::as_slice)
    }

    /// `client` watches `key` of database `db` (nothing changes if it
    /// already does, or if it is dirty: its `EXEC` fails anyway).
    pub(crate) fn watch(&mut self, client: u64, db: usize, key: &[u8]) {
        let watcher = self.clients.entry(client).or_default();
        let already = self.by_key[db].get(key).is_some_and(|ids| ids.contains(&client));
        if watcher.dirty || already {
            return;
        }
        watcher.keys.push((db, key.to_vec()));
        self.by_key[db].entry(key.to_vec()).or_default().push(client);
        self.count += 1;
    }

    /// Whether a key `client` watched has changed.
    pub(crate) fn is_dirty(&self, client: u64) -> bool {
        self.clients.get(&client).is_some_and(|watcher| watcher.dirty)
    }

    /// The keys `client` watches (none once dirty), as (database, key).
    pub(crate) fn keys_of(&self, client: u64) -> impl Iterator<Item = (usize, &[u8])> + '_ {
        let keys = self.clients.get(&client).map_or(&[][..], |watcher| &watcher.keys[..]);
        keys.iter().map(|(db, key)| (*db, key.as_slice()))
    }

    /// `key` of database `db` changed: every client watching it becomes
    /// dirty.
    pub(crate) fn touch(&mut self, db: usize, key: &[u8]) {
        if let Some(ids) = self.by_key[db].get(key) {
            for id in ids.clone() {
                self.make_dirty(id);
            }
        }
    }

    /// `client`'s next `EXEC` fails; it stops watching its keys.
    pub(crate) fn make_dirty(&mut self, client: u64) {
        let Some(watcher) = self.clients.get_mut(&client) else {
            return;
        };
        watcher.dirty = true;
        let keys = std::mem::take(&mut watcher.keys);
        self.drop_watches(client, keys);
    }

    /// Clears `client`'s state: its watched keys and dirtiness (`UNWATCH`,
    /// `EXEC`, `DISCARD`, or its connection closed).
    pub(crate) fn forget(&mut self, client: u64) {
        if let Some(watcher) = self.clients.remove(&client) {
            self.drop_watches(client, watcher.keys);
        }
    }

    /// Removes `client` from the watchers of each of `keys`.
    fn drop_watches(&mut self, client: u64, keys: Vec<(usize, Vec<u8>)>) {
        for (db, key) in keys {
            if let Some(ids) = self.by_key[db].get_mut(&key) {
                ids.retain(|&id| id != client);
                if ids.is_empty() {
                    self.by_key[db].remove(&key);
                }
            }
            self.count -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touching_a_watched_key_dirties_its_watchers_only() {
        let mut w = Watches::default();
        assert!(!w.active());
        w.watch(1, 0, b"a");
        w.watch(1, 0, b"a");
        w.watch(1, 3, b"b");
        w.watch(2, 0, b"a");
        w.watch(3, 0, b"c");
        assert!(w.active());
        assert_eq!(w.count, 4);
        assert!(w.is_watched(0, b"a") && w.is_watched(3, b"b") && !w.is_watched(0, b"b"));
        w.touch(1, b"a");
        w.touch(0, b"b");
        assert!(!w.is_dirty(1) && !w.is_dirty(2));
        w.touch(0, b"a");
        assert!(w.is_dirty(1) && w.is_dirty(2) && !w.is_dirty(3));
        // Dirty clients watch nothing more.
        assert_eq!(w.keys_of(1).count(), 0);
        assert!(!w.is_watched(3, b"b"));
        assert_eq!(w.count, 1);
        w.watch(1, 0, b"z");
        assert!(!w.is_watched(0, b"z"));
        assert_eq!(w.keys_of(3).collect::<Vec<_>>(), vec![(0, &b"c"[..])]);
    }

    #[test]
    fn forgetting_clears_keys_and_dirtiness() {
        let mut w = Watches::default();
        w.watch(7, 0, b"k");
        w.watch(8, 0, b"k");
        w.forget(7);
        assert!(w.is_watched(0, b"k"));
        assert_eq!(w.watched_in(0).collect::<Vec<_>>(), vec![&b"k"[..]]);
        w.make_dirty(8);
        assert!(w.is_dirty(8));
        assert!(!w.active());
        w.forget(8);
        assert!(!w.is_dirty(8));
        assert!(w.clients.is_empty() && w.by_key.iter().all(HashMap::is_empty));
        // Forgetting an unknown client, or making it dirty, is harmless.
        w.forget(9);
        w.make_dirty(9);
        assert!(!w.is_dirty(9));
    }
}
