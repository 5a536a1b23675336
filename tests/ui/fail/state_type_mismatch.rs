use cortex::cortex_graph;

fn src(x: &f32) -> f32 { *x }
fn add(a: &f32, b: &u8) -> f32 { a + *b as f32 }

cortex_graph! {
    pipeline P {
        input x: f32;
        state last: u8 = 0;
        node a = src(x);
        node sum = add(a, last);
        a -> last;
        mode ONE {}
        mode TWO {}
        output sum: f32;
    }
}

fn main() {}
