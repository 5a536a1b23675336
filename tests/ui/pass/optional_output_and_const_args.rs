use cortex::cortex_graph;

const SCALE: f32 = 2.0;

fn to_gray(f: &Vec<u8>, gain: f32) -> Vec<f32> { f.iter().map(|&p| p as f32 * gain).collect() }
fn detail(g: &Vec<f32>, taps: &[f32]) -> Vec<f32> { g.iter().map(|v| v * taps[0]).collect() }
fn total(d: Option<&Vec<f32>>, g: &Vec<f32>, bias: &Vec<f32>) -> f32 {
    d.map_or(0.0, |d| d.iter().sum()) + g.iter().sum::<f32>() + bias[0]
}

cortex_graph! {
    pipeline Opt {
        input frame: Vec<u8>;
        input bias: Vec<f32>;
        mode FULL { wd: 1.0 }
        mode LITE { wd: 0.0 }
        node gray = to_gray(frame, { SCALE });
        #[compilable] #[weight_key = "wd"] node detail = detail(gray, &[0.5, 0.25]);
        node total = total(detail, gray, bias);
        output total: f32;
        #[optional] output detail: Vec<f32>;
    }
}

fn main() {
    let mut p = Opt::new();
    let full = p.run(OptMode::Full, &vec![1, 2], &vec![10.0]).unwrap();
    assert_eq!(full.detail, Some(vec![1.0, 2.0]));
    assert_eq!(full.total, 3.0 + 6.0 + 10.0);
    let lite = p.run(OptMode::Lite, &vec![1, 2], &vec![10.0]).unwrap();
    assert_eq!(lite.detail, None);
    assert_eq!(lite.total, 6.0 + 10.0);
}
