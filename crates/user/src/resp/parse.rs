//! The request parser: RESP2 bytes in, one command's argument list out.
//!
//! A client sends either a *multibulk* frame — `*<n>\r\n` followed by `n`
//! bulk strings `$<len>\r\n<len bytes>\r\n` — or an *inline* command, one
//! line of space-separated words as typed into telnet (any line not starting
//! with `*`). The parser is incremental: given the bytes received so far it
//! answers "one request, `k` bytes long", "need more bytes", or "malformed".
//!
//! It is bounded by [`Limits`] and never trusts a length before the bytes
//! behind it are present: a header claiming a huge count or length is
//! rejected at once when it cannot fit in `max_request`, and nothing is ever
//! allocated from a claimed size. A [`Request`] does not copy the arguments
//! of a multibulk frame: it records where each one lies in the caller's
//! buffer (eight fit inline, so `GET`/`SET` parse without allocating).
//!
//! [`Parser`] keeps the progress of a frame between calls, so a frame that
//! trickles in byte by byte is scanned once, not once per arrival;
//! [`parse_request`] is the stateless form. Error messages are Redis's own
//! (`invalid multibulk length`, `expected '$', got 'x'`…); the caller prefixes
//! them with `Protocol error: ` and closes the connection, as Redis does.

use std::fmt;

use super::number::{is_c_space, parse_i64};

/// Bounds on one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest request in bytes, framing included.
    pub max_request: usize,
    /// Largest argument count of a multibulk frame.
    pub max_args: usize,
    /// Largest single argument in bytes.
    pub max_bulk: usize,
    /// Longest inline command line in bytes (Redis: 64 KiB).
    pub max_inline: usize,
}

impl Limits {
    /// The default request bound: 1 MiB (Redis allows 512 MiB, far more
    /// than a research store needs).
    pub const DEFAULT_MAX_REQUEST: usize = 1 << 20;

    /// Limits for requests of at most `max_request` bytes: any argument may
    /// use all of it, inline lines at most 64 KiB of it.
    pub fn with_max_request(max_request: usize) -> Self {
        Limits { max_request, max_args: 1024 * 1024, max_bulk: max_request, max_inline: max_request.min(64 * 1024) }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::with_max_request(Limits::DEFAULT_MAX_REQUEST)
    }
}

/// Why bytes are not RESP2. The `Display` text is Redis's message, to be
/// sent as `-ERR Protocol error: <message>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtocolError {
    /// A `*` count that is not a number, is below -1 or above the limit.
    InvalidMultibulkLength,
    /// A `$` length that is not a number, is negative or above the limit.
    InvalidBulkLength,
    /// An argument of a multibulk frame that does not start with `$`.
    ExpectedBulk(u8),
    /// Bulk data not followed by `\r\n`.
    MissingCrlf,
    /// An inline command with an unterminated quote.
    UnbalancedQuotes,
    /// An inline command line longer than `max_inline`.
    TooBigInline,
    /// A request longer than `max_request`.
    TooBigRequest,
    /// A reply starting with a byte that is no RESP2 type.
    InvalidReplyType(u8),
    /// An integer reply that is not a number.
    InvalidInteger,
    /// A reply nested deeper than the reply parser allows.
    TooDeep,
    /// A reply longer than the caller's bound.
    TooBigReply,
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ProtocolError::InvalidMultibulkLength => f.write_str("invalid multibulk length"),
            ProtocolError::InvalidBulkLength => f.write_str("invalid bulk length"),
            ProtocolError::ExpectedBulk(got) => write!(f, "expected '$', got '{}'", Printable(got)),
            ProtocolError::MissingCrlf => f.write_str("expected '\\r\\n' after bulk data"),
            ProtocolError::UnbalancedQuotes => f.write_str("unbalanced quotes in request"),
            ProtocolError::TooBigInline => f.write_str("too big inline request"),
            ProtocolError::TooBigRequest => f.write_str("too big request"),
            ProtocolError::InvalidReplyType(got) => write!(f, "unexpected reply type '{}'", Printable(got)),
            ProtocolError::InvalidInteger => f.write_str("invalid integer reply"),
            ProtocolError::TooDeep => f.write_str("reply nested too deeply"),
            ProtocolError::TooBigReply => f.write_str("too big reply"),
        }
    }
}

impl std::error::Error for ProtocolError {}

/// A byte shown as itself when printable, else as `\xNN`.
struct Printable(u8);

impl fmt::Display for Printable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_ascii_graphic() || self.0 == b' ' {
            write!(f, "{}", char::from(self.0))
        } else {
            write!(f, "\\x{:02x}", self.0)
        }
    }
}

