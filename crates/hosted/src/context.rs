//! User contexts (stackful coroutines) and the table that lets any core
//! resume any of them, one core at a time.
//!
//! # Why a coroutine may move between OS threads
//!
//! `corosensei::Coroutine` is `!Send`: in general the values on a suspended
//! coroutine's stack may be tied to the OS thread that ran it. [`UserContext`]
//! implements `Send` anyway, under this contract:
//!
//! 1. **One resumer at a time.** A context is resumed only through
//!    [`ContextTable::claim`], which hands out `&mut UserContext` to the one core
//!    that owns the slot (below). Two cores never run the same coroutine, even
//!    if the kernel were wrong about which core runs which thread: the kernel's
//!    guarantee (a thread is current on at most one core) is what makes claims
//!    succeed without waiting, not what makes them sound.
//! 2. **Only `Send` data enters.** The closure a context runs is
//!    `FnOnce(..) + Send + 'static`, and the values passed in and out at each
//!    trap (system-call words, results) are plain `Send` data.
//! 3. **No thread-affine state across a trap.** User code must not hold, across
//!    a system call, a reference into a thread-local, a guard of an OS-thread
//!    affine lock, or anything else whose validity depends on the OS thread
//!    (e.g. `rand::thread_rng()`'s handle). Values that are merely `!Send`
//!    because of shared ownership (an `Rc` whose clones all live inside the
//!    same coroutine) are fine: they move together. This part of the contract
//!    cannot be checked by the compiler; it is the user-program rule of the
//!    hosted platform, stated in `granule-user`'s documentation too. The trap
//!    itself enforces the one case we can see: a thread that traps while
//!    unwinding (std's panic count is thread-local) does not yield.
//!
//! # Ownership: claims that cost nothing on the hot path
//!
//! Each slot has an `owner` word: the index of the core that may resume the
//! context, or `FREE`. Ownership is *sticky*: a core keeps the contexts it ran
//! when it switches away from them, so a core alternating between two threads
//! (the ping-pong) claims each with one plain load of a word only it writes
//! while it owns it. A core that needs a context another core owns asks for it
//! (a [`Ring::Handoff`] doorbell); the owner, at its next kernel entry or in
//! its idle loop (never while it runs a context), releases *all* it owns; the
//! asker then takes the slot with a compare-and-swap. A core waiting for a
//! hand-off keeps answering hand-off requests itself, so two cores asking each
//! other cannot deadlock.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;

use crate::doorbell::{Doorbell, Ring};

const FREE: usize = usize::MAX;

#[derive(Debug)]
struct Slot<T> {
    owner: AtomicUsize,
    value: UnsafeCell<Option<T>>,
}

/// A fixed table of per-thread values (user contexts), each resumable by the
/// one core that owns its slot (see the module documentation).
#[derive(Debug)]
pub struct ContextTable<T> {
    slots: Box<[CachePadded<Slot<T>>]>,
    /// Claims that took a slot from FREE (first claims and hand-offs).
    moves: CachePadded<AtomicU64>,
}

// SAFETY: a slot's `value` is only reached through `claim`, which returns
// `&mut` to the core that owns the slot (`owner == core`, set by a successful
// CAS from FREE or kept since one), or through `values_mut(&mut self)`. A
// core gives a slot up (store FREE, Release) only in `release_all`, which
// needs the core's unique `Owned` by `&mut` and so cannot run while a borrow
// returned by `claim` (which holds that `Owned`) lives. The Acquire CAS /
// load in `claim` pairs with that Release store, so the new owner sees every
// write of the old one. `T: Send` because values do move between the OS
// threads acting as cores.
unsafe impl<T: Send> Sync for ContextTable<T> {}

/// One core's right to claim slots, and the record of the slots it owns.
#[derive(Debug)]
pub struct Owned {
    core: usize,
    slots: Vec<usize>,
}

impl Owned {
    /// The claim right of `core`.
    ///
    /// # Safety
    /// At most one `Owned` exists for `core` (per table it is used with) at
    /// any time, and only one OS thread uses it. (The core loop makes one per
    /// core thread, at its start.)
    pub unsafe fn for_core(core: usize) -> Self {
        Self { core, slots: Vec::new() }
    }
}

impl<T: Send> ContextTable<T> {
    /// A table with `capacity` empty slots, all free.
    pub fn new(capacity: usize) -> Self {
        Self {
            slots: (0..capacity)
                .map(|_| CachePadded::new(Slot { owner: AtomicUsize::new(FREE), value: UnsafeCell::new(None) }))
                .collect(),
            moves: CachePadded::new(AtomicU64::new(0)),
        }
    }

