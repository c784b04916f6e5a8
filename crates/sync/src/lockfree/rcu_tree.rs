//! [`Tree`]: a tree of named, numbered nodes with byte values, read with no
//! lock and changed by compare-and-swap — the kernel's sysctl registry
//! (`granule-kernel`'s `subsys/sysctl/`), whose every locking policy reads
//! and writes this one representation.
//!
//! **Algorithm.** Read-copy-update over immutable bodies, with one
//! compare-and-swap per change (the single-word optimistic update of
//! Massalin & Pu's Synthesis kernel, seed `004` §4, applied to a tree as
//! RCU does — McKenney & Slingwine, "Read-copy update", 1998). A [`Node`]'s
//! name, number, kind and parent never change; everything that does — its
//! value and its list of children — is an immutable [`Body`] the node points
//! to. A change builds a new body and swaps it in by CAS against the body it
//! read; a reader loads the pointer once and reads a body nobody will change.
//!
//! **Word layout.** `Node::body` is one `AtomicPtr<Body>`: a body, or null
//! once the node is removed. Null is the removal mark (Harris-style marking
//! on the one word every change goes through): a set, an add under the node
//! and the removal all CAS the same word, so whichever wins decides, and
//! each operation is linearised at its successful CAS (or, for a failure
//! or a read, at the load that saw the body or the mark).
//!
//! **Removal.** Remove CASes a childless node's body to null, then prunes
//! the dead node out of its parent's children (a CAS on the parent's body;
//! any operation that meets a dead child may do the pruning, and the one
//! whose CAS takes it out retires it). A dead node is never found again
//! by a lookup once pruned, and a lookup that still meets it sees the mark.
//!
//! **Reclamation.** A replaced body and a pruned node are *retired*, not
//! freed: a reader on another core may still be reading them. The caller
//! decides when they are freed ([`Retire`], [`Retired::free`]) and
//! promises a grace period first: no reader that could have reached them
//! is still reading. The kernel frees them in a whole-kernel entry (its
//! existing grace period).
//!
//! **Validation is the caller's.** Names, values and kinds are bytes and
//! tags here; the kernel checks them (and maps [`TreeError`] to its error
//! codes) before it calls.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::ptr::{self, NonNull};

use crate::primitive::{AtomicPtr, AtomicUsize, Ordering};

/// A node's kind, as the tree needs to know it: whether it is interior
/// (children, no value) or a leaf (a value, no children).
pub trait NodeKind: Copy + Eq + Send + Sync + core::fmt::Debug + 'static {
    /// The kind of the root.
    const INTERIOR: Self;
    /// Whether nodes of this kind have children rather than a value.
    fn interior(self) -> bool;
}

/// Why a tree operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeError {
    /// No (live) node there.
    NotFound,
    /// A sibling has this name or number.
    Exists,
    /// The node has children, or is the root.
    Busy,
    /// A read-only leaf, or an interior node, asked to change its value.
    NotWritable,
    /// An interior node asked for its value.
    NoValue,
    /// A leaf asked to take a child.
    NotInterior,
    /// The tree holds its most nodes.
    Full,
    /// The child would be deeper than the tree allows.
    TooDeep,
}

/// One sysctl node (see the module documentation).
pub struct Node<K: NodeKind> {
    pub name: Box<str>,
    pub number: u32,
    pub kind: K,
    pub writable: bool,
    /// Null for the root.
    parent: *const Node<K>,
    body: AtomicPtr<Body<K>>,
}

impl<K: NodeKind> core::fmt::Debug for Node<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Node")
            .field("name", &self.name)
            .field("number", &self.number)
            .field("kind", &self.kind)
            .finish()
    }
}

/// What a node's change replaces as a whole.
#[derive(Debug)]
pub struct Body<K: NodeKind> {
    pub value: Box<[u8]>,
    /// Sorted by number.
    children: Box<[NonNull<Node<K>>]>,
}

// SAFETY: a `Node`'s plain fields are written once before it is published
// (release CAS into its parent's body) and only read after; its body and
// every body and node reached through the raw pointers are immutable once
// published and freed only after a grace period (module documentation), so
// sharing and sending them between cores is sound.
unsafe impl<K: NodeKind> Send for Node<K> {}
// SAFETY: as for `Send`.
unsafe impl<K: NodeKind> Sync for Node<K> {}

