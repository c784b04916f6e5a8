//! The sysctl tree: one representation every locking policy reads and
//! writes, correct with no lock at all.
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
//! freed (`retire.rs`): a reader of another core may still be reading them.
//! They are freed in a whole-kernel entry — the kernel's existing grace
//! period: under `bkl` every entry, under `fine` the exclusive round (every
//! reader lock held, so no core is in a read-side entry), under `lockfree`
//! a management entry (every shared path outside the gate). Every read of
//! the tree happens inside a kernel entry of its core, so nothing read is
//! freed under it.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use crate::abi::{Error, SysctlKind, SYSCTL_MAX_COMPONENT, SYSCTL_MAX_LEVELS};

use super::super::retire::{Retire, Retired};

/// One sysctl node (see the module documentation).
pub(crate) struct Node {
    pub name: Box<str>,
    pub number: u32,
    pub kind: SysctlKind,
    pub writable: bool,
    /// Null for the root.
    parent: *const Node,
    body: AtomicPtr<Body>,
}

/// What a node's change replaces as a whole.
pub(crate) struct Body {
    pub value: Box<[u8]>,
    /// Sorted by number.
    children: Box<[NonNull<Node>]>,
}

// SAFETY: a `Node`'s plain fields are written once before it is published
// (release CAS into its parent's body) and only read after; its body and
// every body and node reached through the raw pointers are immutable once
// published and freed only after a grace period (module documentation), so
// sharing and sending them between cores is sound.
unsafe impl Send for Node {}
// SAFETY: as for `Send`.
unsafe impl Sync for Node {}

impl Body {
    fn boxed(value: Box<[u8]>, children: Box<[NonNull<Node>]>) -> *mut Body {
        Box::into_raw(Box::new(Body { value, children }))
    }
}

impl Node {
    fn new(name: &str, number: u32, kind: SysctlKind, writable: bool, parent: *const Node, value: Box<[u8]>) -> Self {
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
    pub fn body(&self) -> Option<&Body> {
        let p = self.body.load(Ordering::Acquire);
        // SAFETY: a non-null body is published (acquire pairs with the
        // release CAS that installed it) and freed only after a grace
        // period, which cannot end while this core is in a kernel entry
        // reading the tree (module documentation); the borrow ends with the
        // entry's use of `self`.
        unsafe { p.as_ref() }
    }

    fn raw_body(&self) -> *mut Body {
        self.body.load(Ordering::Acquire)
    }

    /// The live children of `body`, in number order.
    pub fn children<'a>(&'a self, body: &'a Body) -> impl Iterator<Item = &'a Node> + 'a {
        // SAFETY: children of a published body are published nodes, freed
        // only after a grace period (as in `body`).
        body.children.iter().map(|c| unsafe { c.as_ref() }).filter(|c| c.body().is_some())
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let p = *self.body.get_mut();
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
pub(crate) struct Leaf<'a> {
    pub node: &'a Node,
    pub value: &'a [u8],
}

/// The sysctl tree.
pub(crate) struct Tree {
    root: Box<Node>,
    nodes: AtomicUsize,
    max_nodes: usize,
}

impl core::fmt::Debug for Tree {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Tree").field("nodes", &self.nodes.load(Ordering::Relaxed)).finish()
    }
}

/// Where a step of a lookup stands; handed to the policy at every access
/// point (the `improper` policy locks at each one).
pub(crate) trait Visit {
    /// Run `f` at one access point.
    fn visit<T>(&self, f: impl FnOnce() -> T) -> T;
}

/// No lock at any access point.
pub(crate) struct Plain;

impl Visit for Plain {
    #[inline]
    fn visit<T>(&self, f: impl FnOnce() -> T) -> T {
        f()
    }
}

impl Tree {
    /// An empty tree holding at most `max_nodes` nodes (the root aside).
    pub fn new(max_nodes: usize) -> Self {
        Self {
            root: Box::new(Node::new("", 0, SysctlKind::Node, false, ptr::null(), Box::new([]))),
            nodes: AtomicUsize::new(0),
            max_nodes,
        }
    }

    /// Nodes in the tree (removed ones leave the count when removed).
    pub fn len(&self) -> usize {
        self.nodes.load(Ordering::Relaxed)
    }

    /// The root.
    pub fn root(&self) -> &Node {
        &self.root
    }

    /// The node named by a numeric OID (the root for an empty one).
    pub fn find_oid(&self, oid: &[u32], v: &impl Visit) -> Option<&Node> {
        let mut n: &Node = &self.root;
        for &number in oid {
            n = child(n, v, |c| c.number == number)?;
        }
        Some(n)
    }

