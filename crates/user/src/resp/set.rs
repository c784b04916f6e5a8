//! Sets: unordered collections of distinct byte strings, in Redis 7.0's two
//! encodings.
//!
//! A set whose members are all integers (as `string2ll` reads them) and
//! that holds at most [`MAX_INTSET`] of them is a sorted vector of `i64`
//! (Redis's intset): compact, and its members come back in ascending
//! order — which clients see in `SMEMBERS`, `SSCAN` and the results of
//! `SUNION`, `SINTER` and `SDIFF` that are small integer sets. Adding
//! anything else turns it, for good, into a [`Table`] (Redis's hash table;
//! like Redis's, it never turns back): members in a vector, for drawing a
//! uniformly random one in O(1) (`SPOP`, `SRANDMEMBER`), and a map from
//! member to position, for membership in O(1). Each member's bytes are
//! allocated once and shared by both.

use std::collections::HashMap;
use std::sync::Arc;

use super::encode::write_bulk;
use super::number::parse_i64;

/// Most members an integer set holds (Redis's `set-max-intset-entries`).
pub const MAX_INTSET: usize = 512;

/// A set value.
#[derive(Clone, Debug)]
pub enum Set {
    /// Integers, ascending, at most [`MAX_INTSET`].
    Ints(Vec<i64>),
    /// Any members.
    Table(Table),
}

/// The general encoding: members in a vector, indexed by a map.
#[derive(Clone, Debug, Default)]
pub struct Table {
    members: Vec<Arc<[u8]>>,
    positions: HashMap<Arc<[u8]>, usize>,
}

/// A member as a set holds it: an integer of an integer set, or bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Member<'a> {
    /// A member of an integer set.
    Int(i64),
    /// A member of a table.
    Bytes(&'a [u8]),
}

impl Member<'_> {
    /// Calls `f` with the member's bytes (an integer's decimal digits).
    pub fn with_bytes<R>(self, f: impl FnOnce(&[u8]) -> R) -> R {
        match self {
            Member::Int(value) => f(IntText::new(value).as_bytes()),
            Member::Bytes(bytes) => f(bytes),
        }
    }

    /// Appends the member as a bulk string.
    pub fn write_bulk(self, out: &mut Vec<u8>) {
        self.with_bytes(|bytes| write_bulk(out, bytes));
    }

    /// The member's bytes, owned.
    pub fn to_vec(self) -> Vec<u8> {
        self.with_bytes(<[u8]>::to_vec)
    }
}

/// An integer's decimal digits in a fixed buffer (no allocation).
struct IntText {
    digits: [u8; 20],
    start: usize,
}

impl IntText {
    fn new(value: i64) -> Self {
        let mut digits = [0u8; 20];
        let mut start = digits.len();
        let mut rest = value.unsigned_abs();
        loop {
            start -= 1;
            digits[start] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        if value < 0 {
            start -= 1;
            digits[start] = b'-';
        }
        IntText { digits, start }
    }

    fn as_bytes(&self) -> &[u8] {
        &self.digits[self.start..]
    }
}

impl Default for Set {
    fn default() -> Self {
        Set::Ints(Vec::new())
    }
}

impl Set {
    /// An empty set (an integer set until something else is added).
    pub fn new() -> Self {
        Set::default()
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        match self {
            Set::Ints(ints) => ints.len(),
            Set::Table(table) => table.members.len(),
        }
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `member` belongs to the set.
    pub fn contains(&self, member: &[u8]) -> bool {
        match self {
            Set::Ints(ints) => parse_i64(member).is_some_and(|value| ints.binary_search(&value).is_ok()),
            Set::Table(table) => table.positions.contains_key(member),
        }
    }

    /// Whether `member` (of another set) belongs to this one.
    pub fn contains_member(&self, member: Member<'_>) -> bool {
        match (self, member) {
            (Set::Ints(ints), Member::Int(value)) => ints.binary_search(&value).is_ok(),
            (_, member) => member.with_bytes(|bytes| self.contains(bytes)),
        }
    }

    /// Adds `member`; whether it is new.
    pub fn insert(&mut self, member: &[u8]) -> bool {
        match parse_i64(member) {
            Some(value) => self.insert_member(Member::Int(value)),
            None => self.insert_member(Member::Bytes(member)),
        }
    }

    /// Adds `member` (of another set); whether it is new. An integer set
    /// becomes a table when `member` is not an integer or when it would
    /// grow past [`MAX_INTSET`].
    pub fn insert_member(&mut self, member: Member<'_>) -> bool {
        if let (Set::Ints(ints), Member::Int(value)) = (&mut *self, member) {
            let Err(at) = ints.binary_search(&value) else {
                return false;
            };
            if ints.len() < MAX_INTSET {
                ints.insert(at, value);
                return true;
            }
        }
        if let (Set::Ints(_), Member::Bytes(bytes)) = (&*self, member) {
            // A string that reads as an integer is one.
            if let Some(value) = parse_i64(bytes) {
                return self.insert_member(Member::Int(value));
            }
        }
        let table = self.table_mut();
        member.with_bytes(|bytes| table.insert(bytes))
    }

    /// Removes `member`; whether it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self {
            Set::Ints(ints) => match parse_i64(member).map(|value| ints.binary_search(&value)) {
                Some(Ok(at)) => {
                    ints.remove(at);
                    true
                }
                _ => false,
            },
            Set::Table(table) => table.remove(member),
        }
    }

