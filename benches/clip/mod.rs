//! The frames a bench runs on: a recorded clip's when `CORTEX_BENCH_Y4M`
//! names a Y4M file (e.g. OpenCV's `vtest.avi` converted with `ffmpeg -i
//! vtest.avi -frames:v 60 -pix_fmt yuv420p vtest.y4m`), otherwise the
//! synthetic clip's at a size of the bench's choosing.

use cortex::ops::RgbFrame;
use cortex::runner::sources::{FrameSource, SyntheticClip, Y4mSource};

/// The first `n` frames, and what they are (`path, WxH` or `synthetic
/// clip, WxH`).
pub fn frames(n: usize, synthetic: (usize, usize)) -> (Vec<RgbFrame>, String) {
    if let Ok(path) = std::env::var("CORTEX_BENCH_Y4M") {
        let file = std::fs::File::open(&path).expect("CORTEX_BENCH_Y4M opens");
        let mut src = Y4mSource::new(&path, Box::new(file)).expect("a Y4M file");
        let mut v = Vec::new();
        while let Some(f) = src.next_frame() {
            v.push(f.expect("a whole frame").image);
            if v.len() == n {
                break;
            }
        }
        let (h, w, _) = v[0].dim();
        return (v, format!("{path}, {w}x{h}"));
    }
    let (w, h) = synthetic;
    let c = SyntheticClip::new(w, h);
    (
        (0..n as u64).map(|f| c.frame(f)).collect(),
        format!("synthetic clip, {w}x{h}"),
    )
}