impl<K: NodeKind> Body<K> {
    fn boxed(value: Box<[u8]>, children: Box<[NonNull<Node<K>>]>) -> *mut Body<K> {
        Box::into_raw(Box::new(Body { value, children }))
    }
}

impl<K: NodeKind> Node<K> {
    fn new(name: &str, number: u32, kind: K, writable: bool, parent: *const Node<K>, value: Box<[u8]>) -> Self {
        Self {
            name: name.into(),
            number,
            kind,
            writable,
            parent,
            body: AtomicPtr::new(Body::boxed(value, Box::new([]))),
        }
    }

    /// The node's body, or `None` once removed.
    #[inline]
    pub fn body(&self) -> Option<&Body<K>> {
        let p = self.body.load(Ordering::Acquire);
        // SAFETY: a non-null body is published (acquire pairs with the
        // release CAS that installed it) and freed only after a grace
        // period, which cannot end while this core is in a kernel entry
        // reading the tree (module documentation); the borrow ends with the
        // entry's use of `self`.
        unsafe { p.as_ref() }
    }

    fn raw_body(&self) -> *mut Body<K> {
        self.body.load(Ordering::Acquire)
    }

    /// The live children of `body`, in number order.
    pub fn children<'a>(&'a self, body: &'a Body<K>) -> impl Iterator<Item = &'a Node<K>> + 'a {
        // SAFETY: children of a published body are published nodes, freed
        // only after a grace period (as in `body`).
        body.children.iter().map(|c| unsafe { c.as_ref() }).filter(|c| c.body().is_some())
    }
}

impl<K: NodeKind> Drop for Node<K> {
    fn drop(&mut self) {
        let p = self.body.load(Ordering::Relaxed);
        if !p.is_null() {
            // SAFETY: the node is being freed, so nothing reads it any more
            // (a retired node is freed after its grace period; the tree's
            // own nodes when the kernel is dropped); its body is its own.
            let body = unsafe { Box::from_raw(p) };
            for c in body.children.iter() {
                // SAFETY: a live node's children are owned through its body
                // and freed only here or when pruned (then no longer listed).
                drop(unsafe { Box::from_raw(c.as_ptr()) });
            }
        }
    }
}

/// A snapshot of a leaf, as a read finds it.
#[derive(Debug)]
pub struct Leaf<'a, K: NodeKind> {
    pub node: &'a Node<K>,
    pub value: &'a [u8],
}

/// The tree.
pub struct Tree<K: NodeKind> {
    root: Box<Node<K>>,
    nodes: AtomicUsize,
    max_nodes: usize,
    max_depth: usize,
}

impl<K: NodeKind> core::fmt::Debug for Tree<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Tree").field("nodes", &self.nodes.load(Ordering::Relaxed)).finish()
    }
}

/// Where a step of a lookup stands; handed to the policy at every access
/// point (the `improper` policy locks at each one).
pub trait Visit {
    /// Run `f` at one access point.
    fn visit<T>(&self, f: impl FnOnce() -> T) -> T;
}

/// No lock at any access point.
#[derive(Debug)]
pub struct Plain;

impl Visit for Plain {
    #[inline]
    fn visit<T>(&self, f: impl FnOnce() -> T) -> T {
        f()
    }
}

impl<K: NodeKind> Tree<K> {
    /// An empty tree holding at most `max_nodes` nodes (the root aside),
    /// none deeper than `max_depth` levels below the root.
    pub fn new(max_nodes: usize, max_depth: usize) -> Self {
        Self {
            root: Box::new(Node::new("", 0, K::INTERIOR, false, ptr::null(), Box::new([]))),
            nodes: AtomicUsize::new(0),
            max_nodes,
            max_depth,
        }
    }

    /// Whether it holds no node but the root.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Nodes in the tree (removed ones leave the count when removed).
    pub fn len(&self) -> usize {
        self.nodes.load(Ordering::Relaxed)
    }

