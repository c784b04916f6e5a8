//! The `fine` regime's own steps, driven as one core's entries would drive
//! them: the start of a shared entry (escalation, its own lock), holds in an
//! exclusive entry, and the release of everything held.

use super::*;

/// Endpoint `index`'s lock target.
fn endpoint(index: u32) -> LockTarget {
    LockTarget::Object(ObjectId { kind: ObjectType::Endpoint as u8, index })
}

fn two_cores() -> Fine<NoStats> {
    Fine::new(&BootConfig::new(2))
}

/// End core `core`'s shared entry.
///
/// # Safety
/// As for `ObjectLocks::unlock_objects`.
unsafe fn end_shared(f: &Fine<NoStats>, core: usize) {
    // SAFETY: the caller's contract.
    unsafe {
        f.unlock_objects(core);
        f.exit(core, ());
    }
}

/// Whether every lock of `targets` is free (read, never waited for, so that
/// a lock left held fails the test instead of hanging it).
fn free(f: &Fine<NoStats>, targets: &[LockTarget]) -> bool {
    targets.iter().all(|&t| !f.lock_at(f.lock_number(t).expect("a lockable target")).is_locked())
}

#[test]
fn an_escalated_system_call_starts_exclusive_once_and_other_entries_stay_shared() {
    let f = two_cores();
    // SAFETY: cores 0 and 1 are in range, each acted as by this thread
    // alone, one entry at a time per core (so for every block below).
    unsafe {
        f.escalate(0);
        // A tick or an interrupt meanwhile starts shared and leaves the
        // escalation to the system call.
        assert!(f.start_shared(0, false, || {}));
        end_shared(&f, 0);
        // The system call is refused its shared start, holding nothing...
        assert!(!f.start_shared(0, true, || {}));
        assert!(f.held_set(0).is_empty());
        assert!(free(&f, &[LockTarget::Core(0)]));
        // ...once: the next one is shared again.
        assert!(f.start_shared(0, true, || {}));
        assert_eq!(f.held_set(0), LockSet::core(0));
        end_shared(&f, 0);
    }
}

#[test]
fn an_exclusive_entry_is_granted_every_hold_without_taking_it() {
    let f = two_cores();
    // SAFETY: as above.
    unsafe {
        f.enter_exclusive(0, || {});
        assert!(f.lock_one(0, endpoint(3), || {}));
        assert!(f.held_set(0).is_empty());
        assert!(f.lock_one(0, LockTarget::Core(1), || {}));
        assert!(f.held_set(0).is_empty());
        f.exit_exclusive(0);
    }
    assert!(free(&f, &[endpoint(3), LockTarget::Core(0)]));
}

#[test]
fn every_held_lock_is_released_whatever_their_number() {
    let f = two_cores();
    for n in [0, 1, 2, 4, 7] {
        let held: Vec<LockTarget> = (0..n).map(|i| endpoint(10 + i)).collect();
        // SAFETY: as above.
        unsafe {
            assert!(f.start_shared(0, true, || {}));
            for &t in &held {
                assert!(f.lock_one(0, t, || {}));
            }
            let mut want = LockSet::core(0);
            held.iter().for_each(|&t| want.add_target(t));
            assert_eq!(f.held_set(0), want);
            // Held: none of them is free, nor core 0's own lock.
            if n > 0 {
                assert!(!free(&f, &held[n as usize - 1..]));
                assert!(!free(&f, &held[..1]));
            }
            assert!(!free(&f, &[LockTarget::Core(0)]));
            end_shared(&f, 0);
            assert!(f.held_set(0).is_empty());
        }
        let mut all = held.clone();
        all.push(LockTarget::Core(0));
        assert!(free(&f, &all), "{n} locks held, not all released");
    }
}
