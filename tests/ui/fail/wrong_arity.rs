use cortex::cortex_graph;

fn src(x: &f32) -> f32 { *x }
fn add(a: &f32, b: &f32) -> f32 { a + b }

cortex_graph! {
    pipeline P {
        input x: f32;
        node base = src(x);
        node sum = add(base);
        output sum: f32;
    }
}

fn main() {}
