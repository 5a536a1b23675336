//! Validation: from a [`GraphSpec`] to a [`GraphIr`] and the plans of its
//! modes, or every problem found, each at its location.
//!
//! One function per rule, each in the module of its concern, run in an order
//! where later rules only see what earlier ones resolved — so one mistake
//! yields one diagnostic, not a cascade. The same code runs inside
//! `cortex_graph!` at compile time and at run time for graphs built in code.

mod buffers;
mod modes;
mod names;
mod order;
mod outputs;
mod rates;
mod states;
mod usage;

pub use modes::IMPLICIT_MODE;

use crate::model::ir::{
    Arg, Edge, EdgeKind, Endpoint, GraphIr, InputIr, NodeIr, NodeKind, StateIr,
};
use crate::model::plan::Plan;
use crate::model::spec::GraphSpec;
use crate::passes::dce;
use crate::passes::diag::{Diagnostic, Diagnostics};

pub use crate::model::spec::WEIGHTS_ARG;

/// The most weight keys a graph may use (a zero pattern is a `u64`).
pub const MAX_WEIGHT_KEYS: usize = 64;

/// The result of [`check`].
#[derive(Debug, Clone)]
pub struct Checked {
    /// The IR, when the graph is valid.
    pub ir: Option<GraphIr>,
    /// One plan per declared mode, in declaration order (empty when invalid).
    pub mode_plans: Vec<Plan>,
    /// Every problem found.
    pub diagnostics: Vec<Diagnostic>,
}

/// What name resolution found, shared by the later rules.
pub(crate) struct Resolved {
    /// Per node, per argument: the resolved argument (`None`: unresolved).
    pub args: Vec<Vec<Option<Arg>>>,
    /// Per state: its writer (first valid write).
    pub writers: Vec<Option<u32>>,
    /// Per write: the resolved producer and state.
    pub writes: Vec<Option<(u32, u32)>>,
    /// Weight keys in first-use order.
    pub weight_keys: Vec<String>,
    /// Per node: its weight key index.
    pub node_keys: Vec<Option<u32>>,
    /// Per output: the node it names.
    pub outputs: Vec<Option<u32>>,
    /// Per mode: its resolved rates.
    pub rates: Vec<Vec<crate::model::ir::RateIr>>,
}

/// Validates `spec`, returning the IR and mode plans or all diagnostics.
pub fn check(spec: &GraphSpec) -> Checked {
    let mut diags = Diagnostics::default();
    let namespace = names::declare(spec, &mut diags);
    let mut resolved = Resolved {
        args: names::resolve_args(spec, &namespace, &mut diags),
        writers: vec![None; spec.states.len()],
        writes: Vec::new(),
        weight_keys: Vec::new(),
        node_keys: Vec::new(),
        outputs: Vec::new(),
        rates: Vec::new(),
    };
    states::resolve_writes(spec, &namespace, &mut resolved, &mut diags);
    buffers::check_buffers(spec, &mut diags);
    modes::collect_keys(spec, &mut resolved, &mut diags);
    modes::check_modes(spec, &resolved, &mut diags);
    modes::check_variants(spec, &mut diags);
    outputs::resolve(spec, &namespace, &mut resolved, &mut diags);
    rates::resolve(spec, &namespace, &mut resolved, &mut diags);
    let resolution_clean = !diags.has_errors();
    if resolution_clean {
        // Usage rules would only echo an unresolved name, so they wait for a
        // clean resolution.
        states::check_written_and_read(spec, &resolved, &mut diags);
        usage::check_consumed(spec, &resolved, &mut diags);
    }
    let topo = order::topological(spec, &resolved, &mut diags);

    if diags.has_errors() {
        return Checked {
            ir: None,
            mode_plans: Vec::new(),
            diagnostics: diags.into_vec(),
        };
    }
    let ir = build_ir(spec, &resolved, topo);
    usage::check_reaches_output(spec, &ir, &mut diags);
    let mode_plans: Vec<Plan> = (0..ir.modes.len())
        .map(|m| dce::plan_for_mode(&ir, m))
        .collect();
    if !diags.has_errors() {
        outputs::check_not_eliminated(spec, &ir, &mode_plans, &mut diags);
        modes::check_runs_in_some_mode(spec, &ir, &mode_plans, &mut diags);
        modes::check_weights_take_effect(spec, &ir, &mode_plans, &mut diags);
        rates::check_plans(spec, &ir, &mode_plans, &mut diags);
    }
    let ok = !diags.has_errors();
    Checked {
        ir: ok.then_some(ir),
        mode_plans: if ok { mode_plans } else { Vec::new() },
        diagnostics: diags.into_vec(),
    }
}