/// Bytes a multibulk argument needs at least (`$0\r\n\r\n`): how a frame's
/// claimed count is checked against `max_request` before any data arrives.
const MIN_ARG_BYTES: usize = 6;

/// Longest number in a header line (`-9223372036854775808`).
const MAX_HEADER_DIGITS: usize = 20;

/// Arguments whose positions a [`Request`] holds without allocating.
const INLINE_ARGS: usize = 8;

/// Argument positions a parser keeps allocated between requests (16 KiB).
const KEEP_SPANS: usize = 1024;

/// Bytes of a decoded inline command a parser keeps allocated between
/// requests.
const KEEP_INLINE_BYTES: usize = 4096;

/// Where each argument lies: `(start, len)` pairs, the first eight inline.
#[derive(Clone, Debug, Default)]
struct Spans {
    len: usize,
    small: [(usize, usize); INLINE_ARGS],
    large: Vec<(usize, usize)>,
}

impl Spans {
    #[inline]
    fn push(&mut self, span: (usize, usize)) {
        if self.len < INLINE_ARGS {
            self.small[self.len] = span;
        } else {
            if self.large.is_empty() {
                self.large.extend_from_slice(&self.small);
            }
            self.large.push(span);
        }
        self.len += 1;
    }

    /// Forgets every span (keeping what was allocated).
    #[inline]
    fn clear(&mut self) {
        self.len = 0;
        self.large.clear();
    }

    fn as_slice(&self) -> &[(usize, usize)] {
        if self.len <= INLINE_ARGS {
            &self.small[..self.len]
        } else {
            &self.large
        }
    }
}

/// Where a multibulk scan puts each argument's `(start, len)`: a request's
/// [`Spans`], or nowhere ([`Boundaries`]) when only the frame's end is wanted.
trait SpanSink {
    fn push(&mut self, span: (usize, usize));
}

impl SpanSink for Spans {
    #[inline]
    fn push(&mut self, span: (usize, usize)) {
        Spans::push(self, span);
    }
}

/// The sink of a scan that only finds where frames end ([`request_len`]).
struct Boundaries;

impl SpanSink for Boundaries {
    #[inline(always)]
    fn push(&mut self, _span: (usize, usize)) {}
}

/// How far a multibulk scan got.
enum Scan {
    /// The buffer ends inside the frame's header line: read it again.
    Header,
    /// The frame is whole and ends here.
    Whole(usize),
    /// The buffer ends inside it: `remaining` arguments from `pos` to go.
    Partial { pos: usize, remaining: usize },
}

/// One parsed request: its argument list (command name first). A request
/// parsed from a multibulk frame refers into the buffer it was parsed from,
/// which every accessor takes again as `buf`; an inline command (whose
/// quotes and escapes are decoded) owns its bytes and ignores `buf`. An
/// empty request (an empty line, `*0`, `*-1`) asks for no reply.
#[derive(Clone, Debug, Default)]
pub struct Request {
    spans: Spans,
    owned: Vec<u8>,
    inline: bool,
}

impl Request {
    /// Number of arguments, command name included.
    pub fn len(&self) -> usize {
        self.spans.len
    }

    /// Whether the request has no arguments at all.
    pub fn is_empty(&self) -> bool {
        self.spans.len == 0
    }

    /// Argument `index`, read from `buf` (the buffer this request was parsed
    /// from, same start); `None` past the end or when `buf` is too short.
    pub fn arg<'a>(&'a self, buf: &'a [u8], index: usize) -> Option<&'a [u8]> {
        let &(start, len) = self.spans.as_slice().get(index)?;
        self.source(buf).get(start..start + len)
    }

