//! Choosing how a fused group runs by measuring its own runs: the first
//! runs at a new input size try a few strip heights and the members run
//! unfused (each over the whole frame, one after the other), a few runs
//! each, and the fastest by median is kept for that group, size and
//! thread count — in the group and in a process-wide table, so another
//! instance of the same pipeline (another stream, a restarted run) starts
//! with the decision. The unfused run is kept unless a height beats it by
//! the tie margin, so a group never costs a frame more than its members
//! would. Every candidate gives bit-identical outputs, so measuring never
//! changes a result.
//!
//! Decisions are kept in the autotune cache file ([`crate::autotune`]),
//! beside the kernel registry's, keyed by the group's members, its input
//! sizes and the thread count, so the next process starts decided too; a
//! user may pin a setting there (`"forced": true`).
//!
//! Forcing: the `CORTEX_STRIPS` environment variable, or [`set_policy`].

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

use super::erased::AnyPlane;
use super::geometry::Geometry;
use super::strips::Strips;
use crate::autotune::{self, CacheEntry, CacheKey, Section};
use crate::limits::FrameLimits;
use crate::runtime::untrusted::{echo, echo_cut};

/// The environment variable forcing the strip policy: `measure` (the
/// default), `auto` ([`Strips::Auto`] without measuring), `rows:N` (strips
/// of N rows), `count:N` (N strips) or `unfused` (the members one after the
/// other over whole frames).
pub const STRIPS_ENV: &str = "CORTEX_STRIPS";

/// Runs before measuring, not counted: the first runs at a size allocate
/// the group's scratch and warm the pool, which would count against
/// whichever setting came first.
const WARM_UP: usize = 2;
/// Rounds over the candidates, every other one in reverse order, so that
/// a trend during the measurement (the machine getting busier) does not
/// favour the first or the last candidate. A candidate costs the median of
/// its eight counted runs (four rounds of two): what a frame pays, where
/// the fastest run would favour a fused run that is fast only when a
/// second core happens to be free, and two rounds of one left the choice
/// to a single lucky or unlucky run.
const ROUNDS: usize = 4;
/// Runs per candidate per round; the first of each block plans the run
/// (sizes, strip rows, folded constants) and is not counted.
const BLOCK: usize = 3;
/// Counted runs per candidate.
const COUNTED: usize = ROUNDS * (BLOCK - 1);
/// Candidates within this fraction of the fastest (by median) are tied,
/// and the first of them in order of preference (unfused, then the default rule, then
/// the other heights) is kept: heights that differ by less than timing
/// noise no longer decide by it, so two processes on a quiet machine choose
/// alike; and a group that is not faster than its members by more than the
/// noise runs them unfused, which also leaves the other cores to the rest
/// of the frame.
const TIE: f64 = 0.05;

/// The candidates a measurement tries: four strip heights and unfused.
const CANDIDATES: usize = 5;

/// Runs a measurement takes.
pub const MEASURED_RUNS: usize = WARM_UP + ROUNDS * BLOCK * CANDIDATES;

/// How a tuned group runs: fused with these strips, or its members
/// unfused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// Fused, strip by strip over the worker pool.
    Fused(Strips),
    /// Each member over the whole frame, one after the other, on the
    /// calling thread.
    Unfused,
}

impl Setting {
    /// The setting in [`STRIPS_ENV`]'s syntax (`auto`, `rows:N`, `count:N`,
    /// `unfused`), as the cache file writes it.
    pub fn key(self) -> String {
        match self {
            Setting::Fused(s) => setting(s),
            Setting::Unfused => "unfused".to_string(),
        }
    }
}

impl std::fmt::Display for Setting {
    /// `default`, `40-row strips`, `3 strips` or `unfused`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Setting::Fused(s) => s.fmt(f),
            Setting::Unfused => f.write_str("unfused"),
        }
    }
}

/// How fused groups choose their strips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StripPolicy {
    /// Measure a few heights and the unfused members on the first runs at
    /// each input size and keep the fastest (the default).
    Measure,
    /// Always fused, with this setting.
    Fixed(Strips),
    /// Always the members unfused, each over the whole frame.
    Unfused,
}

