//! The plans of zero-weight patterns met at run time, computed once by the
//! DCE pass and kept in a bounded cache.
//!
//! Declared modes have `const` plans; weights chosen at run time
//! (`run_weights`) select a plan by their zero pattern. Computing it is cheap
//! but allocates, so each pattern is computed on first use and cached. With
//! up to [`PlanCache::CAPACITY`] patterns (every pattern of up to 8 weight
//! keys) nothing is ever evicted, so after warm-up the look-up is a hash-map
//! hit; beyond that the least recently used plan is dropped, so a stream of
//! ever-new patterns cannot grow memory without bound. A run reading only
//! some outputs keys its plan by the pattern and that set. Generated
//! pipelines and run-time ones (`cortex::dynamic`) keep their plans by this
//! one rule.

use std::collections::HashMap;
use std::sync::Arc;

use crate::model::ir::GraphIr;
use crate::model::outputs::OutputSet;
use crate::model::plan::Plan;
use crate::passes::dce;

/// A bounded least-recently-used cache of pattern plans for one graph.
#[derive(Debug, Clone)]
pub struct PlanCache {
    ir: &'static GraphIr,
    plans: PatternPlans,
}

impl PlanCache {
    /// How many plans are kept: every pattern of up to 8 weight keys.
    pub const CAPACITY: usize = PatternPlans::CAPACITY;

    /// An empty cache for `ir`.
    pub fn new(ir: &'static GraphIr) -> Self {
        PlanCache {
            ir,
            plans: PatternPlans::default(),
        }
    }

    /// The plan of `pattern` (bit `i` set: weight key `i` is zero; bits past
    /// the graph's keys are ignored), computed on first use.
    pub fn get(&mut self, pattern: u64) -> Arc<Plan> {
        self.get_for(pattern, OutputSet::ALL)
    }

    /// The plan of `pattern` computing only `outputs`
    /// ([`dce::plan_for_outputs`]), computed on first use: a run reading a
    /// fixed set of outputs looks its plan up here on every frame without
    /// allocating.
    pub fn get_for(&mut self, pattern: u64, outputs: OutputSet) -> Arc<Plan> {
        self.plans.get_for(self.ir, pattern, outputs)
    }

    /// How many plans are cached.
    pub fn len(&self) -> usize {
        self.plans.len()
    }

    /// Whether no plan is cached.
    pub fn is_empty(&self) -> bool {
        self.plans.is_empty()
    }
}

/// The cache's rule, for a graph the owner passes on each look-up (a
/// run-time pipeline owns its graph; a generated one's is `'static`).
#[derive(Debug, Clone, Default)]
pub(crate) struct PatternPlans {
    plans: HashMap<(u64, OutputSet), (Arc<Plan>, u64)>,
    tick: u64,
}

impl PatternPlans {
    /// How many plans are kept: every pattern of up to 8 weight keys.
    pub(crate) const CAPACITY: usize = 256;

    /// The plan of `pattern` computing `outputs` over `ir`, computed on
    /// first use; the least recently used one dropped when full.
    pub(crate) fn get_for(&mut self, ir: &GraphIr, pattern: u64, outputs: OutputSet) -> Arc<Plan> {
        let keys = ir.weight_keys.len();
        let pattern = if keys >= 64 {
            pattern
        } else {
            pattern & ((1u64 << keys) - 1)
        };
        let outputs = outputs.of(ir);
        let key = (pattern, outputs);
        self.tick += 1;
        if let Some((plan, used)) = self.plans.get_mut(&key) {
            *used = self.tick;
            return Arc::clone(plan);
        }
        if self.plans.len() >= Self::CAPACITY {
            if let Some(&oldest) = self
                .plans
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(p, _)| p)
            {
                self.plans.remove(&oldest);
            }
        }
        let mut label = dce::pattern_label(pattern, keys);
        if !outputs.covers(ir) {
            label = format!("{label} reading {}", outputs.names(ir).join(", "));
        }
        let plan = Arc::new(dce::plan_for_outputs(ir, pattern, outputs, label));
        self.plans.insert(key, (Arc::clone(&plan), self.tick));
        plan
    }

    pub(crate) fn len(&self) -> usize {
        self.plans.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.plans.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::spec::{ArgSpec, GraphSpec, InputSpec, ModeSpec, NodeSpec, OutputSpec};
    use crate::passes::check::check;

    /// `k` weighted nodes over one input, all feeding one output node.
    fn graph(k: usize) -> &'static GraphIr {
        let node = |name: String, key: Option<String>, args: Vec<ArgSpec>| NodeSpec {
            name: name.clone(),
            op: "f".into(),
            args,
            compilable: true,
            strip: None,
            weight_key: key,
            fallible: false,
            ty: None,
            source: name,
        };
        let mut nodes: Vec<NodeSpec> = (0..k)
            .map(|i| {
                node(
                    format!("n{i}"),
                    Some(format!("w{i}")),
                    vec![ArgSpec::Name("x".into())],
                )
            })
            .collect();
        nodes.push(node(
            "out".into(),
            None,
            (0..k).map(|i| ArgSpec::Name(format!("n{i}"))).collect(),
        ));
        let spec = GraphSpec {
            name: "G".into(),
            inputs: vec![InputSpec {
                name: "x".into(),
                ty: "f32".into(),
            }],
            nodes,
            modes: vec![ModeSpec {
                name: "ALL_ON".into(),
                weights: (0..k).map(|i| (format!("w{i}"), 1.0)).collect(),
                rates: Vec::new(),
            }],
            outputs: vec![OutputSpec {
                name: "out".into(),
                ty: "f32".into(),
                optional: false,
            }],
            ..GraphSpec::default()
        };
        let checked = check(&spec);
        Box::leak(Box::new(checked.ir.expect("valid graph")))
    }

    #[test]
    fn cached_plan_equals_the_dce_pass() {
        let ir = graph(3);
        let mut cache = PlanCache::new(ir);
        for pattern in 0..8 {
            let plan = cache.get(pattern);
            let fresh = dce::plan_for_pattern(ir, pattern, dce::pattern_label(pattern, 3));
            assert_eq!(*plan, fresh);
            assert!(Arc::ptr_eq(&plan, &cache.get(pattern)), "second get hits");
        }
        // Bits past the graph's keys do not make new entries.
        assert!(Arc::ptr_eq(&cache.get(0b1000_0101), &cache.get(0b101)));
        assert_eq!(cache.len(), 8);
    }

    #[test]
    fn the_cache_is_bounded_and_evicts_the_least_recently_used() {
        let ir = graph(20);
        let mut cache = PlanCache::new(ir);
        let keep = cache.get(1);
        for pattern in 2..2000u64 {
            cache.get(pattern);
            // Pattern 1 stays in use, so it is never the oldest.
            assert!(Arc::ptr_eq(&keep, &cache.get(1)));
            assert!(cache.len() <= PlanCache::CAPACITY);
        }
        assert_eq!(cache.len(), PlanCache::CAPACITY);
        // An evicted pattern is recomputed, equal to the pass's plan.
        let again = cache.get(2);
        assert_eq!(
            *again,
            dce::plan_for_pattern(ir, 2, dce::pattern_label(2, 20))
        );
    }
}
