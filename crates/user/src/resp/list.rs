//! Lists: a sequence of byte strings with O(1) access at both ends.
//!
//! Redis keeps a list in a quicklist (a linked list of packed nodes); what
//! clients observe is only its order, its length and its index arithmetic,
//! so a ring buffer of elements serves: O(1) pushes and pops at both ends
//! (`LPUSH`, `RPOP`, the blocking pops), O(1) indexing (`LINDEX`, `LSET`,
//! the start of an `LRANGE`), and single-pass scans for the commands that
//! search (`LREM`, `LPOS`, `LINSERT`).
//!
//! Indices follow Redis: a negative index counts from the tail (`-1` is the
//! last element), and ranges are clamped rather than refused, with the
//! arithmetic done in `i64` so that no index a client sends can overflow.

use std::collections::VecDeque;

/// One end of a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The head (`LEFT`, index 0).
    Left,
    /// The tail (`RIGHT`, index -1).
    Right,
}

impl End {
    /// `LEFT` or `RIGHT`, in any case.
    pub fn parse(word: &[u8]) -> Option<End> {
        if word.eq_ignore_ascii_case(b"left") {
            Some(End::Left)
        } else if word.eq_ignore_ascii_case(b"right") {
            Some(End::Right)
        } else {
            None
        }
    }
}

/// A list value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct List {
    items: VecDeque<Box<[u8]>>,
}

impl List {
    /// An empty list.
    pub fn new() -> Self {
        List::default()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Adds `element` at `end`.
    pub fn push(&mut self, end: End, element: &[u8]) {
        self.push_owned(end, element.into());
    }

    /// Adds an element already owned at `end` (moving it between lists
    /// without copying).
    pub fn push_owned(&mut self, end: End, element: Box<[u8]>) {
        match end {
            End::Left => self.items.push_front(element),
            End::Right => self.items.push_back(element),
        }
    }

    /// Removes and returns the element at `end`.
    pub fn pop(&mut self, end: End) -> Option<Box<[u8]>> {
        match end {
            End::Left => self.items.pop_front(),
            End::Right => self.items.pop_back(),
        }
    }

    /// The position of Redis index `index` (negative: from the tail), if
    /// it is inside the list.
    pub fn position(&self, index: i64) -> Option<usize> {
        let len = self.items.len() as i64;
        let index = if index < 0 { index.checked_add(len)? } else { index };
        (0..len).contains(&index).then_some(index as usize)
    }

    /// The element at Redis index `index`.
    pub fn get(&self, index: i64) -> Option<&[u8]> {
        self.position(index).map(|at| &*self.items[at])
    }

    /// Replaces the element at Redis index `index`; whether it exists.
    pub fn set(&mut self, index: i64, element: &[u8]) -> bool {
        match self.position(index) {
            Some(at) => {
                self.items[at] = element.into();
                true
            }
            None => false,
        }
    }

    /// The positions `start..=end` that Redis's `LRANGE start end` covers
    /// (negative indices from the tail, clamped to the list), or `None`
    /// when the range is empty.
    pub fn range(&self, start: i64, end: i64) -> Option<(usize, usize)> {
        let len = self.items.len() as i64;
        let start = if start < 0 { start.saturating_add(len).max(0) } else { start };
        let end = if end < 0 { end.saturating_add(len) } else { end };
        if start > end || start >= len {
            return None;
        }
        Some((start as usize, end.min(len - 1) as usize))
    }

    /// The elements at positions `first..=last` (as [`List::range`] gives),
    /// head to tail.
    pub fn iter_range(&self, first: usize, last: usize) -> impl DoubleEndedIterator<Item = &[u8]> + '_ {
        self.items.range(first..=last).map(|element| &**element)
    }

