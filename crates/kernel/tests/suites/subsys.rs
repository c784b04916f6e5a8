//! The sysctl registry and the kernel log: every operation and every error,
//! under this target's regime and every subsystem locking policy.

use crate::common::*;
use granule_kernel::abi::words::{push_bytes, push_oid, take_oid, unpack};
use granule_kernel::abi::*;
use granule_kernel::{SubsystemLocking, ThreadStatus};

/// A kernel of `cores` cores whose subsystems are locked by `p`.
fn sim(cores: usize, p: SubsystemLocking, klog: usize) -> Sim {
    let mut cfg = config(cores);
    cfg.subsystem_locking = p;
    cfg.klog_capacity = klog;
    let r = regime(&cfg);
    Sim::with(cfg, r)
}

/// Every policy.
fn each(f: impl Fn(SubsystemLocking)) {
    for p in SubsystemLocking::ALL {
        f(p);
    }
}

/// One subsystem call by the root on core 0: the reply's words, or the
/// error and message word 0 (the length needed, for `BufferTooSmall`).
fn call(s: &mut Sim, no: Sysno, op: Word, words: &[Word], cptr: Word, limit: Word) -> Result<Vec<Word>, (Error, Word)> {
    let root = s.root;
    s.buf(root).msg[..words.len()].copy_from_slice(words);
    s.sys(0, no, cptr, MessageInfo::new(op, 0, 0, words.len() as Word), limit);
    let b = s.buf(root);
    match b.result() {
        Ok(()) => Ok(b.msg[..b.info().length() as usize].to_vec()),
        Err(e) => Err((e, b.msg[0])),
    }
}

fn name(n: &str) -> Vec<Word> {
    let mut v = Vec::new();
    push_bytes(&mut v, n.as_bytes());
    v
}

fn oid(o: &[u32]) -> Vec<Word> {
    let mut v = Vec::new();
    push_oid(&mut v, o);
    v
}

/// `(kind, value)` of a get.
fn value(r: &[Word]) -> (Word, Vec<u8>) {
    (r[1], unpack(&r[2..], r[0] as usize))
}

fn get(s: &mut Sim, n: &str) -> Result<(Word, Vec<u8>), Error> {
    call(s, Sysno::Sysctl, SysctlOp::GetName.word(), &name(n), 0, 0).map(|r| value(&r)).map_err(|e| e.0)
}

fn oid_of(s: &mut Sim, n: &str) -> Result<Vec<u32>, Error> {
    let r = call(s, Sysno::Sysctl, SysctlOp::NameToOid.word(), &name(n), 0, 0).map_err(|e| e.0)?;
    Ok(take_oid(&r).expect("an OID").0)
}

/// Every leaf in `sysctl -a` order: name, kind and value.
fn walk(s: &mut Sim) -> Vec<(String, Word, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at: Vec<u32> = Vec::new();
    loop {
        let r = match call(s, Sysno::Sysctl, SysctlOp::Next.word(), &oid(&at), 0, 0) {
            Ok(r) => r,
            Err((Error::NotFound, _)) => return out,
            Err(e) => panic!("next after {at:?}: {e:?}"),
        };
        let (next, rest) = take_oid(&r).expect("an OID");
        let n = String::from_utf8(unpack(&rest[2..], rest[1] as usize)).expect("UTF-8 name");
        let v = match call(s, Sysno::Sysctl, SysctlOp::GetOid.word(), &oid(&next), 0, 0) {
            Ok(r) => value(&r).1,
            // Longer than the message: its length only.
            Err((Error::BufferTooSmall, len)) => len.to_le_bytes().to_vec(),
            Err(e) => panic!("get {n}: {e:?}"),
        };
        assert!(next > at, "walk goes forward: {next:?} after {at:?}");
        out.push((n, rest[0], v));
        at = next;
    }
}