    /// The node named by a dotted name, with its numeric OID.
    pub fn find_name(&self, name: &str, v: &impl Visit) -> Result<(&Node, Vec<u32>), Error> {
        let mut n: &Node = &self.root;
        let mut oid = Vec::new();
        for part in components(name)? {
            n = child(n, v, |c| &*c.name == part).ok_or(Error::NotFound)?;
            oid.push(n.number);
        }
        Ok((n, oid))
    }

    /// The value of a leaf (`NotFound` once removed; `ReadOnly` for an
    /// interior node, which has none).
    pub fn read<'a>(&'a self, n: &'a Node, v: &impl Visit) -> Result<Leaf<'a>, Error> {
        v.visit(|| {
            let body = n.body().ok_or(Error::NotFound)?;
            if n.kind == SysctlKind::Node {
                return Err(Error::ReadOnly);
            }
            Ok(Leaf { node: n, value: &body.value })
        })
    }

    /// Replace a writable leaf's value; the old body is retired.
    pub fn set(&self, n: &Node, value: &[u8], retire: &impl Retire) -> Result<(), Error> {
        if n.kind == SysctlKind::Node || !n.writable {
            return Err(Error::ReadOnly);
        }
        check_value(n.kind, value)?;
        let new = Body::boxed(value.into(), Box::new([]));
        loop {
            let old = n.raw_body();
            if old.is_null() {
                // SAFETY: `new` was never published.
                drop(unsafe { Box::from_raw(new) });
                return Err(Error::NotFound);
            }
            if n.body.compare_exchange(old, new, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                retire.retire(Retired::body(old));
                return Ok(());
            }
        }
    }

