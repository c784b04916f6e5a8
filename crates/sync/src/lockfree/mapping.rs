//! Address-space mappings without locks: page tables whose entries are
//! *claims*, validated by the mapped frame's own word (Synthesis's "add
//! mapping by CAS against an empty entry", seed `004` §5.3, with a second
//! word the seed did not have).
//!
//! Synthesis maps a page by one CAS of an empty page-table entry, allocates
//! a missing intermediate table by CAS and frees its own table if another
//! CPU installed one first. A granule frame also records *where* it is
//! mapped (one mapping per frame, as the capability to it allows), so a
//! mapping changes two words — the frame's and the table entry — and x86-64
//! has no CAS over two unrelated addresses (the 68030's `CAS2`). We make one
//! of them the truth and the other a reservation anyone can check:
//!
//! * **The frame word is the truth.** Frame `f` is mapped at `(space,
//!   page)` exactly when its word says `MAPPED` there. Every operation
//!   linearises at a CAS of a frame word.
//! * **A table entry is a claim** `(frame, seq)`: it reserves the slot for
//!   that frame's mapping attempt number `seq`. A claim is *valid* while
//!   the frame's word says `MAPPING` or `MAPPED` with the same `seq`;
//!   otherwise it is stale, and whoever meets it clears it.
//!
//! A map publishes its request in the frame word (`MAPPING`, a fresh
//! `seq`, the target), so any core that meets it can *help* it to a
//! decision instead of waiting: put the claim in the empty slot, then CAS
//! the frame word to `MAPPED` (the slot held our claim) or back to
//! `UNMAPPED` with the reason (the slot held another frame's valid claim,
//! or no table could be had). Exactly one of those CASes succeeds, and it is
//! the map's linearisation point. Helpers that reserved the slot for a
//! request that was meanwhile decided remove their claim before they return.
//!
//! # Word layouts
//!
//! Frame word (`AtomicU64`, one per frame slot, kept across reuse of the
//! slot so a stale claim never matches a new frame):
//!
//! | bits | field |
//! |---|---|
//! | 0..2 | state: `UNMAPPED` 0, `MAPPING` 1, `MAPPED` 2 |
//! | 2..4 | why the last attempt failed: 0 none, 1 slot occupied, 2 no table |
//! | 4 | large: the mapping is a root entry (a 2 MiB frame) |
//! | 5..23 | page: the page number in the space (`vaddr >> 12`) |
//! | 23..35 | space |
//! | 35..41 | core: the core whose map made the request |
//! | 41..64 | seq: the attempt number (23 bits; wraps after 2^23 maps of one frame) |
//!
//! Table entry (`AtomicU64`):
//!
//! | value | meaning |
//! |---|---|
//! | 0 | empty |
//! | `TABLE` (bit 63) \| leaf index | a leaf table (root entries only) |
//! | `CLAIM` (bit 62) \| seq << 32 \| frame | a claim |
//!
//! Outcome record (`AtomicU64`, one per core): `frame << 32 | seq << 3 |
//! status`, status 0 collected, 1 undecided, 2 mapped, 3 occupied, 4 no
//! table.
//!
//! # Telling the requester what happened
//!
//! The requester learns its outcome from the frame word when it still
//! shows the request's `seq` (`MAPPED`; `UNMAPPED` with a reason; or
//! `UNMAPPED` without one: mapped, and unmapped since). The word leaves
//! that `seq` only when a new map of the same frame starts, and that map
//! first copies the decided outcome into the old requester's *outcome
//! record* (a CAS from "undecided", so late copies do nothing). A requester
//! preempted across any number of later maps of its frame still finds its
//! answer there. The requester writes its record with plain stores (it is
//! the only one that starts requests in it) and costs no atomic when
//! nobody overtook it.
//!
//! # Tables
//!
//! Each space has a root of `2^root_bits` entries; a root entry holds a
//! leaf table of `2^leaf_bits` entries (4 KiB pages) or a claim for a large
//! page. Leaf tables come from a type-stable pool shared by all spaces: a
//! Treiber stack with a version tag against ABA ([`super::tagged`]). A
//! small map that finds the root entry empty pops a table (all empty),
//! CASes it in, and pushes it back if another core's table won. A table,
//! once installed, stays until its space is cleared ([`Mappings::clear_space`],
//! run with every other user excluded): a region that has a table refuses a
//! large page, as a page directory entry pointing at a page table does.
//!
//! A core holds a table *in transit* between its pop and its install (or
//! its push back), so the pool can look empty for a moment while tables
//! are free: a map that needs a table may then fail with
//! [`MapError::NoTable`] although a sequential run would not. Sizing the
//! pool with one spare table per core beyond what the spaces need rules
//! this out; the kernel does (`max_page_tables` + cores).
//!
//! # What is lock-free, and the bound on helping
//!
//! Every loop retries only after some CAS of another core succeeded (a
//! request decided, a claim placed or cleared, a table installed), so some
//! operation always completes. Helping is one level deep: a request meets
//! at most one other frame's request (the one whose claim holds its slot),
//! and deciding that one needs no further help (its claim is in place).
//!
//! # What the caller guarantees
//!
//! Frame and space indices are in range; a frame is one size while its
//! slot lives; `clear_space` and `forget_frame` run with no other operation
//! on the object in flight (the kernel runs them with the whole kernel
//! held). Breaking these gives wrong answers, never memory unsafety: the
//! module has no `unsafe`.

