//! An estimate of the memory the keyspace holds, for `INFO memory`.
//!
//! Redis reports what its allocator counts; this store has no allocator of
//! its own to ask (the same code runs inside the hosted kernel's user
//! threads), so `used_memory` is an estimate built from what it holds: each
//! key's bytes and its table entry, each string's buffer, and for a hash or
//! sorted set its element count times the average size of its first
//! 16 elements (Redis's `MEMORY USAGE` samples too), plus the
//! per-element overhead of the structures that hold them. The estimate
//! takes time proportional to the number of keys, never to the elements.

use super::set::Member;
use std::mem::size_of;

use super::store::{Store, Value};

/// Elements of a collection looked at to estimate its size.
const SAMPLE: usize = 16;

/// Bookkeeping of one key beyond its bytes: the table slot (the key's
/// vector, the value, the deadline) and the allocator's rounding.
const KEY_OVERHEAD: usize = size_of::<Vec<u8>>() + size_of::<Value>() + 2 * size_of::<u64>() + 16;

/// Bookkeeping of one collection element beyond its bytes: the vectors
/// that hold its parts and the slots of the tables that index it.
const ELEMENT_OVERHEAD: usize = 2 * size_of::<Vec<u8>>() + 16;

/// Estimated bytes of `count` elements whose first ones have these sizes.
fn scaled(count: usize, sample: impl Iterator<Item = usize>) -> usize {
    let (mut seen, mut bytes) = (0usize, 0usize);
    for size in sample.take(SAMPLE) {
        seen += 1;
        bytes += size + ELEMENT_OVERHEAD;
    }
    if seen == 0 {
        return 0;
    }
    (bytes / seen).saturating_mul(count)
}

impl Value {
    /// Estimated bytes this value holds beyond its table slot.
    pub(crate) fn approx_bytes(&self) -> usize {
        match self {
            Value::String(data) => data.capacity(),
            Value::Hash(hash) => scaled(hash.len(), hash.iter().map(|(f, v)| f.len() + v.len())),
            // Each member is held twice (by name and in score order).
            Value::ZSet(set) => scaled(set.len(), set.iter().map(|(_, m)| 2 * m.len() + 2 * size_of::<f64>())),
            // An integer set holds 8 bytes a member; a table, the bytes once
            // plus a position.
            Value::Set(set) => scaled(
                set.len(),
                set.iter().map(|m| match m {
                    Member::Int(_) => size_of::<i64>(),
                    Member::Bytes(bytes) => bytes.len() + size_of::<usize>(),
                }),
            ),
            Value::List(list) => scaled(list.len(), list.iter().map(<[u8]>::len)),
        }
    }
}

impl Store {
    /// Estimated bytes of the keyspace: keys, values, deadlines.
    pub(crate) fn used_memory(&self) -> usize {
        let keys: usize = self.entries().map(|(key, value)| key.len() + KEY_OVERHEAD + value.approx_bytes()).sum();
        keys + self.expiring() * (size_of::<(u64, Vec<u8>)>() + 16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::hash::Hash;
    use crate::resp::store::Ttl;

    #[test]
    fn estimates_grow_with_what_is_stored() {
        let mut store = Store::new();
        assert_eq!(store.used_memory(), 0);
        store.set_string(b"k", &[b'x'; 1000], Ttl::Clear, 0);
        let one = store.used_memory();
        assert!((1000..1200).contains(&one), "{one}");
        let mut hash = Hash::new();
        for i in 0..1000 {
            hash.set(format!("field{i}").as_bytes(), &[b'v'; 100]);
        }
        store.insert(b"h", Value::Hash(hash), Ttl::At(5), 0);
        let both = store.used_memory();
        assert!(both > one + 1000 * 100 && both < one + 1000 * 300, "{both}");
    }
}