#[test]
fn sysctl_reads_by_name_and_by_oid_as_freebsd_numbers_them() {
    each(|p| {
        let mut s = sim(2, p, 64);
        assert_eq!(get(&mut s, "kern.ostype"), Ok((SysctlKind::Str as Word, b"FreeBSD".to_vec())), "{p}");
        assert_eq!(oid_of(&mut s, "kern.ostype"), Ok(vec![1, 1]));
        assert_eq!(oid_of(&mut s, "hw.ncpu"), Ok(vec![6, 3]));
        let r = call(&mut s, Sysno::Sysctl, SysctlOp::GetOid.word(), &oid(&[6, 3]), 0, 0).unwrap();
        assert_eq!(value(&r), (SysctlKind::Int as Word, 2i64.to_le_bytes().to_vec()));
        assert_eq!(get(&mut s, "hw.pagesize").unwrap().1, 4096i64.to_le_bytes());
        assert_eq!(get(&mut s, "kern"), Err(Error::ReadOnly), "an interior node has no value");
        assert_eq!(get(&mut s, "kern.nosuch"), Err(Error::NotFound));
        assert_eq!(get(&mut s, "vm.stats.vm.v_free_count").unwrap().0, SysctlKind::Int as Word);
    });
}

#[test]
fn a_full_walk_visits_every_leaf_once_in_oid_order() {
    each(|p| {
        let mut s = sim(2, p, 64);
        let all = walk(&mut s);
        assert!(all.len() >= 300, "{p}: a realistic tree ({} leaves)", all.len());
        let mut names: Vec<&str> = all.iter().map(|(n, ..)| n.as_str()).collect();
        assert!(names.contains(&"kern.ostype") && names.contains(&"dev.cpu.1.freq"));
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len(), "no leaf twice");
        assert!(s.k.sysctl_nodes() > all.len());
    });
}

#[test]
fn sysctl_set_changes_writable_leaves_only() {
    each(|p| {
        let mut s = sim(1, p, 64);
        let host = oid_of(&mut s, "kern.hostname").unwrap();
        let set = |s: &mut Sim, o: &[u32], v: &[u8]| {
            let mut w = oid(o);
            push_bytes(&mut w, v);
            call(s, Sysno::Sysctl, SysctlOp::Set.word(), &w, 0, 0).map(|_| ()).map_err(|e| e.0)
        };
        assert_eq!(set(&mut s, &host, b"box"), Ok(()), "{p}");
        assert_eq!(get(&mut s, "kern.hostname").unwrap().1, b"box");
        assert_eq!(set(&mut s, &[1, 1], b"Linux"), Err(Error::ReadOnly), "kern.ostype is read-only");
        assert_eq!(set(&mut s, &[1], b""), Err(Error::ReadOnly), "a node has no value");
        assert_eq!(set(&mut s, &[1, 99_999], b"x"), Err(Error::NotFound));
        let maxv = oid_of(&mut s, "kern.maxvnodes").unwrap();
        assert_eq!(set(&mut s, &maxv, &[1, 2, 3]), Err(Error::InvalidArgument), "an integer is 8 bytes");
        assert_eq!(set(&mut s, &maxv, &7i64.to_le_bytes()), Ok(()));
        assert_eq!(get(&mut s, "kern.maxvnodes").unwrap().1, 7i64.to_le_bytes());
        assert_eq!(set(&mut s, &host, &[0xff, 0xfe]), Err(Error::InvalidArgument), "a string is UTF-8");
        assert_eq!(get(&mut s, "kern.hostname").unwrap().1, b"box");
    });
}

fn add(s: &mut Sim, parent: &[u32], kind: SysctlKind, n: &str, v: &[u8]) -> Result<u32, Error> {
    let mut w = oid(parent);
    w.extend([kind as Word, 1, 0]);
    push_bytes(&mut w, n.as_bytes());
    push_bytes(&mut w, v);
    call(s, Sysno::Sysctl, SysctlOp::Add.word(), &w, 0, 0).map(|r| r[0] as u32).map_err(|e| e.0)
}

fn remove(s: &mut Sim, o: &[u32]) -> Result<(), Error> {
    call(s, Sysno::Sysctl, SysctlOp::Remove.word(), &oid(o), 0, 0).map(|_| ()).map_err(|e| e.0)
}