/// Assembles the IR once every rule passed (all references resolve).
fn build_ir(spec: &GraphSpec, r: &Resolved, topo: Vec<u32>) -> GraphIr {
    let nodes: Vec<NodeIr> = spec
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| NodeIr {
            name: n.name.clone().into(),
            op: n.op.clone().into(),
            kind: if n.compilable {
                NodeKind::Compilable
            } else {
                NodeKind::ExternalCall
            },
            strip: n.strip.filter(|_| n.compilable),
            weight_key: r.node_keys[i],
            args: r.args[i]
                .iter()
                .flatten()
                .cloned()
                .collect::<Vec<_>>()
                .into(),
            fallible: n.fallible,
            ty: n.ty.clone().map(Into::into),
            source: n.source.clone().into(),
        })
        .collect();
    let mut edges = Vec::new();
    for (i, args) in r.args.iter().enumerate() {
        for (a, arg) in args.iter().enumerate() {
            if let Some(Arg::Value(from)) = arg {
                let kind = match from {
                    Endpoint::Node(p) if r.node_keys[*p as usize].is_some() => EdgeKind::Weighted,
                    _ => EdgeKind::Data,
                };
                edges.push(Edge {
                    from: *from,
                    to: Endpoint::Node(i as u32),
                    arg: a as u32,
                    kind,
                });
            }
        }
    }
    for (from, to) in r.writes.iter().flatten() {
        edges.push(Edge {
            from: Endpoint::Node(*from),
            to: Endpoint::State(*to),
            arg: 0,
            kind: EdgeKind::State,
        });
    }
    GraphIr {
        name: spec.name.clone().into(),
        inputs: spec
            .inputs
            .iter()
            .map(|i| InputIr {
                name: i.name.clone().into(),
                ty: i.ty.clone().into(),
            })
            .collect::<Vec<_>>()
            .into(),
        states: spec
            .states
            .iter()
            .enumerate()
            .map(|(s, st)| StateIr {
                name: st.name.clone().into(),
                ty: st.ty.clone().into(),
                init: st.init.clone().into(),
                writer: r.writers[s].unwrap_or_default(),
            })
            .collect::<Vec<_>>()
            .into(),
        nodes: nodes.into(),
        edges: edges.into(),
        weight_keys: r
            .weight_keys
            .iter()
            .map(|k| k.clone().into())
            .collect::<Vec<_>>()
            .into(),
        modes: modes::build(spec, r).into(),
        outputs: outputs::build(spec, r).into(),
        topo: topo.into(),
    }
}

/// Every endpoint a node's argument or a mode's trigger reads, gathered in
/// one pass so asking about each endpoint costs no scan of the graph.
pub(crate) fn read_set(r: &Resolved) -> std::collections::HashSet<Endpoint> {
    let by_node = r.args.iter().flatten().filter_map(|a| match a {
        Some(Arg::Value(x)) => Some(*x),
        _ => None,
    });
    let by_trigger = r
        .rates
        .iter()
        .flatten()
        .filter_map(|rate| rate.trigger.as_ref().map(|t| t.source));
    by_node.chain(by_trigger).collect()
}

/// `input`, `state` or `node`: what kind of name an endpoint is.
pub(crate) fn kind_word(e: Endpoint) -> &'static str {
    match e {
        Endpoint::Input(_) => "input",
        Endpoint::State(_) => "state",
        Endpoint::Node(_) => "node",
    }
}

/// `a` or `an`, for the kind word of an endpoint.
pub(crate) fn article(e: Endpoint) -> &'static str {
    match e {
        Endpoint::Input(_) => "an",
        _ => "a",
    }
}

impl GraphSpec {
    /// Validates this spec: shorthand for [`check`].
    pub fn check(&self) -> Checked {
        check(self)
    }
}

impl crate::model::spec::GraphBuilder {
    /// Builds and validates: shorthand for `check(&builder.build())`.
    pub fn check(self) -> Checked {
        check(&self.build())
    }
}
