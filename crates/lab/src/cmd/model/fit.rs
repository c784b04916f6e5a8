//! `granule model fit` (and `granule scale --fit`): the machine-repairman
//! model fitted to measured throughput against cores.
//!
//! **Input.** JSON Lines or CSV as `granule` prints them. `scale` records
//! (`regime, cores, delay_cycles, round_trips_per_sec`) are converted to the
//! model's unit with the input's machine record (`tsc_ghz`, or `--ghz`):
//! one ping-pong round trip is a `Call` and a `ReplyRecv`, two kernel entries
//! and so two acquisitions of the big lock (`--locks-per-round-trip`), so
//!
//! ```text
//! X [acquisitions/cycle] = round_trips_per_sec · locks_per_round_trip / (tsc_ghz · 10⁹)
//! ```
//!
//! and the fitted `s` and `a` are cycles per acquisition: `s` comparable to
//! the lock profiler's average hold time, `a` the mean time a core spends
//! outside the lock between two acquisitions. The server's delay `D` falls
//! once per round trip, i.e. `D / locks_per_round_trip` per acquisition.
//! Any other records with `cores` and `throughput` fields (and optionally
//! `delay`, per request, and `regime`) are fitted in their own units.
//!
//! **Fits.** For each regime (by default the big-lock regimes `bkl`,
//! `bkl-ticket`, `bkl-mcs`):
//! * with `--delay D`, one fit of `(s, a)` to that delay's points;
//! * otherwise one joint fit over all delays — the same `s`, and think time
//!   `a + D/locks_per_round_trip` per acquisition, where `a` is the
//!   per-acquisition overhead outside the lock (user code, kernel entry and
//!   exit) — plus one `(s, a)` fit per delay that has at least three core
//!   counts (fewer cannot leave a residual).
//!
//! `--think A` fixes `a` and fits `s` alone; `--min-cores N` leaves the
//! points of fewer cores out of the fit (see `docs/model.md`: one core pays
//! no hand-off, so its service time is not the others'). Records: `model_fit` (s, a,
//! their standard errors, R², degrees of freedom, knee), `fit_point`
//! (measured, fitted, residual per point), `model_knee` per delay (knee and
//! predicted throughput at the largest `--predict-cores`), and in JSON/CSV
//! `model_curve` (the prediction for each of `--predict-cores`). `lock_hold`
//! records in the input (written by `granule scale --fit` from a profiled
//! run) are shown beside the fitted `s`.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;
use granule_model::{fit, fit_service, Fit, Point};
use serde_json::{Map, Value};

use super::{model_cores, non_negative, positive, put};
use crate::machine::Machine;
use crate::output::{emit, record, Format};
use crate::plot::{Chart, Figure, Series};

/// The regimes with one big lock: the ones the model describes.
pub const BIG_LOCK_REGIMES: &[&str] = &["bkl", "bkl-ticket", "bkl-mcs"];

/// Options of `granule model fit`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub common: crate::cmd::Common,
    /// Measurements: JSON Lines or CSV (`granule scale` output, or records
    /// with `cores` and `throughput`); `-` reads standard input.
    #[arg(long)]
    pub input: PathBuf,
    #[command(flatten)]
    pub fit: FitArgs,
    /// TSC frequency in GHz, overriding the input's machine record.
    #[arg(long)]
    pub ghz: Option<f64>,
}