    /// The root.
    pub fn root(&self) -> &Node<K> {
        &self.root
    }

    /// The node named by a numeric OID (the root for an empty one).
    pub fn find_oid(&self, oid: &[u32], v: &impl Visit) -> Option<&Node<K>> {
        let mut n: &Node<K> = &self.root;
        for &number in oid {
            n = child(n, v, |c| c.number == number)?;
        }
        Some(n)
    }

    /// The node named by a path of names (the levels of a dotted name),
    /// with its numeric OID.
    pub fn find_path<'p>(
        &self,
        path: impl IntoIterator<Item = &'p str>,
        v: &impl Visit,
    ) -> Result<(&Node<K>, Vec<u32>), TreeError> {
        let mut n: &Node<K> = &self.root;
        let mut oid = Vec::new();
        for part in path {
            n = child(n, v, |c| &*c.name == part).ok_or(TreeError::NotFound)?;
            oid.push(n.number);
        }
        Ok((n, oid))
    }

    /// The value of a leaf (`NotFound` once removed; `ReadOnly` for an
    /// interior node, which has none).
    pub fn read<'a>(&'a self, n: &'a Node<K>, v: &impl Visit) -> Result<Leaf<'a, K>, TreeError> {
        v.visit(|| {
            let body = n.body().ok_or(TreeError::NotFound)?;
            if n.kind.interior() {
                return Err(TreeError::NoValue);
            }
            Ok(Leaf { node: n, value: &body.value })
        })
    }

    /// Replace a writable leaf's value (checked by the caller against the
    /// node's kind); the old body is retired.
    pub fn set(&self, n: &Node<K>, value: &[u8], retire: &impl Retire<K>) -> Result<(), TreeError> {
        if n.kind.interior() || !n.writable {
            return Err(TreeError::NotWritable);
        }
        let new = Body::boxed(value.into(), Box::new([]));
        loop {
            let old = n.raw_body();
            if old.is_null() {
                // SAFETY: `new` was never published.
                drop(unsafe { Box::from_raw(new) });
                return Err(TreeError::NotFound);
            }
            if n.body.compare_exchange(old, new, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                retire.retire(Retired::body(old));
                return Ok(());
            }
        }
    }

    /// Add a child `name` (one level, checked by the caller, as is the
    /// value against `kind`) under the interior node `parent`; its number
    /// is `number`, or the first free one from `0x100` (FreeBSD's
    /// `OID_AUTO`).
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &self,
        parent: &Node<K>,
        name: &str,
        number: Option<u32>,
        kind: K,
        writable: bool,
        value: &[u8],
        retire: &impl Retire<K>,
    ) -> Result<u32, TreeError> {
        if !parent.kind.interior() {
            return Err(TreeError::NotInterior);
        }
        if self.depth(parent) >= self.max_depth {
            return Err(TreeError::TooDeep);
        }
        if self.nodes.fetch_add(1, Ordering::Relaxed) >= self.max_nodes {
            self.nodes.fetch_sub(1, Ordering::Relaxed);
            return Err(TreeError::Full);
        }
        let mut child: Option<Box<Node<K>>> = None;
        let out = loop {
            let old = parent.raw_body();
            // SAFETY: as in `Node::body`.
            let Some(body) = (unsafe { old.as_ref() }) else { break Err(TreeError::NotFound) };
            if self.prune(parent, old, body, retire) {
                continue;
            }
            // SAFETY: as in `Node::children` (the dead ones were pruned).
            let kids = || body.children.iter().map(|c| unsafe { c.as_ref() });
            if kids().any(|c| &*c.name == name) {
                break Err(TreeError::Exists);
            }
            let num = match number {
                Some(n) if kids().any(|c| c.number == n) => break Err(TreeError::Exists),
                Some(n) => n,
                // One past the highest number from 0x100 up; none left
                // past `u32::MAX` is a full tree.
                None => match kids().map(|c| c.number).filter(|&n| n >= 0x100).max() {
                    None => 0x100,
                    Some(top) => match top.checked_add(1) {
                        Some(n) => n,
                        None => break Err(TreeError::Full),
                    },
                },
            };
            let node = child.get_or_insert_with(|| {
                Box::new(Node::new(name, num, kind, writable, parent as *const Node<K>, value.into()))
            });
            node.number = num;
            let ptr = NonNull::from(&**node);
            let mut kids: Vec<NonNull<Node<K>>> = body.children.to_vec();
            let at = kids.partition_point(|c| {
                // SAFETY: as above.
                unsafe { c.as_ref() }.number < num
            });
            kids.insert(at, ptr);
            let new = Body::boxed(body.value.clone(), kids.into());
            if parent.body.compare_exchange(old, new, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                retire.retire(Retired::body(old));
                // Owned by the tree from now on.
                let _ = Box::into_raw(child.take().expect("built above"));
                break Ok(num);
            }
            // SAFETY: `new` was never published.
            drop(unsafe { Box::from_raw(new) });
        };
        if out.is_err() {
            self.nodes.fetch_sub(1, Ordering::Relaxed);
        }
        out
    }

    /// Remove a node that has no children (`Busy` if it has).
    pub fn remove(&self, n: &Node<K>, retire: &impl Retire<K>) -> Result<(), TreeError> {
        if ptr::eq(n, &*self.root) {
            return Err(TreeError::Busy);
        }
        loop {
            let old = n.raw_body();
            // SAFETY: as in `Node::body`.
            let Some(body) = (unsafe { old.as_ref() }) else { return Err(TreeError::NotFound) };
            if self.prune(n, old, body, retire) {
                continue;
            }
            if !body.children.is_empty() {
                return Err(TreeError::Busy);
            }
            if n.body.compare_exchange(old, ptr::null_mut(), Ordering::AcqRel, Ordering::Acquire).is_ok() {
                retire.retire(Retired::body(old));
                self.nodes.fetch_sub(1, Ordering::Relaxed);
                break;
            }
        }
        // SAFETY: a non-root node's parent outlives it: a parent is removed
        // only without children, and this node stays listed until pruned.
        let parent = unsafe { &*n.parent };
        loop {
            let old = parent.raw_body();
            // SAFETY: as in `Node::body`.
            let Some(body) = (unsafe { old.as_ref() }) else { return Ok(()) };
            if !self.prune(parent, old, body, retire) {
                return Ok(());
            }
        }
    }

    /// Take the dead children out of `n`'s body `old` (`body`), by CAS; the
    /// winner retires them. Returns whether `old` had any (the caller reads
    /// the body again).
    fn prune(&self, n: &Node<K>, old: *mut Body<K>, body: &Body<K>, retire: &impl Retire<K>) -> bool {
        let dead = |c: &NonNull<Node<K>>| {
            // SAFETY: as in `Node::children`.
            unsafe { c.as_ref() }.raw_body().is_null()
        };
        // Decide once which children go: a sibling that dies after this
        // look stays listed in the new body (its own remover prunes it
        // later), so it must not be retired here.
        let (gone, kept): (Vec<_>, Vec<_>) = body.children.iter().copied().partition(|c| dead(c));
        if gone.is_empty() {
            return false;
        }
        let new = Body::boxed(body.value.clone(), kept.into());
        if n.body.compare_exchange(old, new, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            for c in gone {
                retire.retire(Retired::node(c));
            }
            retire.retire(Retired::body(old));
        } else {
            // SAFETY: `new` was never published.
            drop(unsafe { Box::from_raw(new) });
        }
        true
    }

    /// Levels below the root.
    fn depth(&self, n: &Node<K>) -> usize {
        let mut d = 0;
        let mut p: *const Node<K> = n;
        // SAFETY: parents outlive children (as in `remove`).
        while let Some(x) = unsafe { p.as_ref() } {
            if x.parent.is_null() {
                break;
            }
            d += 1;
            p = x.parent;
        }
        d
    }

    /// Check the structure (nothing changes the tree meanwhile): every
    /// live node's live children have strictly increasing numbers, distinct
    /// names and this node as parent; interior nodes have no value, leaves
    /// no children and a value `leaf_ok` accepts; the live nodes are
    /// `len()`.
    pub fn check(&self, leaf_ok: impl Fn(K, &[u8]) -> bool) -> Result<(), String> {
        let mut live = 0usize;
        let mut stack: Vec<&Node<K>> = alloc::vec![&*self.root];
        // One buffer for every node's children (the check runs after each
        // of many system calls in tests).
        let mut kids: Vec<&Node<K>> = Vec::new();
        while let Some(n) = stack.pop() {
            let Some(body) = n.body() else { continue };
            if n.kind.interior() {
                if !body.value.is_empty() {
                    return Err(alloc::format!("interior node {} has a value", n.name));
                }
            } else if !body.children.is_empty() {
                return Err(alloc::format!("leaf {} has children", n.name));
            } else if !leaf_ok(n.kind, &body.value) {
                return Err(alloc::format!("leaf {} holds a value its kind does not allow", n.name));
            }
            kids.clear();
            kids.extend(n.children(body));
            for (i, c) in kids.iter().enumerate() {
                if !ptr::eq(c.parent, n) {
                    return Err(alloc::format!("{} is listed under {} but names another parent", c.name, n.name));
                }
                if let Some(next) = kids.get(i + 1) {
                    if next.number <= c.number {
                        return Err(alloc::format!("children of {} out of number order at {}", n.name, next.name));
                    }
                }
                if kids[..i].iter().any(|d| d.name == c.name) {
                    return Err(alloc::format!("two children of {} are named {}", n.name, c.name));
                }
            }
            live += kids.len();
            stack.extend_from_slice(&kids);
        }
        if live != self.len() {
            return Err(alloc::format!("{live} live nodes, but the count says {}", self.len()));
        }
        Ok(())
    }

    /// The first leaf after `oid` in depth-first, number order (`sysctl -a`
    /// starts from the empty OID), with its OID.
    pub fn next(&self, oid: &[u32], v: &impl Visit) -> Option<(&Node<K>, Vec<u32>)> {
        let mut path = Vec::new();
        let n = next_in(&self.root, oid, &mut path, v)?;
        Some((n, path))
    }

    /// The dotted name of the node at `oid`.
    pub fn name_of(&self, oid: &[u32], v: &impl Visit) -> Option<String> {
        let mut n: &Node<K> = &self.root;
        let mut name = String::new();
        for &number in oid {
            n = child(n, v, |c| c.number == number)?;
            if !name.is_empty() {
                name.push('.');
            }
            name.push_str(&n.name);
        }
        Some(name)
    }
}