use alloc::boxed::Box;

use super::interference::NoInterference;
use super::link::Rmw;
use super::tagged::{TaggedHead, NIL};
use crate::primitive::{AtomicU64, Ordering};

/// The size of a small page: 4 KiB.
pub const PAGE_BITS: u32 = 12;

const UNMAPPED: u64 = 0;
const MAPPING: u64 = 1;
const MAPPED: u64 = 2;
const STATE: u64 = 3;
const WHY_SHIFT: u32 = 2;
const LARGE: u64 = 1 << 4;
const PAGE_SHIFT: u32 = 5;
const PAGE_MASK: u64 = (1 << 18) - 1;
const SPACE_SHIFT: u32 = 23;
const SPACE_MASK: u64 = (1 << 12) - 1;
const CORE_SHIFT: u32 = 35;
const CORE_MASK: u64 = (1 << 6) - 1;
const SEQ_SHIFT: u32 = 41;
const SEQ_MASK: u64 = (1 << 23) - 1;

const IDLE: u64 = 0;
const UNDECIDED: u64 = 1;
const OUT_MAPPED: u64 = 2;
const OUT_OCCUPIED: u64 = 3;
const OUT_NO_TABLE: u64 = 4;

const TABLE: u64 = 1 << 63;
const CLAIM: u64 = 1 << 62;

/// Most cores a [`Mappings`] can serve (the frame word's core field).
pub const MAX_CORES: usize = 1 << 6;
/// Most spaces a [`Mappings`] can hold (the frame word's space field).
pub const MAX_SPACES: usize = 1 << 12;
/// Most page-number bits a space can have (the frame word's page field).
pub const MAX_PAGE_BITS: u32 = 18;

/// The shape of every space's page table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// log2 of the root's entries.
    pub root_bits: u32,
    /// log2 of a leaf table's entries; a root entry maps `2^(leaf_bits + 12)` bytes.
    pub leaf_bits: u32,
}

impl Geometry {
    /// x86-64's lower two levels: 512 × 512 entries, 4 KiB and 2 MiB pages,
    /// 1 GiB per space.
    pub const X86_64: Self = Self { root_bits: 9, leaf_bits: 9 };

    /// The bytes a space covers.
    pub const fn space_bytes(self) -> u64 {
        1 << (self.root_bits + self.leaf_bits + PAGE_BITS)
    }

    /// log2 of a large page's bytes (what one root entry maps).
    pub const fn large_bits(self) -> u32 {
        self.leaf_bits + PAGE_BITS
    }
}

/// Why a map failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapError {
    /// The frame is mapped already.
    FrameMapped,
    /// Another frame is mapped there, or (for a large page) a leaf table is.
    Occupied,
    /// A leaf table was needed and the pool is empty.
    NoTable,
}

/// Where a frame is mapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapped {
    pub space: u32,
    pub vaddr: u64,
    pub large: bool,
}

/// A decoded frame word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FrameWord(u64);

