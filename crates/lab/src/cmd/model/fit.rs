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

pub(crate) mod band;
pub(crate) mod records;

use std::borrow::Cow;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;
use granule_model::{fit, fit_service, Fit, Point};
use serde_json::{Map, Value};

pub use self::band::Latencies;
use self::records::{Delay, FitInput, FitKey, FitKnee, FitPoint, ModelCurve, ModelFit};
use super::MAX_MODEL_CORES;
use crate::bounds::Counts;
use crate::fields::Fields;
use crate::input::{self, Record};
use crate::machine::Machine;
use crate::output::{emit, Format, Record as _};
use crate::plot::{Chart, Figure, Series};

pub use crate::regimes::BIG_LOCK_REGIMES;

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
    /// TSC frequency in GHz (0 < f ≤ 100), overriding the input's machine
    /// record.
    #[arg(long, value_parser = crate::bounds::ghz())]
    pub ghz: Option<f64>,
    /// `granule info` output (JSON Lines or CSV): its core-to-core
    /// latencies are the hand-off in the service-time band
    /// (`service_band` records; without it the hand-off is taken as 0).
    #[arg(long)]
    pub latency_input: Option<PathBuf>,
}

/// Fitting options shared by `granule model fit` and `granule scale --fit`.
#[derive(Clone, Debug, ClapArgs)]
pub struct FitArgs {
    /// Fit only this regime (default: every big-lock regime in the input).
    #[arg(long)]
    pub regime: Option<String>,
    /// Fit only the points of this delay (cycles per round trip for scale
    /// input), 0..=10^12.
    #[arg(long, value_parser = crate::bounds::cycles())]
    pub delay: Option<f64>,
    /// Known think time a per lock request (cycles, 0..=10^12): fit the
    /// service time s alone.
    #[arg(long, value_parser = crate::bounds::cycles())]
    pub think: Option<f64>,
    /// Fit only points with at least this many cores (a lone core
    /// re-acquires the lock with no cache-line transfer, so its service time
    /// is shorter than every other point's); all points are still plotted.
    /// 1..=4096.
    #[arg(long, default_value_t = 1, value_parser = crate::bounds::int::<usize>(1, super::MAX_MODEL_CORES as u64))]
    pub min_cores: usize,
    /// Lock acquisitions per ping-pong round trip (scale input), 0 < n ≤
    /// 1000.
    #[arg(long, default_value_t = 2.0, value_parser = crate::bounds::real(crate::bounds::Low::Open(0.0), 1000.0, "a number of acquisitions"))]
    pub locks_per_round_trip: f64,
    /// Core counts to predict for (a range `1..N` or a list), each 1..=4096.
    #[arg(long, default_value = "1,2,4,8,16,32,64", value_parser = crate::bounds::counts(MAX_MODEL_CORES))]
    pub predict_cores: Counts,
    /// Write an SVG plot of the measured points and the fitted model.
    #[arg(long)]
    pub plot: Option<PathBuf>,
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

