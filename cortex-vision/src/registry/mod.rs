//! The kernel registry: several kernels per op, chosen per
//! problem shape by rules and then by measurement, decisions persisted in an
//! autotune cache, and fallback to the next kernel when one fails.
//!
//! * An [`Op`] is a typed interface; a [`Kernel`] one implementation of it,
//!   with what it [`Supports`] (sizes, layout, CPU features) and the
//!   [`Backend`] it needs. The L2 ops and their kernels are in [`l2`]: pure
//!   Rust always, OpenCV with feature `opencv`, libjpeg-turbo for
//!   `encode_roi` with feature `turbojpeg`.
//! * Selection, on the first call of an op at a shape: the rules first
//!   (what each kernel supports, then the [`Preference`] and any forced
//!   kernel), then, among two or more candidates, a cached decision if the
//!   [`cache`] has one, else a micro-benchmark on that call (warm-up, a few
//!   interleaved runs, median). Later calls at that shape look the choice up
//!   and call one function pointer.
//! * Fallback: when the chosen kernel fails, the call is computed by the
//!   next kernel; the failure is counted and reported and the failed kernel
//!   is not tried again at that shape. When every kernel refuses a call, the
//!   input is at fault: the first kernel's error is returned and nothing is
//!   disabled.
//! * In the DSL, a node calls an op through the registry by a path in
//!   [`ops`] (`node roi = registry::ops::encode_roi(frame, fused)?;`); those
//!   functions use the thread's registry ([`with_registry`]) or the
//!   process's ([`global`]).
//! * [`report`] prints what runs where and why; [`Registry::kernel_for`]
//!   and [`Registry::annotate`] give tools the kernel of a node's op path.

pub mod cache;
pub mod l2;
pub mod op;
pub mod ops;
#[cfg(feature = "turbojpeg")]
pub mod turbo;

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt::{self, Write as _};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

pub use cache::{CacheEntry, CacheError, CacheKey};
pub use op::{Backend, CpuFeature, Kernel, KernelFn, Layout, Op, Shape, Supports};

use crate::ops::OpsError;
use cortex_core::ir::GraphIr;

/// The environment variable for the [`Preference`]: `measure` (default),
/// `pure-rust`, or `prefer-<backend>` (`prefer-opencv`, `prefer-turbojpeg`).
pub const PREFERENCE_ENV: &str = "CORTEX_KERNELS";

/// The environment variable that forces kernels: `op=kernel[,op=kernel…]`,
/// e.g. `encode_roi=opencv`.
pub const FORCE_ENV: &str = "CORTEX_FORCE_KERNEL";

/// A user's preference among the kernels that support a shape.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Preference {
    /// Measure every supported kernel and keep the fastest.
    #[default]
    Measure,
    /// Only pure-Rust kernels, for calls and for fallback.
    PureRustOnly,
    /// Only kernels of this backend when one supports the shape (measured
    /// among themselves); the others stay as fallbacks.
    Prefer(Backend),
}

impl Preference {
    /// Parses the [`PREFERENCE_ENV`] syntax.
    pub fn parse(text: &str) -> Option<Preference> {
        match text.trim() {
            "" | "measure" => Some(Preference::Measure),
            "pure-rust" | "pure-rust-only" => Some(Preference::PureRustOnly),
            "prefer-opencv" => Some(Preference::Prefer(Backend::OpenCv)),
            "prefer-turbojpeg" => Some(Preference::Prefer(Backend::TurboJpeg)),
            "prefer-pure-rust" => Some(Preference::Prefer(Backend::PureRust)),
            _ => None,
        }
    }
}

impl fmt::Display for Preference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Preference::Measure => f.write_str("measure"),
            Preference::PureRustOnly => f.write_str("pure-rust only"),
            Preference::Prefer(b) => write!(f, "prefer {b}"),
        }
    }
}

/// How a selection is measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TuneConfig {
    /// Untimed runs of each candidate first (caches, page faults, lazy
    /// initialization). Default 1.
    pub warmup: u32,
    /// Timed runs of each candidate, interleaved across candidates so that
    /// a burst of load hits them alike; the median counts. At least 1.
    /// Default 5.
    pub runs: u32,
    /// Time budget of the timed rounds: while all candidates together have
    /// taken less, rounds go on past `runs` (up to `max_runs`), so that
    /// cheap ops, whose kernels differ by less than a burst of load, get
    /// enough samples. Default 20 ms.
    pub budget: Duration,
    /// Most timed rounds. Default 30.
    pub max_runs: u32,
    /// Relative tie band: among candidates whose median is within
    /// `tie × fastest` of the fastest, the first in the op's kernel order
    /// wins (pure Rust first), so that noise does not flip a decision
    /// toward a system library. Default 0.03.
    pub tie: f64,
}