/// Fitting options shared by `granule model fit` and `granule scale --fit`.
#[derive(Clone, Debug, ClapArgs)]
pub struct FitArgs {
    /// Fit only this regime (default: every big-lock regime in the input).
    #[arg(long)]
    pub regime: Option<String>,
    /// Fit only the points of this delay (cycles per round trip for scale
    /// input).
    #[arg(long)]
    pub delay: Option<f64>,
    /// Known think time a per lock request (cycles): fit the service time s
    /// alone.
    #[arg(long)]
    pub think: Option<f64>,
    /// Fit only points with at least this many cores (a lone core
    /// re-acquires the lock with no cache-line transfer, so its service time
    /// is shorter than every other point's); all points are still plotted.
    #[arg(long, default_value_t = 1)]
    pub min_cores: usize,
    /// Lock acquisitions per ping-pong round trip (scale input).
    #[arg(long, default_value_t = 2.0)]
    pub locks_per_round_trip: f64,
    /// Core counts to predict for (a range `1..N` or a list).
    #[arg(long, default_value = "1,2,4,8,16,32,64")]
    pub predict_cores: String,
    /// Write an SVG plot of the measured points and the fitted model.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

/// Records from JSON Lines or CSV text (`granule`'s CSV: blocks of a header
/// line and rows, separated by blank lines; `#` starts a comment line).
pub fn read_records(text: &str) -> Result<Vec<Map<String, Value>>> {
    let mut out = Vec::new();
    let mut header: Option<Vec<String>> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            header = None;
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        if line.starts_with('{') {
            match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(m)) => out.push(m),
                _ => bail!("line {}: not a JSON object", i + 1),
            }
            continue;
        }
        let cells = csv_cells(line);
        match &header {
            None => header = Some(cells),
            Some(h) => out.push(h.iter().cloned().zip(cells.into_iter().map(|c| csv_value(&c))).collect()),
        }
    }
    Ok(out)
}

/// The cells of one CSV line (double quotes quote, `""` is a quote).
fn csv_cells(line: &str) -> Vec<String> {
    let (mut cells, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    cells.push(cur);
    cells
}

fn csv_value(c: &str) -> Value {
    if let Ok(u) = c.parse::<u64>() {
        return u.into();
    }
    match c.parse::<f64>() {
        Ok(f) if f.is_finite() => f.into(),
        _ if c.is_empty() => Value::Null,
        _ => c.into(),
    }
}

/// How input throughput relates to the model's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Units {
    /// `granule scale` round trips per second, `ghz` TSC.
    Scale {
        /// TSC frequency, GHz.
        ghz: f64,
        /// Lock acquisitions per round trip.
        per_trip: f64,
    },
    /// Throughput and delay in the input's own units, per request.
    Generic,
}

impl Units {
    /// Input throughput → model throughput (requests per time unit).
    fn to_model(self, x: f64) -> f64 {
        match self {
            Units::Scale { ghz, per_trip } => x * per_trip / (ghz * 1e9),
            Units::Generic => x,
        }
    }

    /// Model throughput → input throughput.
    fn to_input(self, x: f64) -> f64 {
        match self {
            Units::Scale { ghz, per_trip } => x * ghz * 1e9 / per_trip,
            Units::Generic => x,
        }
    }

    /// The known think time per request of a delay.
    fn per_request(self, delay: f64) -> f64 {
        match self {
            Units::Scale { per_trip, .. } => delay / per_trip,
            Units::Generic => delay,
        }
    }

    fn throughput_name(self) -> &'static str {
        match self {
            Units::Scale { .. } => "round_trips_per_sec",
            Units::Generic => "throughput",
        }
    }

    fn time_unit(self) -> &'static str {
        match self {
            Units::Scale { .. } => "cycles per lock acquisition",
            Units::Generic => "input time unit",
        }
    }
}

/// One measurement in the model's unit.
#[derive(Clone, Debug, PartialEq)]
struct Obs {
    regime: String,
    delay: f64,
    cores: usize,
    x: f64,
}

/// A profiled average hold time.
#[derive(Clone, Debug, PartialEq)]
struct Hold {
    regime: String,
    cores: usize,
    cycles: f64,
}

/// Measurements ready to fit.
#[derive(Clone, Debug)]
pub struct Data {
    obs: Vec<Obs>,
    holds: Vec<Hold>,
    units: Units,
}

