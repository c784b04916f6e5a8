//! Connection ids: on the virtual network a TCP connection is named by a
//! 16-bit "client port" (the source port of its packets; the destination
//! port names the KV server). An id is unique among live connections and
//! never one of the servers' ports.
//!
//! **Reuse.** Ids are handed out round-robin over [`FIRST`]`..=`[`LAST`],
//! so an id that was just released is the last one to be taken again: a
//! network stack may still hold the old connection's closing packet when the
//! next connection starts, and a new connection must not look like the tail
//! of an old one. With ~64 000 ids in the cycle, an id comes back only after
//! that many other connections were opened.

/// The first id handed out.
pub const FIRST: u16 = 1024;
/// The last id handed out.
pub const LAST: u16 = 65000;

/// The ids in use, and where the round-robin scan resumes.
#[derive(Debug)]
pub struct Ids {
    used: Vec<bool>,
    reserved: std::ops::RangeInclusive<u16>,
    next: u16,
    live: usize,
}

impl Ids {
    /// All ids free, none of them in `reserved` (the servers' ports).
    pub fn new(reserved: std::ops::RangeInclusive<u16>) -> Self {
        Self { used: vec![false; usize::from(u16::MAX) + 1], reserved, next: FIRST, live: 0 }
    }

    /// Ids in use.
    pub fn live(&self) -> usize {
        self.live
    }

    /// A free id (`None`: every id is in use).
    pub fn take(&mut self) -> Option<u16> {
        let span = usize::from(LAST - FIRST) + 1;
        for _ in 0..span {
            let id = self.next;
            self.next = if id == LAST { FIRST } else { id + 1 };
            if !self.used[usize::from(id)] && !self.reserved.contains(&id) {
                self.used[usize::from(id)] = true;
                self.live += 1;
                return Some(id);
            }
        }
        None
    }

    /// Give `id` back (ignored if it was not in use).
    pub fn release(&mut self, id: u16) {
        if std::mem::take(&mut self.used[usize::from(id)]) {
            self.live -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_round_robin_and_skip_the_servers_ports() {
        let mut ids = Ids::new(1025..=1026);
        assert_eq!(ids.take(), Some(1024));
        assert_eq!(ids.take(), Some(1027));
        ids.release(1024);
        // Released ids come back only after a whole cycle.
        assert_eq!(ids.take(), Some(1028));
        assert_eq!(ids.live(), 2);
        ids.release(1024);
        ids.release(7);
        assert_eq!(ids.live(), 2);
    }

    #[test]
    fn every_id_can_be_taken_once_then_none() {
        let mut ids = Ids::new(6379..=6379);
        let n = std::iter::from_fn(|| ids.take()).count();
        assert_eq!(n, usize::from(LAST - FIRST));
        assert_eq!(ids.take(), None);
        ids.release(4000);
        assert_eq!(ids.take(), Some(4000));
    }
}
