//! A small unsigned big integer, for exact conversions between decimal
//! text and binary floats.
//!
//! `INCRBYFLOAT` and `HINCRBYFLOAT` compute in C's `long double`, whose
//! parsing (`strtold`) and printing (`%.17Lf`) are exact: the text names one
//! rational number and the float is that number correctly rounded, and back.
//! Doing the same needs integers wider than any machine word (a decimal
//! literal may have thousands of digits; `%.17Lf` of the largest `long
//! double` prints 4,933 of them). [`BigUint`] has just the operations those
//! two conversions use: multiply and add small numbers, shift, compare,
//! subtract, divide by a small number, and read the leading 128 bits.
//! Every operation is bounded by the size of its operands, which the callers
//! bound in turn (a few thousand bits).

use std::cmp::Ordering;

/// An unsigned integer of any size: 32-bit limbs, least significant first,
/// no leading zero limbs (zero is the empty vector).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct BigUint {
    limbs: Vec<u32>,
}

impl BigUint {
    /// The number `value`.
    pub(crate) fn from_u128(mut value: u128) -> BigUint {
        let mut limbs = Vec::new();
        while value != 0 {
            limbs.push(value as u32);
            value >>= 32;
        }
        BigUint { limbs }
    }

    /// Whether the number is zero.
    pub(crate) fn is_zero(&self) -> bool {
        self.limbs.is_empty()
    }

    /// Number of significant bits (0 for zero).
    pub(crate) fn bit_len(&self) -> u64 {
        match self.limbs.last() {
            None => 0,
            Some(&top) => (self.limbs.len() as u64 - 1) * 32 + u64::from(32 - top.leading_zeros()),
        }
    }

    /// `self = self * factor + addend`.
    pub(crate) fn mul_add_small(&mut self, factor: u32, addend: u32) {
        let mut carry = u64::from(addend);
        for limb in &mut self.limbs {
            let product = u64::from(*limb) * u64::from(factor) + carry;
            *limb = product as u32;
            carry = product >> 32;
        }
        if carry != 0 {
            self.limbs.push(carry as u32);
        }
        self.trim();
    }

    /// `self = self * 10^power`.
    pub(crate) fn mul_pow10(&mut self, mut power: u32) {
        while power >= 9 {
            self.mul_add_small(1_000_000_000, 0);
            power -= 9;
        }
        if power > 0 {
            self.mul_add_small(10u32.pow(power), 0);
        }
    }

    /// `self = self * 2^bits`.
    pub(crate) fn shl(&mut self, bits: u64) {
        if self.is_zero() || bits == 0 {
            return;
        }
        let (words, bits) = ((bits / 32) as usize, (bits % 32) as u32);
        if bits != 0 {
            let mut carry = 0u32;
            for limb in &mut self.limbs {
                let next = *limb >> (32 - bits);
                *limb = (*limb << bits) | carry;
                carry = next;
            }
            if carry != 0 {
                self.limbs.push(carry);
            }
        }
        self.limbs.splice(0..0, std::iter::repeat(0).take(words));
    }

    /// `self = self / 2` (rounding down).
    fn shr1(&mut self) {
        let mut carry = 0u32;
        for limb in self.limbs.iter_mut().rev() {
            let next = *limb & 1;
            *limb = (*limb >> 1) | (carry << 31);
            carry = next;
        }
        self.trim();
    }

    /// `self = self - other`; `other` must not be larger.
    fn sub_assign(&mut self, other: &BigUint) {
        let mut borrow = 0i64;
        for (i, limb) in self.limbs.iter_mut().enumerate() {
            let rhs = i64::from(other.limbs.get(i).copied().unwrap_or(0));
            let mut difference = i64::from(*limb) - rhs - borrow;
            borrow = 0;
            if difference < 0 {
                difference += 1 << 32;
                borrow = 1;
            }
            *limb = difference as u32;
        }
        debug_assert_eq!(borrow, 0, "subtracting a larger number");
        self.trim();
    }

    /// `self = self / divisor`; the remainder.
    pub(crate) fn div_rem_small(&mut self, divisor: u32) -> u32 {
        let mut remainder = 0u64;
        for limb in self.limbs.iter_mut().rev() {
            let current = (remainder << 32) | u64::from(*limb);
            *limb = (current / u64::from(divisor)) as u32;
            remainder = current % u64::from(divisor);
        }
        self.trim();
        remainder as u32
    }

