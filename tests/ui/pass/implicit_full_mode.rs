use cortex::cortex_graph;

#[path = "../differential.rs"]
mod differential;

fn to_gray(f: &Vec<u8>) -> Vec<f32> { f.iter().map(|&p| p as f32).collect() }
fn mean(g: &Vec<f32>) -> f32 { g.iter().sum::<f32>() / g.len().max(1) as f32 }

cortex_graph! {
    /// A pipeline without modes gets one: `FULL`.
    pub pipeline Tiny {
        input frame: Vec<u8>;
        node gray = to_gray(frame);
        node level = mean(gray);
        output level: f32;
    }
}

fn main() {
    differential::modes_match_plans::<Tiny, _>(&[vec![2u8, 4], vec![0, 255, 7]]);
    let mut p = Tiny::new();
    let out = p.run(TinyMode::Full, &vec![2, 4]).unwrap();
    assert_eq!(out.level, 3.0);
    assert_eq!(TinyMode::Full.name(), "FULL");
    assert_eq!(Tiny::ir().nodes.len(), 2);
}
