//! One node's call in a run function: its arguments (inputs, states,
//! other nodes' values — optional where the plan may not run them —,
//! weights, its own buffer, constants), the call with its result checked,
//! and the node's value.

use cortex_core::ir::{Arg, EdgeKind, Endpoint, NodeId};
use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream};
use quote::{quote, quote_spanned};

use super::shape::{const_arg, node_local, Flavor};
use super::site::Body;
use crate::ast::NodeArg;
use crate::names::local;

/// A node's call, in the pieces each kind of run function puts together.
pub(super) struct Call {
    /// Statements binding the arguments that need checking first.
    pub guards: Vec<TokenStream>,
    /// The call, its result checked (`?` and buffer-filling slips).
    pub checked_call: TokenStream,
    /// `let __value = …;`, returning from the run function on an error.
    pub compute: TokenStream,
    /// The local an `Ok` result is bound to, and the value made of it.
    pub ok: Ident,
    pub ok_value: TokenStream,
    /// The local holding the call's result.
    pub value: Ident,
    /// The node's value (a reference to its buffer, or the result typed).
    pub result: TokenStream,
    /// The node's local.
    pub v: Ident,
    pub call_span: Span,
}

impl Body<'_> {
    /// Node `id`'s call.
    pub(super) fn call(&self, id: NodeId) -> Call {
        let (ir, ast) = (self.cx.ir, self.cx.ast);
        let obs = &self.obs;
        let node = &ir.nodes[id as usize];
        let decl = &ast.nodes[id as usize];
        let func = &decl.func;
        let mut guards = Vec::new();
        let args: Vec<TokenStream> = node
            .args
            .iter()
            .zip(&decl.args)
            .enumerate()
            .map(|(a, (arg, arg_ast))| self.arg(id, a, arg, arg_ast, &mut guards))
            .collect();
        let call_span = syn::spanned::Spanned::span(func);
        // The parentheses keep the user's span, so rustc's suggestions about
        // the arguments quote the call as written.
        let mut parens = Group::new(Delimiter::Parenthesis, quote!(#(#args),*));
        parens.set_span(decl.paren.join());
        let call = quote_spanned!(call_span=> #func #parens);
        let name_str: &str = &node.name;
        let value = local("__value", call_span);
        let cp = crate::krate::path_at(call_span);
        // The call's result goes through one generic function when the node
        // has `?` (it must return a `Result`) and when it fills a buffer (it
        // must return `()`), so a slip is one error at the call, in the
        // DSL's words. The result is first bound to a local spanned at the
        // call, so that error reads the same in every run function and
        // rustc reports it once.
        let fills_own = node.fills_buffer() && decl.ty.is_some();
        // Not mixed-site: an error at a mixed-site local is reported at the
        // whole invocation in some run functions and at the call in others.
        let returned = proc_macro2::Ident::new("__cortex_returned", call_span);
        let bind_call = quote_spanned!(call_span=> let #returned = #call;);
        let checked_call = if node.fallible {
            quote_spanned!(call_span=> { #bind_call #cp::__private::fallible(#returned) })
        } else if fills_own {
            quote_spanned!(call_span=> { #bind_call #cp::__private::filled(#returned) })
        } else {
            call.clone()
        };
        let ok = local("__ok", call_span);
        let ok_value = if fills_own {
            quote_spanned!(call_span=> #cp::__private::filled(#ok))
        } else {
            quote_spanned!(call_span=> #ok)
        };
        let compute = if node.fallible {
            let c = crate::krate::path_at(call_span);
            quote_spanned! {call_span=>
                let #value = match #checked_call {
                    ::core::result::Result::Ok(#ok) => #ok_value,
                    ::core::result::Result::Err(e) => {
                        #obs.node_end(#id);
                        #obs.frame_end(false);
                        return ::core::result::Result::Err(#c::PipelineError::node(#name_str, e));
                    }
                };
            }
        } else {
            quote!(let #value = #checked_call;)
        };
        let v = node_local(ir, id, decl.name.span());
        // The node's value: a reference to the buffer it filled (its call
        // returns `()`), or what its call returned, checked against the
        // declared type when there is one.
        let result = match (self.buffer(id, call_span), &decl.ty) {
            (Some(f), Some(ty)) => {
                let at = syn::spanned::Spanned::span(ty);
                quote_spanned! {at=> {
                    let () = #value;
                    let __filled: &#ty = &#f;
                    __filled
                }}
            }
            (_, Some(ty)) => {
                let at = syn::spanned::Spanned::span(ty);
                quote_spanned!(at=> { let __typed: #ty = #value; __typed })
            }
            (_, None) => quote!(#value),
        };
        Call {
            guards,
            checked_call,
            compute,
            ok,
            ok_value,
            value,
            result,
            v,
            call_span,
        }
    }

    /// Argument `a` of node `id`'s call (`guards` gets the statements
    /// binding it first, when it needs checking).
    fn arg(
        &self,
        id: NodeId,
        a: usize,
        arg: &Arg,
        arg_ast: &NodeArg,
        guards: &mut Vec<TokenStream>,
    ) -> TokenStream {
        let ast = self.cx.ast;
        let sp = arg_ast.span();
        match arg {
            Arg::Value(Endpoint::Input(i)) => {
                let p = crate::names::local_like_at(&ast.inputs[*i as usize].name, sp);
                quote_spanned!(sp=> #p)
            }
            Arg::Value(Endpoint::State(s)) => {
                let f = &ast.states[*s as usize].name;
                let this = self.this(sp);
                quote_spanned!(sp=> &#this.state.#f)
            }
            Arg::Value(e @ Endpoint::Node(p)) => self.node_arg(id, a, *e, *p, sp, guards),
            Arg::Weights => {
                let w = local("__weights_table", sp);
                quote_spanned!(sp=> #w)
            }
            Arg::Buffer => match self.buffer(id, sp) {
                Some(f) => quote_spanned!(sp=> &mut #f),
                None => quote_spanned!(sp=> ::core::unreachable!()),
            },
            Arg::Const(_) => match arg_ast {
                NodeArg::Const(e) => const_arg(e),
                NodeArg::Name(i) => quote!(#i),
                NodeArg::Buffer(_) => quote!(::core::unreachable!()),
            },
        }
    }

    /// Argument `a` of node `id`, the value of node `p` (at endpoint `e`):
    /// a reference, or through a weighted edge an `Option` of one; a value
    /// the plan may not have is checked first.
    fn node_arg(
        &self,
        id: NodeId,
        a: usize,
        e: Endpoint,
        p: NodeId,
        sp: Span,
        guards: &mut Vec<TokenStream>,
    ) -> TokenStream {
        let ir = self.cx.ir;
        let v = node_local(ir, p, sp);
        let weighted = ir.out_edge_kind(e) == EdgeKind::Weighted;
        // A filled value is already a reference to its buffer.
        let by_ref = if self.is_ref(p) {
            quote_spanned!(sp=> #v)
        } else {
            quote_spanned!(sp=> &#v)
        };
        let opt_ref = if self.fills(p) {
            quote_spanned!(sp=> #v)
        } else {
            quote_spanned!(sp=> #v.as_ref())
        };
        // Every weighted edge goes through one generic function,
        // so a parameter of the wrong type is one error in the
        // DSL's words, the same in every run function.
        let optional = self.masked() || self.cond(p);
        let value = match (&self.flavor, weighted) {
            (_, true) if optional => opt_ref,
            (Flavor::Masked(_), true) => opt_ref,
            (Flavor::Mode(plan), true) if plan.is_live(p) => {
                quote_spanned!(sp=> ::core::option::Option::Some(#by_ref))
            }
            (Flavor::Mode(_), true) => quote_spanned!(sp=> ::core::option::Option::None),
            (Flavor::Mode(_), false) if !optional => return by_ref,
            (_, false) => {
                let tmp = local(&format!("__arg{a}"), sp);
                let node = &ir.nodes[id as usize];
                let bail = self.internal(&format!(
                    "`{}` runs without its input `{}`",
                    node.name, ir.nodes[p as usize].name
                ));
                guards.push(quote!(let ::core::option::Option::Some(#tmp) = #opt_ref else #bail;));
                return quote_spanned!(sp=> #tmp);
            }
        };
        // Bound to a local of the same name and span on every
        // path, so the call's tokens are identical in every run
        // function and rustc reports a type error once.
        let edge = local(&format!("__edge{a}"), sp);
        guards.push(quote!(let #edge = #value;));
        let c = crate::krate::path_at(sp);
        quote_spanned!(sp=> #c::__private::weighted(#edge))
    }
}
