//! The root task's work: every object of the KV system, then its threads.

use std::ptr::NonNull;
use std::sync::Arc;

use granule_kernel::abi::{CapRights, Error, ObjectType, CAP_INIT_CNODE, CAP_INIT_VSPACE, CAP_IRQ_CONTROL};
use granule_kernel::{BootInfo, Word};

use super::system::KvSystem;
use crate::alloc::Allocator;
use crate::env::{CPtr, Env, NULL};
use crate::net::area::Area;
use crate::net::driver::{DriverSpec, Route, IRQ_BADGE, TX_BADGE};
use crate::net::packet::PacketPool;
use crate::net::stack::{Framing, StackSpec};
use crate::trap::Trap;

/// Port of load client `c`'s stack.
pub const CLIENT_PORT_BASE: u16 = 40000;

/// Priorities: the driver above the stacks above the applications, so data
/// moves before it is asked for again.
pub const DRIVER_PRIORITY: u8 = 200;
/// See [`DRIVER_PRIORITY`].
pub const STACK_PRIORITY: u8 = 150;
/// See [`DRIVER_PRIORITY`].
pub const APP_PRIORITY: u8 = 100;

/// Size bits of the frames (2 MiB: the largest frame).
const FRAME_BITS: Word = 21;

/// The programs' entry words.
#[derive(Clone, Copy, Debug)]
pub struct Entries {
    /// The driver.
    pub driver: Word,
    /// A network stack (argument: its index).
    pub stack: Word,
    /// A KV server (argument: its index).
    pub server: Word,
    /// A load client (argument: its index).
    pub client: Word,
}

/// A mapped 2 MiB frame: its address and size.
fn frame<T: Trap>(env: &mut Env<T>, a: &mut Allocator) -> Result<(NonNull<u8>, usize), Error> {
    let f = a.create(env, ObjectType::Frame, FRAME_BITS)?;
    let at = a.vaddr(FRAME_BITS)?;
    let (addr, size) = env.frame_map(f, CAP_INIT_VSPACE, at)?;
    let base = NonNull::new(addr as *mut u8).ok_or(Error::InvalidArgument)?;
    Ok((base, size as usize))
}

/// A copy of `src` in a new slot, with `badge`.
fn badged<T: Trap>(env: &mut Env<T>, a: &mut Allocator, src: CPtr, badge: Word) -> Result<CPtr, Error> {
    let slot = a.slot()?;
    env.cnode_mint(CAP_INIT_CNODE, slot, NULL, src, CapRights::ALL, badge)?;
    Ok(slot)
}

/// Build the system described by `kv.config` and start its threads.
pub fn system<T: Trap>(env: &mut Env<T>, info: &BootInfo, kv: &KvSystem, e: Entries) -> Result<(), Error> {
    let cfg = &kv.config;
    let mut a = Allocator::from_boot(info);
    let (base, bytes) = frame(env, &mut a)?;
    // SAFETY: the frame stays mapped for the machine's lifetime (nothing
    // unmaps or deletes it) and is used for nothing but this pool.
    let pool = Arc::new(unsafe { PacketPool::new(base, bytes) });
    let _ = kv.pool.set(pool.clone());
    let park = a.create(env, ObjectType::Notification, 0)?;
    let _ = kv.park.set(park);

    let driver_ntfn = a.create(env, ObjectType::Notification, 0)?;
    let irq_ntfn = badged(env, &mut a, driver_ntfn, IRQ_BADGE)?;
    let tx_ntfn = badged(env, &mut a, driver_ntfn, TX_BADGE)?;
    let handler = a.slot()?;
    env.irq_issue_handler(CAP_IRQ_CONTROL, cfg.irq_line as Word, NULL, handler)?;
    env.irq_set_handler(handler, irq_ntfn)?;

    let server_cores = cfg.server_cores();
    let per = cfg.clients_per_server.max(1);
    let clients = cfg.clients();
    let mut areas = Vec::new();
    let mut client_areas = Vec::new();
    for _ in &server_cores {
        let (base, bytes) = frame(env, &mut a)?;
        // Half the frame for the server's socket, the other half shared
        // out among its clients' sockets.
        let server_half = bytes / 4;
        let client_half = bytes / 4 / per;
        // SAFETY: the areas are disjoint parts of a frame mapped for the
        // machine's lifetime; each is used only by one application thread
        // and its stack, following the socket protocol.
        areas.push(unsafe { Area::new(base, server_half) });
        for j in 0..per {
            // SAFETY: as above; `bytes / 2 + j * 2 * client_half` plus the
            // area's `2 * client_half` stays inside the frame.
            let at = unsafe { NonNull::new_unchecked(base.as_ptr().add(bytes / 2 + j * 2 * client_half)) };
            // SAFETY: as above.
            client_areas.push(unsafe { Area::new(at, client_half) });
        }
    }
    areas.extend(client_areas.into_iter().take(clients));

    let mut stacks = Vec::new();
    let mut routes = Vec::new();
    for (i, area) in areas.into_iter().enumerate() {
        let (port, framing) = if i < server_cores.len() {
            (cfg.base_port.wrapping_add(i as u16), Framing::Requests(cfg.max_request))
        } else {
            (CLIENT_PORT_BASE + (i - server_cores.len()) as u16, Framing::Replies)
        };
        let spec = StackSpec {
            port,
            framing,
            ep: a.create(env, ObjectType::Endpoint, 0)?,
            reply: a.create(env, ObjectType::Reply, 0)?,
            ntfn: a.create(env, ObjectType::Notification, 0)?,
            driver: tx_ntfn,
            rx: kv.stack_queues[i].clone(),
            tx: kv.to_driver.clone(),
            pool: pool.clone(),
            area,
        };
        routes.push(Route { port, queue: spec.rx.clone(), ntfn: spec.ntfn });
        stacks.push(spec);
    }
    routes.sort_by_key(|r| r.port);
    if routes.windows(2).any(|w| w[0].port == w[1].port) {
        return Err(Error::InvalidArgument);
    }
    let _ = kv.driver.set(DriverSpec {
        nic: kv.nic.clone(),
        pool,
        ntfn: driver_ntfn,
        irq_handler: handler,
        from_stacks: kv.to_driver.clone(),
        routes,
        dropped: Default::default(),
        interrupts: Default::default(),
    });
    let core_of_stack: Vec<usize> =
        server_cores.iter().copied().chain((0..clients).map(|c| server_cores[c / per])).collect();
    let _ = kv.stacks.set(stacks);

    let mut threads = vec![a.thread(env, e.driver, 0, 0, DRIVER_PRIORITY, false)?];
    for (i, &core) in core_of_stack.iter().enumerate() {
        threads.push(a.thread(env, e.stack, i as Word, core, STACK_PRIORITY, false)?);
    }
    for (i, &core) in server_cores.iter().enumerate() {
        threads.push(a.thread(env, e.server, i as Word, core, APP_PRIORITY, false)?);
    }
    for c in 0..clients {
        threads.push(a.thread(env, e.client, c as Word, server_cores[c / per], APP_PRIORITY, false)?);
    }
    for t in threads {
        env.tcb_resume(t)?;
    }
    Ok(())
}
