use cortex::cortex_graph;

fn src(x: &f32) -> f32 { *x }

cortex_graph! {
    pipeline P {
        input x: f32;
        node a = src(x);
        mode ONE {}
        mode TWO {}
        output a: u8;
    }
}

fn main() {}
