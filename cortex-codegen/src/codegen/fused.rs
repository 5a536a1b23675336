//! A fused group in a run function: build the group once (its members'
//! strip forms, from their `#[compilable(strip = …)]` expressions), run it
//! strip by strip on the pool, move its leaving values into the members'
//! values — or, when fusion is off or the group declines the frame, run the
//! members' own calls one after the other, exactly as an unfused plan does.
//! A member that may decline alone (`Group::detachable`) and did gets its
//! own call after the group, from the values the group published.

use cortex_core::access::StripShape;
use cortex_core::ir::{Arg, Endpoint, GraphIr, NodeId};
use cortex_core::passes::fusion::{Group, ValueRole};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use super::shape::{node_local, Cx};

/// One group of a run function, with what the surrounding body knows.
pub(super) struct GroupSite<'a> {
    pub group: &'a Group,
    /// The group's slot (a place of type `FusionSlot`).
    pub slot: TokenStream,
    /// Whether fusion is on (a `bool` expression).
    pub on: TokenStream,
    /// The members' own calls, in order, each with its member: the
    /// unfused path.
    pub fallback: Vec<(NodeId, TokenStream)>,
    /// Whether node `id` runs in the plan.
    pub live: &'a dyn Fn(NodeId) -> bool,
    /// The buffer field node `id` fills, if it fills one.
    pub buffer: &'a dyn Fn(NodeId, Span) -> Option<TokenStream>,
    /// Whether node `id`'s local is a reference to its value (a filled
    /// buffer, or a rated node's value or held value).
    pub is_ref: &'a dyn Fn(NodeId) -> bool,
    /// The pipeline as the run function names it (`self`, or a pipelined
    /// run's second stage's argument): where states are read.
    pub this: proc_macro2::Ident,
}