impl StripPolicy {
    /// Parses [`STRIPS_ENV`]'s syntax.
    ///
    /// # Errors
    /// A one-line message for anything else, a count or height of 0, or a
    /// count above the frame limits' longest side
    /// ([`FrameLimits::max_side`]).
    pub fn parse(text: &str) -> Result<StripPolicy, String> {
        let t = text.trim();
        let number = |n: &str| match n.parse::<usize>() {
            Ok(v) if v > 0 => Ok(v),
            _ => Err(format!(
                "`{}` is not a positive whole number",
                echo_cut(n, 32)
            )),
        };
        match t {
            "measure" => Ok(StripPolicy::Measure),
            "auto" => Ok(StripPolicy::Fixed(Strips::Auto)),
            "unfused" => Ok(StripPolicy::Unfused),
            _ => match t.split_once(':') {
                Some(("rows", n)) => Ok(StripPolicy::Fixed(Strips::Rows(number(n)?))),
                Some(("count", n)) => {
                    // More strips than the tallest frame accepted has rows
                    // is never meant: refused here, before any frame.
                    let most = FrameLimits::current().max_side;
                    match number(n)? {
                        c if c > most => Err(format!(
                            "`count:{c}` asks for more strips than a frame may have rows ({most})"
                        )),
                        c => Ok(StripPolicy::Fixed(Strips::Count(c))),
                    }
                }
                _ => Err(format!(
                    "`{}` is not `measure`, `auto`, `rows:N`, `count:N` or `unfused`",
                    echo_cut(t, 32)
                )),
            },
        }
    }

    /// The setting this policy forces, if it forces one.
    pub fn forced(self) -> Option<Setting> {
        match self {
            StripPolicy::Measure => None,
            StripPolicy::Fixed(s) => Some(Setting::Fused(s)),
            StripPolicy::Unfused => Some(Setting::Unfused),
        }
    }
}

static SET: RwLock<Option<StripPolicy>> = RwLock::new(None);
static FROM_ENV: OnceLock<StripPolicy> = OnceLock::new();

/// The policy in force: the one [`set_policy`] gave, else [`STRIPS_ENV`]'s
/// (read once; an unreadable value is reported once on stderr and
/// measuring is kept), else [`StripPolicy::Measure`].
pub fn policy() -> StripPolicy {
    if let Some(p) = SET.read().ok().and_then(|p| *p) {
        return p;
    }
    *FROM_ENV.get_or_init(|| match std::env::var(STRIPS_ENV) {
        Ok(text) => StripPolicy::parse(&text).unwrap_or_else(|e| {
            eprintln!("cortex: {STRIPS_ENV}: {e}; measuring strip heights instead");
            StripPolicy::Measure
        }),
        Err(_) => StripPolicy::Measure,
    })
}

/// Sets the policy for the whole process (`None`: back to the environment's).
pub fn set_policy(policy: Option<StripPolicy>) {
    if let Ok(mut p) = SET.write() {
        *p = policy;
    }
}

/// `strips` in [`STRIPS_ENV`]'s syntax (`auto`, `rows:N`, `count:N`), as the
/// cache file writes it ([`Setting::key`] for any setting).
pub fn setting(strips: Strips) -> String {
    match strips {
        Strips::Auto => "auto".to_string(),
        Strips::Rows(n) => format!("rows:{n}"),
        Strips::Count(n) => format!("count:{n}"),
    }
}

/// A measured choice: for the group of these members, at these input sizes
/// and this many worker threads, this setting.
#[derive(Debug, Clone, PartialEq)]
pub struct StripDecision {
    /// The group's members, in order (`gray+laplacian+center`).
    pub group: String,
    /// Its inputs' geometries.
    pub inputs: Vec<Geometry>,
    /// The worker threads it ran on.
    pub threads: usize,
    /// The chosen setting: strips, or unfused.
    pub setting: Setting,
    /// The chosen setting's median run, in milliseconds.
    pub ms: f64,
    /// Every candidate tried with its median run in milliseconds.
    pub tried: Vec<(Setting, f64)>,
    /// Taken from the autotune cache file rather than measured in this
    /// process (`forced` when a user pinned it there).
    pub cached: Option<Cached>,
}

/// How a decision taken from the autotune cache file got there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cached {
    /// Measured by an earlier process.
    Measured,
    /// Pinned by a user (`"forced": true`).
    Forced,
}