impl FrameWord {
    fn state(self) -> u64 {
        self.0 & STATE
    }
    fn seq(self) -> u64 {
        self.0 >> SEQ_SHIFT
    }
    fn space(self) -> u32 {
        ((self.0 >> SPACE_SHIFT) & SPACE_MASK) as u32
    }
    fn page(self) -> u64 {
        (self.0 >> PAGE_SHIFT) & PAGE_MASK
    }
    fn large(self) -> bool {
        self.0 & LARGE != 0
    }
    /// Where this word's mapping is (meaningful when it is `MAPPED`).
    fn mapped(self) -> Mapped {
        Mapped { space: self.space(), vaddr: self.page() << PAGE_BITS, large: self.large() }
    }
    fn why(self) -> u64 {
        (self.0 >> WHY_SHIFT) & 3
    }
    fn core(self) -> usize {
        ((self.0 >> CORE_SHIFT) & CORE_MASK) as usize
    }
    /// The outcome status of this word's (decided) request.
    fn outcome(self) -> u64 {
        match (self.state(), self.why()) {
            (MAPPING, _) => UNDECIDED,
            (_, WHY_NO_TABLE) => OUT_NO_TABLE,
            (UNMAPPED, WHY_OCCUPIED) => OUT_OCCUPIED,
            _ => OUT_MAPPED,
        }
    }
    /// This word with a new state (and failure reason), target kept.
    fn with(self, state: u64, why: u64) -> u64 {
        (self.0 & !(STATE | (3 << WHY_SHIFT))) | state | (why << WHY_SHIFT)
    }
    fn request(seq: u64, core: usize, space: u32, page: u64, large: bool) -> u64 {
        ((seq & SEQ_MASK) << SEQ_SHIFT)
            | ((core as u64 & CORE_MASK) << CORE_SHIFT)
            | (u64::from(space) << SPACE_SHIFT)
            | (page << PAGE_SHIFT)
            | if large { LARGE } else { 0 }
            | MAPPING
    }
    /// The claim this word's request places.
    fn claim(self, frame: u32) -> u64 {
        CLAIM | (self.seq() << 32) | u64::from(frame)
    }
}

fn claim_frame(entry: u64) -> u32 {
    entry as u32
}

fn claim_seq(entry: u64) -> u64 {
    (entry >> 32) & SEQ_MASK
}

fn record(frame: u32, seq: u64, status: u64) -> u64 {
    (u64::from(frame) << 32) | ((seq & SEQ_MASK) << 3) | status
}

const WHY_OCCUPIED: u64 = 1;
const WHY_NO_TABLE: u64 = 2;

/// What a look at a slot found.
enum Slot<'a> {
    /// The entry a request's claim goes in.
    Entry(&'a AtomicU64),
    /// The request cannot be placed (decide it as failed with this reason).
    Refused(u64),
    /// Something changed under us: look again.
    Retry,
}

/// Every space's page table and every frame's word (see the module
/// documentation).
#[derive(Debug)]
pub struct Mappings {
    geometry: Geometry,
    roots: Box<[AtomicU64]>,
    leaves: Box<[AtomicU64]>,
    /// Links of the leaf-table pool (one per table).
    pool_links: Box<[AtomicU64]>,
    pool: TaggedHead,
    frames: Box<[AtomicU64]>,
    outcomes: Box<[AtomicU64]>,
}

impl Mappings {
    /// Page tables for `spaces` spaces shaped `geometry`, `tables` leaf
    /// tables in the shared pool, words for `frames` frames, and outcome
    /// records for `cores` cores.
    ///
    /// # Panics
    /// If `spaces` exceeds [`MAX_SPACES`], `cores` [`MAX_CORES`], the
    /// geometry more than [`MAX_PAGE_BITS`] page bits, or `frames` or
    /// `tables` 2^31 (the kernel checks its configuration against these
    /// first).
    pub fn new(geometry: Geometry, cores: usize, spaces: usize, tables: usize, frames: usize) -> Self {
        assert!(spaces <= MAX_SPACES, "at most {MAX_SPACES} spaces");
        assert!(cores <= MAX_CORES, "at most {MAX_CORES} cores");
        assert!(geometry.root_bits + geometry.leaf_bits <= MAX_PAGE_BITS, "too many page bits");
        assert!(frames < 1 << 31 && tables < 1 << 31, "too many frames or tables");
        let words = |n: usize| (0..n).map(|_| AtomicU64::new(0)).collect::<Box<[_]>>();
        let pool_links: Box<[AtomicU64]> =
            (0..tables).map(|i| AtomicU64::new(if i + 1 < tables { (i + 1) as u64 } else { u64::from(NIL) })).collect();
        Self {
            geometry,
            roots: words(spaces << geometry.root_bits),
            leaves: words(tables << geometry.leaf_bits),
            pool_links,
            pool: TaggedHead::new(if tables == 0 { NIL } else { 0 }),
            frames: words(frames),
            outcomes: words(cores),
        }
    }

