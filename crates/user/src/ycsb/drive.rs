//! Running one operation over a connection to a Redis-compatible server:
//! the loop every load client shares, whatever carries its bytes (a granule
//! socket to a network stack, or a TCP stream to `redis-server`).

use super::{Op, Transaction};
use crate::resp::{parse_reply, ProtocolError};

/// Why an operation could not be run to the end (a reply that fails its
/// check is not an error: see [`Transaction::ok`]).
#[derive(Debug)]
pub enum DriveError<E> {
    /// The transport failed.
    Io(E),
    /// The server sent bytes that are not a RESP reply.
    Malformed(ProtocolError),
}

/// Run `op` to the end. `exchange(request, inbuf)` sends `request` (empty:
/// nothing to send) and then appends at least one more received byte to
/// `inbuf`; `sent(commands)` is told how many commands each request holds.
/// Returns the finished transaction; `inbuf` keeps bytes received beyond its
/// last reply (none, with a well-behaved server).
pub fn run<E>(
    op: Op,
    out: &mut Vec<u8>,
    inbuf: &mut Vec<u8>,
    max_reply: usize,
    mut sent: impl FnMut(usize),
    mut exchange: impl FnMut(&[u8], &mut Vec<u8>) -> Result<(), E>,
) -> Result<Transaction, DriveError<E>> {
    let mut t = Transaction::new(op);
    loop {
        out.clear();
        let Some(commands) = t.next_request(out) else { return Ok(t) };
        sent(commands);
        let mut request: &[u8] = out;
        let mut replies = 0;
        while replies < commands {
            exchange(request, inbuf).map_err(DriveError::Io)?;
            request = &[];
            let mut used = 0;
            while replies < commands {
                match parse_reply(&inbuf[used..], max_reply) {
                    Ok(Some((reply, n))) => {
                        used += n;
                        replies += 1;
                        t.on_reply(&reply);
                    }
                    Ok(None) => break,
                    Err(e) => return Err(DriveError::Malformed(e)),
                }
            }
            inbuf.drain(..used);
        }
    }
}
