//! `run --encode FILE`: the input re-encoded by FFmpeg (feature `ffmpeg`),
//! each frame carrying the pipeline's regions of interest, or its per-block
//! quantiser-offset map, as `AVRegionOfInterest` side data — the interface
//! libx264, libx265 and libvpx read to spend more bits where they matter.
//!
//! `--roi regions`: a region of relative score `s` (1 for the strongest)
//! gets the quantiser offset `-strength × s` (FFmpeg's scale: −1 … 1 of the
//! codec's range; x264 and x265 multiply it by 51 QP, libvpx by 63 of its
//! `delta_q`), most important region first, as FFmpeg expects. `--roi map`:
//! the map's blocks as rectangles the codec reads back into the same
//! per-block offsets ([`blocks`]). The settings ROI needs are set for every
//! `--roi`, so the encodes differ only by the side data: adaptive
//! quantisation on for x264 (x265's default has it on); for libvpx,
//! real-time deadline, `cpu-used` 5 and `aq-mode` 0 (libvpx ignores the
//! regions otherwise).

pub(crate) mod blocks;
#[cfg(feature = "ffmpeg")]
mod ffmpeg;

use std::path::PathBuf;

use cortex_vision::ops::qp_map::QpMap;
use cortex_vision::ops::roi_regions::Region;

use crate::cli::{RoiSwitch, RunArgs};
use crate::error::RunnerError;
use crate::sources::Frame;

/// The encoders whose FFmpeg wrappers read `AVRegionOfInterest`.
pub(crate) const ROI_ENCODERS: [&str; 4] = ["libx264", "libx265", "libvpx-vp9", "libvpx"];

/// What an encode wrote.
#[derive(Debug, Clone)]
pub(crate) struct EncodeReport {
    pub(crate) path: PathBuf,
    pub(crate) codec: String,
    pub(crate) roi: RoiSwitch,
    pub(crate) frames: u64,
    pub(crate) bytes: u64,
    pub(crate) seconds: f64,
    /// `--roi map`: rectangles sent over all frames, and those left out
    /// past [`blocks::MAX_RECTS`].
    pub(crate) rects: u64,
    pub(crate) dropped: u64,
}