    /// How many claims took a slot from FREE: a context's first claim, and
    /// every hand-off between cores.
    pub fn moves(&self) -> u64 {
        self.moves.load(Ordering::Relaxed)
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Take ownership of slot `index` for `owned`'s core and return its value.
    ///
    /// Fast path: the core already owns it (one load). Otherwise the slot is
    /// taken from FREE by CAS, after asking its owner to hand it over
    /// (`bells[owner]`); while waiting, the core releases its own slots when
    /// asked (its own bell) and gives up, returning `None`, if `stop()` says
    /// so (shutdown). The returned borrow holds `owned`, so the core cannot
    /// release the slot while it uses the value.
    pub fn claim<'a>(
        &'a self,
        index: usize,
        owned: &'a mut Owned,
        bells: &[CachePadded<Doorbell>],
        mut stop: impl FnMut() -> bool,
    ) -> Option<&'a mut Option<T>> {
        let core = owned.core;
        let slot = &self.slots[index];
        if slot.owner.load(Ordering::Acquire) != core {
            let mut rung = FREE;
            let mut spins = 0u32;
            loop {
                let owner = slot.owner.load(Ordering::Acquire);
                if owner == FREE {
                    if slot.owner.compare_exchange(FREE, core, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                        self.moves.fetch_add(1, Ordering::Relaxed);
                        owned.slots.push(index);
                        break;
                    }
                    continue;
                }
                // Ask the owner once, and again now and then in case it
                // took the slot back for itself meanwhile.
                if owner != rung || spins % 4096 == 0 {
                    if let Some(b) = bells.get(owner) {
                        b.ring(Ring::Handoff);
                    }
                    rung = owner;
                }
                spins = spins.wrapping_add(1);
                // Serve hand-off requests to us while we wait: another core
                // may be waiting for a slot we own.
                if bells.get(core).is_some_and(|b| b.take_only(Ring::Handoff)) {
                    self.release_all(owned);
                }
                if stop() {
                    return None;
                }
                std::hint::spin_loop();
            }
        }
        // SAFETY: `owner == core` now (we saw it or set it with an Acquire
        // operation that synchronises with the previous owner's Release in
        // `release_all`). Only the holder of this core's unique `Owned`
        // (`Owned::for_core`'s contract) changes the owner away from `core`,
        // through `release_all(&mut Owned)`, which cannot run while the
        // returned borrow (which holds `owned`) lives. So this is the only
        // reference to the value.
        Some(unsafe { &mut *slot.value.get() })
    }

    /// Give up every slot `owned` records (answering a hand-off request).
    pub fn release_all(&self, owned: &mut Owned) {
        for i in owned.slots.drain(..) {
            self.slots[i].owner.store(FREE, Ordering::Release);
        }
    }

    /// Every value, for tear-down by the single thread that owns the table
    /// after all cores stopped.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Option<T>> {
        self.slots.iter_mut().map(|s| s.value.get_mut())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    #[test]
    fn a_slot_moves_between_cores_only_through_a_handoff() {
        let table = Arc::new(ContextTable::<u64>::new(2));
        let bells: Arc<Vec<CachePadded<Doorbell>>> = Arc::new((0..2).map(|_| CachePadded::default()).collect());
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicUsize::new(0));
        // Core 0 and core 1 each increment slot 0 10_000 times; the total is
        // exact only if claims exclude each other.
        let workers: Vec<_> = (0..2)
            .map(|core| {
                let (table, bells, stop, done) = (table.clone(), bells.clone(), stop.clone(), done.clone());
                std::thread::spawn(move || {
                    bells[core].bind_current();
                    // SAFETY: one `Owned` per core, used by this thread only.
                    let mut owned = unsafe { Owned::for_core(core) };
                    for _ in 0..10_000 {
                        let v = table.claim(0, &mut owned, &bells, || false).unwrap();
                        *v = Some(v.unwrap_or(0) + 1);
                        if bells[core].take() & Ring::Handoff as u32 != 0 {
                            table.release_all(&mut owned);
                        }
                    }
                    done.fetch_add(1, Ordering::Release);
                    // Keep answering until both are done.
                    while !stop.load(Ordering::Relaxed) {
                        if bells[core].take() & Ring::Handoff as u32 != 0 {
                            table.release_all(&mut owned);
                        }
                        std::hint::spin_loop();
                    }
                    table.release_all(&mut owned);
                })
            })
            .collect();
        while done.load(Ordering::Acquire) < 2 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        stop.store(true, Ordering::Relaxed);
        for w in workers {
            w.join().unwrap();
        }
        let mut table = Arc::try_unwrap(table).ok().unwrap();
        assert_eq!(table.values_mut().next().unwrap().unwrap(), 20_000);
    }
}