fn num(r: &Map<String, Value>, k: &str) -> Option<f64> {
    r.get(k).and_then(Value::as_f64)
}

fn text(r: &Map<String, Value>, k: &str) -> Option<String> {
    r.get(k).and_then(Value::as_str).map(str::to_string)
}

fn kind(r: &Map<String, Value>) -> &str {
    r.get("record").and_then(Value::as_str).unwrap_or("")
}

/// The measurements of `records`: `scale` records (converted with the
/// machine record's `tsc_ghz`, or `ghz`), else generic `cores, throughput`.
pub fn data_from(records: &[Map<String, Value>], per_trip: f64, ghz: Option<f64>) -> Result<Data> {
    positive("locks-per-round-trip", per_trip)?;
    let scale: Vec<&Map<String, Value>> = records.iter().filter(|r| kind(r) == "scale").collect();
    let holds = records
        .iter()
        .filter(|r| kind(r) == "lock_hold")
        .filter_map(|r| {
            Some(Hold { regime: text(r, "regime")?, cores: num(r, "cores")? as usize, cycles: num(r, "hold_cycles")? })
        })
        .collect();
    let (units, raw): (Units, Vec<(String, f64, f64, f64)>) = if !scale.is_empty() {
        let ghz = match ghz.or_else(|| records.iter().find(|r| kind(r) == "machine").and_then(|m| num(m, "tsc_ghz"))) {
            Some(g) => positive("ghz", g)?,
            None => bail!("the input has scale records but no machine record with tsc_ghz: pass --ghz"),
        };
        let rows = scale
            .iter()
            .map(|r| {
                let get = |k: &str| num(r, k).with_context(|| format!("a scale record without `{k}`: {r:?}"));
                Ok((
                    text(r, "regime").unwrap_or_default(),
                    get("delay_cycles")?,
                    get("cores")?,
                    get("round_trips_per_sec")?,
                ))
            })
            .collect::<Result<_>>()?;
        (Units::Scale { ghz, per_trip }, rows)
    } else {
        let rows = records
            .iter()
            .filter_map(|r| {
                let delay = num(r, "delay").or_else(|| num(r, "delay_cycles")).unwrap_or(0.0);
                Some((
                    text(r, "regime").unwrap_or_else(|| "data".into()),
                    delay,
                    num(r, "cores")?,
                    num(r, "throughput")?,
                ))
            })
            .collect();
        (Units::Generic, rows)
    };
    let mut obs = Vec::with_capacity(raw.len());
    for (regime, delay, cores, x) in raw {
        if cores < 1.0 || cores.fract() != 0.0 || !(x.is_finite() && x > 0.0) || !(delay.is_finite() && delay >= 0.0) {
            bail!("{regime}: a point with cores {cores}, delay {delay}, throughput {x} cannot be fitted");
        }
        obs.push(Obs { regime, delay, cores: cores as usize, x: units.to_model(x) });
    }
    if obs.is_empty() {
        bail!("no measurements in the input: expected scale records, or records with `cores` and `throughput`");
    }
    Ok(Data { obs, holds, units })
}

/// Which points one fit covers.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scope {
    /// Every delay: shared `s` and overhead `a`, think `a + D/k`.
    All,
    /// One delay: `a` is the whole think time.
    Delay(f64),
}

impl Scope {
    fn name(self) -> &'static str {
        match self {
            Scope::All => "all delays",
            Scope::Delay(_) => "one delay",
        }
    }

    /// The known think time per request of a point of delay `d`.
    fn known(self, units: Units, d: f64) -> f64 {
        match self {
            Scope::All => units.per_request(d),
            Scope::Delay(_) => 0.0,
        }
    }
}

fn unique_sorted(mut xs: Vec<f64>) -> Vec<f64> {
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs
}

