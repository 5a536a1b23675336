//! Lesson 2 — state and modes. A motion alarm keeps two states: last
//! frame's gray image (`state _prev`, written by `gray -> _prev;`) and a
//! hold-off counter, so one burst of movement raises one alarm instead of
//! one per frame. Two modes give the weight keys `wm` and `wb`:
//! `SENSITIVE` also reacts to sudden brightness changes (lights switched
//! on); `MOTION_ONLY` gives `wb` a zero weight, so its plan does not run the
//! brightness node at all, and `combine` receives `None` for it.
//!
//! ```text
//! cargo run --release --example state_and_modes                 # tour on the synthetic clip
//! cargo run --release --example state_and_modes -- run --json --mode MOTION_ONLY
//! cargo run --release --example state_and_modes -- plan --mode MOTION_ONLY
//! ```
//!
//! Next: `examples/buffers_and_parallel.rs`.

use std::process::ExitCode;

use cortex::cortex_graph;
use cortex::ops::{self, GrayImage, RgbFrame};
use cortex::runner::{App, Record};
use cortex::Weights;

/// Score above which a frame raises the alarm.
pub const ALARM_LEVEL: f32 = 0.004;
/// Frames after an alarm during which no new alarm is raised.
pub const HOLD_OFF: u32 = 8;

/// The alarm's state after a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Alarm {
    /// This frame raised the alarm.
    pub raised: bool,
    /// Frames left before a new alarm may be raised.
    pub hold_off: u32,
}

cortex_graph! {
    /// A motion alarm: mean absolute frame difference (and, in `SENSITIVE`,
    /// the jump in mean brightness) against a threshold, with a hold-off.
    pub pipeline MotionAlarm {
        input frame: RgbFrame;
        state _prev: GrayImage = GrayImage::zeros((0, 0));
        state _alarm: Alarm = Alarm::default();

        mode SENSITIVE   { wm: 1.0, wb: 1.0 }
        mode MOTION_ONLY { wm: 1.0, wb: 0.0 }

        #[compilable] node gray = ops::to_gray(frame)?;
        #[compilable] #[weight_key = "wm"] node motion = motion_level(gray, _prev);
        #[compilable] #[weight_key = "wb"] node brightness = brightness_jump(gray, _prev);
        #[compilable] node score = combine(motion, brightness, weights);
        #[compilable] node alarm = decide(score, _alarm);
        gray -> _prev;
        alarm -> _alarm;

        output score: f32, alarm: Alarm;
    }
}

/// Mean absolute difference to the previous frame, in [0, 1]; 0 when there
/// is no comparable previous frame.
pub fn motion_level(gray: &GrayImage, prev: &GrayImage) -> f32 {
    if prev.dim() != gray.dim() || gray.is_empty() {
        return 0.0;
    }
    let sum: u64 = gray
        .iter()
        .zip(prev.iter())
        .map(|(&a, &b)| u64::from(a.abs_diff(b)))
        .sum();
    sum as f32 / (gray.len() as f32 * 255.0)
}

/// Change of mean brightness against the previous frame, in [0, 1].
pub fn brightness_jump(gray: &GrayImage, prev: &GrayImage) -> f32 {
    if prev.dim() != gray.dim() || gray.is_empty() {
        return 0.0;
    }
    let mean = |g: &GrayImage| g.iter().map(|&v| f64::from(v)).sum::<f64>() / g.len() as f64;
    ((mean(gray) - mean(prev)).abs() / 255.0) as f32
}

/// The weighted sum of the levels that run.
pub fn combine(motion: Option<&f32>, brightness: Option<&f32>, w: &Weights) -> f32 {
    let part = |v: Option<&f32>, k: &str| v.map_or(0.0, |v| v * w.get_or_zero(k) as f32);
    part(motion, "wm") + part(brightness, "wb")
}

/// Raises the alarm when the score passes [`ALARM_LEVEL`] and no hold-off
/// is running; counts the hold-off down otherwise.
pub fn decide(score: &f32, prev: &Alarm) -> Alarm {
    if prev.hold_off == 0 && *score > ALARM_LEVEL {
        Alarm {
            raised: true,
            hold_off: HOLD_OFF,
        }
    } else {
        Alarm {
            raised: false,
            hold_off: prev.hold_off.saturating_sub(1),
        }
    }
}

/// The program.
pub fn app() -> App<MotionAlarm> {
    App::<MotionAlarm>::new("state_and_modes", |out: &MotionAlarmOutputs| {
        Record::new()
            .field("score", f64::from(out.score))
            .field("alarm", out.alarm.raised)
            .field("hold_off", out.alarm.hold_off)
    })
    .about("A motion alarm with a hold-off counter")
}

#[allow(dead_code)]
fn main() -> ExitCode {
    app().main()
}