/// The first child of `n` that `pick` accepts, visiting `n` and then each
/// child compared in turn (the children are a list scanned in order, as
/// FreeBSD's are: each one is an access point of its own).
fn child<'a, K: NodeKind>(n: &'a Node<K>, v: &impl Visit, pick: impl Fn(&Node<K>) -> bool) -> Option<&'a Node<K>> {
    let body = v.visit(|| n.body())?;
    n.children(body).find(|c| v.visit(|| pick(c)))
}

/// The first leaf of `n`'s subtree after `after` (relative OID; empty:
/// from the start), appending its path to `path`.
fn next_in<'a, K: NodeKind>(n: &'a Node<K>, after: &[u32], path: &mut Vec<u32>, v: &impl Visit) -> Option<&'a Node<K>> {
    let kids: Vec<&Node<K>> = v.visit(|| n.body().map(|b| n.children(b).collect()))?;
    for c in kids {
        let rest: &[u32] = match after.split_first() {
            None => &[],
            // The leaf `after` names itself is not after it; a node it
            // passes through is searched below `after`'s rest.
            Some((&first, rest)) if c.number == first => {
                if !c.kind.interior() {
                    continue;
                }
                rest
            }
            Some((&first, _)) if c.number > first => &[],
            Some(_) => continue,
        };
        path.push(c.number);
        if !c.kind.interior() {
            return Some(c);
        }
        if let Some(found) = next_in(c, rest, path, v) {
            return Some(found);
        }
        path.pop();
    }
    None
}