/// Fit `data` as `f` asks: the records to print (fits, points, knees and,
/// unless printing a table, curves) and the plot.
pub fn fit_records(data: &Data, f: &FitArgs, format: Format) -> Result<(Vec<Map<String, Value>>, Figure)> {
    let predict = model_cores(&f.predict_cores)?;
    let think = f.think.map(|a| non_negative("think", a)).transpose()?;
    let present = unique_sorted_strings(data.obs.iter().map(|o| o.regime.clone()).collect());
    let regimes: Vec<String> = match (&f.regime, data.units) {
        (Some(r), _) => {
            if !present.contains(r) {
                bail!("no measurements of regime `{r}` in the input (it has: {})", present.join(", "));
            }
            vec![r.clone()]
        }
        (None, Units::Scale { .. }) => present.into_iter().filter(|r| BIG_LOCK_REGIMES.contains(&r.as_str())).collect(),
        (None, Units::Generic) => present,
    };
    if regimes.is_empty() {
        bail!("no big-lock regime ({}) in the input: pass --regime to fit another", BIG_LOCK_REGIMES.join(", "));
    }
    let units = data.units;
    let mut records = Vec::new();
    let mut figure = Figure::default();
    for regime in &regimes {
        let shown: Vec<&Obs> =
            data.obs.iter().filter(|o| &o.regime == regime && f.delay.map_or(true, |d| o.delay == d)).collect();
        let obs: Vec<&Obs> = shown.iter().copied().filter(|o| o.cores >= f.min_cores).collect();
        if obs.is_empty() {
            bail!(
                "{regime}: no measurements{}{}",
                f.delay.map(|d| format!(" at delay {d}")).unwrap_or_default(),
                if f.min_cores > 1 { format!(" with at least {} cores", f.min_cores) } else { String::new() }
            );
        }
        let delays = unique_sorted(obs.iter().map(|o| o.delay).collect());
        let cores_at = |d: f64| unique_sorted(obs.iter().filter(|o| o.delay == d).map(|o| o.cores as f64).collect());
        let mut scopes = Vec::new();
        if delays.len() >= 2 {
            scopes.push(Scope::All);
        }
        scopes.extend(delays.iter().filter(|&&d| cores_at(d).len() >= 3).map(|&d| Scope::Delay(d)));
        if scopes.is_empty() {
            scopes.extend(delays.iter().map(|&d| Scope::Delay(d)));
        }
        let holds: Vec<&Hold> = data.holds.iter().filter(|h| &h.regime == regime).collect();
        let mut chart = Chart {
            title: format!("{regime}: measured (dots) and fitted machine-repairman model (lines)"),
            x_label: "cores".into(),
            y_label: units.throughput_name().replace('_', " "),
            series: Vec::new(),
        };
        for scope in scopes {
            let pts: Vec<&Obs> =
                obs.iter().copied().filter(|o| matches!(scope, Scope::All) || Scope::Delay(o.delay) == scope).collect();
            let points: Vec<Point> = pts
                .iter()
                .map(|o| Point { cores: o.cores, throughput: o.x, known_think: scope.known(units, o.delay) })
                .collect();
            let fitted = match think {
                Some(a) => fit_service(&points, a),
                None => fit(&points),
            }
            .with_context(|| format!("{regime}, {}", scope.name()))?;
            records.push(fit_record(regime, scope, &fitted, units, think.is_some(), pts.len(), &holds));
            for (o, (fx, res)) in pts.iter().zip(fitted.fitted.iter().zip(&fitted.residuals)) {
                let mut r = keyed("fit_point", regime, scope, units_delay(o.delay));
                put(&mut r, "cores", o.cores);
                put(&mut r, "measured", units.to_input(o.x));
                put(&mut r, "fitted", units.to_input(*fx));
                put(&mut r, "residual", units.to_input(*res));
                records.push(r);
            }
            let scope_delays: Vec<f64> = match scope {
                Scope::All => delays.clone(),
                Scope::Delay(d) => vec![d],
            };
            let n_max = predict.iter().chain(obs.iter().map(|o| &o.cores)).copied().max().unwrap_or(1);
            for &d in &scope_delays {
                let known = scope.known(units, d);
                let top = *predict.iter().max().unwrap_or(&1);
                let mut k = keyed("model_knee", regime, scope, units_delay(d));
                put(&mut k, "think_per_request", fitted.a + known);
                put(&mut k, "knee_cores", fitted.knee(known));
                put(&mut k, &format!("peak_{}", units.throughput_name()), units.to_input(1.0 / fitted.s));
                put(&mut k, "predicted_at_cores", top);
                put(
                    &mut k,
                    &format!("predicted_{}", units.throughput_name()),
                    units.to_input(fitted.predict(top, known)),
                );
                records.push(k);
                if format != Format::Table {
                    for &n in &predict {
                        let mut c = keyed("model_curve", regime, scope, units_delay(d));
                        put(&mut c, "cores", n);
                        put(
                            &mut c,
                            &format!("predicted_{}", units.throughput_name()),
                            units.to_input(fitted.predict(n, known)),
                        );
                        records.push(c);
                    }
                }
                // Plot the joint fit where there is one, else each delay's.
                let plotted = match scope {
                    Scope::All => true,
                    Scope::Delay(_) => delays.len() < 2,
                };
                if plotted {
                    let colour = delays.iter().position(|&x| x == d).unwrap_or(0);
                    chart.series.push(Series {
                        label: format!("D = {}: measured", units_delay(d)),
                        points: shown
                            .iter()
                            .filter(|o| o.delay == d)
                            .map(|o| (o.cores as f64, units.to_input(o.x)))
                            .collect(),
                        line: false,
                        colour,
                    });
                    chart.series.push(Series {
                        label: format!("model, knee {:.1}", fitted.knee(known)),
                        points: (1..=n_max).map(|n| (n as f64, units.to_input(fitted.predict(n, known)))).collect(),
                        line: true,
                        colour,
                    });
                }
            }
        }
        figure.charts.push(chart);
    }
    Ok((records, figure))
}

