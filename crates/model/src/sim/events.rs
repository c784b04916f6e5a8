//! The simulator's future-event list: a min-heap on (time, sequence number),
//! so events at the same time run in the order they were scheduled and a run
//! is a deterministic function of its seed.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What happens to a core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// It stops thinking and asks for the lock.
    Arrive,
    /// It leaves its critical section and releases the lock.
    Release,
    /// Its transaction `generation` commits or aborts (a transaction aborted
    /// earlier by a conflict has a newer generation, and the event is stale).
    TxEnd { generation: u64, commit: bool },
}

/// One scheduled event.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Event {
    pub time: f64,
    seq: u64,
    pub core: usize,
    pub kind: Kind,
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Event {}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Event {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest event.
    fn cmp(&self, other: &Self) -> Ordering {
        other.time.total_cmp(&self.time).then_with(|| other.seq.cmp(&self.seq))
    }
}

/// The pending events.
#[derive(Debug, Default)]
pub(crate) struct Events {
    heap: BinaryHeap<Event>,
    seq: u64,
}

impl Events {
    /// Schedule `kind` for `core` at `time`.
    pub fn push(&mut self, time: f64, core: usize, kind: Kind) {
        self.seq += 1;
        self.heap.push(Event { time, seq: self.seq, core, kind });
    }

    /// The earliest event.
    pub fn pop(&mut self) -> Option<Event> {
        self.heap.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_in_scheduling_order() {
        let mut e = Events::default();
        e.push(5.0, 0, Kind::Release);
        e.push(1.0, 1, Kind::Arrive);
        e.push(5.0, 2, Kind::Arrive);
        e.push(0.5, 3, Kind::Arrive);
        let order: Vec<usize> = std::iter::from_fn(|| e.pop()).map(|ev| ev.core).collect();
        assert_eq!(order, [3, 1, 0, 2]);
    }
}