/// What a change unpublished, waiting for its grace period.
#[derive(Debug)]
pub enum Retired<K: NodeKind> {
    Body(NonNull<Body<K>>),
    Node(NonNull<Node<K>>),
}

// SAFETY: a retired pointer is owned by whoever holds the `Retired` alone
// (the CAS that unpublished it retired it once, and the retiring core gave
// it up); the pointees are `Send` (plain data, and nodes are `Send`).
unsafe impl<K: NodeKind> Send for Retired<K> {}

impl<K: NodeKind> Retired<K> {
    /// A body taken out by a CAS (non-null: only non-null bodies are
    /// replaced).
    fn body(p: *mut Body<K>) -> Self {
        match NonNull::new(p) {
            Some(p) => Self::Body(p),
            None => unreachable!("a replaced body is non-null"),
        }
    }

    fn node(p: NonNull<Node<K>>) -> Self {
        Self::Node(p)
    }

    /// Free it.
    ///
    /// # Safety
    ///
    /// A grace period has passed since it was retired: no reader that
    /// reached it before it was unpublished is still reading it.
    pub unsafe fn free(self) {
        match self {
            // SAFETY: retired once (by the CAS that unpublished it), and
            // the caller promises the grace period: nothing reads it.
            Self::Body(p) => drop(unsafe { Box::from_raw(p.as_ptr()) }),
            // SAFETY: as above; a pruned node's body is null (removal
            // marked it and retired its last body), so dropping it frees
            // only the node.
            Self::Node(p) => drop(unsafe { Box::from_raw(p.as_ptr()) }),
        }
    }
}

