//! The `cortex_graph!` procedural macro: a thin shell that hands the
//! invocation's tokens to `cortex-codegen` (the parser, validation and code
//! generator, an ordinary library tested as plain Rust) and returns its
//! expansion, errors included.

use proc_macro::TokenStream;

/// Declares a pipeline: a dataflow graph of ordinary Rust functions,
/// checked and planned when the crate compiles.
///
/// One invocation declares inputs, states, nodes, state writes, modes
/// (weight tables) and outputs. The macro rejects dangling edges, cycles not
/// broken by a state, inconsistent modes and every other mistake with an
/// error at the offending token (all of them in one pass), computes each
/// mode's plan with its dead nodes removed, plans the buffers of
/// buffer-filling nodes, and generates `struct <Name>` with one
/// straight-line `run` per mode, `<Name>Mode`, `<Name>Outputs`, the graph as
/// `'static` data (`<Name>::ir()`), and the `cortex::Pipeline` impl (plus
/// parallel and pipelined engines under `#[parallel]`).
///
/// # Grammar
///
#[doc = include_str!("grammar.md")]
///
/// - A node's arguments reach its function as references (`&T`); an
///   argument that is not a bare identifier is a constant passed as written.
/// - `?` after a call: the function returns `Result<T, E>`; an error aborts
///   the frame as `PipelineError::Node` and leaves the state untouched.
/// - An edge leaving a `#[weight_key]` node arrives as `Option<&T>`: `None`
///   in a mode whose weight for that key is zero, where the node is not run.
/// - `node -> state;` gives the state this frame's value for the next frame.
/// - `node v: T = f(…, &mut v)` fills a buffer of type `T` that the
///   pipeline owns and reuses. Values whose lifetimes do not overlap share a
///   buffer when their types are written alike, up to spacing and `self::`
///   (a macro cannot resolve paths): `node b: self::Map` shares with
///   `node a: Map`, but `node c: ops::Map` gets its own buffer even if it
///   names the same type — write the type alike to share.
///
/// # Example
///
/// The generated code names the facade crate `cortex`, so this example is
/// compiled and run by the facade's tests (it is the first block of the
/// guide's `docs/grammar.md`), not by this crate's:
///
/// ```rust,ignore
/// use cortex::cortex_graph;
/// use cortex::Weights;
///
/// cortex_graph! {
///     /// A smoothed level of a block of samples, and its peak.
///     pub pipeline Level {
///         input samples: Vec<f32>;
///         state _smooth: f32 = 0.0;
///
///         mode FULL_LEVEL { wr: 1.0, wp: 0.5 }
///         mode CHEAP      { wr: 1.0, wp: 0.0 }
///
///         #[compilable] #[weight_key = "wr"] node rms = rms(samples);
///         #[compilable] #[weight_key = "wp"] node peak = peak(samples);
///         #[compilable] node level = mix(rms, peak, weights);
///         node smooth: f32 = smooth_into(level, _smooth, 0.5, &mut smooth)?;
///         smooth -> _smooth;
///
///         output smooth: f32, #[optional] peak: f32;
///     }
/// }
///
/// fn rms(s: &[f32]) -> f32 {
///     (s.iter().map(|v| v * v).sum::<f32>() / s.len().max(1) as f32).sqrt()
/// }
///
/// fn peak(s: &[f32]) -> f32 {
///     s.iter().fold(0.0, |m, v| m.max(v.abs()))
/// }
///
/// /// A `#[weight_key]` node's value arrives as an `Option`: `None` when the
/// /// mode's weight for it is zero and its plan does not run it.
/// fn mix(rms: Option<&f32>, peak: Option<&f32>, w: &Weights) -> f32 {
///     let part = |v: Option<&f32>, k: &str| v.map_or(0.0, |v| v * w.get_or_zero(k) as f32);
///     part(rms, "wr") + part(peak, "wp")
/// }
///
/// /// Fills the pipeline's buffer `out`; `?` in the node turns the error into
/// /// `PipelineError::Node`.
/// fn smooth_into(level: &f32, prev: &f32, alpha: f32, out: &mut f32) -> Result<(), String> {
///     if !level.is_finite() {
///         return Err(format!("level {level} is not finite"));
///     }
///     *out = alpha * level + (1.0 - alpha) * prev;
///     Ok(())
/// }
///
/// fn main() -> Result<(), cortex::PipelineError> {
///     let mut p = Level::new();
///     let block = vec![0.5, -0.5, 1.0, -1.0];
///     let full = p.run(LevelMode::FullLevel, &block)?;
///     assert_eq!(full.peak, Some(1.0));
///     let cheap = p.run(LevelMode::Cheap, &block)?; // `peak` is not computed
///     assert_eq!(cheap.peak, None);
///     assert!(cheap.smooth > full.smooth); // the state carried the first level
///     assert!(p.run(LevelMode::Cheap, &vec![f32::NAN]).is_err());
///     Ok(())
/// }
/// ```
///
/// The guide (`docs/` in the repository) has the semantics of every piece
/// (`docs/semantics.md`), the full list of generated items and of
/// compile-time errors (`docs/grammar.md`) and the engines
/// (`docs/engines.md`).
#[proc_macro]
pub fn cortex_graph(input: TokenStream) -> TokenStream {
    cortex_codegen::expand(input.into()).into()
}

#[cfg(test)]
mod tests {
    /// The grammar is written once, in `src/grammar.md` (the macro's rustdoc
    /// includes it); the guide's page shows the same block.
    #[test]
    fn the_guide_shows_the_rustdoc_grammar() {
        let guide = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/grammar.md");
        let guide = std::fs::read_to_string(guide).expect("docs/grammar.md");
        assert!(
            guide.contains(include_str!("grammar.md")),
            "docs/grammar.md's grammar block differs from cortex-macros/src/grammar.md"
        );
    }
}