    /// The arguments in order, read from `buf` as in [`Request::arg`].
    pub fn args<'a>(&'a self, buf: &'a [u8]) -> impl ExactSizeIterator<Item = &'a [u8]> + 'a {
        let source = self.source(buf);
        self.spans.as_slice().iter().map(move |&(start, len)| source.get(start..start + len).unwrap_or(&[]))
    }

    /// Calls `f` with the arguments as a slice, building it on the stack
    /// when there are at most eight (the common case: no allocation).
    pub fn with_args<R>(&self, buf: &[u8], f: impl FnOnce(&[&[u8]]) -> R) -> R {
        if self.len() <= INLINE_ARGS {
            let mut args: [&[u8]; INLINE_ARGS] = [&[]; INLINE_ARGS];
            for (slot, arg) in args.iter_mut().zip(self.args(buf)) {
                *slot = arg;
            }
            f(&args[..self.len()])
        } else {
            let args: Vec<&[u8]> = self.args(buf).collect();
            f(&args)
        }
    }

    /// The arguments as owned byte strings.
    pub fn to_vec(&self, buf: &[u8]) -> Vec<Vec<u8>> {
        self.args(buf).map(<[u8]>::to_vec).collect()
    }

    fn source<'a>(&'a self, buf: &'a [u8]) -> &'a [u8] {
        if self.inline {
            &self.owned
        } else {
            buf
        }
    }

    /// Empties the request for the next frame, keeping what was allocated
    /// unless a large request left it large (a connection's parser lives as
    /// long as the connection: one frame of many arguments must not pin
    /// megabytes for the rest of it).
    #[inline]
    fn clear(&mut self) {
        self.spans.clear();
        self.owned.clear();
        self.inline = false;
        if self.spans.large.capacity() > KEEP_SPANS {
            self.spans.large = Vec::new();
        }
        if self.owned.capacity() > KEEP_INLINE_BYTES {
            self.owned = Vec::new();
        }
    }
}

/// Parses one request from the start of `buf`: `Ok(None)` when `buf` holds
/// only a prefix of one, `Ok(Some((request, consumed)))` when the first
/// `consumed` bytes are one whole request, `Err` when they are malformed.
pub fn parse_request(buf: &[u8], limits: &Limits) -> Result<Option<(Request, usize)>, ProtocolError> {
    let mut parser = Parser::new();
    let parsed = parser.parse(buf, limits)?;
    Ok(parsed.map(|used| (parser.request, used)))
}

/// Finds where the first request of `buf` ends, for a network stack that
/// cuts a stream into requests without executing them: `Ok(Some(len))`,
/// `Ok(None)` if incomplete, `Err` exactly when [`parse_request`] with
/// `Limits::with_max_request(max_request)` fails. A multibulk frame is
/// scanned without building a request (nothing allocated, no span kept);
/// an inline command goes through the parser.
pub fn request_len(buf: &[u8], max_request: usize) -> Result<Option<usize>, ProtocolError> {
    let limits = Limits::with_max_request(max_request);
    if buf.first() != Some(&b'*') {
        return Parser::new().parse(buf, &limits);
    }
    // The same scan as the parser's, its spans dropped: no request is built.
    match scan_frame(buf, &limits, &mut Boundaries)? {
        Scan::Whole(end) => Ok(Some(end)),
        Scan::Header | Scan::Partial { .. } if buf.len() > limits.max_request => Err(ProtocolError::TooBigRequest),
        Scan::Header | Scan::Partial { .. } => Ok(None),
    }
}

/// An incremental request parser: [`parse_request`] that remembers how far
/// it got into an incomplete frame, and keeps the request it parsed last
/// ([`Parser::request`]) so that parsing one moves no request around.
///
/// Contract: after a call returned `Ok(None)`, the next call must pass the
/// same bytes again (from the same frame start) plus any new ones — as a
/// connection's input buffer naturally does. After `Ok(Some)` or `Err` the
/// parser starts afresh; [`Parser::reset`] forgets a partial frame.
#[derive(Debug, Default)]
pub struct Parser {
    state: State,
    /// The frame's arguments so far; after `Ok(Some)`, the whole request.
    request: Request,
}

/// How far the parser got into the frame at the start of the buffer.
#[derive(Clone, Copy, Debug, Default)]
enum State {
    /// At a frame start.
    #[default]
    Start,
    /// In an inline line whose first `scanned` bytes hold no newline.
    Inline { scanned: usize },
    /// In a multibulk frame, `remaining` arguments from `pos` (those before
    /// `pos` are in the request already).
    Multibulk { pos: usize, remaining: usize },
}

impl Parser {
    /// A parser at a frame start.
    pub fn new() -> Self {
        Parser::default()
    }

    /// Forgets any partial frame.
    pub fn reset(&mut self) {
        self.state = State::Start;
        self.request.clear();
    }

