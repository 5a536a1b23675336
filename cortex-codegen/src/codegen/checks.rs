//! The checks that what crosses threads may: a parallel run's node values,
//! a pipelined run's first-stage values, and a `#[parallel]` pipeline's
//! inputs and states, each one error at its declaration when it is not
//! `Send + Sync`.

use cortex_core::ir::NodeId;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};

use super::site::Body;

impl Body<'_> {
    /// Evidence that node `id`'s value, which `place` refers to, may cross
    /// threads (see [`parallel_check`]). A node that writes a state is
    /// checked as that state (the same type): a state that is not
    /// `Send + Sync` is then one error, at the state, not another at its
    /// writer.
    pub(super) fn value_proof(&self, id: NodeId, place: TokenStream) -> TokenStream {
        let ast = self.cx.ast;
        let name = &ast.nodes[id as usize].name;
        let written = ast
            .writes
            .iter()
            .filter(|w| crate::names::text(&w.from) == crate::names::text(name))
            .find_map(|w| {
                ast.states
                    .iter()
                    .find(|st| crate::names::text(&st.name) == crate::names::text(&w.to))
            });
        match written {
            Some(st) => parallel_check(Probe::Value(place), Check::State, st.name.span()),
            None => parallel_check(Probe::Value(place), Check::Value, name.span()),
        }
    }

    /// The checks that every input and state of a `#[parallel]` pipeline
    /// may cross threads, chained into one value (`()` when there are
    /// none). A check that fails is one error, at the input's or state's
    /// name, and makes the chain the error type: the engine's bounds on
    /// the inputs and the pipeline, which a pipelined run asks of the
    /// values carrying this chain, and those of the pool's closures, are
    /// then not reported again.
    pub(super) fn declared_checks(&self) -> TokenStream {
        let ast = self.cx.ast;
        // Checked by type, as the `ParallelPipeline` impl checks them
        // (`api::parallel`): the same check at the same span is one error.
        let inputs = ast.inputs.iter().map(|i| {
            let ty = &i.ty;
            parallel_check(Probe::Type(quote!(#ty)), Check::Input, i.name.span())
        });
        let states = ast.states.iter().map(|st| {
            let ty = &st.ty;
            parallel_check(Probe::Type(quote!(#ty)), Check::State, st.name.span())
        });
        inputs
            .chain(states)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .fold(quote!(()), |rest, check| quote!(#check.and(#rest)))
    }
}

/// What a check is given: a reference to a value, or a type.
pub(crate) enum Probe {
    /// An expression of type `&T`.
    Value(TokenStream),
    /// The type `T`.
    Type(TokenStream),
}

/// What a check is of: it says which in its error.
#[derive(Clone, Copy)]
pub(crate) enum Check {
    Value,
    Input,
    State,
}

/// Evidence (a `cortex::__private::Proof`) that the probed value or type
/// may cross threads, checked at `at` (the node's, input's or state's
/// name): one that is not `Send + Sync` is one error there, in the
/// pipeline's words. Every check of one declaration is spanned alike, so
/// rustc prints the error once.
pub(crate) fn parallel_check(probe: Probe, check: Check, at: Span) -> TokenStream {
    let cp = crate::krate::path_at(at);
    // Mixed-site like the locals it borrows, so the check keeps the
    // declaration's span instead of falling back to the whole invocation.
    let check_at = Span::mixed_site().located_at(at);
    let method = Ident::new(
        match check {
            Check::Value => "parallel_value",
            Check::Input => "parallel_input",
            Check::State => "parallel_state",
        },
        check_at,
    );
    let probe = match probe {
        Probe::Value(place) => quote_spanned!(check_at=> #cp::__private::ParallelProbe(#place)),
        Probe::Type(ty) => quote_spanned!(check_at=> #cp::__private::TypeProbe::<#ty>::new()),
    };
    quote_spanned! {check_at=>
        {
            #[allow(unused_imports)]
            use #cp::__private::{ParallelOk as _, ParallelRefused as _};
            (&#probe).#method()
        }
    }
}
