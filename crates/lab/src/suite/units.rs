//! Numbers in the report's sentences as people write them: `4.4 M round
//! trips/s`, `12,000 cycles`, `85 %` — never `4.377e6`. The records keep
//! every digit; the sentence names the line to find them.

/// `v` with two or three significant digits and a k / M / G prefix, then
/// `unit`: `4.4 M round trips/s`, `850 k lock acquisitions/s`, `12 cycles`.
pub fn quantity(v: f64, unit: &str) -> String {
    format!("{} {unit}", number(v))
}

/// `v` as [`quantity`] writes it, without a unit: `4.4 M`, `4,000`, `2.4`.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    // Rounded first (three significant digits), so 999,950 is `1.0 M`, not
    // `1000 k`.
    let v = if v == 0.0 {
        0.0
    } else {
        let scale = 10f64.powi(2 - v.abs().log10().floor() as i32);
        (v * scale).round() / scale
    };
    let a = v.abs();
    if a >= 1e15 {
        let e = a.log10().floor() as i32;
        return format!("{:.1} × 10^{e}", v / 10f64.powi(e));
    }
    let (x, prefix) = if a >= 1e12 {
        (v / 1e12, "T")
    } else if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    // One decimal below 10 (unless it rounds to a whole number there).
    let one = format!("{x:.1}");
    let n = if x.abs() >= 10.0 || one.ends_with(".0") && prefix.is_empty() || one.trim_start_matches('-').len() > 3 {
        format!("{x:.0}")
    } else {
        one
    };
    if prefix.is_empty() {
        thousands(&n)
    } else {
        format!("{n} {prefix}")
    }
}

/// A whole number with thousands separators: `32,000`.
pub fn count(v: u64) -> String {
    thousands(&v.to_string())
}

/// `0.853` as `85 %`.
pub fn percent(ratio: f64) -> String {
    format!("{:.0} %", ratio * 100.0)
}

/// `1.96` as `1.96×` (two decimals below 10, none above).
pub fn times(ratio: f64) -> String {
    if ratio.abs() >= 10.0 {
        format!("{ratio:.0}×")
    } else {
        format!("{ratio:.2}×")
    }
}

/// Line numbers as a reader scans them: ascending, runs of three or more
/// as a range (`231, 234, 634–689`).
pub fn line_list(lines: &[usize]) -> String {
    let mut l = lines.to_vec();
    l.sort_unstable();
    l.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < l.len() {
        let mut j = i;
        while j + 1 < l.len() && l[j + 1] == l[j] + 1 {
            j += 1;
        }
        if j >= i + 2 {
            out.push(format!("{}–{}", l[i], l[j]));
        } else {
            out.extend(l[i..=j].iter().map(usize::to_string));
        }
        i = j + 1;
    }
    out.join(", ")
}

/// A decimal numeral with commas between groups of three digits of its
/// integer part: `1234567.5` as `1,234,567.5`.
pub fn grouped(n: &str) -> String {
    thousands(n)
}

/// Commas between groups of three digits of a decimal numeral's integer part.
fn thousands(n: &str) -> String {
    let (sign, rest) = n.strip_prefix('-').map_or(("", n), |r| ("-", r));
    let (int, frac) = rest.split_once('.').map_or((rest, None), |(i, f)| (i, Some(f)));
    let mut out = String::new();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    match frac {
        Some(f) => format!("{sign}{out}.{f}"),
        None => format!("{sign}{out}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(quantity(4.377e6, "round trips/s"), "4.4 M round trips/s");
        assert_eq!(quantity(12_270_000.0, "lock acquisitions/s"), "12 M lock acquisitions/s");
        assert_eq!(quantity(850_000.0, "ops/s"), "850 k ops/s");
        assert_eq!(quantity(4_000.0, "cycles"), "4,000 cycles");
        assert_eq!(quantity(238.4, "cycles"), "238 cycles");
        assert_eq!(quantity(2.4, "cycles"), "2.4 cycles");
        assert_eq!(quantity(f64::NAN, "cycles"), "— cycles");
        assert_eq!(number(12.3e6), "12 M");
        assert_eq!(number(999_950.0), "1.0 M");
        assert_eq!(number(9.96), "10");
        assert_eq!(number(9.94), "9.9");
        assert_eq!(number(2.5e12), "2.5 T");
        assert_eq!(number(1e300), "1.0 × 10^300");
        assert_eq!(number(-4_377_000.0), "-4.4 M");
        assert_eq!(number(0.0), "0");
        assert_eq!(count(32000), "32,000");
        assert_eq!(count(500), "500");
        assert_eq!(percent(0.853), "85 %");
        assert_eq!(times(1.955), "1.96×");
        assert_eq!(times(13.2), "13×");
        assert_eq!(line_list(&[689, 231, 634, 635, 636, 234, 235, 231]), "231, 234, 235, 634–636, 689");
        assert_eq!(line_list(&[]), "");
    }
}