impl Default for TuneConfig {
    fn default() -> Self {
        TuneConfig {
            warmup: 1,
            runs: 5,
            budget: Duration::from_millis(20),
            max_runs: 30,
            tie: 0.03,
        }
    }
}

/// How a [`Registry`] selects and where it keeps its decisions.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The user's preference.
    pub preference: Preference,
    /// Measurement settings.
    pub tune: TuneConfig,
    /// The autotune cache file; `None` keeps decisions in memory only.
    pub cache_path: Option<PathBuf>,
    /// Forced kernels, `(op, kernel)`.
    pub forced: Vec<(String, String)>,
    /// Do not print warnings on stderr (they are kept in
    /// [`Registry::warnings`] and the report either way).
    pub quiet: bool,
}

impl Config {
    /// The configuration of the process registry: [`PREFERENCE_ENV`],
    /// [`FORCE_ENV`] and the cache at [`cache::default_path`]. Returns the
    /// warnings about values it could not read.
    pub fn from_env() -> (Config, Vec<String>) {
        let mut warnings = Vec::new();
        let mut config = Config {
            cache_path: cache::default_path(),
            ..Config::default()
        };
        if let Ok(v) = std::env::var(PREFERENCE_ENV) {
            match Preference::parse(&v) {
                Some(p) => config.preference = p,
                None => warnings.push(format!(
                    "{PREFERENCE_ENV}={} not understood; measuring",
                    cache::echo(&v)
                )),
            }
        }
        if let Ok(v) = std::env::var(FORCE_ENV) {
            for item in v.split(',').filter(|s| !s.trim().is_empty()) {
                match item.split_once('=') {
                    Some((op, k)) => config
                        .forced
                        .push((op.trim().to_string(), k.trim().to_string())),
                    None => warnings.push(format!(
                        "{FORCE_ENV}: `{}` is not op=kernel",
                        cache::echo(item)
                    )),
                }
            }
        }
        (config, warnings)
    }
}

/// Why a registry call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// No kernel of the op supports the call (or the preference left none).
    #[error("{op}: no kernel for {shape}: {why}")]
    NoKernel {
        /// The op.
        op: &'static str,
        /// The problem shape.
        shape: String,
        /// Why each kernel was ruled out.
        why: String,
    },
    /// Every kernel refused the call; this is the first one's error.
    #[error("{op} ({kernel}): {source}")]
    Kernel {
        /// The op.
        op: &'static str,
        /// The kernel whose error this is.
        kernel: &'static str,
        /// Its error.
        #[source]
        source: OpsError,
    },
    /// [`Registry::force`] named a kernel the op does not have.
    #[error("op `{op}` has no kernel `{kernel}` (it has: {known})")]
    UnknownKernel {
        /// The op.
        op: &'static str,
        /// The name given.
        kernel: String,
        /// The op's kernels.
        known: String,
    },
}

