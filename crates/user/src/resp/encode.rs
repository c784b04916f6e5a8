//! The other direction: writing RESP2, and reading the server's replies.
//!
//! The server writes its replies with the `write_*` functions, straight into
//! the connection's output buffer; a client frames its commands with
//! [`encode_command`] and reads replies back with [`parse_reply`], or only
//! finds where the next reply ends with [`reply_len`] (a network stack that
//! forwards replies without looking into them: it allocates nothing).
//!
//! Replies are RESP2's five types: `+simple`, `-error`, `:integer`,
//! `$bulk` (or the null bulk `$-1`), `*array` (or the null array `*-1`).
//! A client that chose RESP3 with `HELLO 3` gets four more where RESP2 has
//! stand-ins ([`Protocol`]): the null `_`, maps `%`, doubles `,` and
//! verbatim text `=`. The reply reader takes both: RESP3's types are read as
//! their RESP2 shapes (a map as an array of pairs, a double as its text).
//! Arrays nest; the reader bounds the nesting at [`MAX_REPLY_DEPTH`] and the
//! whole reply at the caller's `max_bytes`, and — like the request parser —
//! checks every claimed length against the bound before trusting it.

use super::number::{format_f64, parse_i64, write_i64, write_u64};
use super::parse::ProtocolError;

/// Deepest nesting of arrays the reply reader accepts.
pub const MAX_REPLY_DEPTH: usize = 32;

/// Appends `+<text>\r\n`; a CR or LF in `text` becomes a space (as Redis
/// does, so a reply can never break the framing).
pub fn write_simple(out: &mut Vec<u8>, text: &[u8]) {
    out.push(b'+');
    push_line(out, text);
}

/// Appends `-<message>\r\n` (`message` starts with the error code, e.g.
/// `ERR syntax error`); CR and LF become spaces.
pub fn write_error(out: &mut Vec<u8>, message: &[u8]) {
    out.push(b'-');
    push_line(out, message);
}

fn push_line(out: &mut Vec<u8>, text: &[u8]) {
    let start = out.len();
    out.extend_from_slice(text);
    for byte in &mut out[start..] {
        if *byte == b'\r' || *byte == b'\n' {
            *byte = b' ';
        }
    }
    out.extend_from_slice(b"\r\n");
}

/// Appends `:<value>\r\n`.
pub fn write_integer(out: &mut Vec<u8>, value: i64) {
    out.push(b':');
    write_i64(out, value);
    out.extend_from_slice(b"\r\n");
}

/// Appends `$<len>\r\n<data>\r\n`.
pub fn write_bulk(out: &mut Vec<u8>, data: &[u8]) {
    out.push(b'$');
    write_u64(out, data.len() as u64);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// Appends the null bulk string `$-1\r\n` (a missing value).
pub fn write_null_bulk(out: &mut Vec<u8>) {
    out.extend_from_slice(b"$-1\r\n");
}

/// Appends `*<len>\r\n`; the `len` elements must follow.
pub fn write_array_header(out: &mut Vec<u8>, len: usize) {
    out.push(b'*');
    write_u64(out, len as u64);
    out.extend_from_slice(b"\r\n");
}

/// Appends the null array `*-1\r\n`.
pub fn write_null_array(out: &mut Vec<u8>) {
    out.extend_from_slice(b"*-1\r\n");
}

/// The protocol a client speaks: RESP2, or RESP3 after `HELLO 3`. The two
/// differ only in how some replies are typed: RESP3 has a null, maps,
/// doubles and verbatim text where RESP2 uses bulk strings and flat arrays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Protocol {
    /// RESP2, every connection's protocol at first.
    #[default]
    Resp2,
    /// RESP3.
    Resp3,
}

/// Appends a missing value: `$-1` in RESP2, `_` in RESP3.
pub fn write_null(out: &mut Vec<u8>, protocol: Protocol) {
    match protocol {
        Protocol::Resp2 => write_null_bulk(out),
        Protocol::Resp3 => out.extend_from_slice(b"_\r\n"),
    }
}

