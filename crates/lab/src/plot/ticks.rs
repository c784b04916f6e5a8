//! Numbers on axes and beside marks: "nice" tick steps (1, 2 or 5 × a
//! power of ten) and labels with k/M/G suffixes.

/// A "nice" tick step (1, 2 or 5 × 10^k) giving about `target` ticks over `span`.
pub(crate) fn nice_step(span: f64, target: f64) -> f64 {
    let raw = span / target;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// A tick label on an axis with ticks every `step`: as many decimals as
/// the step needs (`0.0005`, `1.5k`, `250k`), no more.
pub(crate) fn tick_label(v: f64, step: f64) -> String {
    let (x, suffix) = scaled(v);
    let unit = if x != 0.0 { v / x } else { 1.0 };
    let s = step / unit;
    let digits = if s >= 1.0 || s <= 0.0 { 0 } else { ((-s.log10() - 1e-9).ceil() as usize).min(9) };
    let mut t = format!("{x:.digits$}");
    if t.contains('.') {
        t = t.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    if t == "-0" {
        t = "0".into();
    }
    format!("{t}{suffix}")
}

/// A measured value printed beside its mark: three significant digits
/// (`207`, `14.4`, `0.937`, `1.23M`); the exact value is in the record.
pub(crate) fn value_label(v: f64) -> String {
    let (x, suffix) = scaled(v);
    let digits = match x.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        a if a >= 1.0 => 2,
        _ => 3,
    };
    format!("{x:.digits$}{suffix}")
}

/// `v` in units of 10^9, 10^6 or 10^3 when that large, with the suffix.
fn scaled(v: f64) -> (f64, &'static str) {
    let a = v.abs();
    if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    }
}
