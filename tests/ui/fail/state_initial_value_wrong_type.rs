use cortex::cortex_graph;
fn double(x: &f32, p: &f32) -> f32 { x * 2.0 + p }
cortex_graph! {
    pipeline P {
        input x: f32;
        state _p: f32 = "zero";
        node y = double(x, _p);
        y -> _p;
        output y: f32;
    }
}
fn main() {}