    /// The table shape.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// Map `frame` (a large page if `large`) in `space` at `vaddr`, which
    /// the caller has checked is inside the space and aligned to the
    /// page's size; `core` is the calling core (one map at a time per
    /// core). `rmw` hears of every atomic read-modify-write.
    pub fn map(
        &self,
        core: usize,
        frame: u32,
        space: u32,
        vaddr: u64,
        large: bool,
        rmw: &impl Fn(Rmw),
    ) -> Result<(), MapError> {
        let Some(out) = self.outcomes.get(core) else { return Err(MapError::Occupied) };
        let page = vaddr >> PAGE_BITS;
        let mut seen = self.frame_word(frame);
        let request = loop {
            match seen.state() {
                MAPPING => {
                    self.help(frame, seen, rmw);
                    seen = self.frame_word(frame);
                }
                MAPPED => return Err(MapError::FrameMapped),
                _ => {
                    // The last request's requester may not have read its
                    // outcome yet: leave it in its record first.
                    self.hand_over(frame, seen, rmw);
                    let seq = seen.seq().wrapping_add(1) & SEQ_MASK;
                    out.store(record(frame, seq, UNDECIDED), Ordering::Relaxed);
                    let request = FrameWord::request(seq, core, space, page, large);
                    match self.cas_frame(frame, seen, request, rmw) {
                        Ok(()) => break FrameWord(request),
                        Err(now) => seen = now,
                    }
                }
            }
        };
        let now = self.help(frame, request, rmw);
        let status = if now.seq() == request.seq() {
            now.outcome()
        } else {
            // A later map of this frame handed the outcome over before it
            // moved the word on.
            out.load(Ordering::Acquire) & 7
        };
        out.store(IDLE, Ordering::Relaxed);
        match status {
            OUT_MAPPED => Ok(()),
            OUT_NO_TABLE => Err(MapError::NoTable),
            _ => Err(MapError::Occupied),
        }
    }

    /// Unmap `frame`; where it was mapped, if it was.
    pub fn unmap(&self, frame: u32, rmw: &impl Fn(Rmw)) -> Option<Mapped> {
        let mut seen = self.frame_word(frame);
        loop {
            match seen.state() {
                MAPPING => {
                    self.help(frame, seen, rmw);
                    seen = self.frame_word(frame);
                }
                MAPPED => match self.cas_frame(frame, seen, seen.with(UNMAPPED, 0), rmw) {
                    Ok(()) => {
                        // The mapping is gone (the claim is stale now);
                        // take the claim out of the table.
                        if let Some(entry) = self.existing_slot(seen) {
                            rmw(Rmw::Cmpxchg);
                            let _ = entry.compare_exchange(seen.claim(frame), 0, Ordering::AcqRel, Ordering::Acquire);
                        }
                        return Some(seen.mapped());
                    }
                    Err(now) => seen = now,
                },
                _ => return None,
            }
        }
    }

    /// Where `frame` is mapped (a request in flight is helped to its end
    /// first).
    pub fn mapped(&self, frame: u32, rmw: &impl Fn(Rmw)) -> Option<Mapped> {
        loop {
            let seen = self.frame_word(frame);
            match seen.state() {
                MAPPING => {
                    self.help(frame, seen, rmw);
                }
                MAPPED => return Some(seen.mapped()),
                _ => return None,
            }
        }
    }

    /// The frame mapped in `space` at the page holding `vaddr`, if any
    /// (a request in flight counts as not mapped yet).
    pub fn translate(&self, space: u32, vaddr: u64) -> Option<u32> {
        let page = vaddr >> PAGE_BITS;
        let root = self.root(space, page >> self.geometry.leaf_bits)?.load(Ordering::Acquire);
        let entry = if root & TABLE != 0 { self.leaf(root, page)?.load(Ordering::Acquire) } else { root };
        let f = claim_frame(entry);
        (entry & CLAIM != 0 && self.valid(entry) == Some(MAPPED)).then_some(f)
    }