/// A record of `kind` for one regime, fit scope and delay.
fn keyed(kind: &str, regime: &str, scope: Scope, delay: Value) -> Map<String, Value> {
    let mut r = record(kind);
    put(&mut r, "regime", regime);
    put(&mut r, "scope", scope.name());
    put(&mut r, "delay", delay);
    r
}

fn unique_sorted_strings(mut xs: Vec<String>) -> Vec<String> {
    xs.sort();
    xs.dedup();
    xs
}

/// A delay as printed: whole numbers without a fraction.
fn units_delay(d: f64) -> Value {
    if d.fract() == 0.0 && d < 9e15 {
        Value::from(d as u64)
    } else {
        Value::from(d)
    }
}

fn fit_record(
    regime: &str,
    scope: Scope,
    f: &Fit,
    units: Units,
    a_known: bool,
    points: usize,
    holds: &[&Hold],
) -> Map<String, Value> {
    let delay = match scope {
        Scope::All => Value::Null,
        Scope::Delay(d) => units_delay(d),
    };
    let mut r = keyed("model_fit", regime, scope, delay);
    put(&mut r, "points", points);
    put(&mut r, "s", f.s);
    put(&mut r, "s_err", f.s_err);
    put(&mut r, "a", f.a);
    put(&mut r, "a_err", f.a_err);
    put(&mut r, "a_given", a_known);
    put(&mut r, "r2", f.r2);
    put(&mut r, "dof", f.dof);
    put(&mut r, "converged", f.converged);
    put(
        &mut r,
        "knee_cores",
        match scope {
            Scope::All => None,
            Scope::Delay(_) => Some(f.knee(0.0)),
        },
    );
    put(&mut r, "time_unit", units.time_unit());
    let one = holds.iter().find(|h| h.cores == 1);
    let most = holds.iter().filter(|h| h.cores > 1).max_by_key(|h| h.cores);
    put(&mut r, "profiled_hold_1_core", one.map(|h| h.cycles));
    put(&mut r, "profiled_hold_cores", most.map(|h| h.cores));
    put(&mut r, "profiled_hold_n_cores", most.map(|h| h.cycles));
    r
}

