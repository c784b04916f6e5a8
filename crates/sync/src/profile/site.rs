//! [`Profile`]: the recording side of the lock profiler.

use alloc::string::String;
use alloc::vec::Vec;
use core::panic::Location;
use core::ptr;

use crossbeam_utils::CachePadded;

use super::{AbortCause, ElisionEvent, LockStats, Site};
use crate::primitive::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// Acquisition sites recorded per lock; once the table is full, later sites
/// share the last slot, which is then reported as `(other sites)`.
pub const MAX_SITES: usize = 32;

const NO_SITE: usize = usize::MAX;

#[derive(Debug, Default)]
struct Counters {
    acquisitions: AtomicU64,
    contended: AtomicU64,
    wait_total: AtomicU64,
    wait_max: AtomicU64,
    wait_min: AtomicU64,
    hold_total: AtomicU64,
    hold_max: AtomicU64,
    hold_min: AtomicU64,
    holds: AtomicU64,
    cnt_hold: AtomicU64,
    acq_bounces: AtomicU64,
    con_bounces: AtomicU64,
    commits: AtomicU64,
    aborts: [AtomicU64; 4],
    fallbacks: AtomicU64,
}

#[derive(Debug)]
struct SiteSlot {
    /// The site's location; null while the slot is free. Only ever holds a
    /// pointer obtained from a `&'static Location<'static>`.
    location: AtomicPtr<Location<'static>>,
    counters: Counters,
}

#[derive(Debug)]
struct Holding {
    since: AtomicU64,
    site: AtomicUsize,
}

/// Per-lock, per-site statistics (see the module documentation).
#[derive(Debug)]
pub struct Profile {
    name: &'static str,
    sites: Vec<CachePadded<SiteSlot>>,
    holding: Vec<CachePadded<Holding>>,
    last_core: AtomicUsize,
    last_release_site: AtomicUsize,
    /// Set once a site found the table full and was recorded in the last slot.
    overflowed: AtomicBool,
}

impl Profile {
    /// The lock's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    fn location_of(&self, slot: &SiteSlot) -> Option<Site> {
        let p = slot.location.load(Ordering::Acquire);
        // SAFETY: `location` is null or a pointer taken from a
        // `&'static Location<'static>` in `slot_for`; such a reference is valid
        // for the whole program and `Location` is immutable.
        unsafe { p.as_ref() }
    }

    fn same(a: Site, b: Site) -> bool {
        ptr::eq(a, b) || (a.line() == b.line() && a.column() == b.column() && a.file() == b.file())
    }

    /// Index of the slot recording `site`, claiming a free slot if needed.
    fn slot_for(&self, site: Site) -> usize {
        let want = site as *const Location<'static> as *mut Location<'static>;
        for (i, slot) in self.sites.iter().enumerate() {
            match self.location_of(slot) {
                Some(s) if Self::same(s, site) => return i,
                Some(_) => continue,
                None => {
                    match slot.location.compare_exchange(ptr::null_mut(), want, Ordering::AcqRel, Ordering::Acquire) {
                        Ok(_) => return i,
                        Err(p) => {
                            // SAFETY: as in `location_of`: a non-null value
                            // of this field came from a `&'static Location`.
                            let other = unsafe { &*p };
                            if Self::same(other, site) {
                                return i;
                            }
                        }
                    }
                }
            }
        }
        self.overflowed.store(true, Ordering::Relaxed);
        self.sites.len() - 1
    }

    /// A snapshot of every site that recorded anything.
    pub fn snapshot(&self) -> Vec<SiteRecord> {
        let last = self.sites.len() - 1;
        let mut out = Vec::new();
        for (i, slot) in self.sites.iter().enumerate() {
            let Some(loc) = self.location_of(slot) else { continue };
            let c = &slot.counters;
            let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
            let acquisitions = get(&c.acquisitions);
            let commits = get(&c.commits);
            let aborts: Vec<u64> = c.aborts.iter().map(get).collect();
            if acquisitions == 0 && commits == 0 && aborts.iter().all(|&a| a == 0) {
                continue;
            }
            let min = |a: &AtomicU64| match get(a) {
                u64::MAX => 0,
                v => v,
            };
            let shared = i == last && self.overflowed.load(Ordering::Relaxed);
            out.push(SiteRecord {
                lock: String::from(self.name),
                file: if shared { String::from("(other sites)") } else { String::from(loc.file()) },
                line: if shared { 0 } else { loc.line() },
                acquisitions,
                contended: get(&c.contended),
                wait_total: get(&c.wait_total),
                wait_max: get(&c.wait_max),
                wait_min: min(&c.wait_min),
                hold_total: get(&c.hold_total),
                hold_max: get(&c.hold_max),
                hold_min: min(&c.hold_min),
                holds: get(&c.holds),
                cnt_hold: get(&c.cnt_hold),
                acq_bounces: get(&c.acq_bounces),
                con_bounces: get(&c.con_bounces),
                commits,
                aborts_conflict: aborts[AbortCause::Conflict.index()],
                aborts_capacity: aborts[AbortCause::Capacity.index()],
                aborts_lock_busy: aborts[AbortCause::LockBusy.index()],
                aborts_other: aborts[AbortCause::Other.index()],
                fallbacks: get(&c.fallbacks),
            });
        }
        out
    }
}

impl LockStats for Profile {
    const ENABLED: bool = true;

