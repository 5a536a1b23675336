// A constant written as a block (`{ None }`, the escape for a bare name) is
// passed as its expression: no `unused_braces` warning for `cargo fix` to
// "fix" into a dangling edge.
#![deny(unused_braces)]
use cortex::cortex_graph;

#[path = "../differential.rs"]
mod differential;

fn pick(x: &f32, fallback: Option<f32>) -> f32 { fallback.unwrap_or(*x) }

cortex_graph! {
    pipeline P {
        input x: f32;
        node a = pick(x, { None });
        node b = pick(a, Option::None);
        output b: f32;
    }
}

fn main() {
    differential::modes_match_plans::<P, _>(&[1.5f32, -2.0, 0.0]);
    assert_eq!(P::new().run(PMode::Full, &1.5).unwrap().b, 1.5);
}
