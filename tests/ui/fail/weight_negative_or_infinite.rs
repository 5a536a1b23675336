use cortex::cortex_graph;

fn to_gray(f: &Vec<u8>) -> Vec<f32> { f.iter().map(|&p| p as f32).collect() }
fn blur(g: &Vec<f32>) -> Vec<f32> { g.clone() }
fn diff(a: &Vec<f32>, b: &Vec<f32>) -> f32 { a.iter().zip(b).map(|(x, y)| x - y).sum() }
fn fuse(a: Option<&Vec<f32>>, b: &Vec<f32>) -> f32 { a.map_or(0.0, |a| a[0]) + b[0] }

cortex_graph! {
    pipeline P {
        input frame: Vec<u8>;
        mode A { ws: -0.5 }
        mode B { ws: 1e999 }
        node gray = to_gray(frame);
        #[weight_key = "ws"] node soft = blur(gray);
        node out = fuse(soft, gray);
        output out: f32;
    }
}

fn main() {}
