//! The libjpeg-turbo kernel of `encode_roi` (feature `turbojpeg`): the
//! system library through the `turbojpeg` crate (0.5, the line for
//! libjpeg-turbo 2.x), linked via pkg-config (Debian: `libturbojpeg0-dev`).
//!
//! The crop is never copied: libjpeg-turbo reads it in place from the
//! frame, with the frame's row pitch. Chroma is subsampled 4:2:0 below
//! quality 90 and not at all from 90 on, as the pure-Rust encoder does, so
//! that the kernels of the op produce comparable files.

use std::cell::RefCell;

use turbojpeg::{Compressor, Image, PixelFormat, Subsamp};

use crate::ops::{EncodedRoi, EncoderParams, OpsError, RgbFrame, ScoreMap};

fn tj_err(e: turbojpeg::Error) -> OpsError {
    OpsError::Encode(format!("libjpeg-turbo: {e}"))
}

thread_local! {
    // A compressor handle per thread: creating one allocates libjpeg's
    // state, which would otherwise be paid on every frame.
    static COMPRESSOR: RefCell<Option<Compressor>> = const { RefCell::new(None) };
}

/// Selects, crops and encodes the ROI as [`crate::ops::encode_roi_into`]
/// does, the JPEG coming from libjpeg-turbo, into a caller-owned result:
/// its JPEG buffer is grown to libjpeg-turbo's worst-case size for the crop
/// once and reused.
///
/// # Errors
/// As [`crate::ops::encode_roi_with`]; [`OpsError::InvalidParam`] for a
/// frame not in standard layout; [`OpsError::Encode`] for libjpeg-turbo's
/// errors. `out` is unspecified after an error.
pub fn encode_roi_into(
    frame: &RgbFrame,
    score: &ScoreMap,
    params: &EncoderParams,
    out: &mut EncodedRoi,
) -> Result<(), OpsError> {
    let (bbox, peak) = crate::ops::encoder::roi_of(frame, score, params)?;
    let w = frame.dim().1;
    let px = frame.as_slice().ok_or(OpsError::InvalidParam {
        name: "frame",
        reason: "the turbojpeg kernel needs the standard layout".into(),
    })?;
    let start = (bbox.y * w + bbox.x) * 3;
    let end = start + (bbox.height.saturating_sub(1) * w + bbox.width) * 3;
    let pixels = px.get(start..end).ok_or(OpsError::InvalidParam {
        name: "bbox",
        reason: "region outside the frame".into(),
    })?;
    let image = Image {
        pixels,
        width: bbox.width,
        pitch: w * 3,
        height: bbox.height,
        format: PixelFormat::RGB,
    };
    let subsamp = if params.quality < 90 {
        Subsamp::Sub2x2
    } else {
        Subsamp::None
    };
    let len = COMPRESSOR.with(|cell| {
        let mut slot = cell.try_borrow_mut().map_err(|_| {
            OpsError::Encode("libjpeg-turbo compressor re-entered on this thread".into())
        })?;
        let c = match &mut *slot {
            Some(c) => c,
            None => slot.insert(Compressor::new().map_err(tj_err)?),
        };
        c.set_quality(i32::from(params.quality));
        c.set_subsamp(subsamp);
        let room = c.buf_len(bbox.width, bbox.height).map_err(tj_err)?;
        out.jpeg.resize(room, 0);
        c.compress_to_slice(image, &mut out.jpeg).map_err(tj_err)
    })?;
    out.jpeg.truncate(len);
    out.bbox = bbox;
    out.score = peak;
    Ok(())
}

/// [`encode_roi_into`] returning a new result.
///
/// # Errors
/// As [`encode_roi_into`].
pub fn encode_roi_with(
    frame: &RgbFrame,
    score: &ScoreMap,
    params: &EncoderParams,
) -> Result<EncodedRoi, OpsError> {
    let mut out = EncodedRoi::default();
    encode_roi_into(frame, score, params, &mut out)?;
    Ok(out)
}