/// What one frame carries to the encoder.
// Without FFmpeg there is no encoder to read the variants' data (the
// command is refused before the first frame).
#[cfg_attr(not(feature = "ffmpeg"), allow(dead_code))]
#[derive(Debug, Clone, Copy)]
pub(crate) enum FrameRoi<'a> {
    /// No side data.
    Nothing,
    /// The regions, most important first.
    Regions(&'a [Region]),
    /// The per-block offset map.
    Map(&'a QpMap),
}

impl EncodeReport {
    /// One line for the run's summary.
    pub(crate) fn line(&self) -> String {
        let kbps = if self.seconds > 0.0 {
            self.bytes as f64 * 8.0 / self.seconds / 1e3
        } else {
            0.0
        };
        let mut line = format!(
            "{}: {} frames encoded with {} (ROI {}), {} bytes, {kbps:.1} kbit/s",
            self.path.display(),
            self.frames,
            self.codec,
            self.roi.name(),
            self.bytes
        );
        if self.roi == RoiSwitch::Map && self.frames > 0 {
            line.push_str(&format!(
                ", {:.0} map rectangles a frame",
                self.rects as f64 / self.frames as f64
            ));
            if self.dropped > 0 {
                line.push_str(&format!(
                    " ({} weakest left out past {} a frame)",
                    self.dropped,
                    blocks::MAX_RECTS
                ));
            }
        }
        line
    }
}

/// Checks `--codec`, `--roi` and `--roi-strength` against the program
/// before any input is opened (`has_regions`, `has_map`: the program names
/// its regions with [`App::encode_regions`](crate::App::encode_regions), its
/// map with [`App::encode_qp_map`](crate::App::encode_qp_map); `name`:
/// what messages call it, e.g. ``program `l2` ``).
pub(crate) fn check_args(
    args: &RunArgs,
    has_regions: bool,
    has_map: bool,
    name: &str,
) -> Result<(), RunnerError> {
    let Some(path) = &args.encode else {
        for (set, flag) in [
            (args.codec.is_some(), "--codec"),
            (args.roi.is_some(), "--roi"),
            (args.roi_strength.is_some(), "--roi-strength"),
            (args.roi_background.is_some(), "--roi-background"),
            (args.crf.is_some(), "--crf"),
            (args.force, "--force"),
        ] {
            if set {
                return Err(RunnerError::Usage(format!("{flag} needs --encode FILE")));
            }
        }
        return Ok(());
    };
    let codec = args.codec.as_deref().unwrap_or("libx264");
    check_codec(codec)?;
    let mode = args.roi_mode();
    if mode == RoiSwitch::Map {
        if !has_map {
            return Err(RunnerError::Usage(format!(
                "--roi map: {name} names no quantiser-offset map; use --roi regions or off"
            )));
        }
        for (set, flag) in [
            (args.roi_strength.is_some(), "--roi-strength"),
            (args.roi_background.is_some(), "--roi-background"),
        ] {
            if set {
                return Err(RunnerError::Usage(format!(
                    "{flag} applies to --roi regions; the map carries its own offsets"
                )));
            }
        }
    }
    if mode == RoiSwitch::Regions && !has_regions {
        return Err(RunnerError::Usage(format!(
            "--encode {}: {name} names no regions of interest; add --roi off for a plain encode",
            path.display()
        )));
    }
    if mode != RoiSwitch::Off && !ROI_ENCODERS.contains(&codec) {
        return Err(RunnerError::Usage(format!(
            "--codec {codec}: FFmpeg's {codec} does not read region-of-interest side data (those that do: {}); add --roi off for a plain encode",
            ROI_ENCODERS.join(", ")
        )));
    }
    if let Some(b) = args.roi_background {
        if !(0.0..=1.0).contains(&b) {
            return Err(RunnerError::Usage(format!(
                "--roi-background: must be in [0, 1], got {b}"
            )));
        }
    }
    if let Some(s) = args.roi_strength {
        if !(s.is_finite() && s > 0.0 && s <= 1.0) {
            return Err(RunnerError::Usage(format!(
                "--roi-strength: must be in (0, 1], got {s}"
            )));
        }
    }
    Ok(())
}

/// A video encoder of that name exists in this FFmpeg.
#[cfg(feature = "ffmpeg")]
fn check_codec(name: &str) -> Result<(), RunnerError> {
    use ffmpeg_next as ff;
    ff::init().map_err(|e| RunnerError::Encode(e.to_string()))?;
    match ff::encoder::find_by_name(name) {
        Some(c) if c.medium() == ff::media::Type::Video => Ok(()),
        _ => Err(RunnerError::Usage(format!(
            "--codec {name}: this FFmpeg has no video encoder of that name (e.g. {})",
            ROI_ENCODERS.join(", ")
        ))),
    }
}

/// Without FFmpeg, `--encode` itself is refused ([`Encoder::open`]).
#[cfg(not(feature = "ffmpeg"))]
fn check_codec(_: &str) -> Result<(), RunnerError> {
    Ok(())
}

/// The default `--roi-strength` (see `Region::qp_offset`).
#[cfg(feature = "ffmpeg")]
pub(crate) const DEFAULT_STRENGTH: f32 = cortex_vision::ops::roi_regions::DEFAULT_QP_STRENGTH;

#[cfg(feature = "ffmpeg")]
pub(crate) use self::ffmpeg::Encoder;

#[cfg(not(feature = "ffmpeg"))]
pub(crate) use without_ffmpeg::Encoder;

#[cfg(not(feature = "ffmpeg"))]
mod without_ffmpeg {
    use super::*;

    /// Stands in for the FFmpeg encoder in builds without it.
    pub(crate) enum Encoder {}

    impl Encoder {
        pub(crate) fn open(args: &RunArgs) -> Result<Option<Encoder>, RunnerError> {
            match &args.encode {
                None => Ok(None),
                Some(path) => Err(RunnerError::Usage(format!(
                    "--encode {}: needs a build with `--features ffmpeg`",
                    path.display()
                ))),
            }
        }

        pub(crate) fn frame(&mut self, _: &Frame, _: FrameRoi<'_>) -> Result<(), RunnerError> {
            match *self {}
        }

        pub(crate) fn finish(self) -> Result<EncodeReport, RunnerError> {
            match self {}
        }
    }
}