impl std::fmt::Display for StripDecision {
    /// `gray+center at 768x576, 2 threads: 40-row strips (default 1.21 ms, …,
    /// unfused 1.30 ms)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at ", self.group)?;
        for (i, g) in self.inputs.iter().enumerate() {
            let sep = if i == 0 { "" } else { "+" };
            write!(f, "{sep}{}x{}", g.width, g.height)?;
        }
        write!(f, ", {} threads: {} (", self.threads, self.setting)?;
        for (i, (s, ms)) in self.tried.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{s} {ms:.3} ms")?;
        }
        f.write_str(")")?;
        match self.cached {
            None => Ok(()),
            Some(Cached::Measured) => f.write_str(" [autotune cache]"),
            Some(Cached::Forced) => f.write_str(" [forced in the autotune cache]"),
        }
    }
}

/// A decision's key in the cache file: its input sizes and thread count
/// (`768x576, 2 threads`; `640x480+640x480x3, 1 thread`).
pub fn shape(inputs: &[Geometry], threads: usize) -> String {
    let mut out = String::new();
    for (i, g) in inputs.iter().enumerate() {
        if i > 0 {
            out.push('+');
        }
        out.push_str(&format!("{}x{}", g.width, g.height));
        if g.channels != 1 {
            out.push_str(&format!("x{}", g.channels));
        }
    }
    let s = if threads == 1 { "" } else { "s" };
    out.push_str(&format!(", {threads} thread{s}"));
    out
}

impl StripDecision {
    /// Its entry in the cache file.
    fn entry(&self) -> CacheEntry {
        CacheEntry {
            op: self.group.clone(),
            shape: shape(&self.inputs, self.threads),
            kernel: self.setting.key(),
            forced: self.cached == Some(Cached::Forced),
            median_ns: self
                .tried
                .iter()
                .filter(|(_, ms)| ms.is_finite())
                .map(|(s, ms)| (s.key(), (ms * 1e6).round() as u64))
                .collect(),
        }
    }
}

type Key = (String, Vec<Geometry>, usize);

fn table() -> &'static Mutex<HashMap<Key, StripDecision>> {
    static TABLE: OnceLock<Mutex<HashMap<Key, StripDecision>>> = OnceLock::new();
    TABLE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The decisions measured (or given with [`remember`]) in this process.
pub fn decisions() -> Vec<StripDecision> {
    table()
        .lock()
        .map(|t| t.values().cloned().collect())
        .unwrap_or_default()
}

/// The cache file decisions are read from and written to.
#[derive(Debug, Default)]
struct CacheState {
    /// The path [`set_cache_path`] gave (`Some(None)`: no file).
    set: Option<Option<PathBuf>>,
    /// The file's entries by group and shape, once read (empty when there
    /// is no file, it cannot be read, or decisions were forgotten).
    entries: Option<HashMap<(String, String), CacheEntry>>,
}

fn cache() -> &'static Mutex<CacheState> {
    static CACHE: OnceLock<Mutex<CacheState>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(CacheState::default()))
}

fn cache_path(state: &CacheState) -> Option<PathBuf> {
    match &state.set {
        Some(p) => p.clone(),
        None => autotune::default_path(),
    }
}

/// Sets the autotune cache file strip decisions are kept in for the whole
/// process (`None`: in memory only); by default
/// [`autotune::default_path`]'s. The file is read again at the next lookup.
pub fn set_cache_path(path: Option<PathBuf>) {
    if let Ok(mut c) = cache().lock() {
        c.set = Some(path);
        c.entries = None;
    }
}

/// The file's decision for `group` at `shape`, reading the file the first
/// time; a file that cannot be read is reported once on stderr and ignored.
fn cached(group: &str, shape: &str) -> Option<CacheEntry> {
    let mut c = cache().lock().ok()?;
    if c.entries.is_none() {
        let entries = match cache_path(&c) {
            None => Vec::new(),
            Some(path) => autotune::load(&path, &CacheKey::current(), Section::Strips)
                .unwrap_or_else(|e| {
                    eprintln!("cortex: {e}; measuring strip heights again");
                    Vec::new()
                }),
        };
        c.entries = Some(
            entries
                .into_iter()
                .map(|e| ((e.op.clone(), e.shape.clone()), e))
                .collect(),
        );
    }
    c.entries
        .as_ref()?
        .get(&(group.to_owned(), shape.to_owned()))
        .cloned()
}

