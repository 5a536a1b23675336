//! The path generated code uses for the facade crate: `::cortex`, or the
//! name the user's `Cargo.toml` gives it (`cx = { package = "cortex" }`).

use std::cell::RefCell;

use proc_macro2::{Ident, Span, TokenStream};
use proc_macro_crate::{crate_name, FoundCrate};

thread_local! {
    /// The resolved name per manifest directory: a proc-macro server may
    /// expand several crates, and each expansion asks many times.
    static RESOLVED: RefCell<Vec<(String, String)>> = const { RefCell::new(Vec::new()) };
}

/// `::cortex`, or `::<renamed>`.
pub fn path() -> TokenStream {
    path_at(Span::call_site())
}

/// [`path`] with its tokens at `span`, for generated expressions that rustc
/// should report at a place in the DSL rather than at the whole macro.
pub fn path_at(span: Span) -> TokenStream {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let name = RESOLVED.with(|r| {
        if let Some((_, n)) = r.borrow().iter().find(|(d, _)| *d == dir) {
            return n.clone();
        }
        let n = match crate_name("cortex") {
            Ok(FoundCrate::Name(name)) => name,
            // Inside the facade itself `extern crate self as cortex` makes
            // `::cortex` resolve; when the manifest cannot be read, the
            // default name is the best guess.
            Ok(FoundCrate::Itself) | Err(_) => "cortex".to_string(),
        };
        r.borrow_mut().push((dir, n.clone()));
        n
    });
    let ident = Ident::new(&name, span);
    quote::quote_spanned!(span=> ::#ident)
}