    fn new(name: &'static str, cores: usize) -> Self {
        let counters = || Counters {
            wait_min: AtomicU64::new(u64::MAX),
            hold_min: AtomicU64::new(u64::MAX),
            ..Counters::default()
        };
        Self {
            name,
            sites: (0..MAX_SITES)
                .map(|_| CachePadded::new(SiteSlot { location: AtomicPtr::new(ptr::null_mut()), counters: counters() }))
                .collect(),
            holding: (0..cores.max(1))
                .map(|_| CachePadded::new(Holding { since: AtomicU64::new(0), site: AtomicUsize::new(NO_SITE) }))
                .collect(),
            last_core: AtomicUsize::new(NO_SITE),
            last_release_site: AtomicUsize::new(NO_SITE),
            overflowed: AtomicBool::new(false),
        }
    }

    fn acquired(&self, core: usize, site: Site, wait: u64, contended: bool, now: u64) {
        let i = self.slot_for(site);
        let c = &self.sites[i].counters;
        c.acquisitions.fetch_add(1, Ordering::Relaxed);
        c.wait_total.fetch_add(wait, Ordering::Relaxed);
        c.wait_max.fetch_max(wait, Ordering::Relaxed);
        c.wait_min.fetch_min(wait, Ordering::Relaxed);
        let previous = self.last_core.swap(core, Ordering::Relaxed);
        let bounced = previous != NO_SITE && previous != core;
        if bounced {
            c.acq_bounces.fetch_add(1, Ordering::Relaxed);
        }
        if contended {
            c.contended.fetch_add(1, Ordering::Relaxed);
            if bounced {
                c.con_bounces.fetch_add(1, Ordering::Relaxed);
            }
            // The core that handed the lock to us held it while we waited.
            let holder = self.last_release_site.load(Ordering::Relaxed);
            if holder != NO_SITE {
                self.sites[holder].counters.cnt_hold.fetch_add(1, Ordering::Relaxed);
            }
        }
        let h = &self.holding[core];
        h.since.store(now, Ordering::Relaxed);
        h.site.store(i, Ordering::Relaxed);
    }

    fn releasing(&self, core: usize, now: u64) {
        let h = &self.holding[core];
        let i = h.site.swap(NO_SITE, Ordering::Relaxed);
        if i == NO_SITE {
            return;
        }
        let held = now.saturating_sub(h.since.load(Ordering::Relaxed));
        let c = &self.sites[i].counters;
        c.holds.fetch_add(1, Ordering::Relaxed);
        c.hold_total.fetch_add(held, Ordering::Relaxed);
        c.hold_max.fetch_max(held, Ordering::Relaxed);
        c.hold_min.fetch_min(held, Ordering::Relaxed);
        self.last_release_site.store(i, Ordering::Relaxed);
    }

    fn elision(&self, site: Site, event: ElisionEvent) {
        let c = &self.sites[self.slot_for(site)].counters;
        match event {
            ElisionEvent::Commit => c.commits.fetch_add(1, Ordering::Relaxed),
            ElisionEvent::Abort(cause) => c.aborts[cause.index()].fetch_add(1, Ordering::Relaxed),
            ElisionEvent::Fallback => c.fallbacks.fetch_add(1, Ordering::Relaxed),
        };
    }
}

/// Everything recorded for one (lock, site) pair; times in cycles.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SiteRecord {
    /// Lock name.
    pub lock: String,
    /// Source file of the acquisition site.
    pub file: String,
    /// Source line of the acquisition site.
    pub line: u32,
    /// Acquisitions of the real lock at this site.
    pub acquisitions: u64,
    /// Acquisitions that found the lock held.
    pub contended: u64,
    /// Cycles spent waiting, in total.
    pub wait_total: u64,
    /// Longest wait.
    pub wait_max: u64,
    /// Shortest wait.
    pub wait_min: u64,
    /// Cycles held, in total.
    pub hold_total: u64,
    /// Longest hold.
    pub hold_max: u64,
    /// Shortest hold.
    pub hold_min: u64,
    /// Completed holds (releases) at this site.
    pub holds: u64,
    /// Times another core had to wait while this site held the lock
    /// (FreeBSD's `cnt_hold`).
    pub cnt_hold: u64,
    /// Acquisitions by a different core than the previous one (lock_stat's
    /// `acq-bounces`: the lock's line moved).
    pub acq_bounces: u64,
    /// Contended acquisitions that also bounced (`con-bounces`).
    pub con_bounces: u64,
    /// Elided critical sections that committed.
    pub commits: u64,
    /// Transaction aborts: conflict.
    pub aborts_conflict: u64,
    /// Transaction aborts: capacity.
    pub aborts_capacity: u64,
    /// Transaction aborts: explicit, lock busy.
    pub aborts_lock_busy: u64,
    /// Transaction aborts: any other cause.
    pub aborts_other: u64,
    /// Elided acquisitions that gave up and took the lock.
    pub fallbacks: u64,
}

impl SiteRecord {
    /// Mean wait per acquisition.
    pub fn wait_avg(&self) -> u64 {
        self.wait_total.checked_div(self.acquisitions).unwrap_or(0)
    }
    /// Mean hold per completed hold.
    pub fn hold_avg(&self) -> u64 {
        self.hold_total.checked_div(self.holds).unwrap_or(0)
    }
    /// All aborts.
    pub fn aborts(&self) -> u64 {
        self.aborts_conflict + self.aborts_capacity + self.aborts_lock_busy + self.aborts_other
    }
}
