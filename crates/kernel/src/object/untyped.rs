//! Untyped memory: a byte budget from which objects are retyped. Creating an
//! object charges its size to the untyped; destroying it gives the bytes back.
//! (seL4 reclaims untyped memory only by revoking the untyped; accounting
//! per object is simpler and exact, and slab slots are never shared.)

use crate::abi::{Error, InvocationLabel, ObjectType, Word, RETYPE_MAX_OBJECTS};
use crate::args::Args;
use crate::object::frame_pool::POOLED_BITS;
use crate::object::{CNode, Cap, CapObj, Endpoint, Frame, Header, Notification, Ref, Reply, SlotAddr, Tcb, VSpace};
use crate::outcome::Outcome;
use crate::state::Ctx;
use crate::waits::Waits;

/// Untyped memory.
#[derive(Debug)]
pub(crate) struct Untyped {
    pub size: u64,
    /// Bytes not charged to live objects.
    pub free: u64,
    /// Objects carved from it that are alive.
    pub live: u32,
}

impl Untyped {
    pub fn new(size: u64) -> Self {
        Self { size, free: size, live: 0 }
    }
}

/// A decoded retype.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RetypeOp {
    pub untyped: Ref<Untyped>,
    pub src: SlotAddr,
    pub ty: ObjectType,
    pub size_bits: u8,
    pub bytes: u64,
    pub dest: Ref<CNode>,
    pub first: u32,
    pub count: u32,
}