    /// The throughput field's name in the records.
    #[cfg(test)]
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

/// The measurements of `records`: `scale` records (converted with the
/// machine record's `tsc_ghz`, or `ghz`), else generic `cores, throughput`.
/// Every number is checked where it is read; a bad one is an error naming
/// its file and line. `per_trip` and `ghz` come from the command line,
/// bounded by their parsers (`FitArgs`, `Args`).
///
/// The fields are read by name, not through the structs that write these
/// records: the input is a file the user names, JSON Lines or CSV, whose
/// records need only the fields documented above (a `scale` record its
/// regime, cores, delay and throughput), and any other kind of record with
/// `cores` and `throughput` is fitted too.
pub fn data_from(records: &[Record], per_trip: f64, ghz: Option<f64>) -> Result<Data> {
    let cores_range = 1..=MAX_MODEL_CORES;
    let positive_real = f64::MIN_POSITIVE..=f64::MAX;
    let mut holds = Vec::new();
    for r in records.iter().filter(|r| r.kind() == "lock_hold") {
        let (Some(regime), Some(cores), Some(cycles)) =
            (r.str("regime"), r.index("cores", cores_range.clone())?, r.real("hold_cycles", 0.0..=f64::MAX)?)
        else {
            continue;
        };
        holds.push(Hold { regime: regime.to_string(), cores, cycles });
    }
    let scale: Vec<&Record> = records.iter().filter(|r| r.kind() == "scale").collect();
    let mut raw: Vec<(String, f64, usize, f64)> = Vec::new();
    let units = if !scale.is_empty() {
        let machine_ghz = match records.iter().find(|r| r.kind() == "machine") {
            Some(m) => m.real("tsc_ghz", crate::bounds::GHZ)?,
            None => None,
        };
        let Some(ghz) = ghz.or(machine_ghz) else {
            bail!("the input has scale records but no machine record with tsc_ghz: pass --ghz");
        };
        for r in scale {
            let need = |v: Option<f64>, k: &str| v.with_context(|| format!("{}: a scale record without `{k}`", r.at));
            let delay = need(r.real("delay_cycles", 0.0..=f64::MAX)?, "delay_cycles")?;
            let cores = r.index("cores", cores_range.clone())?.with_context(|| format!("{}: no `cores`", r.at))?;
            let x = need(r.real("round_trips_per_sec", positive_real.clone())?, "round_trips_per_sec")?;
            raw.push((r.str("regime").unwrap_or_default().to_string(), delay, cores, x));
        }
        Units::Scale { ghz, per_trip }
    } else {
        for r in records {
            let (Some(cores), Some(x)) =
                (r.index("cores", cores_range.clone())?, r.real("throughput", positive_real.clone())?)
            else {
                continue;
            };
            let delay = match r.real("delay", 0.0..=f64::MAX)? {
                Some(d) => d,
                None => r.real("delay_cycles", 0.0..=f64::MAX)?.unwrap_or(0.0),
            };
            raw.push((r.str("regime").unwrap_or("data").to_string(), delay, cores, x));
        }
        Units::Generic
    };
    let obs: Vec<Obs> =
        raw.into_iter().map(|(regime, delay, cores, x)| Obs { regime, delay, cores, x: units.to_model(x) }).collect();
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
pub fn fit_records(
    data: &Data,
    f: &FitArgs,
    format: Format,
    lat: Option<&Latencies>,
) -> Result<(Vec<Map<String, Value>>, Figure)> {
    let predict = f.predict_cores.0.clone();
    // Bounded by its parser (bounds::cycles).
    let think = f.think;
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
        let all: Vec<&Obs> = data.obs.iter().filter(|o| &o.regime == regime).collect();
        if let Some(b) = band::band(regime, &holds, &all, units, lat) {
            records.push(b.to_map());
        }
        let mut chart = Chart {
            title: format!("{regime}: measured (dots) and fitted machine-repairman model (lines)"),
            x_label: "cores".into(),
            y_label: match units {
                Units::Scale { .. } => "round trips per second".into(),
                Units::Generic => "throughput (critical sections per input time unit)".into(),
            },
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
            records.push(fit_record(regime, scope, &fitted, units, think.is_some(), &pts, &holds).to_map());
            for (o, (fx, res)) in pts.iter().zip(fitted.fitted.iter().zip(&fitted.residuals)) {
                let r = FitPoint {
                    key: FitKey::new(regime, scope, Some(o.delay)),
                    cores: o.cores,
                    measured: units.to_input(o.x),
                    fitted: units.to_input(*fx),
                    residual: units.to_input(*res),
                };
                records.push(r.to_map());
            }
            let scope_delays: Vec<f64> = match scope {
                Scope::All => delays.clone(),
                Scope::Delay(d) => vec![d],
            };
            let n_max = predict.iter().chain(obs.iter().map(|o| &o.cores)).copied().max().unwrap_or(1);
            for &d in &scope_delays {
                let known = scope.known(units, d);
                let top = *predict.iter().max().unwrap_or(&1);
                let k = FitKnee {
                    key: FitKey::new(regime, scope, Some(d)),
                    think_per_request: fitted.a + known,
                    knee_cores: fitted.knee(known),
                    peak: units.peak(units.to_input(1.0 / fitted.s)),
                    predicted_at_cores: top,
                    predicted: units.predicted(units.to_input(fitted.predict(top, known))),
                };
                records.push(k.to_map());
                if format != Format::Table {
                    for &n in &predict {
                        let c = ModelCurve {
                            key: FitKey::new(regime, scope, Some(d)),
                            cores: n,
                            predicted: units.predicted(units.to_input(fitted.predict(n, known))),
                        };
                        records.push(c.to_map());
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
                        style: 0,
                        label: format!("D = {}: measured", Delay(d)),
                        points: shown
                            .iter()
                            .filter(|o| o.delay == d)
                            .map(|o| (o.cores as f64, units.to_input(o.x)))
                            .collect(),
                        line: false,
                        colour,
                    });
                    chart.series.push(Series {
                        style: 0,
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

fn unique_sorted_strings(mut xs: Vec<String>) -> Vec<String> {
    xs.sort();
    xs.dedup();
    xs
}

fn fit_record<'a>(
    regime: &'a str,
    scope: Scope,
    f: &Fit,
    units: Units,
    a_known: bool,
    pts: &[&Obs],
    holds: &[&Hold],
) -> ModelFit<'a> {
    let distinct_cores = unique_sorted(pts.iter().map(|o| o.cores as f64).collect()).len();
    let delay = match scope {
        Scope::All => None,
        Scope::Delay(d) => Some(d),
    };
    let one = holds.iter().find(|h| h.cores == 1);
    let most = holds.iter().filter(|h| h.cores > 1).max_by_key(|h| h.cores);
    let (quoted, not_quoted_because) = records::quotable(distinct_cores, f.r2, f.converged);
    ModelFit {
        key: FitKey::new(regime, scope, delay),
        points: pts.len(),
        s: f.s,
        s_err: f.s_err,
        a: f.a,
        a_err: f.a_err,
        a_given: a_known,
        r2: f.r2,
        dof: f.dof,
        converged: f.converged,
        knee_cores: delay.map(|_| f.knee(0.0)),
        time_unit: Cow::Borrowed(units.time_unit()),
        profiled_hold_1_core: one.map(|h| h.cycles),
        profiled_hold_cores: most.map(|h| h.cores),
        profiled_hold_n_cores: most.map(|h| h.cycles),
        distinct_cores,
        quoted,
        not_quoted_because,
    }
}

/// Run `granule model fit`.
pub fn run(a: &Args) -> Result<()> {
    let input = input::read(&a.input)?;
    let data = data_from(&input, a.fit.locks_per_round_trip, a.ghz)?;
    let mut records = vec![Machine::detect().record()];
    // The input's machine record may be a CSV row, or hold only some of
    // the fields `granule` writes: its CPU is read by name.
    let machine = input.iter().find(|r| r.kind() == "machine");
    let (tsc_ghz, locks_per_round_trip) = match data.units {
        Units::Scale { ghz, per_trip } => (Some(ghz), Some(per_trip)),
        Units::Generic => (None, None),
    };
    let src = FitInput {
        file: a.input.display().to_string(),
        points: data.obs.len(),
        cpu_model: machine.and_then(|m| m.str("cpu_model")).map(Cow::Borrowed),
        tsc_ghz,
        locks_per_round_trip,
    };
    records.push(src.to_map());
    let lat = match &a.latency_input {
        Some(path) => Some(latencies(&input::read(path)?)?),
        None => None,
    };
    let (fits, figure) = fit_records(&data, &a.fit, a.common.format, lat.as_deref())?;
    records.extend(fits);
    if let Some(path) = &a.fit.plot {
        figure.write(path)?;
    }
    emit(a.common.format, &records, "")?;
    Ok(())
}

/// The `core_latency` records of `granule info` output, in order: `(from,
/// to, one-way cycles)`; an error if there are none.
fn latencies(records: &[Record]) -> Result<Vec<(usize, usize, f64)>> {
    let mut out = Vec::new();
    for r in records.iter().filter(|r| r.kind() == "core_latency") {
        let cpu = 0..=usize::MAX / 2;
        if let (Some(a), Some(b), Some(c)) =
            (r.index("from", cpu.clone())?, r.index("to", cpu)?, r.real("one_way_cycles", 0.0..=1e9)?)
        {
            out.push((a, b, c));
        }
    }
    if out.is_empty() {
        bail!("--latency-input: no core_latency records with from, to and one_way_cycles (granule info output)");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_round_trips_become_acquisitions_per_cycle() {
        let recs = input::parse(
            "in.jsonl",
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

    #[test]
    fn out_of_range_numbers_name_their_line() {
        let recs = input::parse(
            "in.jsonl",
            "{\"record\":\"machine\",\"tsc_ghz\":2.0}\n\
             {\"record\":\"scale\",\"cores\":18446744073709551615,\"delay_cycles\":0,\"round_trips_per_sec\":1.0}",
        )
        .unwrap();
        let e = data_from(&recs, 2.0, None).unwrap_err().to_string();
        assert!(e.starts_with("in.jsonl:2: `cores` must be an integer in 1..=4096"), "{e}");
        let recs = input::parse("g.csv", "cores,throughput\n2,NaN\n").unwrap();
        let e = data_from(&recs, 2.0, None).unwrap_err().to_string();
        assert!(e.starts_with("g.csv:2: `throughput` must be a number"), "{e}");
    }
}
