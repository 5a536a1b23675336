//! The path generated code names the engine crate by: the facade's hidden
//! `::cortex::__rt` (all of `cortex-core`, whatever the facade shows at its
//! root), under the name the user's `Cargo.toml` gives the facade
//! (`cx = { package = "cortex" }`); or `::cortex_core` in a crate built on
//! the engine crate without the facade (the vision kernels, the models).

use std::cell::RefCell;

use proc_macro2::{Ident, Span, TokenStream};
use proc_macro_crate::{crate_name, FoundCrate};

thread_local! {
    /// The resolved name per manifest directory: a proc-macro server may
    /// expand several crates, and each expansion asks many times.
    static RESOLVED: RefCell<Vec<(String, String)>> = const { RefCell::new(Vec::new()) };
}

/// `::cortex::__rt`, `::<renamed>::__rt`, or `::cortex_core`.
pub fn path() -> TokenStream {
    path_at(Span::call_site())
}

/// [`path`] with its tokens at `span`, for generated expressions that rustc
/// should report at a place in the DSL rather than at the whole macro.
pub fn path_at(span: Span) -> TokenStream {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let path = RESOLVED.with(|r| {
        if let Some((_, p)) = r.borrow().iter().find(|(d, _)| *d == dir) {
            return p.clone();
        }
        let p = match crate_name("cortex") {
            Ok(FoundCrate::Name(name)) => format!("{name}::__rt"),
            // The facade's own tests, examples and doctests link it as
            // `cortex`.
            Ok(FoundCrate::Itself) => "cortex::__rt".to_string(),
            Err(_) => match crate_name("cortex-core") {
                Ok(FoundCrate::Name(name)) => name,
                Ok(FoundCrate::Itself) => "cortex_core".to_string(),
                // When the manifest cannot be read, the facade under its
                // own name is the best guess.
                Err(_) => "cortex::__rt".to_string(),
            },
        };
        r.borrow_mut().push((dir, p.clone()));
        p
    });
    let segments = path.split("::").map(|s| Ident::new(s, span));
    quote::quote_spanned!(span=> #(::#segments)*)
}
