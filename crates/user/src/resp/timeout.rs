//! The timeout of a blocking command, read exactly as Redis 7.0 reads it.
//!
//! Redis reads `BLPOP`'s timeout with `strtold` (an x87 `long double`: a
//! 64-bit mantissa and a far wider exponent range than a double), takes
//! `ceill(seconds * 1000)` milliseconds and converts that to `long long`.
//! Clients observe three consequences, all reproduced here:
//!
//! * what is an error: `nan`, spaces, text; magnitudes beyond
//!   `long double`'s range (`1e5000`, `1e-5000`) are "not a float", but
//!   `1e400` is a fine `long double` whose milliseconds do not fit the
//!   conversion (which yields `LLONG_MIN` on x86-64): "timeout is
//!   negative", as `inf` is;
//! * which negative timeouts are errors: `ceill` of anything above -1 ms is
//!   0, which means *forever* — and whether `-0.001` is above -1 ms depends
//!   on `long double` rounding (it is: `-0.001` blocks forever in Redis 7.0
//!   while `-0.00100000000000000000002` is an error). Negative timeouts
//!   are therefore compared, digit by digit, with the exact decimal value
//!   where `long double` arithmetic crosses -1 ms;
//! * hexadecimal floats (`0x10`) are accepted.
//!
//! Positive timeouts are computed in `f64`, which can differ from Redis by
//! at most a millisecond of waiting; the range limits are compared with 45
//! significant digits of the true bounds; hexadecimal floats are read to
//! `f64`'s precision and range.

/// Why a timeout argument is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimeoutError {
    /// `ERR timeout is not a float or out of range`.
    NotAFloat,
    /// `ERR timeout is negative`.
    Negative,
}

impl TimeoutError {
    /// Redis's error text.
    pub(crate) fn message(self) -> &'static [u8] {
        match self {
            TimeoutError::NotAFloat => b"ERR timeout is not a float or out of range",
            TimeoutError::Negative => b"ERR timeout is negative",
        }
    }
}

/// Longest timeout argument Redis's `string2ld` reads.
const MAX_TEXT: usize = 5 * 1024;

/// The smallest magnitude of a negative timeout that is an error: the
/// midpoint between the `long double` nearest 0.001 (below it, and times
/// 1000 still below 1) and the next one (which rounds to even, so the
/// midpoint itself is an error), as `0.<digits> × 10^exponent`.
const NEGATIVE_FROM: Decimal<'static> =
    Decimal { digits: b"100000000000000000001143494478793305457742235375917516648769378662109375", exponent: -2 };

/// `long double`'s overflow threshold (`LDBL_MAX` plus half an ulp),
/// 45 digits.
const OVERFLOW_FROM: Decimal<'static> =
    Decimal { digits: b"118973149535723176505351158982948866796625400", exponent: 4933 };

/// Half of `long double`'s smallest subnormal (what rounds to zero), 45
/// digits.
const UNDERFLOW_TO: Decimal<'static> =
    Decimal { digits: b"182259976594123730126420296680970990819952540", exponent: -4950 };

/// Parses a blocking command's timeout in seconds: whole milliseconds,
/// rounded up; `Ok(0)` means forever.
pub(crate) fn parse_timeout(text: &[u8]) -> Result<u64, TimeoutError> {
    if text.is_empty() || text.len() >= MAX_TEXT {
        return Err(TimeoutError::NotAFloat);
    }
    let text = std::str::from_utf8(text).map_err(|_| TimeoutError::NotAFloat)?;
    let negative = text.starts_with('-');
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    if unsigned.starts_with(['+', '-']) {
        return Err(TimeoutError::NotAFloat);
    }
    if let Some(hex) = unsigned.strip_prefix("0x").or_else(|| unsigned.strip_prefix("0X")) {
        return match parse_hex(hex).ok_or(TimeoutError::NotAFloat)? {
            Hex::Zero => Ok(0),
            Hex::Tiny if negative => Ok(0),
            Hex::Tiny => Ok(1),
            Hex::Value(seconds) if negative => {
                if seconds * 1000.0 >= 1.0 {
                    Err(TimeoutError::Negative)
                } else {
                    Ok(0)
                }
            }
            Hex::Value(seconds) => positive_millis(seconds),
        };
    }
    let seconds: f64 = unsigned.parse().map_err(|_| TimeoutError::NotAFloat)?;
    if seconds.is_nan() {
        return Err(TimeoutError::NotAFloat);
    }
    if unsigned.starts_with(['i', 'I']) {
        return Err(TimeoutError::Negative);
    }
    let mut buffer = Vec::new();
    let Some(magnitude) = Decimal::normalize(unsigned, &mut buffer) else {
        return Ok(0); // zero
    };
    if magnitude.at_least(&OVERFLOW_FROM) || !magnitude.above(&UNDERFLOW_TO) {
        return Err(TimeoutError::NotAFloat);
    }
    if negative {
        return if magnitude.at_least(&NEGATIVE_FROM) { Err(TimeoutError::Negative) } else { Ok(0) };
    }
    if seconds == 0.0 {
        return Ok(1); // a positive value below f64's range
    }
    positive_millis(seconds)
}

