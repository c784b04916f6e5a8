//! The far side's event loop, run from the idle loop of the driver's core.
//!
//! [`Polled`] is the [`IdleWork`] of machine core 0 (see
//! `granule_hosted::idle_work`): whenever the core has no thread to run it
//! takes one turn of the loop ([`Loop::step`]): one `epoll_wait`
//! that returns at once with whatever is ready, or sleeps until a socket
//! event or, when another thread rings the core's doorbell, the loop's
//! `eventfd` ([`IdleWork::wake`]). A request is then read, turned into
//! packets and the card's interrupt raised on the same OS thread that
//! serves it next: no hand-off between threads, and one poll per turn, as
//! in Redis's event loop.
//!
//! Replies go out as soon as the driver rings the transmit doorbell: the
//! doorbell ([`FarSide::transmit`], on the driver's core) moves the packets
//! into their sockets and frees their buffers there and then, as the
//! loopback far side of `granule kv` does. Waiting for the core to be idle
//! would not do: a network stack that waits for free packet buffers to
//! send a long reply keeps its core busy, and the buffers it waits for
//! would never be freed.
//!
//! The loop is behind a mutex only so that the serving thread can take it
//! back at the end ([`Polled::finish`]); the core is its only other user
//! (its idle loop and its driver's doorbell never run at once), and neither
//! waits for the lock.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use granule_hosted::nic::{FarSide, Nic};
use granule_hosted::IdleWork;

use super::tcp::{Cable, Loop, Totals};

/// The far side as core 0's idle work.
#[derive(Debug)]
pub struct Polled {
    cable: Arc<Cable>,
    lp: Mutex<State>,
    /// Why the loop failed, if it did (it then stops). Apart from the loop's
    /// lock, which the core holds while it waits for sockets.
    error: OnceLock<String>,
}

#[derive(Debug, Default)]
struct State {
    /// The loop, once the machine built its packet pool (and until the end).
    lp: Option<Loop>,
}

impl Polled {
    /// Idle work for `cable`'s loop, which [`Polled::start`] supplies.
    pub fn new(cable: Arc<Cable>) -> Self {
        Self { cable, lp: Mutex::new(State::default()), error: OnceLock::new() }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.lp.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Start serving with `lp`.
    pub fn start(&self, lp: Loop) {
        self.state().lp = Some(lp);
        self.cable.wake_loop();
    }

    /// Why the loop stopped by itself, if it did (never waits for the loop).
    pub fn failed(&self) -> Option<String> {
        self.error.get().cloned()
    }

    /// Stop the loop, close every socket, and return its counts (`None` if
    /// it never started).
    pub fn finish(&self) -> Option<Totals> {
        self.cable.stop();
        let lp = self.state().lp.take();
        lp.map(Loop::finish)
    }

    /// One turn of the loop, if it runs.
    fn turn(&self, state: &mut State) {
        let Some(lp) = state.lp.as_mut() else { return };
        if let Err(e) = lp.step() {
            eprintln!("granule serve: the TCP event loop failed: {e}");
            let _ = self.error.set(e.to_string());
            // Close every socket now; the serving thread sees the error.
            if let Some(lp) = state.lp.take() {
                let _ = lp.finish();
            }
        }
    }
}

impl FarSide for Polled {
    fn transmit(&self, nic: &Nic) {
        self.cable.transmit(nic);
        if self.cable.stopping() {
            return;
        }
        if let Ok(mut state) = self.lp.try_lock() {
            if let Some(lp) = state.lp.as_mut() {
                lp.send_replies();
            }
        }
    }
}

impl IdleWork for Polled {
    fn wait(&self) {
        if self.cable.stopping() {
            std::thread::park_timeout(std::time::Duration::from_millis(1));
            return;
        }
        let mut state = self.state();
        if state.lp.is_none() {
            // Not serving (yet, or any more): sleep briefly, like a park.
            drop(state);
            std::thread::park_timeout(std::time::Duration::from_millis(1));
            return;
        }
        self.turn(&mut state);
    }

    fn wake(&self) {
        self.cable.wake_loop();
    }
}