impl RegistryError {
    /// The kernel error inside, if that is what this is.
    pub fn ops_error(&self) -> Option<&OpsError> {
        match self {
            RegistryError::Kernel { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Why a kernel was chosen.
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    /// The rules left one candidate; the text says what ruled the others out.
    Rule(String),
    /// Measured on this call: each candidate's median, fastest first.
    Measured(Vec<(&'static str, Duration)>),
    /// Taken from the autotune cache (with the medians it recorded).
    Cached(Vec<(String, Duration)>),
    /// Forced by the API, the environment, or a cache entry marked forced.
    Forced(&'static str),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let times = |f: &mut fmt::Formatter<'_>, list: Vec<(&str, Duration)>| {
            for (i, (k, d)) in list.iter().enumerate() {
                let sep = if i == 0 { "" } else { ", " };
                write!(f, "{sep}{k} {:.3} ms", d.as_secs_f64() * 1e3)?;
            }
            Ok(())
        };
        match self {
            Reason::Rule(why) => write!(f, "rule: {why}"),
            Reason::Measured(list) => {
                f.write_str("measured: ")?;
                times(f, list.iter().map(|(k, d)| (*k, *d)).collect())
            }
            Reason::Cached(list) => {
                f.write_str("cached: ")?;
                times(f, list.iter().map(|(k, d)| (k.as_str(), *d)).collect())
            }
            Reason::Forced(by) => write!(f, "forced by {by}"),
        }
    }
}

/// A run-time failure of a kernel, after which the call fell back.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The kernel that failed.
    pub kernel: &'static str,
    /// Its error.
    pub error: String,
    /// The kernel that computed the call instead.
    pub fallback: &'static str,
}

/// What the registry decided for one op at one shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The op.
    pub op: &'static str,
    /// The problem shape.
    pub shape: Shape,
    /// The kernel that runs now (after any fallback).
    pub kernel: &'static str,
    /// The kernel first chosen, and why.
    pub chosen: &'static str,
    /// Why `chosen` was chosen.
    pub reason: Reason,
    /// The kernels tried next if `kernel` fails, in order.
    pub fallbacks: Vec<&'static str>,
    /// Kernels that failed at this shape (each is no longer tried here).
    pub failures: Vec<Failure>,
}

/// The selection state of one op: its kernels and, per shape, the order in
/// which they are tried.
struct Table<O: Op> {
    kernels: Vec<Kernel<O>>,
    by_shape: HashMap<Shape, Slot>,
}

struct Slot {
    /// Kernel indices: the current kernel first, then the fallbacks.
    order: Vec<usize>,
    /// Index of the decision in `Inner::decisions`.
    decision: usize,
}

/// The type-erased face of a [`Table`], so that forcing by name can drop an
/// op's decisions without knowing its type.
trait AnyTable: Send {
    fn clear(&mut self);
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<O: Op> AnyTable for Table<O> {
    fn clear(&mut self) {
        self.by_shape.clear();
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

#[derive(Default)]
struct Inner {
    tables: HashMap<TypeId, Box<dyn AnyTable>>,
    decisions: Vec<Decision>,
    cache: Vec<CacheEntry>,
    forced: BTreeMap<String, String>,
    warnings: Vec<String>,
    /// The cache path names no regular file: decisions stay in memory.
    cache_refused: bool,
    /// A save failed and was reported; later failures are not repeated.
    save_warned: bool,
}

impl Inner {
    fn table<O: Op>(&mut self) -> Option<&mut Table<O>> {
        self.tables
            .entry(TypeId::of::<O>())
            .or_insert_with(|| {
                Box::new(Table::<O> {
                    kernels: O::kernels(),
                    by_shape: HashMap::new(),
                })
            })
            .as_any_mut()
            .downcast_mut::<Table<O>>()
    }
}

/// A kernel registry: per op and problem shape, the kernel that runs and
/// the ones to fall back to. Shared across threads (`Sync`); kernels never
/// run under its lock.
pub struct Registry {
    config: Config,
    key: CacheKey,
    inner: Mutex<Inner>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// What the rules and the cache say for a new shape.
enum Plan {
    /// Run `order[0]`, falling back along `order`.
    Run(Vec<usize>, Reason),
    /// Measure the candidates; the rest of `order` are fallbacks.
    Measure {
        candidates: Vec<usize>,
        rest: Vec<usize>,
    },
}

impl Registry {
    /// A registry with `config`, loading its cache file (a missing file is
    /// an empty cache; a corrupt or foreign one is ignored with a warning).
    pub fn new(config: Config) -> Registry {
        Registry::with_key(config, CacheKey::current())
    }

    /// As [`Registry::new`], as if on the machine and build `key` (tests use
    /// it to play another CPU or version).
    pub fn with_key(config: Config, key: CacheKey) -> Registry {
        let mut inner = Inner {
            forced: config.forced.iter().cloned().collect(),
            ..Inner::default()
        };
        if let Some(path) = &config.cache_path {
            match cache::load(path, &key) {
                Ok(entries) => inner.cache = entries,
                Err(e @ cache::CacheError::NotAFile { .. }) => {
                    inner.cache_refused = true;
                    inner
                        .warnings
                        .push(format!("{e}; decisions stay in memory"));
                }
                Err(e) => inner.warnings.push(e.to_string()),
            }
        }
        let reg = Registry {
            config,
            key,
            inner: Mutex::new(inner),
        };
        let warnings = reg.warnings();
        for w in &warnings {
            reg.emit(w);
        }
        reg
    }

    /// A registry that keeps its decisions in memory only.
    pub fn in_memory() -> Registry {
        Registry::new(Config::default())
    }

    /// Its configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    fn emit(&self, warning: &str) {
        if !self.config.quiet {
            eprintln!("cortex registry: warning: {warning}");
        }
    }

    fn warn(&self, inner: &mut Inner, warning: String) {
        self.emit(&warning);
        inner.warnings.push(warning);
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Kernels never run under the lock, so a poisoned lock can only come
        // from a panic in the registry's own bookkeeping; its state is still
        // consistent enough to go on.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Calls op `O` on `args` with the kernel selected for their shape,
    /// selecting it first if this is the shape's first call.
    ///
    /// # Errors
    /// [`RegistryError::NoKernel`] when no kernel supports the call;
    /// [`RegistryError::Kernel`] when every kernel tried refused it.
    pub fn call<O: Op>(&self, args: &O::Args<'_>) -> Result<O::Output, RegistryError> {
        let shape = O::shape(args);
        let first = {
            let mut inner = self.lock();
            inner.table::<O>().and_then(|t| {
                let i = *t.by_shape.get(&shape)?.order.first()?;
                t.kernels.get(i).copied()
            })
        };
        match first {
            // The hot path: one look-up above, one pointer call here.
            Some(k) => match (k.run)(args) {
                Ok(out) => Ok(out),
                Err(e) => self.fall_back::<O>(shape, args, e),
            },
            None => self.select_and_call::<O>(shape, args),
        }
    }

    /// The kernels of op `O` (all compiled in, supported here or not).
    pub fn kernels<O: Op>(&self) -> Vec<Kernel<O>> {
        O::kernels()
    }

    /// Forces kernel `kernel` for op `O` at every shape (the rules on sizes,
    /// layout and CPU still apply); drops the op's current decisions so the
    /// next call takes it.
    ///
    /// # Errors
    /// [`RegistryError::UnknownKernel`] when `O` has no such kernel.
    pub fn force<O: Op>(&self, kernel: &str) -> Result<(), RegistryError> {
        let kernels = O::kernels();
        if !kernels.iter().any(|k| k.name == kernel) {
            return Err(RegistryError::UnknownKernel {
                op: O::NAME,
                kernel: kernel.to_string(),
                known: kernels
                    .iter()
                    .map(|k| k.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        let mut inner = self.lock();
        inner.forced.insert(O::NAME.to_string(), kernel.to_string());
        Self::drop_decisions(&mut inner);
        Ok(())
    }

    /// Removes any forcing of op `O` and drops its decisions.
    pub fn unforce<O: Op>(&self) {
        let mut inner = self.lock();
        inner.forced.remove(O::NAME);
        Self::drop_decisions(&mut inner);
    }

    fn drop_decisions(inner: &mut Inner) {
        // Slots index decisions: drop them all and let every op re-decide
        // (measured ones from the cache, without measuring) rather than
        // renumber.
        for t in inner.tables.values_mut() {
            t.clear();
        }
        inner.decisions.clear();
    }

    /// Every decision so far, in the order they were made.
    pub fn decisions(&self) -> Vec<Decision> {
        self.lock().decisions.clone()
    }

    /// The decision for op `op` at `shape`, if made.
    pub fn decision(&self, op: &str, shape: Shape) -> Option<Decision> {
        self.lock()
            .decisions
            .iter()
            .find(|d| d.op == op && d.shape == shape)
            .cloned()
    }

    /// Warnings so far (cache files ignored, forced kernels not found, …).
    pub fn warnings(&self) -> Vec<String> {
        self.lock().warnings.clone()
    }

    /// The entries of the autotune cache as this registry holds them.
    pub fn cache_entries(&self) -> Vec<CacheEntry> {
        self.lock().cache.clone()
    }

    /// The kernel(s) a node's op path runs, for tools that annotate a
    /// listing: `Some("turbojpeg (measured) at 640x480")` for a path whose
    /// last segment is an op with decisions and which goes through the
    /// registry (a segment `registry` before it, as in
    /// `registry::ops::encode_roi`); `None` otherwise.
    pub fn kernel_for(&self, op_path: &str) -> Option<String> {
        let path: String = op_path.chars().filter(|c| !c.is_whitespace()).collect();
        let path = path.split(['(', '<']).next().unwrap_or("");
        let mut segments: Vec<&str> = path.split("::").collect();
        let op = segments.pop()?;
        if !segments.contains(&"registry") {
            return None;
        }
        let inner = self.lock();
        let notes: Vec<String> = inner
            .decisions
            .iter()
            .filter(|d| d.op == op)
            .map(|d| {
                let why = match &d.reason {
                    _ if d.kernel != d.chosen => "fallback",
                    Reason::Rule(_) => "rule",
                    Reason::Measured(_) => "measured",
                    Reason::Cached(_) => "cached",
                    Reason::Forced(_) => "forced",
                };
                format!("{} ({why}) at {}", d.kernel, d.shape)
            })
            .collect();
        (!notes.is_empty()).then(|| notes.join("; "))
    }

    /// [`Registry::kernel_for`] of every node of `ir`, indexed by node id.
    pub fn annotate(&self, ir: &GraphIr) -> Vec<Option<String>> {
        ir.nodes.iter().map(|n| self.kernel_for(&n.op)).collect()
    }

    /// A text table: per op and shape, the kernel that runs and why, the
    /// failures, the cache file and the warnings.
    pub fn report(&self) -> String {
        let inner = self.lock();
        let mut out = String::new();
        let cache = match &self.config.cache_path {
            Some(p) => p.display().to_string(),
            None => "none (in memory)".to_string(),
        };
        let _ = writeln!(
            out,
            "kernel registry: preference {}, cache {cache}",
            self.config.preference
        );
        let _ = writeln!(out, "{:<14} {:<22} {:<11} why", "op", "shape", "kernel");
        for d in &inner.decisions {
            let _ = writeln!(
                out,
                "{:<14} {:<22} {:<11} {}",
                d.op,
                d.shape.to_string(),
                d.kernel,
                d.reason
            );
            if !d.fallbacks.is_empty() {
                let _ = writeln!(out, "{:49}fallbacks: {}", "", d.fallbacks.join(", "));
            }
            for f in &d.failures {
                let _ = writeln!(
                    out,
                    "{:49}FAILED: {} ({}); computed by {}, not retried at this shape",
                    "", f.kernel, f.error, f.fallback
                );
            }
        }
        let failures: usize = inner.decisions.iter().map(|d| d.failures.len()).sum();
        let _ = writeln!(out, "kernel failures: {failures}");
        for w in &inner.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        out
    }

    /// The plan for a new shape from the rules, the forcing and the cache.
    fn plan<O: Op>(
        &self,
        kernels: &[Kernel<O>],
        shape: Shape,
        layout: Layout,
    ) -> Result<Plan, RegistryError> {
        let mut supported = Vec::new();
        let mut ruled_out = Vec::new();
        for (i, k) in kernels.iter().enumerate() {
            match k.supports.refuses(&shape, layout) {
                None => supported.push(i),
                Some(why) => ruled_out.push(format!("{} {why}", k.name)),
            }
        }
        let (candidates, rest): (Vec<usize>, Vec<usize>) = match &self.config.preference {
            Preference::Measure => (supported.clone(), Vec::new()),
            Preference::PureRustOnly => {
                for &i in supported.iter() {
                    if kernels[i].backend != Backend::PureRust {
                        ruled_out.push(format!("{} is not pure Rust", kernels[i].name));
                    }
                }
                let pure = supported
                    .iter()
                    .copied()
                    .filter(|&i| kernels[i].backend == Backend::PureRust)
                    .collect();
                (pure, Vec::new())
            }
            Preference::Prefer(b) => {
                let (pref, other): (Vec<usize>, Vec<usize>) =
                    supported.iter().partition(|&&i| kernels[i].backend == *b);
                if pref.is_empty() {
                    (other, Vec::new())
                } else {
                    ruled_out.extend(
                        other
                            .iter()
                            .map(|&i| format!("{} is not {b} (fallback)", kernels[i].name)),
                    );
                    (pref, other)
                }
            }
        };
        if candidates.is_empty() {
            return Err(RegistryError::NoKernel {
                op: O::NAME,
                shape: shape.to_string(),
                why: if ruled_out.is_empty() {
                    "the op has no kernel in this build".into()
                } else {
                    ruled_out.join("; ")
                },
            });
        }
        let order_with = |first: usize| -> Vec<usize> {
            std::iter::once(first)
                .chain(candidates.iter().copied().filter(|&i| i != first))
                .chain(rest.iter().copied())
                .collect()
        };
        let shape_text = shape.to_string();
        let mut inner = self.lock();
        // Forcing beats the preference and the measurement, not support:
        // running an AVX2 kernel on a CPU without AVX2 is not an option.
        let forced_api = inner.forced.get(O::NAME).cloned();
        let forced_cache = inner
            .cache
            .iter()
            .find(|e| e.op == O::NAME && e.shape == shape_text && e.forced)
            .map(|e| e.kernel.clone());
        for (name, by) in [
            (forced_api, "the API or environment"),
            (forced_cache, "the cache file"),
        ] {
            let Some(name) = name else { continue };
            match kernels.iter().position(|k| k.name == name) {
                Some(i) if supported.contains(&i) => {
                    let order = std::iter::once(i)
                        .chain(supported.iter().copied().filter(|&j| j != i))
                        .collect();
                    return Ok(Plan::Run(order, Reason::Forced(by)));
                }
                Some(_) => {
                    let w = format!(
                        "{}: forced kernel `{}` does not support {shape_text}; selecting by the rules",
                        O::NAME,
                        cache::echo(&name)
                    );
                    self.warn(&mut inner, w);
                }
                None => {
                    let w = format!(
                        "{}: forced kernel `{}` does not exist here",
                        O::NAME,
                        cache::echo(&name)
                    );
                    self.warn(&mut inner, w);
                }
            }
        }
        if candidates.len() == 1 {
            let why = if ruled_out.is_empty() {
                "the only kernel".to_string()
            } else {
                format!("the only candidate ({})", ruled_out.join("; "))
            };
            return Ok(Plan::Run(order_with(candidates[0]), Reason::Rule(why)));
        }
        let cached = inner
            .cache
            .iter()
            .find(|e| e.op == O::NAME && e.shape == shape_text)
            .and_then(|e| {
                let i = kernels.iter().position(|k| k.name == e.kernel)?;
                candidates.contains(&i).then(|| (i, e.median_ns.clone()))
            });
        if let Some((i, medians)) = cached {
            let mut times: Vec<(String, Duration)> = medians
                .into_iter()
                .map(|(k, ns)| (k, Duration::from_nanos(ns)))
                .collect();
            times.sort_by_key(|t| t.1);
            return Ok(Plan::Run(order_with(i), Reason::Cached(times)));
        }
        Ok(Plan::Measure { candidates, rest })
    }

    fn select_and_call<O: Op>(
        &self,
        shape: Shape,
        args: &O::Args<'_>,
    ) -> Result<O::Output, RegistryError> {
        let kernels = O::kernels();
        let plan = self.plan(&kernels, shape, O::layout(args))?;
        let (order, chosen, reason, out, failures) = match plan {
            Plan::Run(order, reason) => {
                let chosen = order.first().copied();
                let (out, used, failures) = run_along(&kernels, &order, args, None)?;
                let order = order[used..].to_vec();
                (order, chosen, reason, out, failures)
            }
            Plan::Measure { candidates, rest } => {
                let (out, mut ranked, failures, medians) =
                    measure(&kernels, &candidates, args, &self.config.tune)?;
                ranked.extend(rest);
                let chosen = ranked.first().copied();
                (ranked, chosen, Reason::Measured(medians), out, failures)
            }
        };
        let mut inner = self.lock();
        let Some(table) = inner.table::<O>() else {
            return Ok(out);
        };
        // Another thread may have decided this shape meanwhile: its decision
        // stands, this call's result is still good.
        if table.by_shape.contains_key(&shape) {
            return Ok(out);
        }
        let decision_index = inner.decisions.len();
        if let Some(table) = inner.table::<O>() {
            table.by_shape.insert(
                shape,
                Slot {
                    order: order.clone(),
                    decision: decision_index,
                },
            );
        }
        let name = |i: &usize| kernels.get(*i).map_or("?", |k| k.name);
        let kernel = order.first().map_or("?", name);
        let chosen = chosen.as_ref().map_or("?", name);
        let measured = match &reason {
            Reason::Measured(m) => Some(m.clone()),
            _ => None,
        };
        inner.decisions.push(Decision {
            op: O::NAME,
            shape,
            kernel,
            chosen,
            reason,
            fallbacks: order.iter().skip(1).map(name).collect(),
            failures,
        });
        if let Some(medians) = measured {
            let shape_text = shape.to_string();
            inner
                .cache
                .retain(|e| !(e.op == O::NAME && e.shape == shape_text));
            inner.cache.push(CacheEntry {
                op: O::NAME.to_string(),
                shape: shape_text,
                kernel: kernel.to_string(),
                forced: false,
                median_ns: medians
                    .iter()
                    .map(|(k, d)| (k.to_string(), d.as_nanos().min(u64::MAX as u128) as u64))
                    .collect(),
            });
            if let Some(path) = self
                .config
                .cache_path
                .as_ref()
                .filter(|_| !inner.cache_refused)
            {
                if let Err(e) = cache::save(path, &self.key, &inner.cache) {
                    // One warning per registry, not one per measured shape.
                    if !inner.save_warned {
                        inner.save_warned = true;
                        self.warn(&mut inner, e.to_string());
                    }
                }
            }
        }
        Ok(out)
    }

    /// The chosen kernel failed: compute the call with the next ones; when
    /// one succeeds, the failed ones are dropped for this shape and counted.
    fn fall_back<O: Op>(
        &self,
        shape: Shape,
        args: &O::Args<'_>,
        first_error: OpsError,
    ) -> Result<O::Output, RegistryError> {
        let (kernels, order) = {
            let mut inner = self.lock();
            let Some(t) = inner.table::<O>() else {
                return Err(RegistryError::NoKernel {
                    op: O::NAME,
                    shape: shape.to_string(),
                    why: "internal: op table missing".into(),
                });
            };
            let order = t.by_shape.get(&shape).map(|s| s.order.clone());
            (t.kernels.clone(), order.unwrap_or_default())
        };
        let (out, used, failures) = run_along(&kernels, &order, args, Some(first_error))?;
        let mut inner = self.lock();
        let decision = inner.table::<O>().and_then(|t| {
            let slot = t.by_shape.get_mut(&shape)?;
            // Another thread may already have dropped the same kernels.
            if slot.order.len() == order.len() {
                slot.order.drain(..used);
            }
            Some(slot.decision)
        });
        if let Some(d) = decision.and_then(|i| inner.decisions.get_mut(i)) {
            if let Some(&k) = order.get(used) {
                d.kernel = kernels.get(k).map_or("?", |k| k.name);
            }
            d.fallbacks = d.fallbacks.iter().copied().skip(used).collect();
            d.failures.extend(failures);
        }
        Ok(out)
    }
}

/// Runs `args` with the kernels of `order` in turn until one succeeds;
/// returns its output, its position in `order` and the failures before it.
/// `first_error` is the error of `order[0]` when it already ran.
///
/// When every kernel fails the input is at fault (every implementation
/// refuses it): the first error is returned and no failure is recorded.
fn run_along<O: Op>(
    kernels: &[Kernel<O>],
    order: &[usize],
    args: &O::Args<'_>,
    first_error: Option<OpsError>,
) -> Result<(O::Output, usize, Vec<Failure>), RegistryError> {
    let mut errors: Vec<(&'static str, OpsError)> = Vec::new();
    let skip = usize::from(first_error.is_some());
    if let Some(e) = first_error {
        // The slot may have been dropped meanwhile (a concurrent `force`):
        // the error is still the call's.
        let name = order
            .first()
            .and_then(|&i| kernels.get(i))
            .map_or("?", |k| k.name);
        errors.push((name, e));
    }
    for (pos, &i) in order.iter().enumerate().skip(skip) {
        let Some(k) = kernels.get(i) else { continue };
        match (k.run)(args) {
            Ok(out) => {
                let failures = errors
                    .into_iter()
                    .map(|(kernel, e)| Failure {
                        kernel,
                        error: e.to_string(),
                        fallback: k.name,
                    })
                    .collect();
                return Ok((out, pos, failures));
            }
            Err(e) => errors.push((k.name, e)),
        }
    }
    Err(match errors.into_iter().next() {
        Some((kernel, source)) => RegistryError::Kernel {
            op: O::NAME,
            kernel,
            source,
        },
        None => RegistryError::NoKernel {
            op: O::NAME,
            shape: String::new(),
            why: "no kernel to run".into(),
        },
    })
}

type Measured<T> = (T, Vec<usize>, Vec<Failure>, Vec<(&'static str, Duration)>);

/// Times each candidate on `args`: `warmup` untimed rounds, then `runs`
/// rounds (more within the time budget) interleaving the candidates; ranks
/// them by median (with the tie band) and returns the winner's last output,
/// the ranking, the failures and the medians, fastest first.
fn measure<O: Op>(
    kernels: &[Kernel<O>],
    candidates: &[usize],
    args: &O::Args<'_>,
    tune: &TuneConfig,
) -> Result<Measured<O::Output>, RegistryError> {
    let n = candidates.len();
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); n];
    let mut outputs: Vec<Option<O::Output>> = (0..n).map(|_| None).collect();
    let mut errors: Vec<Option<OpsError>> = vec![None; n];
    let (min_runs, max_runs) = (tune.runs.max(1), tune.max_runs.max(tune.runs.max(1)));
    let mut timed = Duration::ZERO;
    let mut round: u32 = 0;
    loop {
        let runs_done = round.saturating_sub(tune.warmup);
        if runs_done >= max_runs || (runs_done >= min_runs && timed >= tune.budget) {
            break;
        }
        for (c, &i) in candidates.iter().enumerate() {
            let Some(k) = kernels.get(i) else { continue };
            if errors[c].is_some() {
                continue;
            }
            let t = Instant::now();
            let r = (k.run)(args);
            let dt = t.elapsed();
            match r {
                Ok(out) => {
                    if round >= tune.warmup {
                        samples[c].push(dt);
                        timed += dt;
                    }
                    outputs[c] = Some(out);
                }
                Err(e) => errors[c] = Some(e),
            }
        }
        round += 1;
    }
    for s in samples.iter_mut() {
        s.sort();
    }
    let mut medians: Vec<(usize, Duration)> = (0..n)
        .filter(|&c| errors[c].is_none())
        .filter_map(|c| samples[c].get(samples[c].len() / 2).map(|&m| (c, m)))
        .collect();
    if medians.is_empty() {
        let (c, e) = errors
            .iter_mut()
            .enumerate()
            .find_map(|(c, e)| e.take().map(|e| (c, e)))
            .unwrap_or((0, OpsError::Encode("no candidate ran".into())));
        return Err(RegistryError::Kernel {
            op: O::NAME,
            kernel: candidates
                .get(c)
                .and_then(|&i| kernels.get(i))
                .map_or("?", |k| k.name),
            source: e,
        });
    }
    medians.sort_by_key(|m| m.1);
    let fastest = medians[0].1.as_secs_f64();
    let band = fastest * (1.0 + tune.tie.max(0.0));
    // Candidates are in the op's kernel order: the first within the band wins.
    let winner = medians
        .iter()
        .filter(|m| m.1.as_secs_f64() <= band)
        .map(|m| m.0)
        .min()
        .unwrap_or(medians[0].0);
    let name = |c: usize| kernels.get(candidates[c]).map_or("?", |k| k.name);
    let mut ranked = vec![candidates[winner]];
    ranked.extend(
        medians
            .iter()
            .filter(|m| m.0 != winner)
            .map(|m| candidates[m.0]),
    );
    let failures = errors
        .iter()
        .enumerate()
        .filter_map(|(c, e)| {
            e.as_ref().map(|e| Failure {
                kernel: name(c),
                error: e.to_string(),
                fallback: name(winner),
            })
        })
        .collect();
    let times = medians.iter().map(|&(c, d)| (name(c), d)).collect();
    let out = outputs[winner].take();
    match out {
        Some(out) => Ok((out, ranked, failures, times)),
        None => Err(RegistryError::NoKernel {
            op: O::NAME,
            shape: String::new(),
            why: "internal: the winner has no output".into(),
        }),
    }
}

static GLOBAL: OnceLock<Arc<Registry>> = OnceLock::new();

thread_local! {
    static THREAD: RefCell<Option<Arc<Registry>>> = const { RefCell::new(None) };
}

/// The process registry, configured from the environment
/// ([`Config::from_env`]) on first use.
pub fn global() -> Arc<Registry> {
    GLOBAL
        .get_or_init(|| {
            let (config, warnings) = Config::from_env();
            let reg = Registry::new(config);
            if !warnings.is_empty() {
                let mut inner = reg.lock();
                for w in warnings {
                    reg.warn(&mut inner, w);
                }
            }
            Arc::new(reg)
        })
        .clone()
}

/// The registry the [`ops`] functions use on this thread: the one set by
/// [`with_registry`] or [`set_thread_registry`], else [`global`].
pub fn current() -> Arc<Registry> {
    THREAD
        .with(|t| t.try_borrow().ok().and_then(|r| r.clone()))
        .unwrap_or_else(global)
}

/// Makes `registry` this thread's registry (`None`: back to the global
/// one); returns the previous one.
pub fn set_thread_registry(registry: Option<Arc<Registry>>) -> Option<Arc<Registry>> {
    THREAD.with(|t| match t.try_borrow_mut() {
        Ok(mut slot) => std::mem::replace(&mut *slot, registry),
        Err(_) => None,
    })
}

/// Runs `f` with `registry` as this thread's registry, then restores the
/// previous one.
pub fn with_registry<R>(registry: &Arc<Registry>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Arc<Registry>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            set_thread_registry(self.0.take());
        }
    }
    let _restore = Restore(set_thread_registry(Some(registry.clone())));
    f()
}

/// [`Registry::report`] of this thread's registry.
pub fn report() -> String {
    current().report()
}

/// [`Registry::kernel_for`] of this thread's registry.
pub fn kernel_for(op_path: &str) -> Option<String> {
    current().kernel_for(op_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preference_syntax() {
        assert_eq!(Preference::parse("measure"), Some(Preference::Measure));
        assert_eq!(
            Preference::parse(" pure-rust "),
            Some(Preference::PureRustOnly)
        );
        assert_eq!(
            Preference::parse("prefer-opencv"),
            Some(Preference::Prefer(Backend::OpenCv))
        );
        assert_eq!(Preference::parse("fastest please"), None);
    }

    #[test]
    fn reason_prints_times_in_ms() {
        let r = Reason::Measured(vec![
            ("a", Duration::from_micros(1500)),
            ("b", Duration::from_millis(2)),
        ]);
        assert_eq!(r.to_string(), "measured: a 1.500 ms, b 2.000 ms");
    }
}