/// Writes a measured decision to the cache file; a failure is reported once
/// on stderr (the decision stays for this process).
fn save(decision: &StripDecision) {
    static WARNED: OnceLock<()> = OnceLock::new();
    let Some(path) = cache().lock().ok().and_then(|c| cache_path(&c)) else {
        return;
    };
    let entry = decision.entry();
    if let Ok(mut c) = cache().lock() {
        if let Some(entries) = c.entries.as_mut() {
            entries.insert((entry.op.clone(), entry.shape.clone()), entry.clone());
        }
    }
    if let Err(e) = autotune::save(&path, &CacheKey::current(), Section::Strips, &[entry]) {
        WARNED.get_or_init(|| eprintln!("cortex: {e}; strip heights are not kept"));
    }
}

/// Records a decision, e.g. one loaded from a cache file, so that groups
/// meeting its key use it without measuring.
pub fn remember(decision: StripDecision) {
    if let Ok(mut t) = table().lock() {
        let key = (
            decision.group.clone(),
            decision.inputs.clone(),
            decision.threads,
        );
        t.insert(key, decision);
    }
}

/// Forgets every decision, and ignores those the cache file holds for the
/// rest of the process (tests and benches that measure afresh; decisions
/// measured from then on are still written to it).
pub fn forget_decisions() {
    if let Ok(mut t) = table().lock() {
        t.clear();
    }
    if let Ok(mut c) = cache().lock() {
        c.entries = Some(HashMap::new());
    }
}

/// A setting as the cache file writes it ([`Setting::key`]); `None` for
/// `measure` and anything this version cannot read.
fn parse_setting(key: &str) -> Option<Setting> {
    StripPolicy::parse(key).ok()?.forced()
}

/// The setting decided for `group` at these inputs and threads: measured
/// in this process, else taken from the cache file (then remembered).
pub(crate) fn lookup(group: &str, inputs: &[Geometry], threads: usize) -> Option<Setting> {
    let known = table()
        .lock()
        .ok()?
        .get(&(group.to_owned(), inputs.to_vec(), threads))
        .map(|d| d.setting);
    if known.is_some() {
        return known;
    }
    let entry = cached(group, &shape(inputs, threads))?;
    // A setting this version cannot read (or `measure`): measure again,
    // saying why when the entry is not plain `measure` (an edited entry, a
    // count past the frame limits). The measurement then replaces it.
    let Some(setting) = parse_setting(&entry.kernel) else {
        if let Err(e) = StripPolicy::parse(&entry.kernel) {
            eprintln!(
                "cortex: autotune cache: group `{}`: {e}; measuring strip heights instead",
                echo(group)
            );
        }
        return None;
    };
    let ms = |ns: u64| ns as f64 / 1e6;
    let tried: Vec<(Setting, f64)> = entry
        .median_ns
        .iter()
        .filter_map(|(k, ns)| Some((parse_setting(k)?, ms(*ns))))
        .collect();
    remember(StripDecision {
        group: group.to_owned(),
        inputs: inputs.to_vec(),
        threads,
        setting,
        ms: entry
            .median_ns
            .get(&entry.kernel)
            .map_or(f64::NAN, |ns| ms(*ns)),
        tried,
        cached: Some(if entry.forced {
            Cached::Forced
        } else {
            Cached::Measured
        }),
    });
    Some(setting)
}

/// Keeps a decision just measured: for the process and in the cache file.
pub(crate) fn decided(decision: StripDecision) {
    save(&decision);
    remember(decision);
}

/// The candidates for a group whose widest member window spans `window`
/// rows, in the order they are measured: the default, heights half, twice
/// and four times its height, and the members unfused.
pub(crate) fn candidates(window: usize) -> [Setting; CANDIDATES] {
    let a = Strips::AUTO_ROWS.max(8 * window);
    [
        Setting::Fused(Strips::Auto),
        Setting::Fused(Strips::Rows((a / 2).max(8))),
        Setting::Fused(Strips::Rows(2 * a)),
        Setting::Fused(Strips::Rows(4 * a)),
        Setting::Unfused,
    ]
}

/// The candidates' indices in order of preference among ties: unfused
/// first (a group must beat its members by more than the noise to run
/// fused), then the heights in measuring order (the default rule first).
const PREFERENCE: [usize; CANDIDATES] = [4, 0, 1, 2, 3];

