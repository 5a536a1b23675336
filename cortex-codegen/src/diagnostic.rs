//! The core's diagnostics as compiler output: errors through
//! `compile_error!`, warnings through a deprecated item (the one way a
//! stable proc macro can make rustc warn), secondary locations as notes at
//! their own spans.

use cortex_core::diag::{Diagnostic, Severity};
use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;

use crate::ast::PipelineAst;
use crate::to_spec::span_of;

/// The tokens that report `d`.
pub fn emit(ast: &PipelineAst, d: &Diagnostic) -> TokenStream {
    let at = span_of(ast, d.loc);
    let mut out = match d.severity {
        Severity::Error => syn::Error::new(at, d.render()).to_compile_error(),
        Severity::Warning => warning(at, &one_line(d)),
    };
    // Stable proc macros cannot attach a note at another span to an error,
    // so each secondary location is its own message there, naming what it
    // belongs to.
    for (loc, what) in &d.labels {
        let msg = format!("{what} (see: {})", d.message);
        out.extend(match d.severity {
            Severity::Error => syn::Error::new(span_of(ast, *loc), msg).to_compile_error(),
            Severity::Warning => warning(span_of(ast, *loc), &msg),
        });
    }
    out
}

/// A warning's message and notes on one line: rustc prints a deprecation
/// note as one line.
fn one_line(d: &Diagnostic) -> String {
    let mut s = d.message.clone();
    for n in &d.notes {
        s.push_str(" — ");
        s.push_str(n);
    }
    s
}

/// A warning at `at`: the use of a deprecated constant whose note is the
/// message. rustc prints it as "use of deprecated constant
/// `…::cortex_warning`: {message}" at `at`; `-D warnings` turns it into an
/// error as for any warning.
fn warning(at: Span, message: &str) -> TokenStream {
    let name = syn::Ident::new("cortex_warning", at);
    quote_spanned! {at=>
        const _: () = {
            #[deprecated(note = #message)]
            #[allow(non_upper_case_globals)]
            const cortex_warning: () = ();
            #name
        };
    }
}