    /// Every element, head to tail.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &[u8]> + ExactSizeIterator + '_ {
        self.items.iter().map(|element| &**element)
    }

    /// Keeps only what `LTRIM start end` keeps (everything goes when the
    /// range is empty).
    pub fn trim(&mut self, start: i64, end: i64) {
        match self.range(start, end) {
            None => self.items.clear(),
            Some((first, last)) => {
                self.items.truncate(last + 1);
                self.items.drain(..first);
            }
        }
    }

    /// Removes elements equal to `element` as `LREM` does: the first
    /// `count` from the head if `count > 0`, the last `-count` from the
    /// tail if `count < 0`, all of them if `count == 0`. How many it
    /// removed.
    pub fn remove(&mut self, element: &[u8], count: i64) -> usize {
        let matches = || self.items.iter().filter(|e| ***e == *element).count();
        let limit = usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX);
        // Which matches (in head-to-tail order) go: `skip` of them stay first.
        let (skip, take) = match count {
            0 => (0, usize::MAX),
            1.. => (0, limit),
            _ => {
                let total = matches();
                (total.saturating_sub(limit), limit)
            }
        };
        let (mut seen, mut removed) = (0usize, 0usize);
        self.items.retain(|e| {
            if **e != *element {
                return true;
            }
            seen += 1;
            if seen > skip && removed < take {
                removed += 1;
                false
            } else {
                true
            }
        });
        removed
    }

    /// Inserts `element` before (or after) the first element equal to
    /// `pivot`, from the head; whether the pivot was found.
    pub fn insert(&mut self, pivot: &[u8], element: &[u8], after: bool) -> bool {
        match self.items.iter().position(|e| **e == *pivot) {
            Some(at) => {
                self.items.insert(at + usize::from(after), element.into());
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> List {
        let mut list = List::new();
        for item in items {
            list.push(End::Right, item.as_bytes());
        }
        list
    }

    fn contents(list: &List) -> Vec<String> {
        list.iter().map(|e| String::from_utf8(e.to_vec()).unwrap()).collect()
    }

    #[test]
    fn both_ends_push_and_pop() {
        let mut l = List::new();
        l.push(End::Left, b"b");
        l.push(End::Left, b"a");
        l.push(End::Right, b"c");
        assert_eq!(contents(&l), ["a", "b", "c"]);
        assert_eq!(l.pop(End::Right).as_deref(), Some(&b"c"[..]));
        assert_eq!(l.pop(End::Left).as_deref(), Some(&b"a"[..]));
        assert_eq!(l.len(), 1);
        assert_eq!(l.pop(End::Left).as_deref(), Some(&b"b"[..]));
        assert!(l.pop(End::Right).is_none() && l.is_empty());
        assert_eq!(End::parse(b"LeFt"), Some(End::Left));
        assert_eq!(End::parse(b"up"), None);
    }

    #[test]
    fn indices_count_from_either_end_without_overflow() {
        let mut l = list(&["a", "b", "c"]);
        assert_eq!(l.get(0), Some(&b"a"[..]));
        assert_eq!(l.get(-1), Some(&b"c"[..]));
        assert_eq!(l.get(-3), Some(&b"a"[..]));
        assert_eq!(l.get(-4), None);
        assert_eq!(l.get(3), None);
        assert_eq!(l.get(i64::MIN), None);
        assert_eq!(l.get(i64::MAX), None);
        assert!(l.set(-2, b"B"));
        assert!(!l.set(5, b"x"));
        assert_eq!(contents(&l), ["a", "B", "c"]);
    }

    #[test]
    fn ranges_clamp_like_lrange() {
        let l = list(&["a", "b", "c", "d"]);
        assert_eq!(l.range(0, -1), Some((0, 3)));
        assert_eq!(l.range(-100, 100), Some((0, 3)));
        assert_eq!(l.range(i64::MIN, i64::MAX), Some((0, 3)));
        assert_eq!(l.range(2, 1), None);
        assert_eq!(l.range(4, 10), None);
        assert_eq!(l.range(-2, -1), Some((2, 3)));
        assert_eq!(l.range(0, -5), None);
        assert_eq!(l.iter_range(1, 2).rev().collect::<Vec<_>>(), [&b"c"[..], b"b"]);
        assert_eq!(List::new().range(0, -1), None);
    }

    #[test]
    fn trim_keeps_the_range() {
        let mut l = list(&["a", "b", "c", "d", "e"]);
        l.trim(1, -2);
        assert_eq!(contents(&l), ["b", "c", "d"]);
        l.trim(i64::MIN, i64::MAX);
        assert_eq!(contents(&l), ["b", "c", "d"]);
        l.trim(5, 10);
        assert!(l.is_empty());
    }

    #[test]
    fn remove_counts_from_the_head_or_the_tail() {
        let mut l = list(&["x", "a", "x", "b", "x", "c", "x"]);
        assert_eq!(l.remove(b"x", 2), 2);
        assert_eq!(contents(&l), ["a", "b", "x", "c", "x"]);
        let mut l = list(&["x", "a", "x", "b", "x", "c", "x"]);
        assert_eq!(l.remove(b"x", -3), 3);
        assert_eq!(contents(&l), ["x", "a", "b", "c"]);
        assert_eq!(l.remove(b"x", i64::MIN), 1);
        assert_eq!(l.remove(b"nope", 0), 0);
        let mut l = list(&["x", "x", "y"]);
        assert_eq!(l.remove(b"x", 0), 2);
        assert_eq!(contents(&l), ["y"]);
    }

    #[test]
    fn insert_finds_the_first_pivot() {
        let mut l = list(&["a", "p", "b", "p"]);
        assert!(l.insert(b"p", b"1", false));
        assert!(l.insert(b"p", b"2", true));
        assert!(!l.insert(b"q", b"3", true));
        assert_eq!(contents(&l), ["a", "1", "p", "2", "b", "p"]);
    }
}
