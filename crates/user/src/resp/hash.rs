//! Hashes: a field → value map in two encodings, as in Redis.
//!
//! A small hash is a vector of pairs searched linearly (Redis's listpack):
//! compact, and its fields come back from `HGETALL` in insertion order,
//! which is what Redis clients see for small hashes. Past
//! [`SMALL_HASH_MAX`] fields it becomes a `HashMap`, whose order is
//! arbitrary (Redis's large hashes are unordered too).

use std::collections::HashMap;

/// Fields a hash holds in its small encoding.
pub const SMALL_HASH_MAX: usize = 64;

/// A hash value.
#[derive(Clone, Debug)]
pub enum Hash {
    /// Pairs in insertion order.
    Small(Vec<(Vec<u8>, Vec<u8>)>),
    /// A hash table.
    Large(HashMap<Vec<u8>, Vec<u8>>),
}

impl Default for Hash {
    fn default() -> Self {
        Hash::Small(Vec::new())
    }
}

impl Hash {
    /// An empty hash.
    pub fn new() -> Self {
        Hash::default()
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        match self {
            Hash::Small(pairs) => pairs.len(),
            Hash::Large(map) => map.len(),
        }
    }

    /// Whether there are no fields.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of `field`.
    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        match self {
            Hash::Small(pairs) => pairs.iter().find(|(f, _)| f == field).map(|(_, v)| v.as_slice()),
            Hash::Large(map) => map.get(field).map(Vec::as_slice),
        }
    }

    /// Sets `field` to `value`; whether the field is new. An existing field
    /// keeps its place and reuses its value's buffer.
    pub fn set(&mut self, field: &[u8], value: &[u8]) -> bool {
        match self {
            Hash::Small(pairs) => {
                if let Some((_, old)) = pairs.iter_mut().find(|(f, _)| f == field) {
                    old.clear();
                    old.extend_from_slice(value);
                    return false;
                }
                if pairs.len() < SMALL_HASH_MAX {
                    pairs.push((field.to_vec(), value.to_vec()));
                    return true;
                }
                let map: HashMap<_, _> = std::mem::take(pairs).into_iter().collect();
                *self = Hash::Large(map);
                self.set(field, value)
            }
            Hash::Large(map) => match map.get_mut(field) {
                Some(old) => {
                    old.clear();
                    old.extend_from_slice(value);
                    false
                }
                None => {
                    map.insert(field.to_vec(), value.to_vec());
                    true
                }
            },
        }
    }

    /// Removes `field`; whether it was there. Small hashes keep the order
    /// of the remaining fields.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match self {
            Hash::Small(pairs) => match pairs.iter().position(|(f, _)| f == field) {
                Some(index) => {
                    pairs.remove(index);
                    true
                }
                None => false,
            },
            Hash::Large(map) => map.remove(field).is_some(),
        }
    }

    /// The field and value at position `index` of [`Hash::iter`]'s order:
    /// O(1) while small, O(n) once a hash table.
    pub fn nth(&self, index: usize) -> Option<(&[u8], &[u8])> {
        match self {
            Hash::Small(pairs) => pairs.get(index).map(|(f, v)| (f.as_slice(), v.as_slice())),
            Hash::Large(_) => self.iter().nth(index),
        }
    }

    /// All fields and values (insertion order while small).
    pub fn iter(&self) -> Box<dyn Iterator<Item = (&[u8], &[u8])> + '_> {
        match self {
            Hash::Small(pairs) => Box::new(pairs.iter().map(|(f, v)| (f.as_slice(), v.as_slice()))),
            Hash::Large(map) => Box::new(map.iter().map(|(f, v)| (f.as_slice(), v.as_slice()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_hashes_keep_insertion_order() {
        let mut hash = Hash::new();
        assert!(hash.set(b"b", b"1"));
        assert!(hash.set(b"a", b"2"));
        assert!(!hash.set(b"b", b"3"));
        assert!(hash.set(b"c", b"4"));
        assert!(hash.remove(b"a"));
        assert!(!hash.remove(b"a"));
        let pairs: Vec<_> = hash.iter().collect();
        assert_eq!(pairs, [(&b"b"[..], &b"3"[..]), (b"c", b"4")]);
        assert_eq!(hash.get(b"b"), Some(&b"3"[..]));
        assert_eq!(hash.get(b"a"), None);
        assert_eq!(hash.nth(1), Some((&b"c"[..], &b"4"[..])));
        assert_eq!(hash.nth(2), None);
    }

    #[test]
    fn large_hashes_convert_and_keep_every_field() {
        let mut hash = Hash::new();
        for i in 0..(SMALL_HASH_MAX * 2) {
            assert!(hash.set(format!("f{i}").as_bytes(), format!("{i}").as_bytes()));
        }
        assert!(matches!(hash, Hash::Large(_)));
        assert_eq!(hash.len(), SMALL_HASH_MAX * 2);
        assert!(!hash.set(b"f3", b"x"));
        assert_eq!(hash.get(b"f3"), Some(&b"x"[..]));
        assert!(hash.remove(b"f3"));
        assert_eq!(hash.iter().count(), SMALL_HASH_MAX * 2 - 1);
    }
}
