use cortex::cortex_graph;

fn to_gray(f: &Vec<u8>) -> Vec<f32> { f.iter().map(|&p| p as f32).collect() }
fn accumulate(g: &Vec<f32>, acc: &Vec<f32>) -> Vec<f32> { g.iter().zip(acc).map(|(a, b)| a + b).collect() }

cortex_graph! {
    pipeline P {
        input frame: Vec<u8>;
        state _acc: Vec<f32> = Vec::new();
        node gray = to_gray(frame);
        node acc = accumulate(gray, _acc);
        acc -> _acc;
        output gray: Vec<f32>;
    }
}

fn main() {}