    /// The request the last `Ok(Some(_))` of [`Parser::parse`] completed
    /// (its arguments refer into the buffer that call was given).
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// Parses one request from the start of `buf`: `Ok(Some(consumed))`
    /// when its first `consumed` bytes are one whole request, now in
    /// [`Parser::request`]; otherwise as [`parse_request`] (see also the
    /// resumption contract on [`Parser`]).
    pub fn parse(&mut self, buf: &[u8], limits: &Limits) -> Result<Option<usize>, ProtocolError> {
        let result = match self.state {
            State::Start => {
                self.request.clear();
                match buf.first() {
                    None => Ok(None),
                    Some(b'*') => self.multibulk_header(buf, limits),
                    Some(_) => self.inline(buf, 0, limits),
                }
            }
            State::Inline { scanned } => self.inline(buf, scanned, limits),
            State::Multibulk { pos, remaining } => self.multibulk(buf, pos, remaining, limits),
        };
        match result {
            Ok(None) => {
                // Belt and braces: an incomplete frame never holds more than the limit.
                if buf.len() > limits.max_request {
                    self.state = State::Start;
                    return Err(ProtocolError::TooBigRequest);
                }
            }
            _ => self.state = State::Start,
        }
        result
    }

    #[inline]
    fn multibulk_header(&mut self, buf: &[u8], limits: &Limits) -> Result<Option<usize>, ProtocolError> {
        let scan = scan_frame(buf, limits, &mut self.request.spans)?;
        Ok(self.scanned(scan))
    }

    #[inline]
    fn multibulk(
        &mut self,
        buf: &[u8],
        pos: usize,
        remaining: usize,
        limits: &Limits,
    ) -> Result<Option<usize>, ProtocolError> {
        let scan = scan_args(buf, pos, remaining, limits, &mut self.request.spans)?;
        Ok(self.scanned(scan))
    }

    /// The end of a whole frame, or the progress kept for the next call.
    #[inline(always)]
    fn scanned(&mut self, scan: Scan) -> Option<usize> {
        match scan {
            Scan::Header => None,
            Scan::Whole(end) => Some(end),
            Scan::Partial { pos, remaining } => {
                self.state = State::Multibulk { pos, remaining };
                None
            }
        }
    }

    #[cold]
    fn inline(&mut self, buf: &[u8], scanned: usize, limits: &Limits) -> Result<Option<usize>, ProtocolError> {
        let max_line = limits.max_inline.min(limits.max_request);
        let from = scanned.min(buf.len());
        let Some(offset) = buf[from..].iter().position(|&c| c == b'\n') else {
            if buf.len() > max_line {
                return Err(ProtocolError::TooBigInline);
            }
            self.state = State::Inline { scanned: buf.len() };
            return Ok(None);
        };
        let newline = from + offset;
        if newline > max_line {
            return Err(ProtocolError::TooBigInline);
        }
        let line = &buf[..newline];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        self.request = split_inline(line)?;
        Ok(Some(newline + 1))
    }
}

/// Scans a multibulk frame from its `*` at the start of `buf`, each
/// argument's span into `spans`.
#[inline(always)]
fn scan_frame(buf: &[u8], limits: &Limits, spans: &mut impl SpanSink) -> Result<Scan, ProtocolError> {
    let Some((count, pos)) = read_header(buf, 0, ProtocolError::InvalidMultibulkLength)? else {
        return Ok(Scan::Header);
    };
    if count == 0 || count == -1 {
        return Ok(Scan::Whole(pos));
    }
    let count = usize::try_from(count).map_err(|_| ProtocolError::InvalidMultibulkLength)?;
    if count > limits.max_args {
        return Err(ProtocolError::InvalidMultibulkLength);
    }
    if pos.saturating_add(count.saturating_mul(MIN_ARG_BYTES)) > limits.max_request {
        return Err(ProtocolError::TooBigRequest);
    }
    scan_args(buf, pos, count, limits, spans)
}

/// Scans `remaining` bulk arguments from `pos`, each one's span into
/// `spans`; lengths are checked against the limits before their bytes are
/// waited for.
#[inline(always)]
fn scan_args(
    buf: &[u8],
    mut pos: usize,
    mut remaining: usize,
    limits: &Limits,
    spans: &mut impl SpanSink,
) -> Result<Scan, ProtocolError> {
    while remaining > 0 {
        let Some(&kind) = buf.get(pos) else {
            return Ok(Scan::Partial { pos, remaining });
        };
        if kind != b'$' {
            return Err(ProtocolError::ExpectedBulk(kind));
        }
        let Some((len, data)) = read_header(buf, pos, ProtocolError::InvalidBulkLength)? else {
            return Ok(Scan::Partial { pos, remaining });
        };
        let len = usize::try_from(len).map_err(|_| ProtocolError::InvalidBulkLength)?;
        if len > limits.max_bulk {
            return Err(ProtocolError::InvalidBulkLength);
        }
        // Everything still to come must fit, at its smallest.
        let end = data.saturating_add(len).saturating_add(2);
        if end.saturating_add((remaining - 1).saturating_mul(MIN_ARG_BYTES)) > limits.max_request {
            return Err(ProtocolError::TooBigRequest);
        }
        if buf.len() < end {
            return Ok(Scan::Partial { pos, remaining });
        }
        if buf[end - 2..end] != *b"\r\n" {
            return Err(ProtocolError::MissingCrlf);
        }
        spans.push((data, len));
        pos = end;
        remaining -= 1;
    }
    Ok(Scan::Whole(pos))
}

