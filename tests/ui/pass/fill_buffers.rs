//! Nodes filling buffers the pipeline owns (`node v: T = f(…, &mut v)`),
//! typed value nodes, a double-buffered state, buffers shared by liveness,
//! and `#[parallel]` with its parallel and pipelined runs.

use std::ops::ControlFlow;

use cortex::cortex_graph;
use cortex::stream::StreamOptions;
use cortex::Run;

#[path = "../differential.rs"]
mod differential;

fn scale_into(x: &Vec<f32>, k: f32, out: &mut Vec<f32>) {
    out.clear();
    out.extend(x.iter().map(|v| v * k));
}

fn sum_into(a: &Vec<f32>, b: Option<&Vec<f32>>, out: &mut Vec<f32>) -> Result<(), String> {
    out.clear();
    match b {
        Some(b) if b.len() != a.len() => Err(format!("{} vs {}", a.len(), b.len())),
        Some(b) => {
            out.extend(a.iter().zip(b).map(|(x, y)| x + y));
            Ok(())
        }
        None => {
            out.extend_from_slice(a);
            Ok(())
        }
    }
}

fn total(v: &Vec<f32>) -> f32 {
    v.iter().sum()
}

cortex_graph! {
    #[parallel]
    pipeline Filled {
        input x: Vec<f32>;
        state _prev: Vec<f32> = Vec::new();
        mode FULL { w: 1.0 }
        mode LEAN { w: 0.0 }
        node a: Vec<f32> = scale_into(x, 2.0, &mut a);
        #[weight_key = "w"] node b: Vec<f32> = scale_into(a, 0.5, &mut b);
        node c: Vec<f32> = sum_into(a, b, &mut c)?;
        node d: f32 = total(c);
        node e: Vec<f32> = scale_into(_prev, 1.0, &mut e);
        a -> _prev;
        output c: Vec<f32>, d: f32, e: Vec<f32>;
    }
}

fn main() {
    let frames: Vec<Vec<f32>> = (0..6).map(|i| (0..4 + i % 2).map(|v| v as f32 + i as f32).collect()).collect();
    differential::modes_match_plans::<Filled, _>(&frames);

    let mut p = Filled::new();
    let mut out = p.run(FilledMode::Full, &frames[0]).unwrap();
    p.run_into(FilledMode::Lean, &frames[1], &mut out).unwrap();
    assert_eq!(out.e, frames[0].iter().map(|v| v * 2.0).collect::<Vec<f32>>());
    let mut par = FilledOutputs::default();
    Filled::new().run_with(&mut Run::mode(FilledMode::Full).parallel(), &frames[2], &mut par).unwrap();
    assert_eq!(par, Filled::new().run(FilledMode::Full, &frames[2]).unwrap());
    let mut seen = 0;
    Filled::new()
        .run_stream(FilledMode::Full, frames.iter().cloned().map(|f| (f,)), &StreamOptions::default(), |r| {
            assert!(r.result.is_ok());
            seen += 1;
            ControlFlow::Continue(())
        })
        .unwrap();
    assert_eq!(seen, frames.len());
    assert!(!p.buffer_bytes().is_empty());
}