    /// The member at `index` (below [`Set::len`]) in iteration order: the
    /// means of drawing a random member.
    pub fn get(&self, index: usize) -> Option<Member<'_>> {
        match self {
            Set::Ints(ints) => ints.get(index).map(|&value| Member::Int(value)),
            Set::Table(table) => table.members.get(index).map(|bytes| Member::Bytes(bytes)),
        }
    }

    /// Removes the member at `index` (the last member of a table takes its
    /// place).
    pub fn remove_at(&mut self, index: usize) {
        match self {
            Set::Ints(ints) => {
                if index < ints.len() {
                    ints.remove(index);
                }
            }
            Set::Table(table) => table.remove_at(index),
        }
    }

    /// Every member: ascending for an integer set, in no promised order for
    /// a table.
    pub fn iter(&self) -> Iter<'_> {
        match self {
            Set::Ints(ints) => Iter::Ints(ints.iter()),
            Set::Table(table) => Iter::Table(table.members.iter()),
        }
    }

    /// Whether this is an integer set (Redis's intset encoding).
    pub fn is_ints(&self) -> bool {
        matches!(self, Set::Ints(_))
    }

    /// The table, converting an integer set into one first.
    fn table_mut(&mut self) -> &mut Table {
        if let Set::Ints(ints) = self {
            let mut table = Table::default();
            table.members.reserve(ints.len() + 1);
            for &value in ints.iter() {
                table.insert(IntText::new(value).as_bytes());
            }
            *self = Set::Table(table);
        }
        match self {
            Set::Table(table) => table,
            Set::Ints(_) => unreachable!("converted above"),
        }
    }
}

impl Table {
    fn insert(&mut self, member: &[u8]) -> bool {
        if self.positions.contains_key(member) {
            return false;
        }
        let shared: Arc<[u8]> = Arc::from(member);
        self.positions.insert(Arc::clone(&shared), self.members.len());
        self.members.push(shared);
        true
    }

    fn remove(&mut self, member: &[u8]) -> bool {
        match self.positions.get(member) {
            Some(&index) => {
                self.remove_at(index);
                true
            }
            None => false,
        }
    }

    fn remove_at(&mut self, index: usize) {
        if index >= self.members.len() {
            return;
        }
        let removed = self.members.swap_remove(index);
        self.positions.remove(&removed);
        if let Some(moved) = self.members.get(index) {
            if let Some(position) = self.positions.get_mut(moved) {
                *position = index;
            }
        }
        // Give memory back when most of it is unused, as Redis resizes.
        if self.members.capacity() > 64 && self.members.len() < self.members.capacity() / 8 {
            self.members.shrink_to(self.members.len() * 2);
            self.positions.shrink_to(self.members.len() * 2);
        }
    }
}