    /// `floor(self / divisor)`, which must be below `2^128`, and whether
    /// the division left a remainder. `self` is consumed as the remainder.
    pub(crate) fn div_u128(mut self, divisor: &BigUint) -> (u128, bool) {
        if divisor.is_zero() || self.cmp(divisor) == Ordering::Less {
            return (0, !self.is_zero());
        }
        let bits = (self.bit_len() - divisor.bit_len()).min(127);
        let mut shifted = divisor.clone();
        shifted.shl(bits);
        let mut quotient = 0u128;
        for bit in (0..=bits).rev() {
            if self.cmp(&shifted) != Ordering::Less {
                self.sub_assign(&shifted);
                quotient |= 1 << bit;
            }
            shifted.shr1();
        }
        (quotient, !self.is_zero())
    }

    /// The number's leading bits as `(top, shift, sticky)`: `top` holds at
    /// most 128 bits, `self = top * 2^shift + rest`, and `sticky` says
    /// whether `rest` is nonzero.
    pub(crate) fn top_u128(&self) -> (u128, u64, bool) {
        let shift = self.bit_len().saturating_sub(128);
        let (words, bits) = ((shift / 32) as usize, (shift % 32) as u32);
        let sticky = self.limbs[..words].iter().any(|&limb| limb != 0)
            || (bits != 0 && self.limbs.get(words).is_some_and(|&limb| limb & ((1 << bits) - 1) != 0));
        let mut top = 0u128;
        for (i, &limb) in self.limbs.iter().enumerate().skip(words) {
            let offset = (i - words) as i64 * 32 - i64::from(bits);
            top |= if offset >= 0 { u128::from(limb) << offset } else { u128::from(limb) >> -offset };
        }
        (top, shift, sticky)
    }

    /// The number's decimal digits (`"0"` for zero).
    pub(crate) fn to_decimal(&self) -> Vec<u8> {
        let mut rest = self.clone();
        let mut chunks = Vec::new();
        while !rest.is_zero() {
            chunks.push(rest.div_rem_small(1_000_000_000));
        }
        let mut text = match chunks.pop() {
            None => return b"0".to_vec(),
            Some(top) => top.to_string().into_bytes(),
        };
        for chunk in chunks.iter().rev() {
            text.extend_from_slice(format!("{chunk:09}").as_bytes());
        }
        text
    }

    fn trim(&mut self) {
        while self.limbs.last() == Some(&0) {
            self.limbs.pop();
        }
    }
}

impl PartialOrd for BigUint {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for BigUint {
    fn cmp(&self, other: &Self) -> Ordering {
        self.limbs.len().cmp(&other.limbs.len()).then_with(|| self.limbs.iter().rev().cmp(other.limbs.iter().rev()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal(text: &str) -> BigUint {
        let mut n = BigUint::default();
        for digit in text.bytes() {
            n.mul_add_small(10, u32::from(digit - b'0'));
        }
        n
    }

    #[test]
    fn decimal_round_trips() {
        for text in ["0", "1", "4294967296", "340282366920938463463374607431768211457", &"9".repeat(200)] {
            assert_eq!(String::from_utf8(decimal(text).to_decimal()).unwrap(), text);
        }
        let mut n = BigUint::from_u128(7);
        n.mul_pow10(30);
        assert_eq!(String::from_utf8(n.to_decimal()).unwrap(), format!("7{}", "0".repeat(30)));
    }

    #[test]
    fn shifts_and_leading_bits() {
        let mut n = BigUint::from_u128(0b1011);
        n.shl(200);
        assert_eq!(n.bit_len(), 204);
        assert_eq!(n.top_u128(), (0b1011 << 124, 76, false));
        n.mul_add_small(1, 1);
        assert_eq!(n.top_u128(), (0b1011 << 124, 76, true));
        assert_eq!(BigUint::from_u128(u128::MAX).top_u128(), (u128::MAX, 0, false));
        assert_eq!(BigUint::default().top_u128(), (0, 0, false));
    }

    #[test]
    fn division_gives_quotient_and_remainder_flag() {
        let mut n = BigUint::from_u128(1);
        n.mul_pow10(40);
        let mut d = BigUint::from_u128(1);
        d.mul_pow10(20);
        assert_eq!(n.clone().div_u128(&d), (10u128.pow(20), false));
        n.mul_add_small(1, 7);
        assert_eq!(n.div_u128(&d), (10u128.pow(20), true));
        assert_eq!(BigUint::from_u128(3).div_u128(&BigUint::from_u128(7)), (0, true));
        let mut small = BigUint::from_u128(1_000_000_007);
        assert_eq!(small.div_rem_small(10), 7);
        assert_eq!(small, BigUint::from_u128(100_000_000));
    }
}