/// `ceil(seconds * 1000)` of a positive timeout; out of `i64`'s range it is
/// `LLONG_MIN`, "negative".
fn positive_millis(seconds: f64) -> Result<u64, TimeoutError> {
    let millis = (seconds * 1000.0).ceil();
    // 2^63.
    if millis.is_nan() || millis >= 9_223_372_036_854_775_808.0 {
        return Err(TimeoutError::Negative);
    }
    Ok(millis as u64)
}

/// A hexadecimal float's magnitude.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Hex {
    /// Zero.
    Zero,
    /// Not zero, but below `f64`'s range (and inside `long double`'s).
    Tiny,
    /// A value (infinite beyond `f64`'s range but inside `long double`'s).
    Value(f64),
}

/// The magnitude of a hexadecimal float after its `0x`: hex digits with an
/// optional point (at least one digit), then an optional `p` and a decimal
/// power of two, as `strtold` reads it (to `f64` precision here); `None`
/// if it is not one, or lies beyond `long double`'s range.
fn parse_hex(text: &str) -> Option<Hex> {
    let (mantissa, power) = match text.find(['p', 'P']) {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let mut value = 0.0f64;
    for c in whole.chars() {
        value = value * 16.0 + f64::from(c.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for c in fraction.chars() {
        value += f64::from(c.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    let power = match power {
        None => 0,
        Some(p) => {
            let digits = p.strip_prefix(['+', '-']).unwrap_or(p);
            if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let magnitude = digits.bytes().fold(0i32, |n, c| n.saturating_mul(10).saturating_add(i32::from(c - b'0')));
            if p.starts_with('-') {
                -magnitude
            } else {
                magnitude
            }
        }
    };
    if value == 0.0 {
        return Some(Hex::Zero);
    }
    // The binary exponent, for `long double`'s range (2^-16446 rounds to
    // zero, 2^16384 overflows); a mantissa beyond f64 counts its digits.
    let mantissa_log2 = if value.is_finite() { value.log2() } else { 4.0 * whole.trim_start_matches('0').len() as f64 };
    let log2 = mantissa_log2 + f64::from(power);
    if !(-16446.0..16384.0).contains(&log2) {
        return None;
    }
    match value * 2f64.powi(power) {
        0.0 => Some(Hex::Tiny),
        seconds => Some(Hex::Value(seconds)),
    }
}

/// A positive decimal as `0.<digits> × 10^exponent`, with neither leading
/// nor trailing zeros in `digits`.
#[derive(Clone, Copy, Debug)]
struct Decimal<'a> {
    digits: &'a [u8],
    exponent: i64,
}

impl<'a> Decimal<'a> {
    /// The magnitude of a decimal float literal without its sign (one that
    /// `f64` parses: digits, an optional point, an optional exponent), its
    /// significant digits copied into `buffer`; `None` for zero.
    fn normalize(literal: &str, buffer: &'a mut Vec<u8>) -> Option<Decimal<'a>> {
        let (mantissa, power) = match literal.find(['e', 'E']) {
            Some(at) => (&literal[..at], &literal[at + 1..]),
            None => (literal, ""),
        };
        let power_digits = power.strip_prefix(['+', '-']).unwrap_or(power);
        let magnitude =
            power_digits.bytes().fold(0i64, |n, c| n.saturating_mul(10).saturating_add(i64::from(c - b'0')));
        let power = if power.starts_with('-') { -magnitude } else { magnitude };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        buffer.clear();
        buffer.extend(whole.bytes().chain(fraction.bytes()));
        let leading = buffer.iter().take_while(|&&c| c == b'0').count();
        let trailing = buffer[leading..].iter().rev().take_while(|&&c| c == b'0').count();
        let end = buffer.len() - trailing;
        if leading >= end {
            return None;
        }
        let exponent = (whole.len() as i64 - leading as i64).saturating_add(power);
        Some(Decimal { digits: &buffer[leading..end], exponent })
    }

    /// Whether `self >= other`.
    fn at_least(&self, other: &Decimal<'_>) -> bool {
        (self.exponent, self.digits) >= (other.exponent, other.digits)
    }

    /// Whether `self > other`.
    fn above(&self, other: &Decimal<'_>) -> bool {
        (self.exponent, self.digits) > (other.exponent, other.digits)
    }
}

/// The absolute deadline of a timeout of `millis` (0: none) at `now`. As in
/// Redis, a deadline past `i64::MAX` wraps into the past: the client times
/// out at the next expiry check.
pub(crate) fn deadline(millis: u64, now: u64) -> Option<u64> {
    if millis == 0 {
        return None;
    }
    match now.checked_add(millis) {
        Some(at) if at <= i64::MAX as u64 => Some(at),
        _ => Some(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_parse_like_redis() {
        assert_eq!(parse_timeout(b"0"), Ok(0));
        assert_eq!(parse_timeout(b"-0"), Ok(0));
        assert_eq!(parse_timeout(b"0.000"), Ok(0));
        assert_eq!(parse_timeout(b"1"), Ok(1000));
        assert_eq!(parse_timeout(b"+1"), Ok(1000));
        assert_eq!(parse_timeout(b"0.1"), Ok(100));
        assert_eq!(parse_timeout(b".5"), Ok(500));
        assert_eq!(parse_timeout(b"0.0001"), Ok(1));
        assert_eq!(parse_timeout(b"1e-400"), Ok(1));
        assert_eq!(parse_timeout(b"1.5e3"), Ok(1_500_000));
        assert_eq!(parse_timeout(b"0x10"), Ok(16_000));
        assert_eq!(parse_timeout(b"0x.8p1"), Ok(1000));
        assert_eq!(parse_timeout(b"-0x1p-20"), Ok(0));
        assert_eq!(parse_timeout(b"0x0p99999"), Ok(0));
        assert_eq!(parse_timeout(b"0x1p2000"), Err(TimeoutError::Negative));
        assert_eq!(parse_timeout(b"0x1p-2000"), Ok(1));
        assert_eq!(parse_timeout(b"-0x1p-2000"), Ok(0));
        assert_eq!(parse_timeout(b"0x1p99999"), Err(TimeoutError::NotAFloat));
        assert_eq!(parse_timeout(b"0x1p-99999"), Err(TimeoutError::NotAFloat));
        assert_eq!(parse_timeout(b"-0x1"), Err(TimeoutError::Negative));
        for forever in [&b"-0.0001"[..], b"-1e-400", b"-0.001", b"-1e-3", b"-0.0009"] {
            assert_eq!(parse_timeout(forever), Ok(0), "{forever:?}");
        }
        assert_eq!(
            parse_timeout(b"-0.00100000000000000000001143494478793305457742235375917516648769378662109374"),
            Ok(0)
        );
        for negative in [
            &b"-0.00100000000000000000001143494478793305457742235375917516648769378662109375"[..],
            b"-0.00100000000000000000002",
            b"-0.002",
            b"-1",
            b"1e30",
            b"1e400",
            b"-1e400",
            b"inf",
            b"-Infinity",
            b"1.18973149535723176502e+4932",
        ] {
            assert_eq!(parse_timeout(negative), Err(TimeoutError::Negative), "{negative:?}");
        }
        for bad in [
            &b"x"[..],
            b"",
            b" 1",
            b"1 ",
            b"nan",
            b"-nan",
            b"1e",
            b"--1",
            b"+-1",
            b"-+1",
            b"0x",
            b"0x1p",
            b"0xg",
            b"1e5000",
            b"-1e5000",
            b"1e-5000",
            b"1.18973149535723176508e+4932",
        ] {
            assert_eq!(parse_timeout(bad), Err(TimeoutError::NotAFloat), "{bad:?}");
        }
        assert_eq!(parse_timeout(&vec![b'1'; MAX_TEXT]), Err(TimeoutError::NotAFloat));
    }

    #[test]
    fn decimals_compare_by_magnitude() {
        let d = |s: &str| {
            let mut buffer = Vec::new();
            Decimal::normalize(s, &mut buffer).map(|d| (d.digits.to_vec(), d.exponent))
        };
        assert_eq!(d("001.2300e1"), Some((b"123".to_vec(), 2)));
        assert_eq!(d("0.00120"), Some((b"12".to_vec(), -2)));
        assert_eq!(d("0.000e5"), None);
        assert_eq!(d("0.001"), d("1e-3"));
        let cmp = |a: &str, b: &str| {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            let (a, b) = (Decimal::normalize(a, &mut x).unwrap(), Decimal::normalize(b, &mut y).unwrap());
            (a.at_least(&b), a.above(&b))
        };
        assert_eq!(cmp("0.001", "1e-3"), (true, false));
        assert_eq!(cmp("0.0011", "0.001"), (true, true));
        assert_eq!(cmp("10", "9.99"), (true, true));
        assert_eq!(cmp("0.0009", "0.001"), (false, false));
    }

    #[test]
    fn deadlines_wrap_into_the_past_as_in_redis() {
        assert_eq!(deadline(0, 5), None);
        assert_eq!(deadline(100, 5), Some(105));
        assert_eq!(deadline(i64::MAX as u64, 5), Some(0));
    }
}