/// Where a change puts what it retires.
pub trait Retire<K: NodeKind> {
    fn retire(&self, r: Retired<K>);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum K {
        Dir,
        Leaf,
    }

    impl NodeKind for K {
        const INTERIOR: Self = K::Dir;
        fn interior(self) -> bool {
            self == K::Dir
        }
    }

    struct Keep(core::cell::RefCell<Vec<Retired<K>>>);

    impl Retire<K> for Keep {
        fn retire(&self, r: Retired<K>) {
            self.0.borrow_mut().push(r);
        }
    }

    impl Drop for Keep {
        fn drop(&mut self) {
            for r in self.0.borrow_mut().drain(..) {
                // SAFETY: single-threaded test: nothing reads any more.
                unsafe { r.free() };
            }
        }
    }

    #[test]
    fn automatic_numbers_past_the_last_one_are_a_full_tree() {
        let keep = Keep(Default::default());
        let t: Tree<K> = Tree::new(8, 4);
        assert_eq!(t.add(t.root(), "top", Some(u32::MAX), K::Leaf, true, b"", &keep), Ok(u32::MAX));
        assert_eq!(t.add(t.root(), "next", None, K::Leaf, true, b"", &keep), Err(TreeError::Full));
        assert_eq!(t.add(t.root(), "fixed", Some(7), K::Leaf, true, b"", &keep), Ok(7));
        t.check(|_, _| true).unwrap();
    }

    #[test]
    fn depth_capacity_and_kinds_are_enforced() {
        let keep = Keep(Default::default());
        let t: Tree<K> = Tree::new(3, 2);
        let d = t.add(t.root(), "d", None, K::Dir, false, b"", &keep).unwrap();
        let dn = t.find_oid(&[d], &Plain).unwrap();
        let e = t.add(dn, "e", None, K::Dir, false, b"", &keep).unwrap();
        let en = t.find_oid(&[d, e], &Plain).unwrap();
        assert_eq!(t.add(en, "f", None, K::Leaf, true, b"", &keep), Err(TreeError::TooDeep));
        let l = t.add(dn, "l", None, K::Leaf, false, b"x", &keep).unwrap();
        let ln = t.find_oid(&[d, l], &Plain).unwrap();
        assert_eq!(t.add(ln, "g", None, K::Leaf, true, b"", &keep), Err(TreeError::NotInterior));
        assert_eq!(t.set(ln, b"y", &keep), Err(TreeError::NotWritable));
        assert_eq!(t.add(t.root(), "full", None, K::Leaf, true, b"", &keep), Err(TreeError::Full));
        assert_eq!(t.read(dn, &Plain).map(|_| ()), Err(TreeError::NoValue));
        assert_eq!(t.remove(dn, &keep), Err(TreeError::Busy));
    }
}
