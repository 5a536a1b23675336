// A constant passed the documented way, as a path through `self::`, in a
// `#[parallel]` pipeline whose node also reads a state: every run form
// compiles it as written (the pipelined run's second stage included) and
// the engines agree.
use std::ops::ControlFlow;

use cortex::cortex_graph;
use cortex::stream::{Overflow, StreamOptions};
use cortex::Run;

fn add(x: &f64, t: f64) -> f64 { x + t }
fn gate(a: &f64, prev: &f64, t: f64) -> f64 { if (a - prev).abs() > t { *a } else { *prev } }

const THRESHOLD: f64 = 10.0;
cortex_graph! {
    #[parallel]
    pub pipeline P {
        input x: f64;
        state _prev: f64 = 0.0;
        node a = add(x, self::THRESHOLD);
        node g = gate(a, _prev, self::THRESHOLD);
        g -> _prev;
        output a: f64, g: f64;
    }
}

fn main() {
    let xs = [1.0, 25.0, 30.0, 5.0, -40.0, -35.0, 60.0];
    let mut seq = P::new();
    let want: Vec<(f64, f64)> = xs
        .iter()
        .map(|x| seq.run(PMode::Full, x).map(|o| (o.a, o.g)).unwrap())
        .collect();
    // By hand: `a = x + 10`, `g` moves to `a` when it is more than 10 away.
    assert_eq!(
        want,
        [(11.0, 11.0), (35.0, 35.0), (40.0, 35.0), (15.0, 15.0), (-30.0, -30.0), (-25.0, -30.0), (70.0, 70.0)]
    );
    let mut par = P::new();
    let mut out = POutputs::default();
    let mut parallel = Run::mode(PMode::Full).parallel();
    let got: Vec<(f64, f64)> = xs
        .iter()
        .map(|x| par.run_with(&mut parallel, x, &mut out).map(|()| (out.a, out.g)).unwrap())
        .collect();
    assert_eq!(got, want);
    let mut piped = P::new();
    let mut got = Vec::new();
    let opts = StreamOptions { in_flight: 2, queue: 1, overflow: Overflow::Block };
    piped
        .run_stream(PMode::Full, xs.iter().map(|&x| (x,)), &opts, |r| {
            let o = r.result.unwrap();
            got.push((o.a, o.g));
            ControlFlow::Continue(())
        })
        .unwrap();
    assert_eq!(got, want);
}