#[test]
fn sysctl_nodes_are_added_and_removed() {
    each(|p| {
        let mut s = sim(1, p, 64);
        let before = s.k.sysctl_nodes();
        let g = add(&mut s, &[], SysctlKind::Node, "granule", &[]).unwrap();
        assert!(g >= 0x100, "{p}: OID_AUTO numbers start at 0x100");
        let a = add(&mut s, &[g], SysctlKind::Int, "answer", &42i64.to_le_bytes()).unwrap();
        assert_eq!(get(&mut s, "granule.answer").unwrap().1, 42i64.to_le_bytes());
        assert_eq!(add(&mut s, &[g], SysctlKind::Int, "answer", &1i64.to_le_bytes()), Err(Error::Exists));
        assert_eq!(
            add(&mut s, &[g, a], SysctlKind::Int, "x", &1i64.to_le_bytes()),
            Err(Error::ReadOnly),
            "under a leaf"
        );
        assert_eq!(add(&mut s, &[g], SysctlKind::Int, "a.b", &1i64.to_le_bytes()), Err(Error::InvalidArgument));
        assert_eq!(add(&mut s, &[g], SysctlKind::Int, &"n".repeat(33), &1i64.to_le_bytes()), Err(Error::TooLarge));
        // A string longer than a string may be (its length word alone).
        let mut w = oid(&[g]);
        w.extend([SysctlKind::Str as Word, 1, 0]);
        push_bytes(&mut w, b"s");
        w.push(SYSCTL_MAX_STR as Word + 1);
        assert_eq!(call(&mut s, Sysno::Sysctl, SysctlOp::Add.word(), &w, 0, 0).map_err(|e| e.0), Err(Error::TooLarge));
        assert_eq!(add(&mut s, &[9999], SysctlKind::Int, "x", &1i64.to_le_bytes()), Err(Error::NotFound));
        assert_eq!(remove(&mut s, &[g]), Err(Error::Busy), "it has a child");
        assert_eq!(remove(&mut s, &[]), Err(Error::Busy), "the root stays");
        assert_eq!(remove(&mut s, &[g, a]), Ok(()));
        assert_eq!(get(&mut s, "granule.answer"), Err(Error::NotFound));
        assert_eq!(remove(&mut s, &[g, a]), Err(Error::NotFound));
        assert_eq!(remove(&mut s, &[g]), Ok(()));
        assert_eq!(s.k.sysctl_nodes(), before);
        // The name is free again.
        assert!(add(&mut s, &[], SysctlKind::Node, "granule", &[]).is_ok());
    });
}

#[test]
fn a_small_buffer_gets_the_length_it_needs_and_a_frame_takes_a_long_value() {
    each(|p| {
        let mut s = sim(1, p, 64);
        let r = call(&mut s, Sysno::Sysctl, SysctlOp::GetName.word(), &name("kern.ostype"), 0, 4);
        assert_eq!(r, Err((Error::BufferTooSmall, 7)), "{p}");
        let conf = match call(&mut s, Sysno::Sysctl, SysctlOp::GetName.word(), &name("kern.conftxt"), 0, 0) {
            Err((Error::BufferTooSmall, len)) => len as usize,
            other => panic!("{p}: kern.conftxt inline: {other:?}"),
        };
        assert!(conf > SYSCTL_WIRE_BYTES, "longer than a page");
        // A 2 MiB frame, mapped so its memory can be read back.
        let f = s.retype(0, ObjectType::Frame, 21, 1);
        let v = s.obj(ObjectType::VSpace);
        let addr = s.invoke(0, f, InvocationLabel::FrameMap, &[v, 0]).unwrap()[0];
        let r = call(&mut s, Sysno::Sysctl, SysctlOp::GetName.word(), &name("kern.conftxt"), f, 0).unwrap();
        assert_eq!((r[0] as usize, r[1]), (conf, SysctlKind::Opaque as Word));
        // SAFETY: the frame is 2 MiB, mapped, and nothing else writes it.
        let text = unsafe { std::slice::from_raw_parts(addr as usize as *const u8, conf) };
        assert!(text.starts_with(b"options\tCONFIG_AUTOGENERATED\nident\tGENERIC\n"));
        let wired: u64 =
            s.k.subsystem_profile().iter().filter(|r| r.lock == "ex:sysctl mem").map(|r| r.acquisitions).sum();
        let expect = u64::from(matches!(p, SubsystemLocking::Sx | SubsystemLocking::Improper));
        assert_eq!(wired, expect, "{p}: the copy-out longer than a page takes the sysctl mem lock");
        // A frame capability is needed, not any capability.
        let ep = s.obj(ObjectType::Endpoint);
        let r = call(&mut s, Sysno::Sysctl, SysctlOp::GetName.word(), &name("kern.conftxt"), ep, 0);
        assert_eq!(r.map_err(|e| e.0), Err(Error::InvalidCapability));
    });
}

