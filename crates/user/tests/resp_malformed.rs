//! Malformed and truncated RESP input, driven through `Connection` as a
//! client would send it: the exact `-ERR Protocol error` reply and a closed
//! connection for bytes that are not RESP, and patience (no reply, no error)
//! for bytes that are only the start of a request.

use granule_user::resp::{Connection, Flow, Limits, Store};

/// The limits of every case: small, so that oversize is cheap to provoke.
fn limits() -> Limits {
    Limits { max_request: 64, max_args: 16, max_bulk: 48, max_inline: 40 }
}

/// Feeds `input` to a fresh connection in one piece.
fn feed_once(input: &[u8]) -> (String, Flow, Connection) {
    let (mut connection, mut store) = (Connection::new(limits()), Store::new());
    let mut out = Vec::new();
    let flow = connection.feed(input, &mut store, 0, &mut out);
    (String::from_utf8_lossy(&out).into_owned(), flow, connection)
}

fn protocol_error(message: &str) -> String {
    format!("-ERR Protocol error: {message}\r\n")
}

#[test]
fn malformed_input_gets_the_protocol_error_and_closes() {
    let cases: &[(&[u8], &str)] = &[
        (b"*1\r\n!3\r\nabc\r\n", "expected '$', got '!'"),
        (b"*2\r\n$4\r\nECHO\r\n:5\r\n", "expected '$', got ':'"),
        (b"*-5\r\n", "invalid multibulk length"),
        (b"*-2\r\n", "invalid multibulk length"),
        (b"*abc\r\n", "invalid multibulk length"),
        (b"*1a", "invalid multibulk length"),
        (b"*\r\n", "invalid multibulk length"),
        (b"*+1\r\n", "invalid multibulk length"),
        (b"*01\r\n", "invalid multibulk length"),
        (b"*1 \r\n", "invalid multibulk length"),
        (b"*1\rx", "invalid multibulk length"),
        (b"*99999999999999999999\r\n", "invalid multibulk length"),
        (b"*2147483648\r\n", "invalid multibulk length"),
        (b"*17\r\n", "invalid multibulk length"),
        (b"*1\r\n$-2\r\n", "invalid bulk length"),
        (b"*1\r\n$-1\r\n", "invalid bulk length"),
        (b"*1\r\n$abc\r\n", "invalid bulk length"),
        (b"*1\r\n$\r\n", "invalid bulk length"),
        (b"*1\r\n$99999999999999999999\r\n", "invalid bulk length"),
        (b"*1\r\n$49\r\n", "invalid bulk length"),
        (b"*1\r\n$3\r\nabcd\r\n", "expected '\\r\\n' after bulk data"),
        (b"*1\r\n$4\r\nPINGxx", "expected '\\r\\n' after bulk data"),
        (b"*1\r\n$4\r\nPING\n\r", "expected '\\r\\n' after bulk data"),
        (b"*10\r\n", "too big request"),
        (b"*2\r\n$3\r\nSET\r\n$46\r\n", "too big request"),
        (b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$40\r\n", "too big request"),
        (b"SET \"a\r\n", "unbalanced quotes in request"),
        (b"SET 'a\r\n", "unbalanced quotes in request"),
        (b"SET \"a\"b c\r\n", "unbalanced quotes in request"),
        (&[b'x'; 41], "too big inline request"),
    ];
    for &(input, message) in cases {
        let shown = String::from_utf8_lossy(input);
        let (out, flow, connection) = feed_once(input);
        assert_eq!(out, protocol_error(message), "input {shown:?}");
        assert_eq!(flow, Flow::Close, "input {shown:?}");
        assert!(connection.is_closed(), "input {shown:?}");
    }
}

#[test]
fn replies_before_the_error_are_kept_and_nothing_after_it_runs() {
    let (mut connection, mut store) = (Connection::new(limits()), Store::new());
    let mut out = Vec::new();
    let flow = connection.feed(b"SET k 1\r\nPING\r\n*x\r\nSET k 2\r\n", &mut store, 0, &mut out);
    assert_eq!(flow, Flow::Close);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        format!("+OK\r\n+PONG\r\n{}", protocol_error("invalid multibulk length"))
    );
    let mut out = Vec::new();
    assert_eq!(connection.feed(b"GET k\r\n", &mut store, 0, &mut out), Flow::Close);
    assert!(out.is_empty());
    let mut fresh = Connection::new(limits());
    let _ = fresh.feed(b"GET k\r\n", &mut store, 0, &mut out);
    assert_eq!(out, b"$1\r\n1\r\n");
}

