use cortex::cortex_graph;

fn to_gray(f: &Vec<u8>) -> Vec<f32> { f.iter().map(|&p| p as f32).collect() }
fn text(g: &Vec<f32>) -> Vec<f32> { g.clone() }
fn mean(g: &Vec<f32>) -> f32 { g.iter().sum::<f32>() / g.len().max(1) as f32 }
fn fuse(a: Option<&Vec<f32>>, b: &Vec<f32>) -> f32 { a.map_or(0.0, |a| a[0]) + b[0] }
fn cut(g: &Vec<f32>) -> bool { g.is_empty() }

cortex_graph! {
    pipeline P {
        input frame: Vec<u8>;
        mode SAVE { wt: 1.0 } where text every 4 or empty;
        node gray = to_gray(frame);
        #[weight_key = "wt"] node text: Vec<f32> = text(gray);
        node empty = cut(text);
        node out = fuse(text, gray);
        output out: f32, empty: bool;
    }
}

fn main() {}