#[test]
fn the_improper_policy_takes_the_sysctl_lock_exclusively_at_every_access_point() {
    let count = |p: SubsystemLocking| {
        let mut s = sim(1, p, 64);
        for _ in 0..10 {
            get(&mut s, "vm.stats.vm.v_free_count").unwrap();
        }
        let prof = s.k.subsystem_profile();
        let n = |lock: &str| prof.iter().filter(|r| r.lock == lock).map(|r| r.acquisitions).sum::<u64>();
        (n("sx:sysctl lock"), n("ex:sysctl lock"), prof.iter().filter(|r| r.lock == "ex:sysctl lock").count())
    };
    assert_eq!(count(SubsystemLocking::Sx), (10, 0, 0), "sx: once, shared");
    let (shared, exclusive, sites) = count(SubsystemLocking::Improper);
    assert_eq!(shared, 0);
    // Each of four levels and every sibling compared on the way, the
    // value read, the copy-out: an order of magnitude more than once.
    assert!(exclusive >= 100, "improper: every access point ({exclusive} for 10 gets)");
    assert!(sites >= 3, "attributed to each access point ({sites} sites)");
    assert_eq!(count(SubsystemLocking::Giant), (0, 0, 0));
    assert_eq!(count(SubsystemLocking::LockFree), (0, 0, 0));
}

fn append(s: &mut Sim, m: &[u8]) -> Result<(), Error> {
    let mut w = Vec::new();
    push_bytes(&mut w, m);
    call(s, Sysno::Klog, KlogOp::Append.word(), &w, 0, 0).map(|_| ()).map_err(|e| e.0)
}

/// `(messages, dropped so far)`.
fn read(s: &mut Sim) -> (Vec<Vec<u8>>, Word) {
    let r = call(s, Sysno::Klog, KlogOp::Read.word(), &[], 0, 0).expect("read");
    let mut msgs = Vec::new();
    let mut rest = &r[2..];
    for _ in 0..r[0] {
        let len = rest[0] as usize;
        msgs.push(unpack(&rest[1..], len));
        rest = &rest[1 + len.div_ceil(8)..];
    }
    (msgs, r[1])
}

#[test]
fn the_log_keeps_order_drops_and_counts_when_full() {
    each(|p| {
        let mut s = sim(1, p, 4);
        for i in 0..6u8 {
            let r = append(&mut s, &[b'a' + i; 5]);
            assert_eq!(r.is_err(), i >= 4, "{p}: append {i}");
            if i >= 4 {
                assert_eq!(r, Err(Error::RingFull));
            }
        }
        let (msgs, dropped) = read(&mut s);
        assert_eq!(msgs, (0..4u8).map(|i| vec![b'a' + i; 5]).collect::<Vec<_>>());
        assert_eq!(dropped, 2);
        assert_eq!(read(&mut s).0, Vec::<Vec<u8>>::new());
        let c = s.k.klog_counts();
        assert_eq!((c.appended, c.dropped, c.held), (4, 2, 0));
        assert_eq!(append(&mut s, &[0; KLOG_MAX_MESSAGE + 1]), Err(Error::TooLarge));
        assert_eq!(append(&mut s, &[7; KLOG_MAX_MESSAGE]), Ok(()));
        assert_eq!(read(&mut s).0, vec![vec![7; KLOG_MAX_MESSAGE]]);
    });
}

#[test]
fn a_reader_that_found_the_log_empty_is_woken_by_the_next_append() {
    each(|p| {
        let mut s = sim(1, p, 8);
        let n = s.obj(ObjectType::Notification);
        let badged = s.mint(n, 5);
        assert_eq!(call(&mut s, Sysno::Klog, KlogOp::Bind.word(), &[], badged, 0), Ok(vec![]), "{p}");
        // The reader (syslogd) finds nothing, then waits.
        let (_, reader) = s.spawn(1, 200, 0);
        assert_eq!(s.cur(0), reader);
        s.buf(reader).msg[0] = 0;
        s.sys(0, Sysno::Klog, 0, MessageInfo::new(KlogOp::Read.word(), 0, 0, 0), 0);
        assert_eq!(s.buf(reader).msg[0], 0);
        s.sys(0, Sysno::Wait, n, msg(0, 0), 0);
        assert_eq!(s.status(reader), ThreadStatus::BlockedOnNotification);
        assert_eq!(append(&mut s, b"boot"), Ok(()));
        assert_eq!(s.status(reader), ThreadStatus::Current, "{p}: woken and running");
        assert_eq!(s.buf(reader).badge, 5);
        s.sys(0, Sysno::Klog, 0, MessageInfo::new(KlogOp::Read.word(), 0, 0, 0), 0);
        assert_eq!(s.buf(reader).msg[0], 1);
        // Not armed any more: an append wakes nobody and nothing is pending.
        s.sys(0, Sysno::Wait, n, msg(0, 0), 0);
        assert_eq!(s.status(reader), ThreadStatus::BlockedOnNotification);
        assert_eq!(append(&mut s, b"x"), Ok(()));
        assert_eq!(s.status(reader), ThreadStatus::BlockedOnNotification);
    });
}