/// Run `granule model fit`.
pub fn run(a: &Args) -> Result<()> {
    let input_text = if a.input.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).context("reading standard input")?
    } else {
        std::fs::read_to_string(&a.input).with_context(|| format!("reading {}", a.input.display()))?
    };
    let input = read_records(&input_text).with_context(|| format!("parsing {}", a.input.display()))?;
    let data = data_from(&input, a.fit.locks_per_round_trip, a.ghz)?;
    let mut records = vec![Machine::detect().record()];
    let mut src = record("fit_input");
    put(&mut src, "file", a.input.display().to_string());
    put(&mut src, "points", data.obs.len());
    let machine = input.iter().find(|r| kind(r) == "machine");
    put(&mut src, "cpu_model", machine.and_then(|m| text(m, "cpu_model")));
    match data.units {
        Units::Scale { ghz, per_trip } => {
            put(&mut src, "tsc_ghz", ghz);
            put(&mut src, "locks_per_round_trip", per_trip);
        }
        Units::Generic => {
            put(&mut src, "tsc_ghz", Value::Null);
            put(&mut src, "locks_per_round_trip", Value::Null);
        }
    }
    records.push(src);
    let (fits, figure) = fit_records(&data, &a.fit, a.common.format)?;
    records.extend(fits);
    if let Some(path) = &a.fit.plot {
        figure.write(path)?;
    }
    emit(a.common.format, &records, "")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_and_json_lines_read_alike() {
        let json = r#"{"record":"machine","tsc_ghz":2.0,"command":"granule scale --regimes bkl,none"}
{"record":"scale","regime":"bkl","cores":1,"delay_cycles":0,"round_trips_per_sec":1000000.0}"#;
        let csv = "record,tsc_ghz,command\nmachine,2.0,\"granule scale --regimes bkl,none\"\n\n\
                   record,regime,cores,delay_cycles,round_trips_per_sec\nscale,bkl,1,0,1000000.0\n";
        let (a, b) = (read_records(json).unwrap(), read_records(csv).unwrap());
        assert_eq!(a.len(), 2);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0]["command"], "granule scale --regimes bkl,none");
        for (x, y) in a.iter().zip(&b) {
            for k in x.keys() {
                assert_eq!(x[k].as_f64(), y[k].as_f64(), "{k}");
                assert_eq!(x[k].as_str(), y[k].as_str(), "{k}");
            }
        }
        assert!(read_records("{not json").is_err());
    }

    #[test]
    fn scale_round_trips_become_acquisitions_per_cycle() {
        let recs = read_records(
            r#"{"record":"machine","tsc_ghz":2.0}
{"record":"scale","regime":"bkl","cores":2,"delay_cycles":500,"round_trips_per_sec":1000000.0}"#,
        )
        .unwrap();
        let d = data_from(&recs, 2.0, None).unwrap();
        // 10⁶ round trips/s × 2 acquisitions / 2·10⁹ cycles/s = 10⁻³ per cycle.
        assert!((d.obs[0].x - 1e-3).abs() < 1e-15);
        assert_eq!(d.units.per_request(500.0), 250.0);
        assert!((d.units.to_input(d.obs[0].x) - 1e6).abs() < 1e-6);
        let d = data_from(&recs, 2.0, Some(4.0)).unwrap();
        assert!((d.obs[0].x - 5e-4).abs() < 1e-15, "--ghz overrides the machine record");
        let no_machine = &recs[1..];
        assert!(data_from(no_machine, 2.0, None).unwrap_err().to_string().contains("--ghz"));
        assert!(data_from(&[], 2.0, None).is_err());
    }
}
