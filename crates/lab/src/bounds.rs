//! The range of every number the command line accepts, and the parsers that
//! hold options to them.
//!
//! Every numeric option is parsed by one of these functions (clap's
//! `value_parser`), names its range in its `--help`, and a value outside it
//! is refused before the command does anything, with one line naming the
//! option, the value and the range. Ranges are set so that no value inside
//! one can make a command panic, allocate memory sized from the command line
//! beyond what the machine has, or run unboundedly: a measured window is at
//! most an hour, a repetition count at most a thousand, a core count at most
//! what the kernel or the model supports. Ranges that depend on the machine
//! (cores against its CPUs) are checked by the command before it measures.
//!
//! Integers may be written with `_` separators or in exponent form when the
//! value is exact (`1e6`, `100_000`); reals accept anything Rust's `f64`
//! parser does, then must be finite and in range (so `NaN`, `inf` and `1e20`
//! seconds are refused, not converted).

/// Longest measured window or warm-up of any benchmark, in seconds.
pub const MAX_SECONDS: f64 = 3600.0;

/// Most repetitions of any measurement.
pub const MAX_RUNS: u64 = 1000;

/// Largest count of cycles any option takes (a delay, a critical section,
/// a service time): about five minutes at 3 GHz.
pub const MAX_CYCLES: f64 = 1e12;

/// Fastest clock rate any option or input file may give, in GHz.
pub const MAX_GHZ: f64 = 100.0;

/// The clock rates accepted, on the command line and in input files:
/// (0, [`MAX_GHZ`]].
pub const GHZ: core::ops::RangeInclusive<f64> = f64::MIN_POSITIVE..=MAX_GHZ;

/// Most threads `granule locks` starts for one measurement.
pub const MAX_THREADS: u64 = 1024;

/// Largest exact integer an `f64` holds (so `1e6` is read exactly).
const EXACT_F64: f64 = 9_007_199_254_740_992.0;

/// A parser of integers in `lo..=hi`, converted to `T` (which must hold `hi`).
pub fn int<T>(lo: u64, hi: u64) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
{
    move |s: &str| {
        let range = || format!("expected an integer in {lo}..={hi}");
        let v = parse_integer(s).ok_or_else(range)?;
        if !(lo..=hi).contains(&v) {
            return Err(range());
        }
        T::try_from(v).map_err(|_| range())
    }
}

/// Any `u64` (a seed), still refusing negative, fractional and non-numeric
/// values with the same message shape as [`int`].
pub fn any_u64(s: &str) -> Result<u64, String> {
    parse_integer(s).ok_or_else(|| format!("expected an integer in 0..={}", u64::MAX))
}

/// `s` as a non-negative integer: decimal digits with optional `_`, or an
/// exact integral real (`1e6`).
fn parse_integer(s: &str) -> Option<u64> {
    let t: String = s.trim().chars().filter(|&c| c != '_').collect();
    if let Ok(v) = t.parse::<u64>() {
        return Some(v);
    }
    let x: f64 = t.parse().ok()?;
    // Exact only: 0 ≤ x ≤ 2^53 and integral (so the cast is lossless).
    ((0.0..=EXACT_F64).contains(&x) && x.fract() == 0.0).then_some(x as u64)
}

/// Where a real range starts: at `lo` inclusive, or just above it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Low {
    /// `lo` itself is allowed.
    Closed(f64),
    /// Only values greater than `lo`.
    Open(f64),
}

/// A parser of finite reals in the range from `low` up to `hi` (inclusive),
/// described as a number of `unit` in the error message.
pub fn real(
    low: Low,
    hi: f64,
    unit: &'static str,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |s: &str| {
        let (ok_low, open, lo) = match low {
            Low::Closed(lo) => (None, "[", lo),
            Low::Open(lo) => (Some(lo), "(", lo),
        };
        let range = || format!("expected {unit} in {open}{lo}, {hi}]");
        let x: f64 = s.trim().parse().map_err(|_| range())?;
        let above = match ok_low {
            Some(lo) => x > lo,
            None => x >= lo,
        };
        if !(x.is_finite() && above && x <= hi) {
            return Err(range());
        }
        Ok(x)
    }
}

