// A user's own pipeline driven by generic code through `cortex::Pipeline`:
// the code below knows nothing about `Levels` but its trait.
use cortex::prelude::{PipelineMode, Profiler};
use cortex::{cortex_graph, CompiledPipeline, Pipeline, Run, Weights};

#[path = "../differential.rs"]
mod differential;

fn rms(x: &Vec<f32>) -> f32 { (x.iter().map(|v| v * v).sum::<f32>() / x.len() as f32).sqrt() }
fn peak(x: &Vec<f32>) -> f32 { x.iter().fold(0.0f32, |m, v| m.max(v.abs())) }
fn mix(a: Option<&f32>, b: Option<&f32>, w: &Weights) -> f32 {
    a.map_or(0.0, |a| a * w.get_or_zero("wr") as f32) + b.map_or(0.0, |b| b * w.get_or_zero("wp") as f32)
}

cortex_graph! {
    pipeline Levels {
        input samples: Vec<f32>;
        mode BOTH { wr: 0.5, wp: 0.5 }
        mode RMS_ONLY { wr: 1.0, wp: 0.0 }
        #[weight_key = "wr"] node r = rms(samples);
        #[weight_key = "wp"] node p = peak(samples);
        node level = mix(r, p, weights);
        output level: f32;
    }
}

/// Runs every mode of any single-input pipeline on the same input and
/// returns the outputs with the mode names.
fn every_mode<'a, P, T: 'a>(input: &'a T) -> Vec<(&'static str, P::Outputs)>
where
    P: CompiledPipeline + Pipeline<Inputs<'a> = (&'a T,)>,
{
    let mut out = Vec::new();
    for &mode in P::Mode::ALL {
        let mut p = P::default();
        let mut profiler = Profiler::new(P::ir());
        out.push((mode.name(), p.run_with_fresh(&mut Run::mode(mode).observed(&mut profiler), (input,)).unwrap()));
        assert_eq!(profiler.frame_stats().frames, 1);
    }
    out
}

fn main() {
    differential::modes_match_plans::<Levels, _>(&[vec![3.0f32, -4.0], vec![0.5, 0.25, -1.0]]);
    let samples = vec![3.0f32, -4.0];
    let results = every_mode::<Levels, _>(&samples);
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].0, "BOTH");
    let rms = (12.5f32).sqrt();
    assert_eq!(results[0].1.level, 0.5 * rms + 0.5 * 4.0);
    assert_eq!(results[1].1.level, rms);
    // Run-time weights through the trait.
    let mut p = Levels::default();
    let w = Weights::new().with("wr", 0.0).with("wp", 2.0);
    assert_eq!(Pipeline::run_with_fresh(&mut p, &mut Run::weights(&w), (&samples,)).unwrap().level, 8.0);
    assert_eq!(Levels::ir().name, "Levels");
}