/// One group's choice: the decision for the current input size and
/// thread count, or the measurement towards it.
#[derive(Debug, Default)]
pub(crate) struct Tuner {
    /// The candidates being measured at the current input size.
    tuning: Option<Tuning>,
    /// The setting chosen for these input geometries and thread count.
    chosen: Option<(Vec<Geometry>, usize, Setting)>,
}

impl Tuner {
    /// The setting of the next run of the group `signature` (widest window
    /// `window`) on `inputs`, and whether the run is measured (then report
    /// it with [`Tuner::record`]).
    pub(crate) fn next(
        &mut self,
        signature: &str,
        inputs: &[AnyPlane<'_>],
        window: usize,
    ) -> (Setting, bool) {
        let threads = rayon::current_num_threads();
        if let Some((known, t, s)) = &self.chosen {
            let same = known.len() == inputs.len()
                && known.iter().zip(inputs).all(|(g, x)| *g == x.geometry());
            if *t == threads && same {
                return (*s, false);
            }
        }
        // A new size or thread count: a decision the process knows, or
        // measure one.
        let geometries: Vec<Geometry> = inputs.iter().map(|p| p.geometry()).collect();
        if let Some(s) = lookup(signature, &geometries, threads) {
            self.chosen = Some((geometries, threads, s));
            self.tuning = None;
            return (s, false);
        }
        let stale = self
            .tuning
            .as_ref()
            .is_none_or(|t| t.threads != threads || t.inputs != geometries);
        if stale {
            self.tuning = Some(Tuning::new(geometries, threads, window));
        }
        (
            self.tuning
                .as_ref()
                .map_or(Setting::Fused(Strips::Auto), Tuning::next),
            true,
        )
    }

    /// Records a measured run started at `started` (`ok`: it succeeded);
    /// once every candidate ran, keeps the decision and returns its
    /// setting.
    pub(crate) fn record(
        &mut self,
        started: Instant,
        ok: bool,
        signature: &str,
    ) -> Option<Setting> {
        let decision = self
            .tuning
            .as_mut()
            .and_then(|t| t.record(started, ok, signature))?;
        let setting = decision.setting;
        self.chosen = Some((decision.inputs.clone(), decision.threads, setting));
        self.tuning = None;
        decided(decision);
        Some(setting)
    }

    /// The setting chosen for the last input size, once chosen.
    pub(crate) fn chosen(&self) -> Option<Setting> {
        self.chosen.as_ref().map(|(_, _, s)| *s)
    }
}

/// A measurement in progress for one input size.
#[derive(Debug)]
pub(crate) struct Tuning {
    pub(crate) inputs: Vec<Geometry>,
    pub(crate) threads: usize,
    candidates: [Setting; CANDIDATES],
    /// Per candidate: its counted runs so far.
    times: [[Duration; COUNTED]; CANDIDATES],
    /// Per candidate: how many of `times` are filled.
    counted: [usize; CANDIDATES],
    runs: usize,
}

impl Tuning {
    pub(crate) fn new(inputs: Vec<Geometry>, threads: usize, window: usize) -> Tuning {
        Tuning {
            inputs,
            threads,
            candidates: candidates(window),
            times: [[Duration::ZERO; COUNTED]; CANDIDATES],
            counted: [0; CANDIDATES],
            runs: 0,
        }
    }

    /// The candidate of run `run`, and whether its time counts.
    fn slot(&self, run: usize) -> (usize, bool) {
        let n = self.candidates.len();
        if run < WARM_UP {
            return (0, false);
        }
        let r = run - WARM_UP;
        let block = r / BLOCK;
        let pos = block % n;
        let c = if (block / n).is_multiple_of(2) {
            pos
        } else {
            n - 1 - pos
        };
        (c.min(n - 1), !r.is_multiple_of(BLOCK))
    }

    /// The setting of the next run.
    pub(crate) fn next(&self) -> Setting {
        self.candidates[self.slot(self.runs).0]
    }

    /// Records the run just made with [`Tuning::next`]'s setting (a failed
    /// run counts as the slowest); the decision once every candidate ran:
    /// the first candidate in [`PREFERENCE`] whose median is within [`TIE`]
    /// of the fastest median.
    pub(crate) fn record(
        &mut self,
        started: Instant,
        ok: bool,
        group: &str,
    ) -> Option<StripDecision> {
        let took = if ok { started.elapsed() } else { Duration::MAX };
        self.record_time(took, group)
    }