/// Reads the header line `<type byte><number>\r\n` at `at`: the number and
/// where the line ends, `None` if incomplete, `err` if malformed. Numbers
/// follow Redis's `string2ll` (no `+`, no leading zeros); a line that cannot
/// be a number is rejected as soon as its bytes show it, not at its `\r`.
#[inline]
fn read_header(buf: &[u8], at: usize, err: ProtocolError) -> Result<Option<(i64, usize)>, ProtocolError> {
    match short_header(buf, at) {
        Some(found) => Ok(Some(found)),
        None => read_any_header(buf, at, err),
    }
}

/// [`read_header`] for every line [`short_header`] leaves.
#[cold]
#[inline(never)]
fn read_any_header(buf: &[u8], at: usize, err: ProtocolError) -> Result<Option<(i64, usize)>, ProtocolError> {
    let digits_start = at + 1;
    let available = buf.get(digits_start..).unwrap_or(&[]);
    let window = &available[..available.len().min(MAX_HEADER_DIGITS + 1)];
    match window.iter().position(|&c| c == b'\r') {
        None => {
            let plausible = window.iter().enumerate().all(|(i, &c)| c.is_ascii_digit() || (i == 0 && c == b'-'));
            if window.len() > MAX_HEADER_DIGITS || !plausible {
                Err(err)
            } else {
                Ok(None)
            }
        }
        Some(offset) => {
            let cr = digits_start + offset;
            match buf.get(cr + 1) {
                None => Ok(None),
                Some(b'\n') => parse_i64(&buf[digits_start..cr]).map(|n| Some((n, cr + 2))).ok_or(err),
                Some(_) => Err(err),
            }
        }
    }
}

/// The common header in one pass: 1 to [`SHORT_DIGITS`] digits, the first
/// not `0` unless alone, then `\r\n` — the number and where the line ends.
/// `None` for anything else (a sign, more digits, a line not complete yet or
/// malformed), which [`read_header`] then reads the general way; every line
/// this accepts, the general way reads to the same value.
#[inline(always)]
fn short_header(buf: &[u8], at: usize) -> Option<(i64, usize)> {
    let digits = buf.get(at + 1..)?;
    let first = *digits.first()?;
    if !first.is_ascii_digit() {
        return None;
    }
    let mut value = i64::from(first - b'0');
    let mut i = 1;
    // A leading zero stands alone.
    if first != b'0' {
        while let Some(&c) = digits.get(i).filter(|c| c.is_ascii_digit() && i < SHORT_DIGITS) {
            value = value * 10 + i64::from(c - b'0');
            i += 1;
        }
    }
    (digits.get(i..i + 2) == Some(b"\r\n")).then_some((value, at + 1 + i + 2))
}

/// Digits [`short_header`] reads: any number of them fits an `i64`.
const SHORT_DIGITS: usize = 18;

