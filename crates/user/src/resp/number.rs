//! Numbers as Redis spells them.
//!
//! Redis reads integers with `string2ll` (an optional `-`, no `+`, no leading
//! zeros, no spaces, no overflow), sorted-set scores with `strtod` plus a few
//! checks, and writes doubles with `%.17g`. Clients and test suites see every
//! one of these choices (`INCR` on `"007"` is an error; a score of 0.1 comes
//! back as `0.10000000000000001`), so this file reproduces them exactly,
//! without allocating. One documented gap: `strtod` also reads hexadecimal
//! floats (`0x10`), which are rejected here.

use std::fmt::Write as _;

/// Parses a decimal `i64` as Redis's `string2ll` does: `0`, or an optional
/// `-` followed by a digit `1`-`9` and more digits, without overflow.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    let first = *digits.first()?;
    if !(b'1'..=b'9').contains(&first) || digits.len() > 19 {
        return None;
    }
    let mut value: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    if negative {
        0i64.checked_sub_unsigned(value)
    } else {
        i64::try_from(value).ok()
    }
}

/// Parses a score as Redis's `getDoubleFromObject` does: the whole argument
/// must be a float (no surrounding spaces), not NaN, and not out of range
/// (`1e400` and `1e-400` are errors; `inf` and `-inf` are fine).
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(s).ok()?;
    let value: f64 = text.parse().ok()?;
    if value.is_nan() {
        return None;
    }
    let unsigned = text.trim_start_matches(['+', '-']);
    let is_literal_infinity = unsigned.starts_with(['i', 'I']);
    if value.is_infinite() && !is_literal_infinity {
        return None; // overflow: strtod sets ERANGE and returns HUGE_VAL
    }
    if value == 0.0 && mantissa_has_nonzero_digit(unsigned) {
        return None; // underflow to zero: ERANGE
    }
    Some(value)
}

/// Whether the mantissa of a decimal float literal has a digit other than 0.
fn mantissa_has_nonzero_digit(literal: &str) -> bool {
    literal.bytes().take_while(|&c| c != b'e' && c != b'E').any(|c| (b'1'..=b'9').contains(&c))
}

/// One end of a score range (`ZRANGEBYSCORE`): a float, exclusive when
/// prefixed with `(`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreBound {
    /// The score; may be infinite, never NaN.
    pub value: f64,
    /// Whether the bound itself is excluded.
    pub exclusive: bool,
}

/// Parses a range bound as Redis's `zslParseRange` does: an optional `(`,
/// then whatever `strtod` accepts up to the end of the argument — which
/// includes leading spaces, overflow to infinity and, a quirk kept for
/// compatibility, the empty string (read as 0). NaN is rejected.
pub fn parse_score_bound(s: &[u8]) -> Option<ScoreBound> {
    // The argument is a C string to strtod: it ends at the first NUL.
    let s = s.split(|&c| c == 0).next().unwrap_or(&[]);
    let (exclusive, rest) = match s.split_first() {
        Some((b'(', rest)) => (true, rest),
        _ => (false, s),
    };
    if rest.is_empty() {
        return Some(ScoreBound { value: 0.0, exclusive });
    }
    let start = rest.iter().position(|&c| !is_c_space(c))?;
    let text = std::str::from_utf8(&rest[start..]).ok()?;
    let value: f64 = text.parse().ok()?;
    if value.is_nan() {
        return None;
    }
    Some(ScoreBound { value, exclusive })
}

/// C's `isspace` in the "C" locale.
pub fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// Appends the decimal digits of `value`.
pub fn write_i64(out: &mut Vec<u8>, value: i64) {
    if value < 0 {
        out.push(b'-');
    }
    write_u64(out, value.unsigned_abs());
}

