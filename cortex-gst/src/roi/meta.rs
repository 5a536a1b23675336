//! What the element writes: the frame copy into an [`RgbFrame`], the
//! `GstVideoRegionOfInterestMeta` on the buffer and the per-frame element
//! message.

use std::time::{Duration, Instant};

use gst_video::VideoFormat;

use cortex_core::ir::{GraphIr, NodeId};
use cortex_core::observe::Observer;
use cortex_vision::ops::RgbFrame;

use cortex_vision::ops::roi_regions::Region;

use super::{FieldValue, RoiBox, RoiReport};

/// The `roi_type` of the meta the element attaches, and the name of the
/// parameter structure (holding `score`) and of the element message.
pub const ROI_TYPE: &str = "cortex-roi";

/// The raw formats the element accepts. All are 8-bit packed RGB orders: the
/// element copies every frame into an owned [`RgbFrame`] anyway (a pipeline
/// input is an owned array), so reordering the channels in that copy costs
/// nothing extra, while planar YUV would need a real colour conversion —
/// put `videoconvert` upstream for those.
pub const FORMATS: &[VideoFormat] = &[
    VideoFormat::Rgb,
    VideoFormat::Bgr,
    VideoFormat::Rgbx,
    VideoFormat::Bgrx,
    VideoFormat::Rgba,
    VideoFormat::Bgra,
];

/// Byte offsets of R, G, B in one pixel and the pixel size, for the
/// accepted formats; `None` for any other.
fn layout(format: VideoFormat) -> Option<([usize; 3], usize)> {
    match format {
        VideoFormat::Rgb => Some(([0, 1, 2], 3)),
        VideoFormat::Bgr => Some(([2, 1, 0], 3)),
        VideoFormat::Rgbx | VideoFormat::Rgba => Some(([0, 1, 2], 4)),
        VideoFormat::Bgrx | VideoFormat::Bgra => Some(([2, 1, 0], 4)),
        _ => None,
    }
}

/// Copies one mapped frame (`width × height`, rows `stride` bytes apart)
/// into `dst`, reshaping `dst` only when the size changed so the buffer is
/// reused from frame to frame.
///
/// # Errors
/// A message when the format is not one of [`FORMATS`] or the plane is
/// shorter than its caps say (never trusted blindly: a short buffer from a
/// buggy upstream must not read out of bounds).
pub fn copy_frame(
    data: &[u8],
    format: VideoFormat,
    width: usize,
    height: usize,
    stride: usize,
    dst: &mut RgbFrame,
) -> Result<(), String> {
    let (offsets, px) = layout(format).ok_or_else(|| format!("unsupported format {format:?}"))?;
    let row = width
        .checked_mul(px)
        .ok_or_else(|| "frame width overflows".to_string())?;
    let need = match height {
        0 => 0,
        h => stride
            .checked_mul(h - 1)
            .and_then(|n| n.checked_add(row))
            .ok_or_else(|| "frame size overflows".to_string())?,
    };
    if stride < row || data.len() < need {
        return Err(format!(
            "plane of {} bytes (stride {stride}) too short for {width}x{height} {format:?}",
            data.len()
        ));
    }
    if dst.dim() != (height, width, 3) {
        *dst = RgbFrame::zeros((height, width, 3));
    }
    // `zeros` and every frame we built are in standard layout; fall back to
    // a fresh array if someone handed us another layout.
    if dst.as_slice_mut().is_none() {
        *dst = RgbFrame::zeros((height, width, 3));
    }
    let out = dst
        .as_slice_mut()
        .ok_or_else(|| "frame buffer is not contiguous".to_string())?;
    for (y, out_row) in out.chunks_exact_mut(width * 3).enumerate() {
        let src = &data[y * stride..y * stride + row];
        if px == 3 && offsets == [0, 1, 2] {
            // RGB: the row is already in the target order.
            out_row.copy_from_slice(src);
        } else {
            for (o, s) in out_row.chunks_exact_mut(3).zip(src.chunks_exact(px)) {
                o[0] = s[offsets[0]];
                o[1] = s[offsets[1]];
                o[2] = s[offsets[2]];
            }
        }
    }
    Ok(())
}

