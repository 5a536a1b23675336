// A malformed mode and a malformed output item: the syntax errors only, and
// the placeholder items keep the well-formed outputs and `ALL`.
use cortex::cortex_graph;

fn src(x: &f32) -> f32 { *x }

cortex_graph! {
    pipeline P {
        input x: f32;
        node a = src(x);
        node b = src(a);
        mode _ { }
        output a: f32, b f32;
    }
}

fn main() {
    let _ = PMode::ALL;
    let _ = P::new().run(PMode::Full, &1.0).map(|o| o.a);
}
