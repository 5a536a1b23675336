//! The kernel registry: several kernels per op, chosen per
//! problem shape by rules and then by measurement, decisions persisted in an
//! autotune cache, and fallback to the next kernel when one fails.
//!
//! * An [`Op`] is a typed interface; a [`Kernel`] one implementation of it,
//!   with what it [`Supports`] (sizes, layout, CPU features) and the
//!   [`Backend`] it needs. Each op is declared once, beside its kernels in
//!   [`crate::ops`] ([`declare`]): pure Rust always, OpenCV with feature
//!   `opencv`, libjpeg-turbo for `encode_roi` with feature `turbojpeg`;
//!   its descriptor lists the same kernels ([`declare::kernel_labels`]).
//!   The op's [`Policy`] says which kernels measurement may choose: all,
//!   or only those bit-identical to the pure-Rust one.
//! * A kernel fills the caller's output ([`KernelFn`]), reusing what it
//!   holds: [`Registry::call_into`] serves a pipeline's own buffers;
//!   [`Registry::call`] returns a new value.
//! * Selection, on the first call of an op at a shape: the rules first
//!   (what each kernel supports, then the [`Preference`] and the op's
//!   [`Policy`], and any forced kernel), then, among two or more candidates, a cached decision if the
//!   [`cache`] has one, else a micro-benchmark on that call (warm-up, a few
//!   interleaved runs, median). Later calls at that shape look the choice up
//!   and call one function pointer.
//! * Fallback: when the chosen kernel fails, the call is computed by the
//!   next kernel; the failure is counted and reported and the failed kernel
//!   is not tried again at that shape. When every kernel refuses a call, the
//!   input is at fault: the first kernel's error is returned and nothing is
//!   disabled.
//! * In the DSL, a node calls an op through the registry by a path in
//!   [`ops`] (`node roi: EncodedRoi = registry::ops::encode_roi_into(frame,
//!   fused, &mut roi)?;`, or `registry::ops::encode_roi(frame, fused)` for
//!   a new value); those functions use the thread's registry ([`with_registry`]) or the
//!   process's ([`global`]).
//! * [`report`] prints what runs where and why; [`Registry::kernel_for`]
//!   and [`Registry::annotate`] give tools the kernel of a node's op path.

pub mod cache;
mod config;
mod decision;
pub mod declare;
mod error;
mod global;
mod measure;
pub mod op;
pub mod ops;
mod report;
mod select;
#[cfg(feature = "turbojpeg")]
pub mod turbo;

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Mutex, MutexGuard};

pub use cache::{CacheEntry, CacheError, CacheKey};
pub use config::{Config, Preference, TuneConfig, FORCE_ENV, PREFERENCE_ENV};
pub use decision::{Decision, Failure, Reason};
pub use declare::FIRST_FRAME;
pub use error::RegistryError;
pub use global::{current, global, kernel_for, report, set_thread_registry, with_registry};
pub use op::{Backend, CpuFeature, Kernel, KernelFn, Layout, Op, Policy, Shape, Supports};

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
    /// selecting it first if this is the shape's first call; returns a new
    /// output ([`Registry::call_into`] from a default one).
    ///
    /// # Errors
    /// As [`Registry::call_into`].
    pub fn call<O: Op>(&self, args: &O::Args<'_>) -> Result<O::Output, RegistryError> {
        let mut out = O::Output::default();
        self.call_into::<O>(args, &mut out)?;
        Ok(out)
    }

    /// Calls op `O` on `args` into `out`, reusing its allocations, with the
    /// kernel selected for their shape (selecting it first if this is the
    /// shape's first call). After selection a call is one look-up and one
    /// pointer call, and allocates nothing beyond what the kernel does.
    ///
    /// # Errors
    /// [`RegistryError::NoKernel`] when no kernel supports the call;
    /// [`RegistryError::Kernel`] when every kernel tried refused it. `out`
    /// is unspecified after an error.
    pub fn call_into<O: Op>(
        &self,
        args: &O::Args<'_>,
        out: &mut O::Output,
    ) -> Result<(), RegistryError> {
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
            Some(k) => match (k.run)(args, out) {
                Ok(()) => Ok(()),
                Err(e) => self.fall_back::<O>(shape, args, out, e),
            },
            None => self.select_and_call::<O>(shape, args, out),
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
}
