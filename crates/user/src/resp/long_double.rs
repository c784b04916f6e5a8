//! C's `long double` on x86-64 (the x87 80-bit extended format), as far as
//! `INCRBYFLOAT` and `HINCRBYFLOAT` use it.
//!
//! Redis adds increments in `long double` and prints the sum with
//! `%.17Lf`, trailing zeros removed (`ld2string` in human mode). Both steps
//! show: `INCRBYFLOAT k 0.1` answers `0.1` because the 64-bit mantissa rounds
//! 0.1 closer than a `double` does, and `10.5 + 0.1` answers `10.6`. So the
//! arithmetic here is the real format's: a 64-bit mantissa, a 15-bit
//! exponent with subnormals, round-to-nearest-even; parsing is `strtold`'s
//! (decimal, hexadecimal, `inf`), correctly rounded, with `string2ld`'s
//! checks on top (no leading space, nothing after the number, no NaN, no
//! overflow, no underflow to zero); and printing is exact. [`BigUint`] does
//! the exact decimal work; nothing here allocates more than a few
//! kilobytes, because Redis refuses texts of 5,120 bytes or more.

use super::bignum::BigUint;

/// Longest text `string2ld` reads, plus one (`MAX_LONG_DOUBLE_CHARS`).
const MAX_TEXT: usize = 5 * 1024;
/// Exponent of the smallest subnormal: values are `mantissa * 2^exp` with
/// `exp >= MIN_EXP`.
const MIN_EXP: i64 = -16445;
/// Highest bit position a finite value may have (`2^16383` is the largest
/// power of two).
const MAX_TOP_BIT: i64 = 16383;

/// A `long double` value: zero, finite, or infinite (never NaN).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LongDouble {
    negative: bool,
    kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `mantissa * 2^exp`, `mantissa` nonzero.
    Finite {
        mantissa: u64,
        exp: i64,
    },
    Zero,
    Infinite,
}

impl LongDouble {
    /// Positive zero.
    pub const ZERO: LongDouble = LongDouble { negative: false, kind: Kind::Zero };

    /// The integer `value`, exactly (64 bits of mantissa hold any `i64`).
    pub fn from_i64(value: i64) -> LongDouble {
        match value {
            0 => LongDouble::ZERO,
            _ => LongDouble { negative: value < 0, kind: Kind::Finite { mantissa: value.unsigned_abs(), exp: 0 } },
        }
    }

    /// Whether the value is infinite.
    pub fn is_infinite(self) -> bool {
        self.kind == Kind::Infinite
    }

    /// Reads `text` as Redis's `string2ld` does: all of it must be one
    /// number `strtold` accepts, not starting with a space, not NaN, and
    /// neither too large (`1e5000`) nor so small it rounds to zero
    /// (`1e-5000`); `inf` is accepted.
    pub fn parse(text: &[u8]) -> Option<LongDouble> {
        if text.is_empty() || text.len() >= MAX_TEXT {
            return None;
        }
        let (negative, rest) = match text[0] {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let magnitude = if rest.eq_ignore_ascii_case(b"inf") || rest.eq_ignore_ascii_case(b"infinity") {
            Some(Kind::Infinite)
        } else if rest.len() > 2 && rest[0] == b'0' && (rest[1] | 0x20) == b'x' {
            parse_hex(&rest[2..])
        } else {
            parse_decimal(rest)
        }?;
        Some(LongDouble { negative, kind: magnitude })
    }

    /// Formats the value as Redis's `ld2string` in human mode: `%.17Lf`
    /// (exactly rounded, ties to even), trailing zeros and a trailing point
    /// removed, `-0` written `0`, infinities as `inf` and `-inf`.
    pub fn to_human(self) -> Vec<u8> {
        let (mantissa, exp) = match self.kind {
            Kind::Infinite => return if self.negative { b"-inf".to_vec() } else { b"inf".to_vec() },
            Kind::Zero => return b"0".to_vec(),
            Kind::Finite { mantissa, exp } => (mantissa, exp),
        };
        // The value times 10^17, rounded to an integer.
        let scaled = if exp >= 0 {
            let mut n = BigUint::from_u128(u128::from(mantissa));
            n.mul_pow10(17);
            n.shl(exp as u64);
            n
        } else {
            let n = u128::from(mantissa) * 10u128.pow(17); // below 2^121
            let shift = -exp;
            let quotient = if shift >= 128 {
                0
            } else {
                let quotient = n >> shift;
                let rest = n & ((1u128 << shift) - 1);
                let half = 1u128 << (shift - 1);
                quotient + u128::from(rest > half || (rest == half && quotient & 1 == 1))
            };
            BigUint::from_u128(quotient)
        };
        let digits = scaled.to_decimal();
        let mut text = Vec::with_capacity(digits.len() + 3);
        if self.negative {
            text.push(b'-');
        }
        let padded: Vec<u8> =
            std::iter::repeat(b'0').take(18usize.saturating_sub(digits.len())).chain(digits).collect();
        let (whole, fraction) = padded.split_at(padded.len() - 17);
        text.extend_from_slice(whole);
        let fraction_len = fraction.iter().rposition(|&d| d != b'0').map_or(0, |last| last + 1);
        if fraction_len > 0 {
            text.push(b'.');
            text.extend_from_slice(&fraction[..fraction_len]);
        }
        if text == b"-0" {
            text.remove(0);
        }
        text
    }
}

impl std::ops::Add for LongDouble {
    type Output = LongDouble;