    /// Add a child `name` under the interior node `parent`; its number is
    /// `number`, or the first free one from `0x100` (FreeBSD's `OID_AUTO`).
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &self,
        parent: &Node,
        name: &str,
        number: Option<u32>,
        kind: SysctlKind,
        writable: bool,
        value: &[u8],
        retire: &impl Retire,
    ) -> Result<u32, Error> {
        if parent.kind != SysctlKind::Node {
            return Err(Error::ReadOnly);
        }
        check_component(name)?;
        check_value(kind, value)?;
        if self.depth(parent) >= SYSCTL_MAX_LEVELS {
            return Err(Error::TooLarge);
        }
        if self.nodes.fetch_add(1, Ordering::Relaxed) >= self.max_nodes {
            self.nodes.fetch_sub(1, Ordering::Relaxed);
            return Err(Error::NotEnoughMemory);
        }
        let mut child: Option<Box<Node>> = None;
        let out = loop {
            let old = parent.raw_body();
            // SAFETY: as in `Node::body`.
            let Some(body) = (unsafe { old.as_ref() }) else { break Err(Error::NotFound) };
            if self.prune(parent, old, body, retire) {
                continue;
            }
            // SAFETY: as in `Node::children` (the dead ones were pruned).
            let kids = || body.children.iter().map(|c| unsafe { c.as_ref() });
            if kids().any(|c| &*c.name == name) {
                break Err(Error::Exists);
            }
            let num = match number {
                Some(n) if kids().any(|c| c.number == n) => break Err(Error::Exists),
                Some(n) => n,
                None => kids().map(|c| c.number + 1).filter(|&n| n >= 0x100).max().unwrap_or(0x100),
            };
            let node = child.get_or_insert_with(|| {
                Box::new(Node::new(name, num, kind, writable, parent as *const Node, value.into()))
            });
            node.number = num;
            let ptr = NonNull::from(&**node);
            let mut kids: Vec<NonNull<Node>> = body.children.to_vec();
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
    pub fn remove(&self, n: &Node, retire: &impl Retire) -> Result<(), Error> {
        if ptr::eq(n, &*self.root) {
            return Err(Error::Busy);
        }
        loop {
            let old = n.raw_body();
            // SAFETY: as in `Node::body`.
            let Some(body) = (unsafe { old.as_ref() }) else { return Err(Error::NotFound) };
            if self.prune(n, old, body, retire) {
                continue;
            }
            if !body.children.is_empty() {
                return Err(Error::Busy);
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
    fn prune(&self, n: &Node, old: *mut Body, body: &Body, retire: &impl Retire) -> bool {
        let dead = |c: &NonNull<Node>| {
            // SAFETY: as in `Node::children`.
            unsafe { c.as_ref() }.raw_body().is_null()
        };
        if !body.children.iter().any(dead) {
            return false;
        }
        let kept: Vec<NonNull<Node>> = body.children.iter().copied().filter(|c| !dead(c)).collect();
        let new = Body::boxed(body.value.clone(), kept.into());
        if n.body.compare_exchange(old, new, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            for c in body.children.iter().filter(|c| dead(c)) {
                retire.retire(Retired::node(*c));
            }
            retire.retire(Retired::body(old));
        } else {
            // SAFETY: `new` was never published.
            drop(unsafe { Box::from_raw(new) });
        }
        true
    }

    /// Levels below the root.
    fn depth(&self, n: &Node) -> usize {
        let mut d = 0;
        let mut p: *const Node = n;
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
    /// no children and a value their kind allows; the live nodes are
    /// `len()`.
    pub fn check(&self) -> Result<(), alloc::string::String> {
        let mut live = 0usize;
        let mut stack: Vec<&Node> = alloc::vec![&*self.root];
        while let Some(n) = stack.pop() {
            let Some(body) = n.body() else { continue };
            if n.kind == SysctlKind::Node {
                if !body.value.is_empty() {
                    return Err(alloc::format!("interior node {} has a value", n.name));
                }
            } else if !body.children.is_empty() {
                return Err(alloc::format!("leaf {} has children", n.name));
            } else if check_value(n.kind, &body.value).is_err() {
                return Err(alloc::format!("leaf {} holds a value its kind does not allow", n.name));
            }
            let kids: Vec<&Node> = n.children(body).collect();
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
            stack.extend(kids);
        }
        if live != self.len() {
            return Err(alloc::format!("{live} live nodes, but the count says {}", self.len()));
        }
        Ok(())
    }

    /// The first leaf after `oid` in depth-first, number order (`sysctl -a`
    /// starts from the empty OID), with its OID.
    pub fn next(&self, oid: &[u32], v: &impl Visit) -> Option<(&Node, Vec<u32>)> {
        let mut path = Vec::new();
        let n = next_in(&self.root, oid, &mut path, v)?;
        Some((n, path))
    }

    /// The dotted name of the node at `oid`.
    pub fn name_of(&self, oid: &[u32], v: &impl Visit) -> Option<alloc::string::String> {
        let mut n: &Node = &self.root;
        let mut name = alloc::string::String::new();
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
fn child<'a>(n: &'a Node, v: &impl Visit, pick: impl Fn(&Node) -> bool) -> Option<&'a Node> {
    let body = v.visit(|| n.body())?;
    n.children(body).find(|c| v.visit(|| pick(c)))
}

/// The first leaf of `n`'s subtree after `after` (relative OID; empty:
/// from the start), appending its path to `path`.
fn next_in<'a>(n: &'a Node, after: &[u32], path: &mut Vec<u32>, v: &impl Visit) -> Option<&'a Node> {
    let kids: Vec<&Node> = v.visit(|| n.body().map(|b| n.children(b).collect()))?;
    for c in kids {
        let rest: &[u32] = match after.split_first() {
            None => &[],
            // The leaf `after` names itself is not after it; a node it
            // passes through is searched below `after`'s rest.
            Some((&first, rest)) if c.number == first => {
                if c.kind != SysctlKind::Node {
                    continue;
                }
                rest
            }
            Some((&first, _)) if c.number > first => &[],
            Some(_) => continue,
        };
        path.push(c.number);
        if c.kind != SysctlKind::Node {
            return Some(c);
        }
        if let Some(found) = next_in(c, rest, path, v) {
            return Some(found);
        }
        path.pop();
    }
    None
}

/// The levels of a dotted name (`InvalidArgument` for an empty level or a
/// bad character, `TooLarge` for a long one).
pub(crate) fn components(name: &str) -> Result<impl Iterator<Item = &str>, Error> {
    if name.is_empty() {
        return Err(Error::InvalidArgument);
    }
    for c in name.split('.') {
        check_component(c)?;
    }
    Ok(name.split('.'))
}

/// A valid name of one level: 1..=32 bytes of `[A-Za-z0-9_%-]`.
fn check_component(c: &str) -> Result<(), Error> {
    if c.is_empty() || !c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'%' || b == b'-') {
        return Err(Error::InvalidArgument);
    }
    if c.len() > SYSCTL_MAX_COMPONENT {
        return Err(Error::TooLarge);
    }
    Ok(())
}

/// A value fits its kind: an integer is exactly 8 bytes, a string valid
/// UTF-8; nothing longer than the kind's maximum.
fn check_value(kind: SysctlKind, value: &[u8]) -> Result<(), Error> {
    if value.len() > kind.max_len() {
        return Err(Error::TooLarge);
    }
    match kind {
        SysctlKind::Int if value.len() != 8 => Err(Error::InvalidArgument),
        SysctlKind::Str if core::str::from_utf8(value).is_err() => Err(Error::InvalidArgument),
        _ => Ok(()),
    }
}