/// Splits an inline command line as Redis's `sdssplitargs` does: words
/// separated by blanks; `"..."` with C escapes (`\n`, `\xNN`…) and `'...'`
/// (only `\'` escaped) quote spaces; a closing quote must end its word; the
/// line ends at a NUL byte, as the C string it is in Redis.
fn split_inline(line: &[u8]) -> Result<Request, ProtocolError> {
    let line = line.split(|&c| c == 0).next().unwrap_or(&[]);
    let mut owned = Vec::with_capacity(line.len());
    let mut spans = Spans::default();
    let mut i = 0;
    loop {
        while line.get(i).is_some_and(|&c| is_c_space(c)) {
            i += 1;
        }
        if i >= line.len() {
            break;
        }
        let start = owned.len();
        let (mut in_double, mut in_single) = (false, false);
        loop {
            let here = line.get(i).copied();
            if in_double {
                match here {
                    None => return Err(ProtocolError::UnbalancedQuotes),
                    Some(b'\\') if line.get(i + 1) == Some(&b'x') && hex_pair(line, i + 2).is_some() => {
                        owned.push(hex_pair(line, i + 2).unwrap_or(0));
                        i += 4;
                    }
                    Some(b'\\') if i + 1 < line.len() => {
                        owned.push(match line[i + 1] {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 0x08,
                            b'a' => 0x07,
                            other => other,
                        });
                        i += 2;
                    }
                    Some(b'"') => {
                        if line.get(i + 1).is_some_and(|&c| !is_c_space(c)) {
                            return Err(ProtocolError::UnbalancedQuotes);
                        }
                        i += 1;
                        break;
                    }
                    Some(c) => {
                        owned.push(c);
                        i += 1;
                    }
                }
            } else if in_single {
                match here {
                    None => return Err(ProtocolError::UnbalancedQuotes),
                    Some(b'\\') if line.get(i + 1) == Some(&b'\'') => {
                        owned.push(b'\'');
                        i += 2;
                    }
                    Some(b'\'') => {
                        if line.get(i + 1).is_some_and(|&c| !is_c_space(c)) {
                            return Err(ProtocolError::UnbalancedQuotes);
                        }
                        i += 1;
                        break;
                    }
                    Some(c) => {
                        owned.push(c);
                        i += 1;
                    }
                }
            } else {
                match here {
                    None => break,
                    Some(b' ' | b'\n' | b'\r' | b'\t') => {
                        i += 1;
                        break;
                    }
                    Some(b'"') => {
                        in_double = true;
                        i += 1;
                    }
                    Some(b'\'') => {
                        in_single = true;
                        i += 1;
                    }
                    Some(c) => {
                        owned.push(c);
                        i += 1;
                    }
                }
            }
        }
        spans.push((start, owned.len() - start));
    }
    Ok(Request { spans, owned, inline: true })
}