    /// Unmap every frame of `space` and give its tables back to the pool.
    /// Only with no other operation in flight (see the module documentation).
    pub fn clear_space(&self, space: u32) {
        let n = 1usize << self.geometry.root_bits;
        for r in 0..n {
            let Some(root) = self.root(space, r as u64) else { return };
            let e = root.swap(0, Ordering::AcqRel);
            if e & TABLE != 0 {
                let t = (e & !TABLE) as u32;
                let base = (t as usize) << self.geometry.leaf_bits;
                for i in 0..(1usize << self.geometry.leaf_bits) {
                    if let Some(leaf) = self.leaves.get(base + i) {
                        self.drop_claim(leaf.swap(0, Ordering::AcqRel));
                    }
                }
                self.push_table(t, &|_| {});
            } else {
                self.drop_claim(e);
            }
        }
    }

    /// Unmap `frame` before its slot is reused; where it was mapped, if it
    /// was. Only with no other operation in flight.
    pub fn forget_frame(&self, frame: u32) -> Option<Mapped> {
        self.unmap(frame, &|_| {})
    }

    /// The consistency of a quiescent object (no operation in flight), for
    /// the kernel's invariant checker: every frame's state is final, each
    /// mapped frame's claim is in its slot, and every claim in a table is
    /// valid. `Err` names the first frame or slot found wrong.
    pub fn check_quiescent(&self) -> Result<(), &'static str> {
        for (f, w) in self.frames.iter().enumerate() {
            let w = FrameWord(w.load(Ordering::Acquire));
            match w.state() {
                MAPPING => return Err("a map request is still in flight"),
                MAPPED => {
                    let here = self.existing_slot(w).map(|e| e.load(Ordering::Acquire));
                    if here != Some(w.claim(f as u32)) {
                        return Err("a mapped frame's claim is not in its slot");
                    }
                }
                _ => {}
            }
        }
        // Most table words hold no claim: a chunk's words are OR-ed and
        // tested at once (the check runs after each of many system calls
        // in tests, over every table).
        for chunk in self.roots.chunks(16).chain(self.leaves.chunks(16)) {
            if chunk.iter().fold(0, |any, e| any | e.load(Ordering::Acquire)) & CLAIM == 0 {
                continue;
            }
            for e in chunk.iter().map(|e| e.load(Ordering::Acquire)).filter(|e| e & CLAIM != 0) {
                if self.valid(e) != Some(MAPPED) {
                    return Err("a table holds a stale claim");
                }
            }
        }
        Ok(())
    }

    /// Leaf tables left in the pool.
    pub fn free_tables(&self) -> usize {
        let mut n = 0;
        let mut i = self.pool.load().0;
        while i != NIL && n <= self.pool_links.len() {
            n += 1;
            i = self.pool_links.get(i as usize).map_or(NIL, |l| l.load(Ordering::Acquire) as u32);
        }
        n
    }

    /// Copy the decided request in `w` into its requester's outcome record,
    /// if the requester has not collected it (see "Telling the requester").
    fn hand_over(&self, frame: u32, w: FrameWord, rmw: &impl Fn(Rmw)) {
        let Some(out) = self.outcomes.get(w.core()) else { return };
        let undecided = record(frame, w.seq(), UNDECIDED);
        if out.load(Ordering::Acquire) == undecided {
            rmw(Rmw::Cmpxchg);
            let _ = out.compare_exchange(
                undecided,
                record(frame, w.seq(), w.outcome()),
                Ordering::AcqRel,
                Ordering::Acquire,
            );
        }
    }

    fn frame_word(&self, frame: u32) -> FrameWord {
        FrameWord(self.frames.get(frame as usize).map_or(0, |w| w.load(Ordering::Acquire)))
    }

    fn cas_frame(&self, frame: u32, seen: FrameWord, new: u64, rmw: &impl Fn(Rmw)) -> Result<(), FrameWord> {
        let Some(w) = self.frames.get(frame as usize) else { return Err(FrameWord(0)) };
        rmw(Rmw::Cmpxchg);
        w.compare_exchange(seen.0, new, Ordering::AcqRel, Ordering::Acquire).map(|_| ()).map_err(FrameWord)
    }

    /// The state of the request a claim belongs to, if it is still that
    /// request's (`MAPPING` or `MAPPED`); `None`: the claim is stale.
    fn valid(&self, claim: u64) -> Option<u64> {
        let w = self.frame_word(claim_frame(claim));
        (w.seq() == claim_seq(claim) && w.state() != UNMAPPED).then_some(w.state())
    }

    /// A claim taken out by `clear_space`: its frame is unmapped if the
    /// claim was its mapping.
    fn drop_claim(&self, e: u64) {
        if e & CLAIM == 0 || self.valid(e).is_none() {
            return;
        }
        if let Some(w) = self.frames.get(claim_frame(e) as usize) {
            let seen = FrameWord(w.load(Ordering::Acquire));
            w.store(seen.with(UNMAPPED, 0), Ordering::Release);
        }
    }

    fn root(&self, space: u32, index: u64) -> Option<&AtomicU64> {
        let i = ((space as usize) << self.geometry.root_bits) + usize::try_from(index).ok()?;
        if index >> self.geometry.root_bits != 0 {
            return None;
        }
        self.roots.get(i)
    }

    fn leaf(&self, root_entry: u64, page: u64) -> Option<&AtomicU64> {
        let t = (root_entry & !TABLE) as usize;
        let i = (page & ((1 << self.geometry.leaf_bits) - 1)) as usize;
        self.leaves.get((t << self.geometry.leaf_bits) + i)
    }

    /// The slot of the request in `w`, without creating a table.
    fn existing_slot(&self, w: FrameWord) -> Option<&AtomicU64> {
        let root = self.root(w.space(), w.page() >> self.geometry.leaf_bits)?;
        if w.large() {
            return Some(root);
        }
        let e = root.load(Ordering::Acquire);
        if e & TABLE != 0 {
            self.leaf(e, w.page())
        } else {
            None
        }
    }

    /// Find (or make room for) the slot of the request in `w`.
    fn slot(&self, w: FrameWord, rmw: &impl Fn(Rmw)) -> Slot<'_> {
        let Some(root) = self.root(w.space(), w.page() >> self.geometry.leaf_bits) else {
            return Slot::Refused(WHY_OCCUPIED);
        };
        if w.large() {
            return Slot::Entry(root);
        }
        let e = root.load(Ordering::Acquire);
        if e & TABLE != 0 {
            return self.leaf(e, w.page()).map_or(Slot::Refused(WHY_NO_TABLE), Slot::Entry);
        }
        if e & CLAIM != 0 {
            // A large page's claim covers the region.
            return match self.valid(e) {
                Some(_) => {
                    self.settle(e, rmw);
                    Slot::Refused(WHY_OCCUPIED)
                }
                None => {
                    rmw(Rmw::Cmpxchg);
                    let _ = root.compare_exchange(e, 0, Ordering::AcqRel, Ordering::Acquire);
                    Slot::Retry
                }
            };
        }
        // No table yet: install one of the pool's (all its entries empty).
        let Some(t) = self.pop_table(rmw) else { return Slot::Refused(WHY_NO_TABLE) };
        rmw(Rmw::Cmpxchg);
        if root.compare_exchange(0, TABLE | u64::from(t), Ordering::AcqRel, Ordering::Acquire).is_err() {
            // Another core's table (or a large claim) won: ours goes back.
            self.push_table(t, rmw);
        }
        Slot::Retry
    }

    /// Make a valid claim's request `MAPPED` (its claim is in its slot, so
    /// it succeeds); nothing if it is decided already.
    fn settle(&self, claim: u64, rmw: &impl Fn(Rmw)) {
        let f = claim_frame(claim);
        let w = self.frame_word(f);
        if w.state() == MAPPING && w.seq() == claim_seq(claim) {
            let _ = self.cas_frame(f, w, w.with(MAPPED, 0), rmw);
        }
    }

    /// Drive the request `request` of `frame` to its decision and return the
    /// frame word that decided it (see the module documentation).
    fn help(&self, frame: u32, request: FrameWord, rmw: &impl Fn(Rmw)) -> FrameWord {
        let claim = request.claim(frame);
        let mut placed: Option<&AtomicU64> = None;
        let decided = loop {
            let w = self.frame_word(frame);
            if w.state() != MAPPING || w.seq() != request.seq() {
                break w;
            }
            let entry = match self.slot(w, rmw) {
                Slot::Entry(e) => e,
                Slot::Retry => continue,
                Slot::Refused(why) => {
                    let _ = self.cas_frame(frame, w, w.with(UNMAPPED, why), rmw);
                    continue;
                }
            };
            let e = entry.load(Ordering::Acquire);
            if e == claim {
                let _ = self.cas_frame(frame, w, w.with(MAPPED, 0), rmw);
            } else if e == 0 {
                rmw(Rmw::Cmpxchg);
                if entry.compare_exchange(0, claim, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                    placed = Some(entry);
                }
            } else if e & TABLE != 0 {
                // A large request over a region with a leaf table.
                let _ = self.cas_frame(frame, w, w.with(UNMAPPED, WHY_OCCUPIED), rmw);
            } else if self.valid(e).is_some() {
                // Another frame's request holds the slot: it wins.
                self.settle(e, rmw);
                let _ = self.cas_frame(frame, w, w.with(UNMAPPED, WHY_OCCUPIED), rmw);
            } else {
                rmw(Rmw::Cmpxchg);
                let _ = entry.compare_exchange(e, 0, Ordering::AcqRel, Ordering::Acquire);
            }
        };
        // A claim we placed for a request that failed, or that has been
        // undone since, is stale: take it out (others would, on meeting it).
        if let Some(entry) = placed {
            if !(decided.state() == MAPPED && decided.seq() == request.seq()) {
                rmw(Rmw::Cmpxchg);
                let _ = entry.compare_exchange(claim, 0, Ordering::AcqRel, Ordering::Acquire);
            }
        }
        decided
    }

    fn pop_table(&self, rmw: &impl Fn(Rmw)) -> Option<u32> {
        rmw(Rmw::Cmpxchg16b);
        let (t, _) = self.pool.pop(|i| &self.pool_links[i as usize], &mut NoInterference);
        t
    }

    fn push_table(&self, t: u32, rmw: &impl Fn(Rmw)) {
        rmw(Rmw::Cmpxchg16b);
        self.pool.push(|i| &self.pool_links[i as usize], t, &mut NoInterference);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn quiet(_: Rmw) {}

    fn small() -> Mappings {
        Mappings::new(Geometry { root_bits: 2, leaf_bits: 2 }, 2, 2, 2, 8)
    }

    #[test]
    fn map_translate_unmap() {
        let m = small();
        assert_eq!(m.map(0, 0, 1, 0x5000, false, &quiet), Ok(()));
        assert_eq!(m.translate(1, 0x5000), Some(0));
        assert_eq!(m.translate(0, 0x5000), None);
        assert_eq!(m.mapped(0, &quiet), Some(Mapped { space: 1, vaddr: 0x5000, large: false }));
        assert_eq!(m.map(0, 0, 1, 0x6000, false, &quiet), Err(MapError::FrameMapped));
        assert_eq!(m.map(0, 1, 1, 0x5000, false, &quiet), Err(MapError::Occupied));
        assert!(m.unmap(0, &quiet).is_some());
        assert!(m.unmap(0, &quiet).is_none());
        assert_eq!(m.translate(1, 0x5000), None);
        assert_eq!(m.map(0, 1, 1, 0x5000, false, &quiet), Ok(()));
        m.check_quiescent().unwrap();
    }

    #[test]
    fn large_pages_and_tables_exclude_each_other() {
        let m = small();
        // A root entry covers 4 pages (16 KiB) here.
        assert_eq!(m.map(0, 2, 0, 0x4000, true, &quiet), Ok(()));
        assert_eq!(m.translate(0, 0x7000), Some(2));
        assert_eq!(m.map(0, 3, 0, 0x5000, false, &quiet), Err(MapError::Occupied));
        assert_eq!(m.map(0, 3, 0, 0x0000, false, &quiet), Ok(()));
        assert_eq!(m.map(0, 4, 0, 0x0000, true, &quiet), Err(MapError::Occupied), "a table is there");
        assert!(m.unmap(2, &quiet).is_some());
        assert_eq!(m.map(0, 3, 0, 0x5000, false, &quiet), Err(MapError::FrameMapped));
        assert_eq!(m.map(0, 4, 0, 0x5000, false, &quiet), Ok(()));
        m.check_quiescent().unwrap();
    }

    #[test]
    fn the_pool_runs_out_and_clear_space_refills_it() {
        let m = small();
        assert_eq!(m.free_tables(), 2);
        assert_eq!(m.map(0, 0, 0, 0x0000, false, &quiet), Ok(()));
        assert_eq!(m.map(0, 1, 0, 0x4000, false, &quiet), Ok(()));
        assert_eq!(m.map(0, 2, 0, 0x8000, false, &quiet), Err(MapError::NoTable));
        assert_eq!(m.mapped(2, &quiet), None);
        assert_eq!(m.free_tables(), 0);
        m.clear_space(0);
        assert_eq!(m.free_tables(), 2);
        assert_eq!(m.mapped(0, &quiet), None);
        assert_eq!(m.translate(0, 0), None);
        assert_eq!(m.map(0, 2, 0, 0x8000, false, &quiet), Ok(()));
        m.check_quiescent().unwrap();
    }

    #[test]
    fn a_stale_claim_is_cleared_by_whoever_meets_it() {
        let m = small();
        assert_eq!(m.map(0, 0, 0, 0x1000, false, &quiet), Ok(()));
        // Leave frame 0's claim behind as a late helper would.
        let w = m.frame_word(0);
        m.frames[0].store(w.with(UNMAPPED, 0), Ordering::Release);
        assert!(m.check_quiescent().is_err());
        assert_eq!(m.map(0, 1, 0, 0x1000, false, &quiet), Ok(()));
        assert_eq!(m.translate(0, 0x1000), Some(1));
        m.check_quiescent().unwrap();
    }

    #[test]
    fn a_request_in_flight_is_finished_by_the_next_comer() {
        let m = small();
        // Frame 0's request published, its owner gone before placing a
        // claim: frame 1 gets the slot, and frame 0's request fails.
        m.frames[0].store(FrameWord::request(1, 1, 0, 2, false), Ordering::Release);
        assert_eq!(m.map(0, 1, 0, 0x2000, false, &quiet), Ok(()));
        assert_eq!(m.mapped(0, &quiet), None);
        assert_eq!(m.frame_word(0).why(), WHY_OCCUPIED);
        // Frame 2's request with its claim placed: it wins over frame 3.
        let w = FrameWord(FrameWord::request(1, 1, 0, 3, false));
        m.frames[2].store(w.0, Ordering::Release);
        m.existing_slot(w).unwrap().store(w.claim(2), Ordering::Release);
        assert_eq!(m.map(0, 3, 0, 0x3000, false, &quiet), Err(MapError::Occupied));
        assert_eq!(m.mapped(2, &quiet), Some(Mapped { space: 0, vaddr: 0x3000, large: false }));
        m.check_quiescent().unwrap();
    }

    #[test]
    fn an_overtaken_requester_finds_its_outcome_in_its_record() {
        let m = small();
        // Core 1's request for frame 0 was decided (mapped) and unmapped,
        // and a new map by core 0 moves the word on before core 1 looks.
        let w = FrameWord(FrameWord::request(1, 1, 0, 1, false));
        m.outcomes[1].store(record(0, 1, UNDECIDED), Ordering::Release);
        m.frames[0].store(w.with(UNMAPPED, 0), Ordering::Release);
        assert_eq!(m.map(0, 0, 0, 0x2000, false, &quiet), Ok(()));
        assert_eq!(m.outcomes[1].load(Ordering::Acquire), record(0, 1, OUT_MAPPED));
        // A failed one hands over its reason.
        assert!(m.unmap(0, &quiet).is_some());
        m.outcomes[1].store(record(0, 3, UNDECIDED), Ordering::Release);
        let w = FrameWord(FrameWord::request(3, 1, 0, 1, false));
        m.frames[0].store(w.with(UNMAPPED, WHY_NO_TABLE), Ordering::Release);
        assert_eq!(m.map(0, 0, 0, 0x2000, false, &quiet), Ok(()));
        assert_eq!(m.outcomes[1].load(Ordering::Acquire), record(0, 3, OUT_NO_TABLE));
    }

    #[test]
    fn counts_three_cases_for_an_uncontended_map_and_two_for_an_unmap() {
        let m = small();
        assert_eq!(m.map(0, 0, 0, 0x0000, false, &quiet), Ok(()));
        let n = core::cell::Cell::new(0);
        let count = |_: Rmw| n.set(n.get() + 1);
        assert_eq!(m.map(0, 1, 0, 0x1000, false, &count), Ok(()));
        assert_eq!(n.get(), 3, "request, claim, decision");
        n.set(0);
        assert!(m.unmap(1, &count).is_some());
        assert_eq!(n.get(), 2, "decision, claim out");
    }
}