/// A measured window: seconds in (0, [`MAX_SECONDS`]].
pub fn seconds() -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    real(Low::Open(0.0), MAX_SECONDS, "a number of seconds")
}

/// A warm-up: seconds in [0, [`MAX_SECONDS`]].
pub fn warmup() -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    real(Low::Closed(0.0), MAX_SECONDS, "a number of seconds")
}

/// Repetitions: 1..=[`MAX_RUNS`].
pub fn runs<T>() -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
{
    int(1, MAX_RUNS)
}

/// A count of cycles in [0, [`MAX_CYCLES`]].
pub fn cycles() -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    real(Low::Closed(0.0), MAX_CYCLES, "a number of cycles")
}

/// A positive count of cycles in (0, [`MAX_CYCLES`]].
pub fn positive_cycles() -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    real(Low::Open(0.0), MAX_CYCLES, "a positive number of cycles")
}

/// A clock rate in GHz, in (0, 100].
pub fn ghz() -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    real(Low::Open(0.0), MAX_GHZ, "a clock rate in GHz")
}

/// Message words of one IPC call: 0..=the kernel's `MSG_MAX_WORDS`.
pub fn message_words() -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    int(0, granule_hosted::granule_kernel::abi::MSG_MAX_WORDS as u64)
}

/// Core (or thread) counts from the command line, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counts(pub Vec<usize>);

/// A parser of counts in `1..=max`: an inclusive range `lo..hi` (also
/// `lo..=hi`) or a comma-separated list. A range is checked before it is
/// expanded, so `1..1e11` costs nothing.
pub fn counts(max: usize) -> impl Fn(&str) -> Result<Counts, String> + Clone + Send + Sync + 'static {
    move |s: &str| {
        let expected = || format!("expected counts in 1..={max}: a range like 1..4 or a list like 1,2,4");
        let one = |t: &str| parse_integer(t).filter(|n| (1..=max as u64).contains(n)).map(|n| n as usize);
        let out: Vec<usize> = match s.split_once("..") {
            Some((lo, hi)) => {
                let (lo, hi) = (one(lo).ok_or_else(expected)?, one(hi.trim_start_matches('=')).ok_or_else(expected)?);
                if lo > hi {
                    return Err(format!("the range {lo}..{hi} is empty; {}", expected()));
                }
                (lo..=hi).collect()
            }
            None => s.split(',').map(|t| one(t).ok_or_else(expected)).collect::<Result<_, _>>()?,
        };
        Ok(Counts(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_exact_and_in_range() {
        let p = int::<usize>(1, 1000);
        assert_eq!(p("7"), Ok(7));
        assert_eq!(p(" 1_000 "), Ok(1000));
        assert_eq!(p("1e3"), Ok(1000));
        for bad in ["0", "1001", "-1", "1.5", "x", "", "NaN", "inf", "1e20", "18446744073709551616"] {
            assert_eq!(p(bad), Err("expected an integer in 1..=1000".into()), "{bad}");
        }
        assert_eq!(any_u64("18446744073709551615"), Ok(u64::MAX));
        assert!(any_u64("18446744073709551616").is_err());
        assert!(any_u64("-3").is_err());
    }

    #[test]
    fn counts_are_checked_before_they_are_expanded() {
        let p = counts(64);
        assert_eq!(p("1..4"), Ok(Counts(vec![1, 2, 3, 4])));
        assert_eq!(p("2..=3"), Ok(Counts(vec![2, 3])));
        assert_eq!(p("1, 2,4"), Ok(Counts(vec![1, 2, 4])));
        for bad in ["1..1e11", "1..100000000000", "0..2", "1..65", "3..1", "", "1,,2", "x", "-1", "NaN", "1..x"] {
            assert!(p(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reals_are_finite_and_in_range() {
        let s = seconds();
        assert_eq!(s("0.5"), Ok(0.5));
        assert_eq!(s("3600"), Ok(3600.0));
        for bad in ["0", "-1", "3600.1", "NaN", "inf", "-inf", "1e20", "x", ""] {
            assert_eq!(s(bad), Err("expected a number of seconds in (0, 3600]".into()), "{bad}");
        }
        let w = warmup();
        assert_eq!(w("0"), Ok(0.0));
        assert!(w("-0.1").is_err());
    }
}