/// Clamps a box into a `width × height` frame; `None` when nothing of it is
/// inside (a meta must never point outside the picture).
pub fn clamp_box(roi: RoiBox, width: u32, height: u32) -> Option<RoiBox> {
    // A `u32` always fits in `usize` on the targets GStreamer runs on.
    let (width, height) = (width as usize, height as usize);
    if roi.x >= width || roi.y >= height || roi.width == 0 || roi.height == 0 {
        return None;
    }
    Some(RoiBox {
        x: roi.x,
        y: roi.y,
        width: roi.width.min(width - roi.x),
        height: roi.height.min(height - roi.y),
    })
}

/// The box as the `guint` fields GStreamer's meta and structures hold
/// (saturating: a box clamped into a frame, whose sides are `guint`, always
/// fits).
pub fn guint_fields(roi: RoiBox) -> (u32, u32, u32, u32) {
    let g = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
    (g(roi.x), g(roi.y), g(roi.width), g(roi.height))
}

/// Attaches the ROI of `report` to `buffer` as a
/// `GstVideoRegionOfInterestMeta` of type [`ROI_TYPE`], its score in a
/// parameter structure named [`ROI_TYPE`] (`score`, a double). The box's
/// fields become the meta's `guint` ones through [`guint_fields`]; clamp it
/// into the frame first ([`clamp_box`]).
pub fn attach_roi(buffer: &mut gst::BufferRef, roi: RoiBox, score: f64) {
    let mut meta = gst_video::VideoRegionOfInterestMeta::add(buffer, ROI_TYPE, guint_fields(roi));
    meta.add_param(
        gst::Structure::builder(ROI_TYPE)
            .field("score", score)
            .build(),
    );
}

/// The `roi_type` of the encoder regions ([`attach_regions`]).
pub const REGION_TYPE: &str = "cortex-region";

/// QP steps of H.264's and H.265's quantiser range, the scale of VA-API's
/// and Media SDK's `delta-qp`.
pub const QP_RANGE: u32 = 51;

/// Attaches each region (most important first) as a
/// `GstVideoRegionOfInterestMeta` of type [`REGION_TYPE`], with the
/// parameter structures the hardware encoders read — `roi/vaapi` and
/// `roi/msdk`, each with `delta-qp` (an int, negative: finer) — and
/// `cortex-region` with the region's `score` (relative to the map's peak)
/// and `rank` (0: most important). Regions outside the frame are skipped.
pub fn attach_regions(
    buffer: &mut gst::BufferRef,
    regions: &[Region],
    strength: f32,
    width: u32,
    height: u32,
) {
    for (rank, r) in regions.iter().enumerate() {
        let Some(roi) = clamp_box(r.bbox, width, height) else {
            continue;
        };
        let delta_qp = r.delta_qp(strength, QP_RANGE);
        let mut meta =
            gst_video::VideoRegionOfInterestMeta::add(buffer, REGION_TYPE, guint_fields(roi));
        for encoder in ["roi/vaapi", "roi/msdk"] {
            meta.add_param(
                gst::Structure::builder(encoder)
                    .field("delta-qp", delta_qp)
                    .build(),
            );
        }
        meta.add_param(
            gst::Structure::builder(REGION_TYPE)
                .field("score", f64::from(r.score))
                .field("rank", u32::try_from(rank).unwrap_or(u32::MAX))
                .build(),
        );
    }
}

