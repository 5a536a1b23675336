//! The benchmark pipeline shared by `pipeline.rs` (criterion, wall time) and
//! `pipeline_count.rs` (a fixed loop to count instructions under callgrind):
//! 20 cheap nodes in `cortex_graph!`, and the same calls written by hand.

use cortex::cortex_graph;

/// A vector of samples.
pub type V = Vec<f32>;

pub fn load(x: &V) -> V {
    x.clone()
}
pub fn scale(a: &V, k: f32) -> V {
    a.iter().map(|v| v * k).collect()
}
pub fn add(a: &V, b: &V) -> V {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}
pub fn mul(a: &V, b: &V) -> V {
    a.iter().zip(b).map(|(x, y)| x * y).collect()
}
pub fn blend(a: Option<&V>, b: Option<&V>, c: &V) -> V {
    let mut out = c.clone();
    for m in [a, b].into_iter().flatten() {
        out.iter_mut().zip(m).for_each(|(o, v)| *o += v);
    }
    out
}
pub fn total(a: &V) -> f32 {
    a.iter().sum()
}

cortex_graph! {
    /// 20 cheap nodes, a state and two weighted nodes.
    pub pipeline Chain {
        input x: V;
        state _prev: V = Vec::new();
        mode FULL { wa: 1.0, wb: 1.0 }
        node n0 = load(x);
        node n1 = scale(n0, 1.01);
        node n2 = add(n0, n1);
        node n3 = scale(n2, 0.5);
        node n4 = mul(n3, n1);
        node n5 = add(n4, n2);
        node n6 = scale(n5, 0.25);
        node n7 = add(n6, n3);
        node n8 = mul(n7, n7);
        node n9 = scale(n8, 0.1);
        node n10 = add(n9, n5);
        node n11 = scale(n10, 0.9);
        node n12 = add(n11, n4);
        node n13 = mul(n12, n6);
        node n14 = scale(n13, 1.1);
        #[weight_key = "wa"] node n15 = add(n14, n10);
        #[weight_key = "wb"] node n16 = scale(n14, 0.3);
        node n17 = blend(n15, n16, n12);
        node n18 = add(n17, _prev);
        node n19 = total(n18);
        n17 -> _prev;
        output n19: f32;
    }
}

/// The same calls, written by hand, with the state kept the same way.
pub struct Hand {
    /// Last frame's `n17`.
    pub prev: V,
}

impl Hand {
    /// One frame.
    pub fn run(&mut self, x: &V) -> f32 {
        let n0 = load(x);
        let n1 = scale(&n0, 1.01);
        let n2 = add(&n0, &n1);
        let n3 = scale(&n2, 0.5);
        let n4 = mul(&n3, &n1);
        let n5 = add(&n4, &n2);
        let n6 = scale(&n5, 0.25);
        let n7 = add(&n6, &n3);
        let n8 = mul(&n7, &n7);
        let n9 = scale(&n8, 0.1);
        let n10 = add(&n9, &n5);
        let n11 = scale(&n10, 0.9);
        let n12 = add(&n11, &n4);
        let n13 = mul(&n12, &n6);
        let n14 = scale(&n13, 1.1);
        let n15 = add(&n14, &n10);
        let n16 = scale(&n14, 0.3);
        let n17 = blend(Some(&n15), Some(&n16), &n12);
        let n18 = add(&n17, &self.prev);
        let n19 = total(&n18);
        self.prev = n17;
        n19
    }
}

/// The benchmark input: 256 samples of a sine.
pub fn input() -> V {
    (0..256).map(|i| (i as f32 * 0.37).sin()).collect()
}
