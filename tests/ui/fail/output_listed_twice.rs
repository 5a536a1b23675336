use cortex::cortex_graph;
fn double(x: &f32) -> f32 { x * 2.0 }
cortex_graph! {
    pipeline P {
        input x: f32;
        node y = double(x);
        output y: f32, y: f32;
    }
}
fn main() {}