/// Per-node wall time of one frame, for the element message.
#[derive(Debug, Default)]
pub struct NodeTimer {
    started: Option<(NodeId, Instant)>,
    group_started: Option<(&'static [NodeId], Instant)>,
    /// `(node, time)` in execution order.
    pub times: Vec<(NodeId, Duration)>,
    /// `(members, time)` of each fused group that ran fused.
    pub groups: Vec<(&'static [NodeId], Duration)>,
}

impl Observer for NodeTimer {
    fn node_begin(&mut self, node: NodeId) {
        self.started = Some((node, Instant::now()));
    }

    fn node_end(&mut self, node: NodeId) {
        if let Some((n, t)) = self.started.take() {
            if n == node {
                self.times.push((node, t.elapsed()));
            }
        }
    }

    fn group_begin(&mut self, members: &'static [NodeId]) {
        self.group_started = Some((members, Instant::now()));
    }

    fn group_end(&mut self, fused: bool) {
        // A declined group's members time themselves as nodes.
        if let (true, Some((members, t))) = (fused, self.group_started.take()) {
            self.groups.push((members, t.elapsed()));
        }
    }
}

/// What the element message says besides the pipeline's own report.
pub struct FrameInfo<'a> {
    /// Frames processed by this element since it started (0-based).
    pub frame: u64,
    /// The buffer's presentation time, if any.
    pub pts: Option<gst::ClockTime>,
    /// The mode name, or `weights` when run-time weights are set.
    pub mode: &'a str,
    /// The box as attached (clamped), if any.
    pub roi: Option<RoiBox>,
    /// Time spent copying the frame in.
    pub convert: Duration,
    /// Time of the pipeline's `run`.
    pub run: Duration,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The element message's structure: `cortex-roi` with `frame`, `pts`
/// (ns, when known), `mode`, `x`/`y`/`width`/`height` (when there is a
/// box), `score`, the pipeline's own fields, `convert-ms`, `run-ms` and
/// `node-ms` (a structure: node name → ms, only nodes that ran; a fused
/// group's members as one field `a+b+c`).
pub fn message_structure(
    ir: &GraphIr,
    info: &FrameInfo<'_>,
    report: &RoiReport,
    timer: &NodeTimer,
) -> gst::Structure {
    let mut s = gst::Structure::builder(ROI_TYPE)
        .field("frame", info.frame)
        .field("mode", info.mode)
        .field("score", report.score)
        .build();
    if let Some(pts) = info.pts {
        s.set("pts", pts.nseconds());
    }
    if let Some(b) = info.roi {
        // `guint` fields, as the meta's.
        let (x, y, width, height) = guint_fields(b);
        s.set("x", x);
        s.set("y", y);
        s.set("width", width);
        s.set("height", height);
    }
    for (name, value) in &report.fields {
        match value {
            FieldValue::Bool(b) => s.set(name.as_ref(), *b),
            FieldValue::F64(f) => s.set(name.as_ref(), *f),
            FieldValue::U64(u) => s.set(name.as_ref(), *u),
            FieldValue::Str(t) => s.set(name.as_ref(), t.as_str()),
        }
    }
    let mut nodes = gst::Structure::new_empty("node-ms");
    for (id, d) in &timer.times {
        nodes.set(ir.node(*id).name.as_ref(), ms(*d));
    }
    // A fused group's members ran together: one field named `a+b+c`.
    for (members, d) in &timer.groups {
        let names: Vec<&str> = members.iter().map(|&m| ir.node(m).name.as_ref()).collect();
        nodes.set(names.join("+").as_str(), ms(*d));
    }
    s.set("convert-ms", ms(info.convert));
    s.set("run-ms", ms(info.run));
    s.set("node-ms", nodes);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_reorders_and_honours_stride() {
        // 2x2 BGRx with 4 bytes of row padding.
        let data = [
            3, 2, 1, 0, 6, 5, 4, 0, 9, 9, 9, 9, //
            30, 20, 10, 0, 60, 50, 40, 0,
        ];
        let mut f = RgbFrame::zeros((0, 0, 3));
        copy_frame(&data, VideoFormat::Bgrx, 2, 2, 12, &mut f).unwrap();
        assert_eq!(
            f.as_slice().unwrap(),
            &[1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60]
        );
        assert!(copy_frame(&data[..10], VideoFormat::Bgrx, 2, 2, 12, &mut f).is_err());
        assert!(copy_frame(&data, VideoFormat::I420, 2, 2, 12, &mut f).is_err());
    }

    #[test]
    fn clamp_keeps_boxes_inside() {
        let b = RoiBox {
            x: 600,
            y: 400,
            width: 100,
            height: 100,
        };
        assert_eq!(
            clamp_box(b, 640, 480),
            Some(RoiBox {
                x: 600,
                y: 400,
                width: 40,
                height: 80
            })
        );
        assert_eq!(clamp_box(b, 600, 480), None);
    }
}
