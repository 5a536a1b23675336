// An invalid pipeline (here: an output without its type) still emits every
// generated item, so code using them reports nothing but the one real error.
use cortex::{cortex_graph, CompiledPipeline, Pipeline, prelude::PipelineMode, Weights};

fn src(x: &f32) -> f32 { *x }

cortex_graph! {
    pipeline P {
        input x: f32;
        state s: f32 = 0.0;
        node a = src(x);
        a -> s;
        node out = src(s);
        mode FAST {}
        output out, a: f32;
    }
}

fn generic<T: CompiledPipeline>() -> usize { T::ir().nodes.len() }

fn main() {
    let mut p = P::new();
    let _ = P::default();
    let _: &PState = p.state();
    p.reset();
    let _ = P::IR;
    let _ = P::MODE_PLANS;
    let _ = P::ir();
    let _ = PMode::ALL;
    let _: &'static str = PMode::Fast.name();
    const _NAME: &str = PMode::Fast.name();
    let _ = PMode::from_name("FAST");
    let _ = PMode::Fast.plan();
    let _ = PMode::Fast.weights();
    let _ = <PMode as PipelineMode>::ALL;
    let _ = p.pattern_plan(0);
    let w = Weights::new();
    let o: Result<POutputs, cortex::PipelineError> = p.run(PMode::Fast, &1.0);
    let _ = o.map(|o| (o.out, o.a));
    let _ = p.run_with_fresh(&mut cortex::Run::mode(PMode::Fast).observed(&mut cortex::prelude::NoopObserver), &1.0);
    let _ = p.run_with_fresh(&mut cortex::Run::weights(&w), &1.0);
    let plan = p.pattern_plan(0);
    let _ = p.run_with_fresh(&mut cortex::Run::plan(&plan, &w), &1.0);
    let _ = p.run_with(&mut cortex::Run::mode(PMode::Fast), &1.0, &mut POutputs::default());
    let mut o = POutputs::default();
    let _ = p.run_into(PMode::Fast, &1.0, &mut o);
    let _ = generic::<P>();
    let _ = Pipeline::run(&mut p, PMode::Fast, (&1.0,));
}
