use cortex::cortex_graph;

fn id(x: Option<&f32>) -> f32 { x.copied().unwrap_or(0.0) }
fn src(x: &f32) -> f32 { *x }

cortex_graph! {
    pipeline P {
        input x: f32;
        #[weight_key = "w"] node a = src(x);
        node b = id(a);
        mode SELF { w: 1.0 }
        mode ON { w: 1.0 }
        output b: f32;
    }
}

fn main() {
    // The placeholder enum keeps the valid modes, so this still type-checks.
    let _ = PMode::On;
}