/// The byte written as two hex digits at `at`, if there are two.
fn hex_pair(line: &[u8], at: usize) -> Option<u8> {
    let high = char::from(*line.get(at)?).to_digit(16)?;
    let low = char::from(*line.get(at + 1)?).to_digit(16)?;
    Some((high * 16 + low) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parse result with the arguments copied out.
    type Parsed = Result<Option<(Vec<Vec<u8>>, usize)>, ProtocolError>;

    fn parse(buf: &[u8]) -> Parsed {
        parse_request(buf, &Limits::default()).map(|r| r.map(|(req, n)| (req.to_vec(buf), n)))
    }

    /// The stack's framing scan ends, waits and fails exactly where the
    /// parser does, on every prefix of well-formed frames and on each way
    /// a frame can be malformed or too large.
    #[test]
    fn request_len_agrees_with_the_parser_on_every_prefix_and_error() {
        let whole: &[&[u8]] = &[
            b"*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000042\r\n",
            b"*0\r\n",
            b"*-1\r\n",
            b"*1\r\n$0\r\n\r\n",
            b"PING\r\n",
            b"SET k \"v w\"\n",
        ];
        let malformed: &[&[u8]] = &[
            b"*x\r\n",
            b"*-2\r\n",
            b"*1\r\n:3\r\n",
            b"*1\r\n$-1\r\n",
            b"*1\r\n$3\r\nGETxx",
            b"*1\r\n$99999\r\n",
            b"*99999999\r\n",
            b"*012\r\n",
            b"SET k \"v\n",
        ];
        let max = 4096;
        let check = |buf: &[u8]| {
            let parsed = parse_request(buf, &Limits::with_max_request(max)).map(|r| r.map(|(_, n)| n));
            assert_eq!(request_len(buf, max), parsed, "{:?}", String::from_utf8_lossy(buf));
        };
        for frame in whole.iter().chain(malformed) {
            for end in 0..=frame.len() {
                check(&frame[..end]);
            }
            // Followed by the start of the next frame.
            check(&[*frame, b"*1\r\n$4\r\nPI".as_slice()].concat());
        }
        assert_eq!(request_len(whole[0], max), Ok(Some(whole[0].len())));
        assert_eq!(request_len(&whole[0][..9], max), Ok(None));
        assert_eq!(request_len(malformed[4], max), Err(ProtocolError::MissingCrlf));
    }

    fn words(list: &[&str]) -> Vec<Vec<u8>> {
        list.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn short_headers_read_as_the_general_reader_reads_them() {
        let cases: [&[u8]; 20] = [
            b"*0\r\n",
            b"*7\r\n",
            b"$16\r\n",
            b"*01\r\n",
            b"*00\r\n",
            b"*-1\r\n",
            b"*+1\r\n",
            b"*\r\n",
            b"*12",
            b"*12\r",
            b"*12\rx",
            b"*1x\r\n",
            b"*999999999999999999\r\n",
            b"*1000000000000000000\r\n",
            b"*9223372036854775807\r\n",
            b"*9223372036854775808\r\n",
            b"*123456789012345678901\r\n",
            b"$3\r\nGET\r\n",
            b"$ 3\r\n",
            b"*",
        ];
        for case in cases {
            let err = ProtocolError::InvalidMultibulkLength;
            let general = read_any_header(case, 0, err);
            assert_eq!(read_header(case, 0, err), general, "{}", String::from_utf8_lossy(case));
            if let Some(short) = short_header(case, 0) {
                assert_eq!(Ok(Some(short)), general, "{}", String::from_utf8_lossy(case));
            }
        }
        assert_eq!(short_header(b"$16\r\n", 0), Some((16, 5)));
        assert_eq!(short_header(b"*1000000000000000000\r\n", 0), None, "19 digits go the general way");
    }

    #[test]
    fn multibulk_frames_parse_and_report_their_length() {
        let frame = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n*1\r\n";
        assert_eq!(parse(frame), Ok(Some((words(&["SET", "k", ""]), 26))));
    }

    #[test]
    fn every_proper_prefix_needs_more() {
        let frame = b"*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n";
        for cut in 0..frame.len() {
            assert_eq!(parse(&frame[..cut]), Ok(None), "cut at {cut}");
        }
        assert_eq!(parse(frame), Ok(Some((words(&["ECHO", "hello"]), frame.len()))));
    }

    #[test]
    fn the_incremental_parser_resumes_where_it_stopped() {
        let frame = b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n";
        let mut parser = Parser::new();
        let limits = Limits::default();
        for end in 0..frame.len() {
            assert!(parser.parse(&frame[..end], &limits).unwrap().is_none());
        }
        let used = parser.parse(frame, &limits).unwrap().unwrap();
        assert_eq!((parser.request().to_vec(frame), used), (words(&["SET", "key", "value"]), frame.len()));
    }

    #[test]
    fn a_reused_parser_holds_only_the_last_request() {
        let limits = Limits::default();
        let mut parser = Parser::new();
        let big = b"*9\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n$1\r\ng\r\n$1\r\nh\r\n$1\r\ni\r\n";
        assert_eq!(parser.parse(big, &limits), Ok(Some(big.len())));
        assert_eq!(parser.request().len(), 9);
        // Each of these follows a request whose arguments must not linger.
        let frames: [(&[u8], &[&str]); 4] = [
            (b"*1\r\n$1\r\nx\r\n", &["x"]),
            (b"PING y\r\n", &["PING", "y"]),
            (b"*0\r\n", &[]),
            (b"*2\r\n$1\r\nz\r\n$0\r\n\r\n", &["z", ""]),
        ];
        for (frame, want) in frames {
            assert_eq!(parser.parse(frame, &limits), Ok(Some(frame.len())));
            assert_eq!(parser.request().to_vec(frame), words(want), "{}", String::from_utf8_lossy(frame));
        }
        // A partial frame forgotten by `reset`, or ended by an error, leaves
        // nothing behind either.
        assert_eq!(parser.parse(b"*2\r\n$1\r\nq\r\n", &limits), Ok(None));
        parser.reset();
        assert_eq!(parser.parse(b"*1\r\n$1\r\nr\r\n", &limits), Ok(Some(11)));
        assert_eq!(parser.request().to_vec(b"*1\r\n$1\r\nr\r\n"), words(&["r"]));
        assert_eq!(parser.parse(b"*2\r\n$1\r\nq\r\n!", &limits), Err(ProtocolError::ExpectedBulk(b'!')));
        assert_eq!(parser.parse(b"*1\r\n$1\r\ns\r\n", &limits), Ok(Some(11)));
        assert_eq!(parser.request().to_vec(b"*1\r\n$1\r\ns\r\n"), words(&["s"]));
    }

    #[test]
    fn a_large_request_leaves_no_large_allocation_behind() {
        let limits = Limits::default();
        let mut parser = Parser::new();
        let mut many = b"*5000\r\n".to_vec();
        for _ in 0..5000 {
            many.extend_from_slice(b"$0\r\n\r\n");
        }
        assert_eq!(parser.parse(&many, &limits), Ok(Some(many.len())));
        assert!(parser.request.spans.large.capacity() >= 5000);
        let small = b"*1\r\n$1\r\nx\r\n";
        assert_eq!(parser.parse(small, &limits), Ok(Some(small.len())));
        assert!(parser.request.spans.large.capacity() <= KEEP_SPANS);
        let long_inline = [&[b'a'; 10_000][..], b"\r\n"].concat();
        assert_eq!(parser.parse(&long_inline, &limits), Ok(Some(long_inline.len())));
        assert!(parser.request.owned.capacity() >= 10_000);
        assert_eq!(parser.parse(small, &limits), Ok(Some(small.len())));
        assert!(parser.request.owned.capacity() <= KEEP_INLINE_BYTES);
        assert_eq!(parser.request().to_vec(small), words(&["x"]));
    }

    #[test]
    fn empty_frames_are_empty_requests() {
        for frame in [&b"*0\r\n"[..], b"*-1\r\n", b"\r\n", b"\n", b"   \r\n"] {
            assert_eq!(parse(frame), Ok(Some((vec![], frame.len()))));
        }
    }

    #[test]
    fn malformed_headers_are_rejected() {
        use ProtocolError::*;
        for (bytes, err) in [
            (&b"*abc\r\n"[..], InvalidMultibulkLength),
            (b"*-5\r\n", InvalidMultibulkLength),
            (b"*01\r\n", InvalidMultibulkLength),
            (b"*1\n", InvalidMultibulkLength),
            (b"*\r\n", InvalidMultibulkLength),
            (b"*1\r\n$-2\r\n", InvalidBulkLength),
            (b"*1\r\n$+3\r\n", InvalidBulkLength),
            (b"*1\r\n$99999999999999999999\r\n", InvalidBulkLength),
            (b"*1\r\n$123456789012345678901", InvalidBulkLength),
            (b"*1\r\n!3\r\nabc\r\n", ExpectedBulk(b'!')),
            (b"*1\r\n$3\r\nabcd\r\n", MissingCrlf),
            (b"*2000000\r\n", InvalidMultibulkLength),
            (b"*200000\r\n", TooBigRequest),
            (b"*1\r\n$2000000\r\n", InvalidBulkLength),
            (b"PING \"a\r\n", UnbalancedQuotes),
        ] {
            assert_eq!(parse(bytes), Err(err), "{:?}", String::from_utf8_lossy(bytes));
        }
    }

    #[test]
    fn sizes_are_checked_against_the_limits_before_the_data_arrives() {
        let limits = Limits { max_request: 100, max_args: 10, max_bulk: 50, max_inline: 20 };
        let check = |bytes: &[u8]| parse_request(bytes, &limits).map(|r| r.map(|(_, n)| n));
        assert_eq!(check(b"*11\r\n"), Err(ProtocolError::InvalidMultibulkLength));
        assert_eq!(check(b"*10\r\n"), Ok(None));
        assert_eq!(check(b"*1\r\n$51\r\n"), Err(ProtocolError::InvalidBulkLength));
        assert_eq!(check(b"*3\r\n$50\r\n"), Ok(None));
        assert_eq!(check(b"*3\r\n$40\r\n"), Ok(None));
        assert_eq!(check(b"*2\r\n$50\r\n"), Ok(None));
        let mut two_big = b"*2\r\n$45\r\n".to_vec();
        two_big.extend_from_slice(&[b'x'; 45]);
        two_big.extend_from_slice(b"\r\n$45\r\n");
        assert_eq!(check(&two_big), Err(ProtocolError::TooBigRequest));
        assert_eq!(check(&[b'a'; 21]), Err(ProtocolError::TooBigInline));
        assert_eq!(check(&[b'a'; 20]), Ok(None));
    }

    #[test]
    fn inline_commands_split_like_sdssplitargs() {
        assert_eq!(parse(b"SET a b\r\n"), Ok(Some((words(&["SET", "a", "b"]), 9))));
        assert_eq!(parse(b"  PING  \n"), Ok(Some((words(&["PING"]), 9))));
        assert_eq!(parse(b"ECHO \"a b\\x41\\n\" 'it\\'s'\r\n").unwrap().unwrap().0, words(&["ECHO", "a bA\n", "it's"]));
        assert_eq!(parse(b"SET k\"v w\"x\r\n"), Err(ProtocolError::UnbalancedQuotes));
        assert_eq!(parse(b"SET a\0 b\r\n").unwrap().unwrap().0, words(&["SET", "a"]));
        assert_eq!(parse(b"PING"), Ok(None));
    }

    #[test]
    fn with_args_builds_the_slice_for_any_count() {
        let mut frame = b"*10\r\n".to_vec();
        for i in 0..10 {
            frame.extend_from_slice(format!("$1\r\n{i}\r\n").as_bytes());
        }
        let (request, _) = parse_request(&frame, &Limits::default()).unwrap().unwrap();
        let joined = request.with_args(&frame, |args| args.concat());
        assert_eq!(joined, b"0123456789");
        assert_eq!(request.arg(&frame, 9), Some(&b"9"[..]));
        assert_eq!(request.arg(&frame, 10), None);
    }
}
