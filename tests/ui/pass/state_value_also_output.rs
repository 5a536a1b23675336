use cortex::cortex_graph;

#[path = "../differential.rs"]
mod differential;

fn to_gray(f: &Vec<u8>) -> Vec<f32> { f.iter().map(|&p| p as f32).collect() }
fn delta(g: &Vec<f32>, prev: &Vec<f32>) -> f32 {
    if prev.len() != g.len() { return 0.0; }
    g.iter().zip(prev).map(|(a, b)| a - b).sum()
}

cortex_graph! {
    pipeline Keep {
        input frame: Vec<u8>;
        state _prev: Vec<f32> = Vec::new();
        node gray = to_gray(frame);
        node delta = delta(gray, _prev);
        gray -> _prev;
        output gray: Vec<f32>, delta: f32;
    }
}

fn main() {
    differential::modes_match_plans::<Keep, _>(&[vec![1u8, 1], vec![2, 3], vec![4, 4]]);
    let mut p = Keep::new();
    let a = p.run(KeepMode::Full, &vec![1, 1]).unwrap();
    assert_eq!(a.gray, vec![1.0, 1.0]);
    assert_eq!(a.delta, 0.0);
    let b = p.run(KeepMode::Full, &vec![3, 4]).unwrap();
    assert_eq!(b.delta, 5.0);
    assert_eq!(p.state()._prev, vec![3.0, 4.0]);
}