impl<W: Waits> Ctx<'_, W> {
    pub(crate) fn decode_untyped(
        &mut self,
        caller: Ref<Tcb>,
        untyped: Ref<Untyped>,
        src: SlotAddr,
        label: InvocationLabel,
        args: &Args,
    ) -> Result<RetypeOp, Error> {
        let op = self.decode_retype_args(caller, untyped, src, label, args)?;
        self.check_retype_memory(op)?;
        Ok(op)
    }

    /// A retype's arguments and destination, checked in seL4's order up to
    /// (not including) the memory: read-only, so `lockfree`'s shared path
    /// decodes with it too (`lockfree/pages.rs`).
    pub(crate) fn decode_retype_args(
        &mut self,
        caller: Ref<Tcb>,
        untyped: Ref<Untyped>,
        src: SlotAddr,
        label: InvocationLabel,
        args: &Args,
    ) -> Result<RetypeOp, Error> {
        if label != InvocationLabel::UntypedRetype {
            return Err(Error::IllegalOperation);
        }
        let ty = ObjectType::from_word(args.word(0)?).ok_or(Error::InvalidArgument)?;
        let size_bits = args.word(1)?;
        let dest_root = args.word(2)?;
        let first = args.word(3)?;
        let count = args.word(4)?;
        let bytes = ty.size_bytes(size_bits).ok_or(Error::RangeError)?;
        if count == 0 || count > RETYPE_MAX_OBJECTS {
            return Err(Error::RangeError);
        }
        let dest = self.lookup_cnode_arg(caller, dest_root)?;
        let slots = self.read(dest).ok_or(Error::FailedLookup)?.slots.len() as Word;
        if first >= slots || count > slots - first {
            return Err(Error::RangeError);
        }
        for i in first..first + count {
            if !self.cap_at(SlotAddr { cnode: dest, index: i as u32 }).obj.is_null() {
                return Err(Error::DeleteFirst);
            }
        }
        if !self.live(untyped) {
            return Err(Error::InvalidCapability);
        }
        Ok(RetypeOp {
            untyped,
            src,
            ty,
            size_bits: size_bits as u8,
            bytes,
            dest,
            first: first as u32,
            count: count as u32,
        })
    }

    /// Whether the untyped has the memory, and the slab the room, for `op`
    /// (management: it counts the frames on free lists).
    fn check_retype_memory(&mut self, op: RetypeOp) -> Result<(), Error> {
        let (untyped, ty, bytes, count) = (op.untyped, op.ty, op.bytes, u64::from(op.count));
        // Frames on free lists count as free memory and free slab slots
        // (`frame_pool.rs`): the lists never change what succeeds. They are
        // walked only when the rest does not suffice.
        let need = bytes.checked_mul(count).ok_or(Error::NotEnoughMemory)?;
        let mut free = self.get(untyped).ok_or(Error::InvalidCapability)?.free;
        if need > free {
            free += (self.pooled_frames(untyped).len() as u64) << POOLED_BITS;
        }
        if need > free {
            return Err(Error::NotEnoughMemory);
        }
        let room = match ty {
            ObjectType::Untyped => self.free_slots::<Untyped>(),
            ObjectType::Tcb => self.free_slots::<Tcb>(),
            ObjectType::Endpoint => self.free_slots::<Endpoint>(),
            ObjectType::Notification => self.free_slots::<Notification>(),
            ObjectType::CNode => self.free_slots::<CNode>(),
            ObjectType::Reply => self.free_slots::<Reply>(),
            ObjectType::Frame => match self.free_slots::<Frame>() {
                n if n as u64 >= count => n,
                n => n + self.pooled_frame_count(),
            },
            ObjectType::VSpace => self.free_slots::<VSpace>(),
        };
        if (room as Word) < count {
            return Err(Error::NotEnoughMemory);
        }
        Ok(())
    }

    pub(crate) fn invoke_untyped(&mut self, caller: Ref<Tcb>, op: RetypeOp) -> Outcome {
        let core = self.get(caller).map_or(0, |t| t.core);
        let hdr = Header { caps: 0, parent: Some(op.untyped), bytes: op.bytes };
        let pooled = op.ty == ObjectType::Frame && op.size_bits == POOLED_BITS;
        for i in 0..op.count {
            let dest = SlotAddr { cnode: op.dest, index: op.first + i };
            if let Some(f) = pooled.then(|| self.take_pooled_frame(op.untyped, &|_| {})).flatten() {
                self.insert_cap(Some(op.src), dest, Cap::new(CapObj::Frame(f)));
                continue;
            }
            self.make_room(&op);
            let obj = match op.ty {
                ObjectType::Untyped => self.alloc(Untyped::new(op.bytes), hdr).map(CapObj::Untyped),
                ObjectType::Tcb => {
                    let mut t = Tcb::new(core);
                    t.slice = self.s.config.timeslice_ticks;
                    let r = self.alloc(t, hdr);
                    if let Some(r) = r {
                        *self.ipc(r) = crate::abi::IpcBuffer::new();
                        W::created(self, r, core);
                    }
                    r.map(CapObj::Tcb)
                }
                ObjectType::Endpoint => self.alloc(Endpoint::new(), hdr).map(CapObj::Endpoint),
                ObjectType::Notification => self.alloc(Notification::new(), hdr).map(CapObj::Notification),
                ObjectType::CNode => self.alloc(CNode::new(op.size_bits), hdr).map(CapObj::CNode),
                ObjectType::Reply => self.alloc(Reply::new(), hdr).map(CapObj::Reply),
                ObjectType::Frame => self.alloc(Frame::new(op.size_bits), hdr).map(CapObj::Frame),
                ObjectType::VSpace => {
                    let r = self.alloc(VSpace::new(), hdr);
                    if let Some(bits) = r.and_then(|r| self.vspace_cores(r.index())) {
                        bits.store(0, core::sync::atomic::Ordering::Relaxed);
                    }
                    r.map(CapObj::VSpace)
                }
            };
            // Decode checked the memory and the slab's room; `None` cannot
            // happen.
            let Some(obj) = obj else { break };
            if let Some(u) = self.get(op.untyped) {
                u.free -= op.bytes;
                u.live += 1;
            }
            self.insert_cap(Some(op.src), dest, Cap::new(obj));
        }
        Outcome::Done
    }

    /// Before carving one object of `op`: give back the frames on free lists
    /// that decode counted as the untyped's memory or as frame slots.
    fn make_room(&mut self, op: &RetypeOp) {
        if self.get(op.untyped).is_some_and(|u| u.free < op.bytes) {
            self.drain_frame_pool(op.untyped);
        }
        if op.ty == ObjectType::Frame && self.free_slots::<Frame>() == 0 {
            self.reclaim_frame_pools();
        }
    }
}
