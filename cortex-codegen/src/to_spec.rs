//! From the syntax tree to the shared model: a [`GraphSpec`] for
//! `cortex-core`'s validation, and the span of every element so its
//! diagnostics point at the right token.

use cortex_core::diag::Loc;
use cortex_core::spec::{
    ArgSpec, GraphSpec, InputSpec, ModeSpec, NodeSpec, OutputSpec, RateSpec, StateSpec, WriteSpec,
};
use proc_macro2::Span;
use quote::ToTokens;

use crate::ast::{NodeArg, PipelineAst};
use crate::names::text;

/// The graph spec of `ast`.
pub fn graph_spec(ast: &PipelineAst) -> GraphSpec {
    let tokens = |t: &dyn ToTokens| t.to_token_stream().to_string();
    GraphSpec {
        name: text(&ast.name),
        inputs: ast
            .inputs
            .iter()
            .map(|i| InputSpec {
                name: text(&i.name),
                ty: tokens(&i.ty),
            })
            .collect(),
        states: ast
            .states
            .iter()
            .map(|s| StateSpec {
                name: text(&s.name),
                ty: tokens(&s.ty),
                init: tokens(&s.init),
            })
            .collect(),
        nodes: ast
            .nodes
            .iter()
            .map(|n| NodeSpec {
                name: text(&n.name),
                op: tokens(&n.func).replace(' ', ""),
                args: n
                    .args
                    .iter()
                    .map(|a| match a {
                        NodeArg::Name(i) if text(i) == cortex_core::check::WEIGHTS_ARG => {
                            ArgSpec::Weights
                        }
                        NodeArg::Name(i) => ArgSpec::Name(text(i)),
                        NodeArg::Buffer(_) => ArgSpec::Buffer,
                        NodeArg::Const(e) => ArgSpec::Const(tokens(e)),
                    })
                    .collect(),
                compilable: n.compilable,
                strip: n.strip.as_ref().map(|f| f.shape),
                weight_key: n.weight_key.as_ref().map(|k| k.value()),
                fallible: n.fallible,
                ty: n.ty.as_ref().map(|t| tokens(t)),
                source: n.source.clone(),
            })
            .collect(),
        writes: ast
            .writes
            .iter()
            .map(|w| WriteSpec {
                from: text(&w.from),
                to: text(&w.to),
            })
            .collect(),
        modes: ast
            .modes
            .iter()
            .map(|m| ModeSpec {
                name: text(&m.name),
                // A malformed value was reported already; a placeholder keeps the
                // key present so validation doesn't add "missing weight".
                weights: m
                    .entries
                    .iter()
                    .map(|e| (text(&e.key), e.value.unwrap_or(1.0)))
                    .collect(),
                // A malformed count was reported already; 1 keeps the rate.
                rates: m
                    .rates
                    .iter()
                    .map(|r| RateSpec {
                        node: text(&r.node),
                        every: r.every.unwrap_or(1),
                        trigger: r.trigger.as_ref().map(|t| {
                            (
                                text(&t.source),
                                t.fields.iter().map(|f| tokens(f)).collect(),
                            )
                        }),
                    })
                    .collect(),
            })
            .collect(),
        outputs: ast
            .outputs
            .iter()
            .map(|o| OutputSpec {
                name: text(&o.name),
                ty: tokens(&o.ty),
                optional: o.optional,
            })
            .collect(),
    }
}

/// The span of a location in `ast`: where a diagnostic about the spec's
/// element points.
pub fn span_of(ast: &PipelineAst, loc: Loc) -> Span {
    let get = |s: Option<Span>| s.unwrap_or_else(|| ast.name.span());
    match loc {
        Loc::Pipeline => ast.name.span(),
        Loc::Input(i) => get(ast.inputs.get(i).map(|x| x.name.span())),
        Loc::State(i) => get(ast.states.get(i).map(|x| x.name.span())),
        Loc::Node(i) => get(ast.nodes.get(i).map(|x| x.name.span())),
        Loc::NodeArg { node, arg } => get(ast
            .nodes
            .get(node)
            .and_then(|n| n.args.get(arg))
            .map(NodeArg::span)),
        Loc::NodeWeightKey(i) => get(ast
            .nodes
            .get(i)
            .and_then(|n| n.weight_key.as_ref())
            .map(|k| k.span())),
        Loc::WriteFrom(i) => get(ast.writes.get(i).map(|w| w.from.span())),
        Loc::WriteTo(i) => get(ast.writes.get(i).map(|w| w.to.span())),
        Loc::Mode(i) => get(ast.modes.get(i).map(|m| m.name.span())),
        Loc::ModeKey { mode, entry } => get(ast
            .modes
            .get(mode)
            .and_then(|m| m.entries.get(entry))
            .map(|e| e.key.span())),
        Loc::ModeValue { mode, entry } => get(ast
            .modes
            .get(mode)
            .and_then(|m| m.entries.get(entry))
            .map(|e| e.value_span)),
        Loc::Output(i) => get(ast.outputs.get(i).map(|o| o.name.span())),
        Loc::ModeRate { mode, rate } => get(rate_of(ast, mode, rate).map(|r| r.node.span())),
        Loc::ModeRateEvery { mode, rate } => get(rate_of(ast, mode, rate).map(|r| r.every_span)),
        Loc::ModeRateTrigger { mode, rate } => get(rate_of(ast, mode, rate)
            .and_then(|r| r.trigger.as_ref())
            .map(|t| t.source.span())),
    }
}

fn rate_of(ast: &PipelineAst, mode: usize, rate: usize) -> Option<&crate::ast::RateDecl> {
    ast.modes.get(mode).and_then(|m| m.rates.get(rate))
}