#[test]
fn odd_but_valid_input_is_not_a_protocol_error() {
    let cases: &[(&[u8], &str)] = &[
        // A first byte other than `*` starts an inline command, even `!`.
        (b"!\r\n", "-ERR unknown command '!', with args beginning with: \r\n"),
        // Empty requests get no reply.
        (b"*0\r\n*-1\r\n\r\n\n   \r\nPING\r\n", "+PONG\r\n"),
        (b"*1\r\n$0\r\n\r\n", "-ERR unknown command '', with args beginning with: \r\n"),
        (b"PING\n", "+PONG\r\n"),
        (b"ECHO \"a\\x41\\r\" 'b'\r\n", "-ERR wrong number of arguments for 'echo' command\r\n"),
        (b"ECHO \"a\\x41\\t\"\r\n", "$3\r\naA\t\r\n"),
    ];
    for &(input, expected) in cases {
        let (out, flow, _) = feed_once(input);
        assert_eq!((out.as_str(), flow), (expected, Flow::Continue), "input {:?}", String::from_utf8_lossy(input));
    }
}

/// Valid requests with their replies on a fresh store.
const VALID: &[(&[u8], &str)] = &[
    (b"*1\r\n$4\r\nPING\r\n", "+PONG\r\n"),
    (b"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", "$0\r\n\r\n"),
    (b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nva\r\nl\r\n", "+OK\r\n"),
    (b"*2\r\n$3\r\nGET\r\n$7\r\nmissing\r\n", "$-1\r\n"),
    (b"ECHO hello\r\n", "$5\r\nhello\r\n"),
    (b"\r\n\r\nPING\r\n", "+PONG\r\n"),
];

#[test]
fn truncated_frames_need_more_bytes_not_an_error() {
    for &(frame, reply) in VALID {
        for cut in 0..frame.len() {
            let (out, flow, connection) = feed_once(&frame[..cut]);
            let shown = String::from_utf8_lossy(&frame[..cut]);
            assert_eq!((out.as_str(), flow), ("", Flow::Continue), "prefix {shown:?}");
            assert!(connection.pending_bytes() <= cut, "prefix {shown:?}");
        }
        let (out, flow, connection) = feed_once(frame);
        assert_eq!((out.as_str(), flow), (reply, Flow::Continue));
        assert_eq!(connection.pending_bytes(), 0);
    }
}

#[test]
fn a_request_completes_when_the_rest_arrives_byte_by_byte() {
    for &(frame, reply) in VALID {
        for cut in 0..frame.len() {
            let (mut connection, mut store) = (Connection::new(limits()), Store::new());
            let mut out = Vec::new();
            assert_eq!(connection.feed(&frame[..cut], &mut store, 0, &mut out), Flow::Continue);
            for (i, &byte) in frame[cut..].iter().enumerate() {
                assert_eq!(connection.feed(&[byte], &mut store, 0, &mut out), Flow::Continue);
                let last = cut + i + 1 == frame.len();
                if !last {
                    assert!(out.is_empty(), "reply before the frame was complete ({cut}, {i})");
                }
            }
            assert_eq!(
                String::from_utf8(out).unwrap(),
                reply,
                "frame {:?} cut at {cut}",
                String::from_utf8_lossy(frame)
            );
            assert_eq!(connection.pending_bytes(), 0);
        }
    }
}

#[test]
fn pipelined_requests_split_anywhere_reply_in_order() {
    let stream: Vec<u8> = VALID.iter().flat_map(|(frame, _)| frame.iter().copied()).collect();
    let replies: String = VALID.iter().map(|(_, reply)| *reply).collect();
    for split in 0..=stream.len() {
        let (mut connection, mut store) = (Connection::new(limits()), Store::new());
        let mut out = Vec::new();
        assert_eq!(connection.feed(&stream[..split], &mut store, 0, &mut out), Flow::Continue);
        assert_eq!(connection.feed(&stream[split..], &mut store, 0, &mut out), Flow::Continue);
        assert_eq!(String::from_utf8(out).unwrap(), replies, "split at {split}");
    }
}

#[test]
fn an_incomplete_frame_never_grows_past_the_limit() {
    let (mut connection, mut store) = (Connection::new(limits()), Store::new());
    let mut out = Vec::new();
    // Many small arguments: each fits, their sum does not.
    let mut flow = connection.feed(b"*16\r\n", &mut store, 0, &mut out);
    assert_eq!(flow, Flow::Close);
    assert_eq!(String::from_utf8(out).unwrap(), protocol_error("too big request"));

    let (mut connection, mut out) = (Connection::new(limits()), Vec::new());
    flow = connection.feed(b"*9\r\n", &mut store, 0, &mut out);
    for _ in 0..8 {
        if flow == Flow::Close {
            break;
        }
        flow = connection.feed(b"$1\r\na\r\n", &mut store, 0, &mut out);
        assert!(connection.pending_bytes() <= limits().max_request);
    }
    assert_eq!(flow, Flow::Close);
    assert_eq!(String::from_utf8(out).unwrap(), protocol_error("too big request"));
}
