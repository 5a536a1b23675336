//! Lesson 1 — a first pipeline: an input, three nodes, two modes, and a
//! zero weight that removes a node from a mode's plan at compile time.
//! Runs on three frames of the built-in synthetic clip and prints what
//! each mode computed.
//!
//! ```text
//! cargo run --release --example first
//! ```
//!
//! Next: `examples/state_and_modes.rs`.

use cortex::cortex_graph;
use cortex::ops::{self, BlurReport, GrayImage, RgbFrame};

cortex_graph! {
    /// How sharp is a frame, and how bright? `FAST` skips the brightness.
    pub pipeline FirstLook {
        input frame: RgbFrame;

        mode FULL_LOOK { wb: 1.0 }
        mode FAST      { wb: 0.0 }

        node gray = ops::to_gray(frame)?;
        node sharpness = ops::blur_detector(gray)?;
        #[weight_key = "wb"] node brightness = mean_level(gray);

        output sharpness: BlurReport, #[optional] brightness: f64;
    }
}

/// Mean gray level of a frame, 0–255.
fn mean_level(gray: &GrayImage) -> f64 {
    gray.iter().map(|&v| f64::from(v)).sum::<f64>() / gray.len().max(1) as f64
}

fn main() -> Result<(), cortex::PipelineError> {
    let mut look = FirstLook::new();
    for frame in cortex::l2::demo_clip(3, 160, 120) {
        let full = look.run(FirstLookMode::FullLook, &frame)?;
        let fast = look.run(FirstLookMode::Fast, &frame)?; // never runs `brightness`
        assert_eq!(full.sharpness, fast.sharpness);
        assert!(full.brightness.is_some() && fast.brightness.is_none());
        println!("{:.1} {:?}", full.sharpness.variance, full.brightness);
    }
    Ok(())
}