/// Appends the header of a map of `pairs` entries: a flat array of
/// `2 * pairs` elements in RESP2, `%<pairs>` in RESP3.
pub fn write_map_header(out: &mut Vec<u8>, pairs: usize, protocol: Protocol) {
    match protocol {
        Protocol::Resp2 => write_array_header(out, pairs * 2),
        Protocol::Resp3 => {
            out.push(b'%');
            write_u64(out, pairs as u64);
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// Appends the header of a set of `len` members: an array in RESP2,
/// `~<len>` in RESP3.
pub fn write_set_header(out: &mut Vec<u8>, len: usize, protocol: Protocol) {
    match protocol {
        Protocol::Resp2 => write_array_header(out, len),
        Protocol::Resp3 => {
            out.push(b'~');
            write_u64(out, len as u64);
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// Appends a double as Redis does: in Redis's format (`inf`, `-inf` or
/// `%.17g`), as a bulk string in RESP2 and as `,<double>` in RESP3.
pub fn write_double(out: &mut Vec<u8>, value: f64, protocol: Protocol) {
    let text = format_f64(value);
    match protocol {
        Protocol::Resp2 => write_bulk(out, text.as_bytes()),
        Protocol::Resp3 => {
            out.push(b',');
            out.extend_from_slice(text.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// Appends text meant for people (`INFO`): a bulk string in RESP2, a
/// verbatim string of format `txt` in RESP3.
pub fn write_verbatim(out: &mut Vec<u8>, text: &[u8], protocol: Protocol) {
    match protocol {
        Protocol::Resp2 => write_bulk(out, text),
        Protocol::Resp3 => {
            out.push(b'=');
            write_u64(out, text.len() as u64 + 4);
            out.extend_from_slice(b"\r\ntxt:");
            out.extend_from_slice(text);
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// Appends a command as a client sends it: an array of bulk strings.
pub fn encode_command(args: &[&[u8]], out: &mut Vec<u8>) {
    write_array_header(out, args.len());
    for arg in args {
        write_bulk(out, arg);
    }
}

/// One reply, as a client sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `+text`.
    Simple(Vec<u8>),
    /// `-message` (code included: `ERR ...`, `WRONGTYPE ...`).
    Error(Vec<u8>),
    /// `:n`.
    Integer(i64),
    /// `$len` data, or `None` for the null bulk string.
    Bulk(Option<Vec<u8>>),
    /// `*len` elements, or `None` for the null array.
    Array(Option<Vec<Reply>>),
}

impl Reply {
    /// Appends the reply's RESP2 encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Reply::Simple(text) => write_simple(out, text),
            Reply::Error(message) => write_error(out, message),
            Reply::Integer(value) => write_integer(out, *value),
            Reply::Bulk(None) => write_null_bulk(out),
            Reply::Bulk(Some(data)) => write_bulk(out, data),
            Reply::Array(None) => write_null_array(out),
            Reply::Array(Some(items)) => {
                write_array_header(out, items.len());
                for item in items {
                    item.encode(out);
                }
            }
        }
    }
}

/// Parses the reply at the start of `buf`: `Ok(None)` when only a prefix
/// of one is there, `Ok(Some((reply, consumed)))` when it is complete, `Err`
/// when malformed, nested deeper than [`MAX_REPLY_DEPTH`] or longer than
/// `max_bytes`. Nothing is allocated until the whole reply is present.
pub fn parse_reply(buf: &[u8], max_bytes: usize) -> Result<Option<(Reply, usize)>, ProtocolError> {
    let Some(len) = reply_len(buf, max_bytes)? else {
        return Ok(None);
    };
    let (reply, end) = build(buf, 0)?;
    debug_assert_eq!(end, len);
    Ok(Some((reply, end)))
}

/// Finds where the reply at the start of `buf` ends, without allocating:
/// `Ok(Some(len))` when the first `len` bytes are one whole reply, `Ok(None)`
/// when more are needed, `Err` as for [`parse_reply`].
pub fn reply_len(buf: &[u8], max_bytes: usize) -> Result<Option<usize>, ProtocolError> {
    scan(buf, 0, max_bytes, 0)
}

/// What the line at `pos` (after the type byte) ends with.
enum Line {
    /// Incomplete.
    Partial,
    /// The line's content ends at `cr`; the next item starts at `next`.
    Complete { cr: usize, next: usize },
}

/// Finds the `\r\n` ending the line that starts at `pos`, within `max`.
fn line(buf: &[u8], pos: usize, max: usize) -> Result<Line, ProtocolError> {
    let rest = buf.get(pos..).unwrap_or(&[]);
    match rest.iter().position(|&c| c == b'\r') {
        None if buf.len() > max => Err(ProtocolError::TooBigReply),
        None => Ok(Line::Partial),
        Some(offset) => {
            let cr = pos + offset;
            if cr + 2 > max {
                return Err(ProtocolError::TooBigReply);
            }
            match buf.get(cr + 1) {
                None => Ok(Line::Partial),
                Some(b'\n') => Ok(Line::Complete { cr, next: cr + 2 }),
                Some(_) => Err(ProtocolError::MissingCrlf),
            }
        }
    }
}

/// Where the reply at `pos` ends (see [`reply_len`]).
fn scan(buf: &[u8], pos: usize, max: usize, depth: usize) -> Result<Option<usize>, ProtocolError> {
    let Some(&kind) = buf.get(pos) else {
        return Ok(None);
    };
    let (cr, next) = match line(buf, pos + 1, max)? {
        Line::Partial => return Ok(None),
        Line::Complete { cr, next } => (cr, next),
    };
    let number = |err| parse_i64(&buf[pos + 1..cr]).ok_or(err);
    match kind {
        b'+' | b'-' | b'_' | b',' | b'(' | b'#' => Ok(Some(next)),
        b':' => number(ProtocolError::InvalidInteger).map(|_| Some(next)),
        b'$' | b'=' | b'!' => match number(ProtocolError::InvalidBulkLength)? {
            -1 => Ok(Some(next)),
            len => {
                let len = usize::try_from(len).map_err(|_| ProtocolError::InvalidBulkLength)?;
                let end = next.saturating_add(len).saturating_add(2);
                if end > max {
                    return Err(ProtocolError::TooBigReply);
                }
                if buf.len() < end {
                    return Ok(None);
                }
                if buf[end - 2..end] != *b"\r\n" {
                    return Err(ProtocolError::MissingCrlf);
                }
                Ok(Some(end))
            }
        },
        b'*' | b'%' | b'~' | b'>' => match number(ProtocolError::InvalidMultibulkLength)? {
            -1 => Ok(Some(next)),
            count => {
                let count = usize::try_from(count).map_err(|_| ProtocolError::InvalidMultibulkLength)?;
                let count = if kind == b'%' { count.saturating_mul(2) } else { count };
                if depth >= MAX_REPLY_DEPTH {
                    return Err(ProtocolError::TooDeep);
                }
                // Every element takes at least three bytes (`+\r\n`).
                if next.saturating_add(count.saturating_mul(3)) > max {
                    return Err(ProtocolError::TooBigReply);
                }
                let mut at = next;
                for _ in 0..count {
                    match scan(buf, at, max, depth + 1)? {
                        Some(end) => at = end,
                        None => return Ok(None),
                    }
                }
                Ok(Some(at))
            }
        },
        other => Err(ProtocolError::InvalidReplyType(other)),
    }
}

/// Builds the reply at `pos`, which [`scan`] found complete and valid.
fn build(buf: &[u8], pos: usize) -> Result<(Reply, usize), ProtocolError> {
    let kind = *buf.get(pos).ok_or(ProtocolError::TooBigReply)?;
    let (cr, next) = match line(buf, pos + 1, usize::MAX)? {
        Line::Partial => return Err(ProtocolError::TooBigReply),
        Line::Complete { cr, next } => (cr, next),
    };
    let text = &buf[pos + 1..cr];
    let number = |err| parse_i64(text).ok_or(err);
    match kind {
        b'+' | b',' | b'(' | b'#' => Ok((Reply::Simple(text.to_vec()), next)),
        b'-' => Ok((Reply::Error(text.to_vec()), next)),
        b'_' => Ok((Reply::Bulk(None), next)),
        b':' => Ok((Reply::Integer(number(ProtocolError::InvalidInteger)?), next)),
        b'$' | b'=' | b'!' => match number(ProtocolError::InvalidBulkLength)? {
            -1 => Ok((Reply::Bulk(None), next)),
            len => {
                let len = usize::try_from(len).map_err(|_| ProtocolError::InvalidBulkLength)?;
                let data = buf.get(next..next + len).ok_or(ProtocolError::InvalidBulkLength)?.to_vec();
                let reply = if kind == b'!' { Reply::Error(data) } else { Reply::Bulk(Some(data)) };
                Ok((reply, next + len + 2))
            }
        },
        b'*' | b'%' | b'~' | b'>' => match number(ProtocolError::InvalidMultibulkLength)? {
            -1 => Ok((Reply::Array(None), next)),
            count => {
                let count = usize::try_from(count).map_err(|_| ProtocolError::InvalidMultibulkLength)?;
                let count = if kind == b'%' { count.saturating_mul(2) } else { count };
                // The scan saw all `count` elements present: safe to reserve.
                let mut items = Vec::with_capacity(count);
                let mut at = next;
                for _ in 0..count {
                    let (item, end) = build(buf, at)?;
                    items.push(item);
                    at = end;
                }
                Ok((Reply::Array(Some(items)), at))
            }
        },
        other => Err(ProtocolError::InvalidReplyType(other)),
    }
}

/// The YCSB transactions read replies through this view.
impl crate::ycsb::ReplyView for Reply {
    fn view(&self) -> crate::ycsb::View<'_, Self> {
        use crate::ycsb::View;
        match self {
            Self::Simple(s) => View::Simple(s),
            Self::Error(e) => View::Error(e),
            Self::Integer(i) => View::Integer(*i),
            Self::Bulk(b) => View::Bulk(b.as_deref()),
            Self::Array(a) => View::Array(a.as_deref()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(data: &[u8]) -> Reply {
        Reply::Bulk(Some(data.to_vec()))
    }

    #[test]
    fn writers_produce_resp2() {
        let mut out = Vec::new();
        write_simple(&mut out, b"OK");
        write_error(&mut out, b"ERR bad\r\nthing");
        write_integer(&mut out, -42);
        write_bulk(&mut out, b"hi");
        write_null_bulk(&mut out);
        write_array_header(&mut out, 2);
        write_null_array(&mut out);
        write_double(&mut out, 0.1, Protocol::Resp2);
        assert_eq!(
            out,
            b"+OK\r\n-ERR bad  thing\r\n:-42\r\n$2\r\nhi\r\n$-1\r\n*2\r\n*-1\r\n$19\r\n0.10000000000000001\r\n"
        );
    }

    #[test]
    fn resp3_types_replace_their_resp2_stand_ins() {
        let mut out = Vec::new();
        for protocol in [Protocol::Resp2, Protocol::Resp3] {
            write_null(&mut out, protocol);
            write_map_header(&mut out, 2, protocol);
            write_double(&mut out, f64::NEG_INFINITY, protocol);
            write_verbatim(&mut out, b"a:1", protocol);
        }
        assert_eq!(out, b"$-1\r\n*4\r\n$4\r\n-inf\r\n$3\r\na:1\r\n_\r\n%2\r\n,-inf\r\n=7\r\ntxt:a:1\r\n");
    }

    #[test]
    fn sets_are_arrays_in_resp2_and_their_own_type_in_resp3() {
        let mut out = Vec::new();
        write_set_header(&mut out, 3, Protocol::Resp2);
        write_set_header(&mut out, 0, Protocol::Resp3);
        assert_eq!(out, b"*3\r\n~0\r\n");
    }

    #[test]
    fn commands_encode_as_arrays_of_bulks() {
        let mut out = Vec::new();
        encode_command(&[b"SET", b"k", b""], &mut out);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
    }

    #[test]
    fn replies_round_trip_and_every_prefix_needs_more() {
        let reply = Reply::Array(Some(vec![
            Reply::Simple(b"OK".to_vec()),
            Reply::Error(b"ERR no".to_vec()),
            Reply::Integer(i64::MIN),
            bulk(b"a\r\nb"),
            Reply::Bulk(None),
            Reply::Array(None),
            Reply::Array(Some(vec![bulk(b""), Reply::Array(Some(vec![]))])),
        ]));
        let mut bytes = Vec::new();
        reply.encode(&mut bytes);
        assert_eq!(parse_reply(&bytes, 1 << 20), Ok(Some((reply, bytes.len()))));
        assert_eq!(reply_len(&bytes, 1 << 20), Ok(Some(bytes.len())));
        for cut in 0..bytes.len() {
            assert_eq!(reply_len(&bytes[..cut], 1 << 20), Ok(None), "cut at {cut}");
            assert_eq!(parse_reply(&bytes[..cut], 1 << 20), Ok(None), "cut at {cut}");
        }
    }

    #[test]
    fn malformed_and_oversized_replies_are_rejected() {
        use ProtocolError::*;
        for (bytes, err) in [
            (&b"@x\r\n"[..], InvalidReplyType(b'@')),
            (b":12a\r\n", InvalidInteger),
            (b"$-2\r\n", InvalidBulkLength),
            (b"$3\r\nabcd\r\n", MissingCrlf),
            (b"*-2\r\n", InvalidMultibulkLength),
            (b"+ok\rx", MissingCrlf),
            (b"$100\r\n", TooBigReply),
            (b"*40\r\n", TooBigReply),
        ] {
            assert_eq!(reply_len(bytes, 64), Err(err), "{:?}", String::from_utf8_lossy(bytes));
            assert_eq!(parse_reply(bytes, 64).map(|r| r.map(|(_, n)| n)), Err(err));
        }
        assert_eq!(reply_len(&[b'+'; 65], 64), Err(TooBigReply));
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = |levels: usize| {
            let mut bytes = b"*1\r\n".repeat(levels);
            bytes.extend_from_slice(b":1\r\n");
            bytes
        };
        assert!(matches!(reply_len(&deep(MAX_REPLY_DEPTH), 1 << 20), Ok(Some(_))));
        assert_eq!(reply_len(&deep(MAX_REPLY_DEPTH + 1), 1 << 20), Err(ProtocolError::TooDeep));
    }
}