#[test]
fn malformed_calls_return_their_error_and_change_nothing() {
    each(|p| {
        let mut s = sim(1, p, 8);
        let before = walk(&mut s);
        let ep = s.obj(ObjectType::Endpoint);
        let big = |w: Word| vec![w];
        let cases: Vec<(Sysno, Word, Vec<Word>, Word, Error)> = vec![
            (Sysno::Sysctl, 0, vec![], 0, Error::IllegalOperation),
            (Sysno::Sysctl, 99, vec![], 0, Error::IllegalOperation),
            (Sysno::Klog, 99, vec![], 0, Error::IllegalOperation),
            (Sysno::Sysctl, SysctlOp::GetName.word(), vec![], 0, Error::TruncatedMessage),
            (Sysno::Sysctl, SysctlOp::GetName.word(), big(u64::MAX), 0, Error::TooLarge),
            (Sysno::Sysctl, SysctlOp::GetName.word(), vec![12], 0, Error::TruncatedMessage),
            (Sysno::Sysctl, SysctlOp::GetName.word(), vec![2, 0xfeff], 0, Error::InvalidArgument),
            (Sysno::Sysctl, SysctlOp::GetName.word(), name("kern..ostype"), 0, Error::InvalidArgument),
            (Sysno::Sysctl, SysctlOp::GetName.word(), name(""), 0, Error::InvalidArgument),
            (Sysno::Sysctl, SysctlOp::GetOid.word(), vec![99], 0, Error::TooLarge),
            (Sysno::Sysctl, SysctlOp::GetOid.word(), vec![2, 1], 0, Error::TruncatedMessage),
            (Sysno::Sysctl, SysctlOp::GetOid.word(), vec![1, 1 << 40], 0, Error::InvalidArgument),
            (Sysno::Sysctl, SysctlOp::Set.word(), vec![2, 1, 10], 0, Error::TruncatedMessage),
            (Sysno::Sysctl, SysctlOp::Set.word(), vec![2, 1, 10, 1 << 20], 0, Error::TooLarge),
            (Sysno::Sysctl, SysctlOp::Add.word(), vec![0, 9, 1, 0], 0, Error::InvalidArgument),
            (Sysno::Sysctl, SysctlOp::Add.word(), vec![0, 1, 2, 0], 0, Error::InvalidArgument),
            (Sysno::Sysctl, SysctlOp::Add.word(), vec![0, 1, 1, 1 << 33], 0, Error::InvalidArgument),
            (Sysno::Sysctl, SysctlOp::Remove.word(), vec![], 0, Error::TruncatedMessage),
            (Sysno::Sysctl, SysctlOp::GetName.word(), name("kern.ostype"), ep, Error::InvalidCapability),
            (Sysno::Sysctl, SysctlOp::GetName.word(), name("kern.ostype"), 3333, Error::InvalidCapability),
            (Sysno::Klog, KlogOp::Append.word(), vec![], 0, Error::TruncatedMessage),
            (Sysno::Klog, KlogOp::Append.word(), big(1000), 0, Error::TooLarge),
            (Sysno::Klog, KlogOp::Bind.word(), vec![], ep, Error::InvalidCapability),
        ];
        for (no, op, words, cptr, want) in cases {
            let r = call(&mut s, no, op, &words, cptr, 0);
            assert_eq!(r.map_err(|e| e.0), Err(want), "{p}: {no:?} op {op} {words:?} cptr {cptr}");
        }
        assert_eq!(walk(&mut s), before, "{p}: the tree is unchanged");
        assert_eq!(s.k.klog_counts().appended, 0);
    });
}
