//! The IR and plans as `const` Rust expressions: the macro computes them with
//! `cortex-core` and writes them out as borrowed (`'static`) data.
//!
//! Each function destructures its type completely, so a field added to the
//! model fails to compile here until it is written out too.

use cortex_core::access::StripShape;
use cortex_core::ir::{
    Arg, Edge, EdgeKind, Endpoint, GraphIr, InputIr, ModeIr, NodeIr, NodeKind, OutputIr, RateIr,
    StateIr, TriggerIr,
};
use cortex_core::plan::{Eliminated, Plan, Reason};
use proc_macro2::TokenStream;
use quote::quote;

fn s(v: &str) -> TokenStream {
    quote!(::std::borrow::Cow::Borrowed(#v))
}

fn list<T>(items: &[T], f: impl Fn(&T) -> TokenStream) -> TokenStream {
    let items = items.iter().map(f);
    quote!(::std::borrow::Cow::Borrowed(&[#(#items),*]))
}

fn f64_lit(v: f64) -> TokenStream {
    // Weights are validated finite before code generation.
    let lit = proc_macro2::Literal::f64_suffixed(v);
    quote!(#lit)
}

/// `GraphIr { … }`.
pub fn ir(ir: &GraphIr) -> TokenStream {
    let c = crate::krate::path();
    let GraphIr {
        name,
        inputs,
        states,
        nodes,
        edges,
        weight_keys,
        modes,
        outputs,
        topo,
    } = ir;
    let name = s(name);
    let inputs = list(inputs, |InputIr { name, ty }| {
        let (name, ty) = (s(name), s(ty));
        quote!(#c::ir::InputIr { name: #name, ty: #ty })
    });
    let states = list(
        states,
        |StateIr {
             name,
             ty,
             init,
             writer,
         }| {
            let (name, ty, init) = (s(name), s(ty), s(init));
            quote!(#c::ir::StateIr { name: #name, ty: #ty, init: #init, writer: #writer })
        },
    );
    let nodes = list(nodes, node);
    let edges = list(
        edges,
        |Edge {
             from,
             to,
             arg,
             kind,
         }| {
            let (from, to) = (endpoint(*from), endpoint(*to));
            let kind = match kind {
                EdgeKind::Data => quote!(Data),
                EdgeKind::Weighted => quote!(Weighted),
                EdgeKind::State => quote!(State),
            };
            quote!(#c::ir::Edge { from: #from, to: #to, arg: #arg, kind: #c::ir::EdgeKind::#kind })
        },
    );
    let weight_keys = list(weight_keys, |k| s(k));
    let modes = list(
        modes,
        |ModeIr {
             name,
             weights,
             rates,
         }| {
            let name = s(name);
            let weights = list(weights, |w| f64_lit(*w));
            let rates = list(
                rates,
                |RateIr {
                     node,
                     every,
                     trigger,
                 }| {
                    let trigger = match trigger {
                        Some(TriggerIr { source, fields }) => {
                            let source = endpoint(*source);
                            let fields = list(fields, |f| s(f));
                            quote!(::core::option::Option::Some(#c::ir::TriggerIr { source: #source, fields: #fields }))
                        }
                        None => quote!(::core::option::Option::None),
                    };
                    quote!(#c::ir::RateIr { node: #node, every: #every, trigger: #trigger })
                },
            );
            quote!(#c::ir::ModeIr { name: #name, weights: #weights, rates: #rates })
        },
    );
    let outputs = list(outputs, |OutputIr { node, ty, optional }| {
        let ty = s(ty);
        quote!(#c::ir::OutputIr { node: #node, ty: #ty, optional: #optional })
    });
    let topo = list(topo, |t| quote!(#t));
    quote! {
        #c::ir::GraphIr {
            name: #name,
            inputs: #inputs,
            states: #states,
            nodes: #nodes,
            edges: #edges,
            weight_keys: #weight_keys,
            modes: #modes,
            outputs: #outputs,
            topo: #topo,
        }
    }
}

fn node(n: &NodeIr) -> TokenStream {
    let c = crate::krate::path();
    let NodeIr {
        name,
        op,
        kind,
        strip,
        weight_key,
        args,
        fallible,
        ty,
        source,
    } = n;
    let (name, op, source) = (s(name), s(op), s(source));
    let ty = match ty {
        Some(t) => {
            let t = s(t);
            quote!(::core::option::Option::Some(#t))
        }
        None => quote!(::core::option::Option::None),
    };
    let kind = match kind {
        NodeKind::Compilable => quote!(#c::ir::NodeKind::Compilable),
        NodeKind::ExternalCall => quote!(#c::ir::NodeKind::ExternalCall),
    };
    let strip = match strip {
        Some(StripShape::Map) => quote!(::core::option::Option::Some(#c::access::StripShape::Map)),
        Some(StripShape::Reduction) => {
            quote!(::core::option::Option::Some(#c::access::StripShape::Reduction))
        }
        None => quote!(::core::option::Option::None),
    };
    let weight_key = match weight_key {
        Some(k) => quote!(::core::option::Option::Some(#k)),
        None => quote!(::core::option::Option::None),
    };
    let args = list(args, |a| match a {
        Arg::Value(e) => {
            let e = endpoint(*e);
            quote!(#c::ir::Arg::Value(#e))
        }
        Arg::Weights => quote!(#c::ir::Arg::Weights),
        Arg::Buffer => quote!(#c::ir::Arg::Buffer),
        Arg::Const(text) => {
            let text = s(text);
            quote!(#c::ir::Arg::Const(#text))
        }
    });
    quote! {
        #c::ir::NodeIr {
            name: #name, op: #op, kind: #kind, strip: #strip, weight_key: #weight_key,
            args: #args, fallible: #fallible, ty: #ty, source: #source,
        }
    }
}

fn endpoint(e: Endpoint) -> TokenStream {
    let c = crate::krate::path();
    match e {
        Endpoint::Input(i) => quote!(#c::ir::Endpoint::Input(#i)),
        Endpoint::State(i) => quote!(#c::ir::Endpoint::State(#i)),
        Endpoint::Node(i) => quote!(#c::ir::Endpoint::Node(#i)),
    }
}

/// `Plan { … }`.
pub fn plan(p: &Plan) -> TokenStream {
    let c = crate::krate::path();
    let Plan {
        label,
        graph,
        zero_pattern,
        order,
        eliminated,
        live,
        writes_state,
        missing_outputs,
    } = p;
    let label = s(label);
    let order = list(order, |n| quote!(#n));
    let eliminated = list(eliminated, |Eliminated { node, reason }| {
        let reason = match reason {
            Reason::ZeroWeight { key } => quote!(#c::plan::Reason::ZeroWeight { key: #key }),
            Reason::NoLiveConsumer => quote!(#c::plan::Reason::NoLiveConsumer),
            Reason::Held { rated } => quote!(#c::plan::Reason::Held { rated: #rated }),
        };
        quote!(#c::plan::Eliminated { node: #node, reason: #reason })
    });
    let live = list(live, |b| quote!(#b));
    let writes_state = list(writes_state, |b| quote!(#b));
    let missing_outputs = list(missing_outputs, |n| quote!(#n));
    quote! {
        #c::plan::Plan {
            label: #label,
            graph: #graph,
            zero_pattern: #zero_pattern,
            order: #order,
            eliminated: #eliminated,
            live: #live,
            writes_state: #writes_state,
            missing_outputs: #missing_outputs,
        }
    }
}
