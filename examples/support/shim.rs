//! A stand-in for the `impl cortex::Pipeline` that `cortex_graph!` is about
//! to generate: wraps a generated pipeline and its mode enum in local
//! newtypes that implement the traits by forwarding to the inherent
//! methods. Delete this file (and use the pipeline types directly) once the
//! macro implements the traits itself.

/// `shim!(Wrapper, WrapperMode = Pipeline, PipelineMode, Outputs, State; a: A, b: B)`;
/// include this file with `#[macro_use] #[path = "support/shim.rs"] mod shim;`.
macro_rules! shim {
    ($wrap:ident, $wmode:ident = $inner:ty, $mode:ty, $out:ty, $state:ty; $($arg:ident : $ty:ty),+) => {
        /// The pipeline, implementing `cortex::Pipeline`.
        #[derive(Default)]
        pub struct $wrap(pub $inner);

        /// The mode enum, implementing `cortex::PipelineMode`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(transparent)]
        pub struct $wmode(pub $mode);

        impl cortex::PipelineMode for $wmode {
            // SAFETY: `$wmode` is `repr(transparent)` over `$mode`, so the
            // two slices have the same layout.
            const ALL: &'static [Self] =
                unsafe { ::core::mem::transmute::<&'static [$mode], &'static [$wmode]>(&<$mode>::ALL) };
            fn name(self) -> &'static str {
                self.0.name()
            }
            fn from_name(name: &str) -> Option<Self> {
                <$mode>::from_name(name).map($wmode)
            }
            fn plan(self) -> &'static cortex::Plan {
                self.0.plan()
            }
            fn weights(self) -> &'static cortex::Weights {
                self.0.weights()
            }
        }

        impl cortex::Pipeline for $wrap {
            type Mode = $wmode;
            type Inputs<'a> = ($(&'a $ty,)+);
            type Outputs = $out;
            type State = $state;

            fn ir() -> &'static cortex::GraphIr {
                <$inner>::ir()
            }
            fn state(&self) -> &$state {
                self.0.state()
            }
            fn reset(&mut self) {
                self.0.reset()
            }
            fn run_observed<O: cortex::Observer>(
                &mut self,
                mode: $wmode,
                observer: &mut O,
                ($($arg,)+): Self::Inputs<'_>,
            ) -> Result<$out, cortex::PipelineError> {
                self.0.run_observed(mode.0, observer, $($arg),+)
            }
            fn run_weights_observed<O: cortex::Observer>(
                &mut self,
                weights: &cortex::Weights,
                observer: &mut O,
                ($($arg,)+): Self::Inputs<'_>,
            ) -> Result<$out, cortex::PipelineError> {
                self.0.run_weights_observed(weights, observer, $($arg),+)
            }
            fn run_plan_observed<O: cortex::Observer>(
                &mut self,
                plan: &cortex::Plan,
                weights: &cortex::Weights,
                observer: &mut O,
                ($($arg,)+): Self::Inputs<'_>,
            ) -> Result<$out, cortex::PipelineError> {
                self.0.run_plan_observed(plan, weights, observer, $($arg),+)
            }
            fn pattern_plan(&mut self, pattern: u64) -> std::sync::Arc<cortex::Plan> {
                std::sync::Arc::new(match <$inner>::pattern_plan(pattern) {
                    Some(p) => p.clone(),
                    None => cortex::dce::plan_for_pattern(<$inner>::ir(), pattern, "runtime"),
                })
            }
        }
    };
}
