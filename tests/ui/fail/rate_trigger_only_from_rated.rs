// A trigger read by nothing but its rate, computed from the rated node: the
// one error says why it cannot decide (not that the node is unused).
use cortex::cortex_graph;

fn to_gray(f: &Vec<u8>) -> Vec<f32> { f.iter().map(|&p| p as f32).collect() }
fn text(g: &Vec<f32>) -> Vec<f32> { g.clone() }
fn fuse(a: &Vec<f32>, b: &Vec<f32>) -> f32 { a[0] + b[0] }
fn cut(g: &Vec<f32>) -> bool { g.is_empty() }

cortex_graph! {
    pipeline P {
        input frame: Vec<u8>;
        mode SAVE { } where text every 4 or empty;
        node gray = to_gray(frame);
        node text: Vec<f32> = text(gray);
        node empty = cut(text);
        node out = fuse(text, gray);
        output out: f32;
    }
}

fn main() {}