/// Appends the decimal digits of `value`.
pub fn write_u64(out: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// Appends a double as Redis 7.0's `addReplyDouble` writes it (see
/// [`format_f64`]).
pub fn write_f64(out: &mut Vec<u8>, value: f64) {
    out.extend_from_slice(format_f64(value).as_bytes());
}

/// Formats a double as Redis 7.0's `addReplyDouble` does: `inf`, `-inf`, or
/// C's `%.17g` (17 significant digits, trailing zeros dropped, exponent form
/// below 1e-4 and from 1e17 on: `1e+17`, `1.0000000000000001e-05`).
pub fn format_f64(value: f64) -> NumberText {
    let mut text = NumberText::new();
    // Writing at most 25 bytes into 48 cannot fail; results are ignored.
    if value.is_nan() {
        let _ = text.write_str("nan");
    } else if value.is_infinite() {
        let _ = text.write_str(if value > 0.0 { "inf" } else { "-inf" });
    } else if value == 0.0 {
        let _ = text.write_str(if value.is_sign_negative() { "-0" } else { "0" });
    } else {
        // Rounding to 17 significant digits first decides the exponent, as in C.
        let mut scientific = NumberText::new();
        let _ = write!(scientific, "{value:.16e}");
        let (mantissa, exponent) = scientific.as_str().split_once('e').unwrap_or(("0", "0"));
        let exponent: i32 = exponent.parse().unwrap_or(0);
        if !(-4..17).contains(&exponent) {
            let sign = if exponent < 0 { '-' } else { '+' };
            let _ = write!(text, "{}e{sign}{:02}", trim_fraction(mantissa), exponent.unsigned_abs());
        } else {
            let precision = (16 - exponent) as usize;
            let mut fixed = NumberText::new();
            let _ = write!(fixed, "{value:.precision$}");
            let _ = text.write_str(trim_fraction(fixed.as_str()));
        }
    }
    text
}

/// Drops trailing zeros of a fraction, and the point if nothing is left.
fn trim_fraction(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

/// A formatted number in a fixed buffer: no allocation.
#[derive(Clone, Copy, Debug)]
pub struct NumberText {
    bytes: [u8; 48],
    len: usize,
}

impl NumberText {
    fn new() -> Self {
        NumberText { bytes: [0; 48], len: 0 }
    }

    /// The text's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).unwrap_or("")
    }
}

impl std::fmt::Write for NumberText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let slot = self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn double(value: f64) -> String {
        let mut out = Vec::new();
        write_f64(&mut out, value);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn integers_follow_string2ll() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-12"), Some(-12));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        for bad in
            [&b""[..], b"-", b"-0", b"007", b"+1", b" 1", b"1 ", b"9223372036854775808", b"1a", b"99999999999999999999"]
        {
            assert_eq!(parse_i64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn scores_follow_get_double_from_object() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"+1"), Some(1.0));
        assert_eq!(parse_f64(b".5"), Some(0.5));
        assert_eq!(parse_f64(b"5."), Some(5.0));
        assert_eq!(parse_f64(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_f64(b"Infinity"), Some(f64::INFINITY));
        assert_eq!(parse_f64(b"0e10"), Some(0.0));
        for bad in [&b""[..], b" 1", b"1 ", b"nan", b"1e400", b"1e-400", b"abc", b"1e", b"0x10"] {
            assert_eq!(parse_f64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn range_bounds_follow_zsl_parse_range() {
        let bound = |s: &[u8]| parse_score_bound(s).map(|b| (b.value, b.exclusive));
        assert_eq!(bound(b"(1.5"), Some((1.5, true)));
        assert_eq!(bound(b"-inf"), Some((f64::NEG_INFINITY, false)));
        assert_eq!(bound(b"(+inf"), Some((f64::INFINITY, true)));
        assert_eq!(bound(b" 1"), Some((1.0, false)));
        assert_eq!(bound(b"("), Some((0.0, true)));
        assert_eq!(bound(b""), Some((0.0, false)));
        assert_eq!(bound(b"1e400"), Some((f64::INFINITY, false)));
        assert_eq!(bound(b"nan"), None);
        assert_eq!(bound(b"[1"), None);
        assert_eq!(bound(b"  "), None);
    }

    #[test]
    fn doubles_print_like_percent_17g() {
        assert_eq!(double(0.0), "0");
        assert_eq!(double(1.5), "1.5");
        assert_eq!(double(10.0), "10");
        assert_eq!(double(0.1), "0.10000000000000001");
        assert_eq!(double(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(double(1e-5), "1.0000000000000001e-05");
        assert_eq!(double(0.0001), "0.0001");
        assert_eq!(double(123456789.123), "123456789.123");
        assert_eq!(double(1e16), "10000000000000000");
        assert_eq!(double(1e17), "1e+17");
        assert_eq!(double(1e21), "1e+21");
        assert_eq!(double(-2.5e-300), "-2.5e-300");
        assert_eq!(double(2.0 / 3.0), "0.66666666666666663");
        assert_eq!(double(f64::INFINITY), "inf");
        assert_eq!(double(f64::NEG_INFINITY), "-inf");
        // A tie at the 17th digit rounds to even, as C does.
        assert_eq!(double(1_234_567_890_123_456.0 + 0.25), "1234567890123456.2");
    }

    #[test]
    fn integers_print() {
        let mut out = Vec::new();
        write_i64(&mut out, i64::MIN);
        out.push(b' ');
        write_i64(&mut out, 0);
        out.push(b' ');
        write_u64(&mut out, u64::MAX);
        assert_eq!(out, b"-9223372036854775808 0 18446744073709551615");
    }
}
