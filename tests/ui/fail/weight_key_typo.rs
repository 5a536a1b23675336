// A misspelled `#[weight_key]` is one error, at the annotation, suggesting
// the key the modes give.
use cortex::cortex_graph;

fn src(x: &f32) -> f32 { *x }
fn mix(a: Option<&f32>, b: Option<&f32>) -> f32 { a.copied().unwrap_or(0.0) + b.copied().unwrap_or(0.0) }

cortex_graph! {
    pipeline P {
        input x: f32;
        #[weight_key = "wa"] node a = src(x);
        #[weight_key = "wbb"] node b = src(x);
        node out = mix(a, b);
        mode ONE { wa: 1.0, wb: 0.5 }
        mode TWO { wa: 0.5, wb: 1.0 }
        output out: f32;
    }
}

fn main() {}
