use cortex::cortex_graph;

fn to_gray(f: &Vec<u8>) -> Vec<f32> { f.iter().map(|&p| p as f32).collect() }
fn blur_into(g: &Vec<f32>, out: &mut Vec<f32>) { out.clone_from(g) }

cortex_graph! {
    pipeline P {
        input frame: Vec<u8>;
        node gray = to_gray(frame);
        node soft: Vec<f32> = blur_into(gray, &mut gray);
        output soft: Vec<f32>;
    }
}

fn main() {}
