// Raw identifiers are ordinary DSL names: an input, a node, a mode and an
// output may be called `r#in`, `r#type`, `r#loop`.
use cortex::cortex_graph;

#[path = "../differential.rs"]
mod differential;

fn id(x: &f32) -> f32 { *x }
fn twice(x: Option<&f32>) -> f32 { x.map_or(0.0, |v| 2.0 * v) }

cortex_graph! {
    pipeline P {
        input r#in: f32;
        #[weight_key = "w"] node r#type = id(r#in);
        node r#loop = twice(r#type);
        mode r#fast { w: 1.0 }
        output r#loop: f32;
    }
}

fn main() {
    differential::modes_match_plans::<P, _>(&[3.0f32, -1.0]);
    let mut p = P::new();
    let out = p.run(PMode::Fast, &3.0).unwrap();
    assert_eq!(out.r#loop, 6.0);
    assert_eq!(PMode::Fast.name(), "fast");
    assert_eq!(P::ir().nodes[0].name, "type");
}