    /// [`Tuning::record`] of a run that took `took`.
    fn record_time(&mut self, took: Duration, group: &str) -> Option<StripDecision> {
        let (c, counted) = self.slot(self.runs);
        if counted {
            if let Some(t) = self.times[c].get_mut(self.counted[c]) {
                *t = took;
                self.counted[c] += 1;
            }
        }
        self.runs += 1;
        if self.runs < MEASURED_RUNS {
            return None;
        }
        // Per candidate: the median of its counted runs (a failed run is
        // the slowest).
        let medians: [Duration; CANDIDATES] = std::array::from_fn(|c| {
            let mut runs = self.times[c];
            let runs = &mut runs[..self.counted[c]];
            runs.sort_unstable();
            runs.get(runs.len() / 2).copied().unwrap_or(Duration::MAX)
        });
        let ms = |d: Duration| match d {
            Duration::MAX => f64::INFINITY,
            d => d.as_secs_f64() * 1e3,
        };
        let fastest = medians.iter().min()?;
        let limit = fastest.as_secs_f64() * (1.0 + TIE);
        let (pick, time) = PREFERENCE
            .iter()
            .map(|&i| (self.candidates[i], medians[i]))
            .find(|(_, m)| m.as_secs_f64() <= limit)?;
        Some(StripDecision {
            group: group.to_owned(),
            inputs: self.inputs.clone(),
            threads: self.threads,
            setting: pick,
            ms: ms(time),
            tried: self
                .candidates
                .iter()
                .zip(medians)
                .map(|(s, m)| (*s, ms(m)))
                .collect(),
            cached: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_syntax() {
        assert_eq!(StripPolicy::parse("measure"), Ok(StripPolicy::Measure));
        assert_eq!(
            StripPolicy::parse(" auto "),
            Ok(StripPolicy::Fixed(Strips::Auto))
        );
        assert_eq!(
            StripPolicy::parse("rows:48"),
            Ok(StripPolicy::Fixed(Strips::Rows(48)))
        );
        assert_eq!(
            StripPolicy::parse("count:3"),
            Ok(StripPolicy::Fixed(Strips::Count(3)))
        );
        for bad in ["rows:0", "count:-1", "rows:x", "fast", "", "rows"] {
            assert!(StripPolicy::parse(bad).is_err(), "{bad}");
        }
        // More strips than any accepted frame has rows: refused before a
        // frame could size a list of them.
        let most = FrameLimits::current().max_side;
        assert!(StripPolicy::parse(&format!("count:{most}")).is_ok());
        for bad in [
            format!("count:{}", most + 1),
            "count:1000000000000".to_string(),
            format!("count:{}", usize::MAX),
        ] {
            let e = StripPolicy::parse(&bad).unwrap_err();
            assert!(e.contains("more strips than a frame may have rows"), "{e}");
        }
        let long = "x".repeat(100_000);
        // Cut to 32 characters, with the length of what was given.
        let e = StripPolicy::parse(&long).unwrap_err();
        assert!(e.contains("… (100000 bytes)") && e.len() < 120, "{e}");
    }

    #[test]
    fn measuring_tries_every_candidate_and_keeps_the_fastest() {
        let mut t = Tuning::new(vec![Geometry::new(8, 8)], 2, 1);
        let fast = candidates(1)[2];
        let mut seen = Vec::new();
        let mut decision = None;
        for run in 0..MEASURED_RUNS {
            let s = t.next();
            seen.push(s);
            // The third candidate is the fast one: the others sleep.
            let started = Instant::now();
            if s != fast {
                std::thread::sleep(Duration::from_millis(3));
            }
            decision = t.record(started, true, "a+b");
            assert_eq!(decision.is_some(), run == MEASURED_RUNS - 1);
        }
        let d = decision.expect("decided");
        assert_eq!(d.setting, fast);
        assert_eq!(d.tried.len(), CANDIDATES);
        assert_eq!(seen[..WARM_UP], [Setting::Fused(Strips::Auto); WARM_UP]);
        // Every candidate ran, ROUNDS blocks of BLOCK runs each.
        for c in candidates(1) {
            let n = seen[WARM_UP..].iter().filter(|s| **s == c).count();
            assert_eq!(n, ROUNDS * BLOCK, "{c}");
        }
    }

    /// The decision of a measurement in which candidate `i`'s runs take
    /// `times[i]` microseconds (`u64::MAX`: they fail).
    fn decide(times: [u64; CANDIDATES]) -> StripDecision {
        decide_with(|i, _| times[i])
    }

    /// The decision of a measurement in which candidate `i`'s `n`-th run
    /// takes `time(i, n)` microseconds.
    fn decide_with(time: impl Fn(usize, usize) -> u64) -> StripDecision {
        let mut t = Tuning::new(vec![Geometry::new(8, 8)], 2, 1);
        let order = candidates(1);
        let mut n = [0; CANDIDATES];
        for run in 0..MEASURED_RUNS {
            let s = t.next();
            let i = order.iter().position(|c| *c == s).expect("a candidate");
            let took = match time(i, n[i]) {
                u64::MAX => Duration::MAX,
                us => Duration::from_micros(us),
            };
            n[i] += 1;
            if let Some(d) = t.record_time(took, "a+b") {
                assert_eq!(run, MEASURED_RUNS - 1);
                return d;
            }
        }
        panic!("no decision after {MEASURED_RUNS} runs")
    }

    #[test]
    fn the_members_run_unfused_unless_a_height_beats_them_by_the_tie_margin() {
        let unfused = Setting::Unfused;
        let auto = Setting::Fused(Strips::Auto);
        let tall = candidates(1)[3];
        // Unfused is measured: the last candidate, its time kept.
        assert_eq!(candidates(1)[CANDIDATES - 1], unfused);
        let d = decide([1000, 1000, 1000, 1000, 900]);
        assert_eq!(d.setting, unfused);
        let (s, ms) = d.tried[CANDIDATES - 1];
        assert_eq!(s, unfused);
        assert!((ms - 0.9).abs() < 1e-9, "{ms}");
        // Tied with the fastest height (within 5 %): unfused.
        assert_eq!(decide([1000, 1000, 1000, 1000, 1000]).setting, unfused);
        assert_eq!(decide([1000, 1000, 1000, 960, 1000]).setting, unfused);
        // A height faster by more than the margin runs fused; among heights
        // within the margin of it, the default rule.
        assert_eq!(decide([1000, 1200, 1200, 1200, 1100]).setting, auto);
        assert_eq!(decide([1030, 1200, 1200, 1000, 1100]).setting, auto);
        assert_eq!(decide([1200, 1200, 1200, 1000, 1100]).setting, tall);
        // Every run failing decides nothing faster than the members.
        assert_eq!(decide([u64::MAX; CANDIDATES]).setting, unfused);
    }

    #[test]
    fn a_candidate_costs_the_median_of_its_runs_not_its_luckiest() {
        // Runs come in blocks of three, the first not counted. The tallest
        // strips are fast in one counted run of four (a second core free)
        // and slow otherwise; the members take 1 ms every time.
        let d = decide_with(|i, n| match i {
            3 if n % 6 == 1 => 500,
            4 => 1000,
            _ => 1500,
        });
        assert_eq!(d.setting, Setting::Unfused);
        assert!((d.tried[3].1 - 1.5).abs() < 1e-9, "{d}");
        // Fast in three counted runs of four: the median is fast.
        let d = decide_with(|i, n| match i {
            3 if n % 6 != 2 => 500,
            4 => 1000,
            _ => 1500,
        });
        assert_eq!(d.setting, candidates(1)[3]);
        assert!((d.ms - 0.5).abs() < 1e-9, "{d}");
    }

    #[test]
    fn an_unfused_setting_reads_back_from_its_key() {
        for s in candidates(3) {
            assert_eq!(parse_setting(&s.key()), Some(s), "{s}");
        }
        assert_eq!(Setting::Unfused.key(), "unfused");
        assert_eq!(Setting::Unfused.to_string(), "unfused");
        assert_eq!(StripPolicy::parse("unfused"), Ok(StripPolicy::Unfused));
        assert_eq!(StripPolicy::Unfused.forced(), Some(Setting::Unfused));
        assert_eq!(StripPolicy::Measure.forced(), None);
        assert_eq!(parse_setting("measure"), None);
        assert_eq!(parse_setting("fused"), None);
        // A cache entry edited past the frame limits is not read (the group
        // is measured again and the entry replaced), never sized.
        assert_eq!(parse_setting("count:1000000000000"), None);
        assert_eq!(parse_setting(&format!("count:{}", usize::MAX)), None);
    }
}