    /// The correctly rounded sum (infinite on overflow; `inf + -inf` is
    /// reported as infinite too, since callers refuse NaN and infinity
    /// alike).
    fn add(self, other: LongDouble) -> LongDouble {
        match (self.kind, other.kind) {
            (Kind::Infinite, _) => self,
            (_, Kind::Infinite) => other,
            (Kind::Zero, Kind::Zero) => LongDouble { negative: self.negative && other.negative, kind: Kind::Zero },
            (Kind::Zero, _) => other,
            (_, Kind::Zero) => self,
            (Kind::Finite { mantissa: ma, exp: ea }, Kind::Finite { mantissa: mb, exp: eb }) => {
                // Align both on the larger exponent with 62 guard bits; bits
                // of the smaller shifted out leave a sticky low bit.
                let ((big, big_exp, big_negative), (small, small_exp, small_negative)) = if ea >= eb {
                    ((ma, ea, self.negative), (mb, eb, other.negative))
                } else {
                    ((mb, eb, other.negative), (ma, ea, self.negative))
                };
                let base = big_exp - 62;
                let a = u128::from(big) << 62;
                let distance = (small_exp - base) as i128; // may be negative
                let b = if distance >= 0 {
                    u128::from(small) << distance
                } else if -distance < 128 {
                    let shifted = u128::from(small) >> -distance;
                    let lost = u128::from(small) & ((1u128 << -distance) - 1) != 0;
                    shifted | u128::from(lost)
                } else {
                    1 // only the sticky bit survives
                };
                if big_negative == small_negative {
                    // a < 2^126 and b <= a + 1: no overflow.
                    round(big_negative, a + b, base)
                } else if a >= b {
                    round(big_negative, a - b, base)
                } else {
                    round(small_negative, b - a, base)
                }
            }
        }
    }
}

/// Rounds `negative * value * 2^exp` to the format (nearest, ties to even;
/// the lowest bit of `value` may be a sticky bit standing for more below,
/// which is harmless as long as at least two bits are rounded off).
fn round(negative: bool, value: u128, exp: i64) -> LongDouble {
    if value == 0 {
        return LongDouble::ZERO;
    }
    let bits = 128 - i64::from(value.leading_zeros());
    let shift = (bits - 64).max(MIN_EXP - exp);
    let (mantissa, exp) = if shift <= 0 {
        (value, exp)
    } else if shift > 128 {
        (0, exp + shift)
    } else {
        let kept = if shift == 128 { 0 } else { value >> shift };
        let rest = if shift == 128 { value } else { value & ((1u128 << shift) - 1) };
        let half = 1u128 << (shift - 1);
        let up = rest > half || (rest == half && kept & 1 == 1);
        (kept + u128::from(up), exp + shift)
    };
    if mantissa == 0 {
        return LongDouble { negative, kind: Kind::Zero };
    }
    // Rounding up may carry into a 65th bit.
    let (mantissa, exp) = if mantissa >> 64 != 0 { (mantissa >> 1, exp + 1) } else { (mantissa, exp) };
    let top_bit = exp + 63 - i64::from((mantissa as u64).leading_zeros());
    if top_bit > MAX_TOP_BIT {
        return LongDouble { negative, kind: Kind::Infinite };
    }
    LongDouble { negative, kind: Kind::Finite { mantissa: mantissa as u64, exp } }
}

/// Rounds the exact number `n * 2^exp` (or, when `divisor` is given,
/// `n * 2^exp / divisor`), refusing overflow and underflow to zero as
/// `string2ld` does.
fn round_exact(mut n: BigUint, exp: i64, divisor: Option<BigUint>) -> Option<Kind> {
    if n.is_zero() {
        return Some(Kind::Zero);
    }
    let (top, exp) = match divisor {
        None => {
            let (top, shift, sticky) = n.top_u128();
            (top | u128::from(sticky), exp + shift as i64)
        }
        Some(divisor) => {
            // Scale so the quotient has 66 to 67 bits, then divide.
            let scale = 66 + divisor.bit_len() as i64 - n.bit_len() as i64;
            let divisor = if scale >= 0 {
                n.shl(scale as u64);
                divisor
            } else {
                let mut divisor = divisor;
                divisor.shl(scale.unsigned_abs());
                divisor
            };
            let (quotient, remainder) = n.div_u128(&divisor);
            (quotient | u128::from(remainder), exp - scale)
        }
    };
    match round(false, top, exp).kind {
        Kind::Finite { mantissa, exp } => Some(Kind::Finite { mantissa, exp }),
        // ERANGE: HUGE_VALL or zero.
        Kind::Zero | Kind::Infinite => None,
    }
}

/// A decimal literal: digits, an optional point and fraction (at least one
/// digit in all), an optional exponent.
fn parse_decimal(text: &[u8]) -> Option<Kind> {
    let mut digits = BigUint::default();
    let (mut seen_digit, mut seen_point, mut scale) = (false, false, 0i64);
    let mut at = 0;
    let mut chunk = (0u32, 1u32);
    while let Some(&c) = text.get(at) {
        match c {
            b'0'..=b'9' => {
                seen_digit = true;
                chunk = (chunk.0 * 10 + u32::from(c - b'0'), chunk.1 * 10);
                if chunk.1 == 1_000_000_000 {
                    digits.mul_add_small(chunk.1, chunk.0);
                    chunk = (0, 1);
                }
                if seen_point {
                    scale -= 1;
                }
            }
            b'.' if !seen_point => seen_point = true,
            _ => break,
        }
        at += 1;
    }
    digits.mul_add_small(chunk.1, chunk.0);
    if !seen_digit {
        return None;
    }
    if at < text.len() {
        if text[at] | 0x20 != b'e' {
            return None;
        }
        scale += parse_exponent(&text[at + 1..])?;
    }
    if digits.is_zero() {
        return Some(Kind::Zero);
    }
    // Out of range whatever the digits: below 10^-4952 rounds to zero,
    // from 10^4933 on is too large.
    let magnitude = scale + digits.bit_len() as i64 * 30103 / 100000;
    if magnitude < -4952 {
        return None;
    }
    if magnitude > 4934 {
        return None;
    }
    if scale >= 0 {
        digits.mul_pow10(scale as u32);
        round_exact(digits, 0, None)
    } else {
        let mut divisor = BigUint::from_u128(1);
        divisor.mul_pow10(scale.unsigned_abs() as u32);
        round_exact(digits, 0, Some(divisor))
    }
}

/// A hexadecimal literal after `0x`: hex digits, an optional point and
/// fraction (at least one digit in all), an optional binary exponent `p`.
fn parse_hex(text: &[u8]) -> Option<Kind> {
    let mut digits = BigUint::default();
    let (mut seen_digit, mut seen_point, mut scale) = (false, false, 0i64);
    let mut at = 0;
    while let Some(&c) = text.get(at) {
        match c {
            b'.' if !seen_point => seen_point = true,
            _ => {
                let Some(value) = (c as char).to_digit(16) else { break };
                seen_digit = true;
                digits.mul_add_small(16, value);
                if seen_point {
                    scale -= 4;
                }
            }
        }
        at += 1;
    }
    if !seen_digit {
        return None;
    }
    if at < text.len() {
        if text[at] | 0x20 != b'p' {
            return None;
        }
        scale += parse_exponent(&text[at + 1..])?;
    }
    if digits.is_zero() {
        return Some(Kind::Zero);
    }
    let top = scale + digits.bit_len() as i64;
    if !(MIN_EXP - 1..=MAX_TOP_BIT + 2).contains(&top) {
        return None;
    }
    round_exact(digits, scale, None)
}

/// An exponent's optional sign and digits (at least one), all of `text`;
/// clamped far beyond any representable range.
fn parse_exponent(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value = digits.iter().fold(0i64, |value, &d| (value * 10 + i64::from(d - b'0')).min(1 << 40));
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn human(text: &str) -> String {
        String::from_utf8(LongDouble::parse(text.as_bytes()).unwrap().to_human()).unwrap()
    }

    fn sum(a: &str, b: &str) -> String {
        let (a, b) = (LongDouble::parse(a.as_bytes()).unwrap(), LongDouble::parse(b.as_bytes()).unwrap());
        String::from_utf8((a + b).to_human()).unwrap()
    }

    #[test]
    fn texts_round_trip_like_ld2string() {
        assert_eq!(human("0.1"), "0.1");
        assert_eq!(human("10.5"), "10.5");
        assert_eq!(human("-0"), "0");
        assert_eq!(human("-1e-30"), "0");
        assert_eq!(human("1e20"), "100000000000000000000");
        assert_eq!(human("5.0e3"), "5000");
        assert_eq!(human("0x10"), "16");
        assert_eq!(human("0x1.8p1"), "3");
        assert_eq!(human("3.0000000000000000001"), "3");
        assert_eq!(human("1.23456789012345678"), "1.23456789012345678");
        assert_eq!(human(".5"), "0.5");
        assert_eq!(human("5."), "5");
        assert_eq!(human("inf"), "inf");
        assert_eq!(human("-Infinity"), "-inf");
    }

    #[test]
    fn sums_round_in_extended_precision() {
        assert_eq!(sum("10.5", "0.1"), "10.6");
        assert_eq!(sum("0.1", "0.2"), "0.3");
        assert_eq!(sum("5.0e3", "2.0e2"), "5200");
        assert_eq!(sum("1", "-1"), "0");
        assert_eq!(sum("9223372036854775807", "1"), "9223372036854775808");
        assert_eq!(sum("1e4000", "-1e4000"), "0");
        let big = LongDouble::parse(b"1e4932").unwrap();
        assert!((big + big).is_infinite());
    }

    #[test]
    fn string2ld_refusals() {
        for bad in [
            "", " 1", "1 ", "nan", "-nan", "1e", "1e+", "e5", ".", "0x", "0x.p1", "1e5000", "1e-5000", "1..2", "1.2.3",
            "abc", "1\u{0}", "infin", "++1",
        ] {
            assert_eq!(LongDouble::parse(bad.as_bytes()), None, "{bad:?}");
        }
        let long_fraction = |len: usize| [&b"0."[..], &vec![b'1'; len - 2]].concat();
        assert!(LongDouble::parse(&long_fraction(MAX_TEXT)).is_none());
        assert_eq!(LongDouble::parse(&long_fraction(MAX_TEXT - 1)).unwrap().to_human(), b"0.11111111111111111");
        // Subnormal results are fine, zero is not.
        assert!(LongDouble::parse(b"1e-4940").is_some());
        assert_eq!(LongDouble::parse(b"0e-99999"), Some(LongDouble::ZERO));
        assert!(LongDouble::parse(b"1.18e4932").is_some());
        assert!(LongDouble::parse(b"1.19e4932").is_none());
    }
}
