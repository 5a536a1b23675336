use cortex::cortex_graph;
use cortex::stream::StreamOptions;

fn double(x: &f32) -> f32 { x * 2.0 }

cortex_graph! {
    pipeline P {
        input x: f32;
        node y = double(x);
        output y: f32;
    }
}

fn main() {
    let mut p = P::new();
    let _ = p.run_stream(PMode::Full, vec![(1.0f32,)], &StreamOptions::default(), |_| std::ops::ControlFlow::Continue(()));
}
