use cortex::cortex_graph;
use cortex::Weights;

fn double(x: &f32) -> f32 { x * 2.0 }

cortex_graph! {
    pipeline P {
        input x: f32;
        mode FULL { w: 1.0 }
        #[weight_key = "w"] node y = double(x);
        output y: f32;
    }
}

fn main() {
    let mut p = P::new();
    let _ = p.run_weights_parallel(&Weights::new().with("w", 1.0), &1.0f32);
}
