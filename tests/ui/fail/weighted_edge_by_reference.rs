// `b` has `#[weight_key]`, so `sum` receives it as `Option<&f32>`; taking
// `&f32` is one error, at the argument, whatever the number of modes.
use cortex::cortex_graph;

fn src(x: &f32) -> f32 { *x }
fn add(a: &f32, b: &f32) -> f32 { a + b }

cortex_graph! {
    pipeline P {
        input x: f32;
        node a = src(x);
        #[weight_key = "wb"] node b = src(x);
        node sum = add(a, b);
        mode ON { wb: 1.0 }
        mode OFF { wb: 0.0 }
        mode HALF { wb: 0.5 }
        output sum: f32;
    }
}

fn main() {}