/// The members of a [`Set`] ([`Set::iter`]).
#[derive(Clone, Debug)]
pub enum Iter<'a> {
    /// An integer set's.
    Ints(std::slice::Iter<'a, i64>),
    /// A table's.
    Table(std::slice::Iter<'a, Arc<[u8]>>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = Member<'a>;

    fn next(&mut self) -> Option<Member<'a>> {
        match self {
            Iter::Ints(ints) => ints.next().map(|&value| Member::Int(value)),
            Iter::Table(members) => members.next().map(|bytes| Member::Bytes(bytes)),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Iter::Ints(ints) => ints.size_hint(),
            Iter::Table(members) => members.size_hint(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(set: &Set) -> Vec<Vec<u8>> {
        set.iter().map(Member::to_vec).collect()
    }

    #[test]
    fn integer_sets_stay_sorted_until_a_string_or_too_many() {
        let mut set = Set::new();
        assert!(set.insert(b"3"));
        assert!(set.insert(b"-1"));
        assert!(!set.insert(b"3"));
        assert!(set.insert(b"10"));
        assert!(set.is_ints());
        assert_eq!(members(&set), [&b"-1"[..], b"3", b"10"]);
        // Not integers as string2ll reads them.
        assert!(!set.contains(b"03"));
        assert!(!set.contains(b"+3"));
        assert!(set.contains(b"3"));
        assert!(set.insert(b"03"));
        assert!(!set.is_ints());
        assert!(set.contains(b"03") && set.contains(b"3") && set.contains(b"-1"));
        assert_eq!(set.len(), 4);

        let mut big = Set::new();
        for i in 0..MAX_INTSET as i64 {
            assert!(big.insert_member(Member::Int(i)));
        }
        assert!(big.is_ints());
        assert!(!big.insert_member(Member::Int(7)));
        assert!(big.is_ints());
        assert!(big.insert(b"-9223372036854775808"));
        assert!(!big.is_ints());
        assert_eq!(big.len(), MAX_INTSET + 1);
        assert!(big.contains_member(Member::Int(i64::MIN)));
        assert!(big.contains(b"511"));
    }

    #[test]
    fn tables_remove_by_value_and_by_position() {
        let mut set = Set::new();
        for member in [&b"a"[..], b"b", b"c", b"d"] {
            assert!(set.insert(member));
        }
        assert!(set.remove(b"a"));
        assert!(!set.remove(b"a"));
        assert_eq!(members(&set), [&b"d"[..], b"b", b"c"]);
        set.remove_at(1);
        assert_eq!(members(&set), [&b"d"[..], b"c"]);
        assert!(set.contains(b"c") && !set.contains(b"b"));
        assert!(set.remove(b"c"));
        assert!(set.contains(b"d"));
        set.remove_at(0);
        assert!(set.is_empty());
        set.remove_at(0);
        assert_eq!(set.get(0), None);
    }

    #[test]
    fn members_of_one_encoding_are_found_in_the_other() {
        let mut ints = Set::new();
        ints.insert(b"42");
        let mut table = Set::new();
        table.insert(b"x");
        table.insert(b"42");
        assert!(table.contains_member(Member::Int(42)));
        assert!(ints.contains_member(Member::Bytes(b"42")));
        assert!(!ints.contains_member(Member::Bytes(b"x")));
        assert!(ints.insert_member(Member::Bytes(b"7")));
        assert!(ints.is_ints());
        assert_eq!(members(&ints), [&b"7"[..], b"42"]);
    }

    #[test]
    fn integers_print_as_redis_does() {
        for value in [0, 7, -7, i64::MAX, i64::MIN] {
            assert_eq!(IntText::new(value).as_bytes(), value.to_string().as_bytes());
        }
    }

    #[test]
    fn emptied_tables_give_memory_back() {
        let mut set = Set::new();
        for i in 0..10_000 {
            set.insert(format!("m{i}").as_bytes());
        }
        while set.len() > 10 {
            set.remove_at(0);
        }
        let Set::Table(table) = &set else { panic!("a table") };
        assert!(table.members.capacity() < 1000);
        for (index, member) in table.members.iter().enumerate() {
            assert_eq!(table.positions[member], index);
        }
    }
}
