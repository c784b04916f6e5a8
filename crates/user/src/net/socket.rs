//! The application's side of a socket: one `Call` to its network stack per
//! "send and then receive" (the seeds' monolithic system call: an IPC to a
//! server and its reply, two kernel entries).
//!
//! Message of the call: label [`SEND_RECV`] or [`SEND`], `msg[0]` the
//! connection (the peer's port), `msg[1]` the bytes placed in the area's
//! `to_stack` half, `msg[2]` flags ([`CLOSE`]: close the connection after
//! sending). Reply of a `SEND_RECV`: `msg[0]` the connection the bytes came
//! from, `msg[1]` their length in the `to_app` half, `msg[2]` flags
//! ([`CLOSED`]: the peer closed it; no bytes. [`TICKED`]: a wake-up the
//! application asked for, on no connection; no bytes).

use granule_kernel::abi::Error;
use granule_kernel::{MessageInfo, Word};

use super::area::Area;
use crate::env::{CPtr, Env};
use crate::trap::Trap;

/// Send the bytes, then wait for incoming ones.
pub const SEND_RECV: Word = 1;
/// Send the bytes and return at once.
pub const SEND: Word = 2;
/// Request flag: close the connection after the bytes.
pub const CLOSE: Word = 1;
/// Reply flag: the peer closed the connection.
pub const CLOSED: Word = 1;
/// Reply flag: a wake-up (a `TICK` packet), not bytes of a connection.
pub const TICKED: Word = 2;

/// What a `SEND_RECV` brought back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Incoming {
    /// The connection (peer port).
    pub conn: u16,
    /// Bytes in the area's `to_app` half.
    pub len: usize,
    /// The peer closed the connection.
    pub closed: bool,
    /// A wake-up the application asked for (no connection, no bytes).
    pub tick: bool,
}

/// An application's socket: its stack's endpoint and the shared area.
#[derive(Clone, Copy, Debug)]
pub struct Socket {
    /// The stack's endpoint.
    pub ep: CPtr,
    /// The shared area.
    pub area: Area,
}

impl Socket {
    /// Send `data` on `conn` (in area-sized pieces), close it after if
    /// `close`, then wait for incoming bytes (read them with
    /// [`Socket::incoming`]).
    pub fn send_recv<T: Trap>(&self, env: &mut Env<T>, conn: u16, data: &[u8], close: bool) -> Result<Incoming, Error> {
        let cap = self.area.to_stack.capacity();
        let mut rest = data;
        while rest.len() > cap {
            let n = self.area.to_stack.write(&rest[..cap]);
            self.call(env, SEND, conn, n, 0)?;
            rest = &rest[n..];
        }
        let n = self.area.to_stack.write(rest);
        let r = self.call(env, SEND_RECV, conn, n, if close { CLOSE } else { 0 })?;
        let m = env.msg();
        let _ = r;
        Ok(Incoming {
            conn: m[0] as u16,
            len: (m[1] as usize).min(self.area.to_app.capacity()),
            closed: m[2] & CLOSED != 0,
            tick: m[2] & TICKED != 0,
        })
    }

    /// Send `data` on `conn` (in area-sized pieces) and close it after if
    /// `close`, without waiting for incoming bytes: for bytes to another
    /// connection than the one being answered (a published message), or to
    /// close one (a killed client).
    pub fn send<T: Trap>(&self, env: &mut Env<T>, conn: u16, data: &[u8], close: bool) -> Result<(), Error> {
        let cap = self.area.to_stack.capacity();
        let mut rest = data;
        loop {
            let piece = &rest[..rest.len().min(cap)];
            let n = self.area.to_stack.write(piece);
            let last = n == rest.len();
            self.call(env, SEND, conn, n, if close && last { CLOSE } else { 0 })?;
            rest = &rest[n..];
            if last || n == 0 {
                return Ok(());
            }
        }
    }

    /// The bytes of the last [`Incoming`].
    pub fn incoming<R>(&self, got: &Incoming, f: impl FnOnce(&[u8]) -> R) -> R {
        self.area.to_app.read(got.len, f)
    }

    fn call<T: Trap>(
        &self,
        env: &mut Env<T>,
        label: Word,
        conn: u16,
        len: usize,
        flags: Word,
    ) -> Result<MessageInfo, Error> {
        let m = env.msg();
        m[0] = conn as Word;
        m[1] = len as Word;
        m[2] = flags;
        env.call(self.ep, MessageInfo::new(label, 0, 0, 3))
    }
}