/// The statements running one fused group and binding its leaving values
/// to the members' locals.
pub(super) fn group_block(
    cx: &Cx<'_>,
    site: GroupSite<'_>,
    obs: &proc_macro2::Ident,
) -> TokenStream {
    let (ir, c) = (cx.ir, cx.c);
    let g = site.group;
    let weights = crate::names::local("__weights_table", Span::call_site());
    let inputs = site.group.inputs(ir, site.live);
    let input_exprs: Vec<TokenStream> = inputs
        .iter()
        .map(|e| endpoint_expr(cx, ir, *e, &site))
        .collect();
    let plane_names: Vec<proc_macro2::Ident> = (0..inputs.len())
        .map(|i| format_ident!("__plane{}", i))
        .collect();
    let mut m = Members::default();
    let detachable = g.detachable(ir);
    for ((&id, role), &alone) in g.nodes.iter().zip(&g.values).zip(&detachable) {
        m.member(cx, &site, &inputs, id, role, alone);
    }
    let Members {
        adds,
        outputs,
        stores,
        fresh_decls,
        fresh_pats,
        bindings,
        required,
        locals,
        out_index: n_out,
    } = m;
    let n_inputs = inputs.len();
    let (slot, on) = (&site.slot, &site.on);
    let members: Vec<NodeId> = g.nodes.clone();
    let fallback = site.fallback.iter().map(|(_, call)| call);
    let (slots, bounds): (Vec<_>, Vec<_>) = fresh_pats.into_iter().unzip();
    let somes = bounds
        .iter()
        .map(|b| quote!(::core::option::Option::Some(#b)));
    quote! {
        #[allow(unused_imports)]
        use #c::__private::{FormAdd as _, FormAddRefused as _, FormStore as _, FormStoreRefused as _};
        #(#fresh_decls)*
        #obs.group_begin(&[#(#members),*]);
        let (__fused, __have) = match #slot.get(#on, #weights, |__b: &mut #c::__private::GroupBuilder| {
            let __inputs: [#c::__private::GroupValue; #n_inputs] = ::core::array::from_fn(|_| __b.input());
            #(#adds)*
            #(#outputs)*
            ::core::result::Result::Ok(())
        }) {
            ::core::option::Option::Some(__g) => {
                let __ran = match (#(#c::__private::PlaneValue::as_plane(&#input_exprs),)*) {
                    (#(::core::result::Result::Ok(#plane_names),)*) => #c::__private::try_run(::core::option::Option::Some(&mut *__g), &[#(#plane_names),*]),
                    #[allow(unreachable_patterns)]
                    _ => false,
                };
                let mut __have = [false; #n_out];
                if __ran {
                    #(#stores)*
                }
                (__ran #(&& __have[#required])*, __have)
            }
            ::core::option::Option::None => (false, [false; #n_out]),
        };
        #obs.group_end(__fused);
        let (#(#locals,)*) = match (__fused, #(#slots.take(),)*) {
            (true, #(#somes,)*) => {
                #(#bindings)*
                (#(#locals,)*)
            }
            _ => {
                #(#fallback)*
                (#(#locals,)*)
            }
        };
    }
}

/// A group member's handle in the group being built.
fn handle(ir: &GraphIr, m: NodeId) -> proc_macro2::Ident {
    format_ident!("__member_{}", ir.nodes[m as usize].name.as_ref())
}

/// What the group's members contribute to its block, gathered member by
/// member.
#[derive(Default)]
struct Members {
    /// The members' forms, added in order; each reads group inputs,
    /// earlier members, or nothing (a weighted argument the plan does not
    /// run).
    adds: Vec<TokenStream>,
    outputs: Vec<TokenStream>,
    stores: Vec<TokenStream>,
    fresh_decls: Vec<TokenStream>,
    fresh_pats: Vec<(proc_macro2::Ident, proc_macro2::Ident)>,
    /// The leaving members' bindings once the group ran, in order.
    bindings: Vec<TokenStream>,
    /// The outputs the group must publish for its run to count.
    required: Vec<usize>,
    locals: Vec<proc_macro2::Ident>,
    /// The group's outputs so far.
    out_index: usize,
}

impl Members {
    /// Member `m` (of `role`; `alone`: it may decline alone): its form
    /// added to the group and, when its value leaves the group, its output.
    fn member(
        &mut self,
        cx: &Cx<'_>,
        site: &GroupSite<'_>,
        inputs: &[Endpoint],
        m: NodeId,
        role: &ValueRole,
        alone: bool,
    ) {
        let (ir, ast) = (cx.ir, cx.ast);
        let g = site.group;
        let weights = crate::names::local("__weights_table", Span::call_site());
        let decl = &ast.nodes[m as usize];
        let Some(form) = &decl.strip else { return };
        let form_expr = checked_form(form, decl.ty.as_ref());
        let form_at = syn::spanned::Spanned::span(&form.expr);
        let c_form = crate::krate::path_at(form_at);
        let args = ir.nodes[m as usize]
            .args
            .iter()
            .filter_map(|arg| match arg {
                Arg::Value(Endpoint::Node(p)) if g.contains(*p) => {
                    let h = handle(ir, *p);
                    Some(quote!(::core::option::Option::Some(#h)))
                }
                // A weighted argument whose node the plan does not run.
                Arg::Value(Endpoint::Node(p)) if !(site.live)(*p) => {
                    Some(quote!(::core::option::Option::None))
                }
                // Every other value argument was collected as a group input.
                Arg::Value(e) => inputs
                    .iter()
                    .position(|x| x == e)
                    .map(|i| quote!(::core::option::Option::Some(__inputs[#i]))),
                _ => None,
            });
        let h = handle(ir, m);
        // Spanned at the form: what rustc says about a form is said there.
        let add = quote_spanned! {form_at=>
            (&#c_form::__private::FormProbe(&#form_expr)).add_form(__b, &[#(#args),*], #weights)
        };
        self.adds.push(quote! {
            let #h = #add?;
        });
        if !matches!(role, ValueRole::Leaving { .. }) {
            return;
        }
        let k = self.out_index;
        self.out_index += 1;
        self.outputs.push(quote!(__b.output(#h)?;));
        let local = node_local(ir, m, decl.name.span());
        self.locals.push(local.clone());
        // Its own call after the group, when it may decline alone.
        let alone = if alone {
            site.fallback
                .iter()
                .find(|(id, _)| *id == m)
                .map(|(_, call)| call.clone())
        } else {
            None
        };
        if alone.is_none() {
            self.required.push(k);
        }
        let store = |into: TokenStream| {
            quote_spanned! {form_at=>
                (&mut #c_form::__private::StoreProbe(&#form_expr, &mut #into)).store_form(__g, #k)
            }
        };
        match (site.buffer)(m, Span::call_site()) {
            Some(field) => self.store_in_buffer(k, &local, &field, store(field.clone()), alone),
            None => self.store_in_value(k, &local, store(quote!(__value)), alone),
        }
    }

    /// Leaving value `k` stored into its node's buffer `field`.
    fn store_in_buffer(
        &mut self,
        k: usize,
        local: &proc_macro2::Ident,
        field: &TokenStream,
        store: TokenStream,
        alone: Option<TokenStream>,
    ) {
        // A declined output is not stored: asking for it would make
        // (and allocate) an error every frame.
        self.stores.push(quote! {
            __have[#k] = __g.published(#k) && #store.is_ok();
        });
        self.bindings.push(match alone {
            Some(call) => quote! {
                let #local = if __have[#k] { &#field } else { #call #local };
            },
            None => quote!(let #local = &#field;),
        });
    }

    /// Leaving value `k` stored into a new value of its node.
    fn store_in_value(
        &mut self,
        k: usize,
        local: &proc_macro2::Ident,
        store: TokenStream,
        alone: Option<TokenStream>,
    ) {
        let slot = format_ident!("__fused_value{}", k);
        self.fresh_decls
            .push(quote!(let mut #slot = ::core::option::Option::None;));
        self.stores.push(quote! {
            let mut __value = ::core::default::Default::default();
            __have[#k] = __g.published(#k) && #store.is_ok();
            if __have[#k] {
                #slot = ::core::option::Option::Some(__value);
            }
        });
        match alone {
            Some(call) => self.bindings.push(quote! {
                let #local = match #slot.take() {
                    ::core::option::Option::Some(__v) => __v,
                    ::core::option::Option::None => { #call #local }
                };
            }),
            None => {
                let bound = format_ident!("__fused_bound{}", k);
                self.fresh_pats.push((slot, bound.clone()));
                self.bindings.push(quote!(let #local = #bound;));
            }
        }
    }
}

/// The form expression, checked against the key it was declared with and,
/// when the node declares its type `ty`, against that type.
fn checked_form(form: &crate::ast::StripForm, ty: Option<&syn::Type>) -> TokenStream {
    let e = &form.expr;
    let at = syn::spanned::Spanned::span(e);
    // The whole call at the expression, so rustc's "required by a bound
    // introduced by this call" points there and not at the invocation —
    // and each use of the form reports a mistake in it at the same place,
    // which rustc prints once.
    let c = crate::krate::path_at(at);
    match (form.shape, ty) {
        (StripShape::Map, None) => quote_spanned!(at=> #c::__private::map_form(#e)),
        (StripShape::Reduction, None) => quote_spanned!(at=> #c::__private::reduce_form(#e)),
        (StripShape::Map, Some(ty)) => {
            quote_spanned!(at=> #c::__private::map_form_as::<_, #ty>(#e))
        }
        (StripShape::Reduction, Some(ty)) => {
            quote_spanned!(at=> #c::__private::reduce_form_as::<_, #ty>(#e))
        }
    }
}

/// A reference to the value at `e`, read by the group as a plane.
fn endpoint_expr(cx: &Cx<'_>, ir: &GraphIr, e: Endpoint, site: &GroupSite<'_>) -> TokenStream {
    match e {
        Endpoint::Input(i) => {
            let p = crate::names::local_like(&cx.ast.inputs[i as usize].name);
            quote!(#p)
        }
        Endpoint::State(s) => {
            let (f, this) = (&cx.ast.states[s as usize].name, &site.this);
            quote!(&#this.state.#f)
        }
        Endpoint::Node(p) => {
            let v = node_local(ir, p, Span::call_site());
            if (site.is_ref)(p) {
                quote!(#v)
            } else {
                quote!(&#v)
            }
        }
    }
}
