//! Selection of a kernel for a new shape: the rules (support, preference,
//! forcing), the cache, else a measurement; recording the decision; and
//! falling back along the order when the running kernel fails.

use std::time::Duration;

use super::cache::{self, CacheEntry};
use super::config::Preference;
use super::decision::{Decision, Reason};
use super::error::RegistryError;
use super::measure::{measure, run_along};
use super::op::{Backend, Kernel, Layout, Op, Policy, Shape};
use super::{Registry, Slot};
use crate::ops::OpsError;

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
            Preference::Measure => match O::POLICY {
                Policy::MeasureAll => (supported.clone(), Vec::new()),
                Policy::MeasureExact => {
                    let (exact, other): (Vec<usize>, Vec<usize>) =
                        supported.iter().partition(|&&i| kernels[i].exact);
                    ruled_out.extend(other.iter().map(|&i| {
                        format!(
                            "{} is not bit-identical to pure Rust (explicit only)",
                            kernels[i].name
                        )
                    }));
                    (exact, other)
                }
            },
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

    /// The first call at `shape`: selects a kernel, computes the call into
    /// `out` on the way (the measurement's winner's output) and records the
    /// decision.
    pub(super) fn select_and_call<O: Op>(
        &self,
        shape: Shape,
        args: &O::Args<'_>,
        out: &mut O::Output,
    ) -> Result<(), RegistryError> {
        let kernels = O::kernels();
        let plan = self.plan(&kernels, shape, O::layout(args))?;
        let (order, chosen, reason, failures) = match plan {
            Plan::Run(order, reason) => {
                let chosen = order.first().copied();
                let (used, failures) = run_along(&kernels, &order, args, out, None)?;
                let order = order[used..].to_vec();
                (order, chosen, reason, failures)
            }
            Plan::Measure { candidates, rest } => {
                let (mut ranked, failures, medians) =
                    measure(&kernels, &candidates, args, out, &self.config.tune)?;
                ranked.extend(rest);
                let chosen = ranked.first().copied();
                (ranked, chosen, Reason::Measured(medians), failures)
            }
        };
        let mut inner = self.lock();
        let Some(table) = inner.table::<O>() else {
            return Ok(());
        };
        // Another thread may have decided this shape meanwhile: its decision
        // stands, this call's result is still good.
        if table.by_shape.contains_key(&shape) {
            return Ok(());
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
        Ok(())
    }

    /// The chosen kernel failed: compute the call with the next ones; when
    /// one succeeds, the failed ones are dropped for this shape and counted.
    pub(super) fn fall_back<O: Op>(
        &self,
        shape: Shape,
        args: &O::Args<'_>,
        out: &mut O::Output,
        first_error: OpsError,
    ) -> Result<(), RegistryError> {
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
        let (used, failures) = run_along(&kernels, &order, args, out, Some(first_error))?;
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
        Ok(())
    }
}
