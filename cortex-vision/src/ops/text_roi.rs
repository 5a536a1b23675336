//! Text-likelihood map from MSER regions: the `text_roi` node of the L2
//! region-of-interest pipeline.
//!
//! Pipeline: MSER regions of both polarities ([`crate::ops::mser`], OpenCV's
//! defaults) → geometric filters on each region's box → the surviving boxes
//! are counted per pixel → box-smoothed → divided by a saturation count and
//! clipped to `[0, 1]`.
//!
//! Default filters ([`TextRoiParams::default`]), the classic character
//! heuristics of MSER text detectors (e.g. MATLAB's "Automatically Detect
//! and Recognize Text in Natural Images" example):
//! - aspect ratio `width / height` in `[0.1, 3.0]`: glyphs are neither long
//!   horizontal bars nor hairlines;
//! - height in `[1 %, 50 %]` of the frame height: readable text, not the
//!   whole scene;
//! - extent `area / box area` in `[0.2, 0.9]`: strokes fill part of their
//!   box, unlike solid blobs (≈ 1) or thin diagonal curves (≈ 0).
//!
//! Map: each kept box adds 1 to its pixels; the counts are averaged over a
//! `(2r+1)²` window with `r = max(1, round(0.01 · min(width, height)))`
//! (clipped at the frame edges), divided by `saturation = 1` and clipped to
//! 1: the score is the local density of text-like region coverage, 1 where
//! the neighbourhood is fully covered (by one region or by nested ones).
//!
//! For a `cortex_graph!` node use [`text_map`] (a [`ScoreMap`], what
//! `score_fusion` consumes) or [`text_roi`] (map and candidate boxes;
//! `TextRoi` derefs to its map). Both reuse thread-local scratch memory, so
//! in steady state they only allocate their outputs; [`text_map_into`] also
//! reuses the output and allocates nothing at all in steady state (see its
//! docs for the conditions). [`TextRoiDetector`] owns its scratch instead.

use crate::registry::declare::{self, registry_op};
use cortex_core::dynamic::OpDesc;
use std::cell::Cell;

use density::Density;

use crate::ops::mser::{
    BBox, Mser, MserParams, MserWorkspace, PartitionWorkspace, Polarity, RegionBox,
};
use crate::ops::resize::{resize_linear_exact_u8, ResizeScratch};
use crate::ops::scratch::{vec_bytes, with_scratch, Slot};
use crate::ops::{GrayImage, OpsError, ScoreMap};

/// The same node on OpenCV's MSER (feature `opencv`); it lives with the
/// other OpenCV backends in [`crate::ops::opencv`].
#[cfg(feature = "opencv")]
pub use crate::ops::opencv::text_roi_opencv;

mod density;

/// Parameters of [`text_roi_with`]; see the module docs for the defaults.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TextRoiParams {
    /// MSER parameters (OpenCV's defaults).
    pub mser: MserParams,
    /// Which regions to look for; text comes in both.
    pub polarity: Polarity,
    /// Run the two polarities as the two halves of a `rayon::join` on
    /// rayon's pool (only with [`Polarity::Both`], and only when the pool
    /// has more than one thread: with one, handing work to the pool would
    /// only add a context switch), and the map from the boxes in horizontal
    /// bands at once, one per pool thread (bands of at least 64 rows; the
    /// same map bit for bit). No thread is created per call.
    pub parallel: bool,
    /// Strips per polarity for the partition-parallel MSER
    /// (`Mser::detect_boxes_partitioned_into`: the same regions, each
    /// polarity's tree built on that many strips at once). `0` (default)
    /// chooses from the pool's threads `t`: with both polarities, `t / 2`
    /// strips each once `t ≥ 4` (below that the two polarities already
    /// fill the cores); with one polarity, `t` strips when `t ≥ 2` — and
    /// only when the partitioned scratch (about
    /// [`PARTITIONED_BYTES_PER_PIXEL`] per pixel and polarity, twice the
    /// flood's) fits in half of `FrameLimits::max_retained_bytes`, so that
    /// it is kept between frames rather than reallocated. `1` always runs
    /// the plain flood; `n > 1` always partitions. Only used with
    /// `parallel`.
    pub partitions: usize,
    /// Smallest `width / height` of a kept region.
    pub min_aspect: f32,
    /// Largest `width / height` of a kept region.
    pub max_aspect: f32,
    /// Smallest region height as a fraction of the frame height.
    pub min_height_frac: f32,
    /// Largest region height as a fraction of the frame height.
    pub max_height_frac: f32,
    /// Smallest `area / (width · height)` of a kept region.
    pub min_extent: f32,
    /// Largest `area / (width · height)` of a kept region.
    pub max_extent: f32,
    /// Smoothing radius as a fraction of the frame's smaller side (at least
    /// 1 pixel). In `[0, 1]`: a radius beyond the smaller side would only
    /// clip to the frame.
    pub smooth_frac: f32,
    /// Smoothed region count that maps to a score of 1. Finite and at least
    /// [`MIN_SATURATION`].
    pub saturation: f32,
    /// Opt-in reduced-resolution mode: MSER runs on the frame downscaled by
    /// 2 on each side (`ops::resize`, OpenCV's bilinear), with `min_area` and
    /// `max_area` divided by 4 so that the same region sizes are searched;
    /// the boxes are scaled back (outward) before filtering, so the map and
    /// boxes are in frame coordinates. About 4× less MSER work, at the cost
    /// of strokes thinner than about 2 pixels (see the README's table).
    /// Frames under 6 pixels on a side run at full resolution.
    pub half_resolution: bool,
}

impl Default for TextRoiParams {
    /// [`TextRoiParams::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl TextRoiParams {
    /// The defaults of the module docs: OpenCV's MSER, both polarities in
    /// parallel, the classic glyph filters, full resolution. A `const` so a
    /// graph node can pass `&TextRoiParams::DEFAULT` without building a
    /// value per frame.
    pub const DEFAULT: TextRoiParams = TextRoiParams {
        mser: MserParams::DEFAULT,
        polarity: Polarity::Both,
        parallel: true,
        partitions: 0,
        min_aspect: 0.1,
        max_aspect: 3.0,
        min_height_frac: 0.01,
        max_height_frac: 0.5,
        min_extent: 0.2,
        max_extent: 0.9,
        smooth_frac: 0.01,
        saturation: 1.0,
        half_resolution: false,
    };
}

/// Estimated scratch of the partitioned MSER per pixel and polarity (the
/// strips' floods and the merged tree; measured 60 bytes on photo content
/// at 1080p with two strips), used by [`TextRoiParams::partitions`]' automatic
/// choice.
pub const PARTITIONED_BYTES_PER_PIXEL: usize = 64;

/// Smallest [`TextRoiParams::saturation`]: below it the score's scale
/// `1 / (window rows × saturation)` would overflow `f32` and turn pixels
/// without any region into 1 (`0 × ∞`).
pub const MIN_SATURATION: f32 = 1e-6;

impl TextRoiParams {
    /// Checks the MSER parameters and that every range is ordered and
    /// finite, `smooth_frac` in `[0, 1]` and `saturation` finite and at
    /// least [`MIN_SATURATION`].
    pub fn validate(&self) -> Result<(), OpsError> {
        self.mser.validate()?;
        let ranges = [
            ("aspect", self.min_aspect, self.max_aspect),
            ("height_frac", self.min_height_frac, self.max_height_frac),
            ("extent", self.min_extent, self.max_extent),
        ];
        for (name, lo, hi) in ranges {
            if !(lo.is_finite() && hi.is_finite() && lo >= 0.0 && lo <= hi) {
                return Err(OpsError::InvalidParam {
                    name,
                    reason: format!("need 0 <= min <= max, finite; got [{lo}, {hi}]"),
                });
            }
        }
        if !(0.0..=1.0).contains(&self.smooth_frac) {
            return Err(OpsError::InvalidParam {
                name: "smooth_frac",
                reason: format!("must be in [0, 1], got {}", self.smooth_frac),
            });
        }
        if !(self.saturation.is_finite() && self.saturation >= MIN_SATURATION) {
            return Err(OpsError::InvalidParam {
                name: "saturation",
                reason: format!(
                    "must be finite and >= {MIN_SATURATION:e}, got {}",
                    self.saturation
                ),
            });
        }
        Ok(())
    }

    /// Strips per polarity for a `pixels`-pixel frame on a pool of
    /// `threads` threads with `retained` bytes of scratch kept between
    /// frames (see [`TextRoiParams::partitions`]); 1 means the plain flood.
    pub fn strips_per_polarity(&self, threads: usize, pixels: usize, retained: usize) -> usize {
        if !self.parallel || threads < 2 {
            return 1;
        }
        let polarities = if self.polarity == Polarity::Both {
            2
        } else {
            1
        };
        let scratch = pixels
            .saturating_mul(PARTITIONED_BYTES_PER_PIXEL)
            .saturating_mul(polarities);
        match (self.partitions, self.polarity) {
            (0, _) if scratch > retained / 2 => 1,
            (0, Polarity::Both) if threads >= 4 => threads / 2,
            (0, Polarity::Both) => 1,
            (0, _) => threads,
            (n, _) => n,
        }
    }

    /// Whether a region passes the geometric filters in a frame
    /// `frame_height` rows high.
    pub fn is_text_like(&self, r: &RegionBox, frame_height: usize) -> bool {
        let (w, h) = (r.bbox.width as f32, r.bbox.height as f32);
        if w == 0.0 || h == 0.0 || frame_height == 0 {
            return false;
        }
        let aspect = w / h;
        let height_frac = h / frame_height as f32;
        let extent = r.area as f32 / (w * h);
        (self.min_aspect..=self.max_aspect).contains(&aspect)
            && (self.min_height_frac..=self.max_height_frac).contains(&height_frac)
            && (self.min_extent..=self.max_extent).contains(&extent)
    }
}

/// Output of [`text_roi`]: the text-likelihood map and the boxes of the
/// regions that passed the filters (duplicates removed, sorted).
#[derive(Debug, Clone, PartialEq)]
pub struct TextRoi {
    /// Text likelihood per pixel, in `[0, 1]`, the frame's size.
    pub map: ScoreMap,
    /// Candidate text boxes.
    pub boxes: Vec<BBox>,
}

impl std::ops::Deref for TextRoi {
    type Target = ScoreMap;
    fn deref(&self) -> &ScoreMap {
        &self.map
    }
}

impl AsRef<ScoreMap> for TextRoi {
    fn as_ref(&self) -> &ScoreMap {
        &self.map
    }
}

/// [`text_roi_with`] with the default parameters.
pub fn text_roi(gray: &GrayImage) -> Result<TextRoi, OpsError> {
    text_roi_with(gray, &TextRoiParams::default())
}

/// Text-likelihood map and candidate boxes of `gray`. Empty images are an
/// error; images too small for any region give a zero map.
pub fn text_roi_with(gray: &GrayImage, params: &TextRoiParams) -> Result<TextRoi, OpsError> {
    let mut out = TextRoi {
        map: ScoreMap::zeros((0, 0)),
        boxes: Vec::new(),
    };
    run_with_scratch(|s| s.run(gray, params, &mut out.map, Some(&mut out.boxes)))?;
    Ok(out)
}

/// Only the map of [`text_roi`]: the form a `score_fusion` input takes.
pub fn text_map(gray: &GrayImage) -> Result<ScoreMap, OpsError> {
    text_map_with(gray, &TextRoiParams::default())
}

/// Only the map of [`text_roi_with`].
pub fn text_map_with(gray: &GrayImage, params: &TextRoiParams) -> Result<ScoreMap, OpsError> {
    let mut map = ScoreMap::zeros((0, 0));
    text_map_into(gray, params, &mut map)?;
    Ok(map)
}

/// [`text_map_with`] into a caller-owned map: `out` is overwritten entirely
/// (any previous shape, e.g. an empty `0 × 0` array, is replaced by the
/// frame's; its allocation is reused when the shape already matches). On
/// error `out` is left as it was.
///
/// All working memory (MSER workspaces, region lists, the map's integral
/// image) is this thread's reused scratch, so in steady state — the same
/// frame sizes and no frame much more complex than those seen before — a
/// call allocates nothing, on any thread, when it runs on a rayon pool
/// thread (how the execution engine runs nodes) or with one polarity, one
/// pool thread or `parallel: false`. Called from a thread outside any rayon
/// pool with both polarities in parallel, rayon's queue for work coming from
/// outside its pool allocates one block per 63 calls.
///
/// # Errors
/// As [`text_roi_with`]: invalid parameters, an empty image, or a frame
/// over the limits in effect.
pub fn text_map_into(
    gray: &GrayImage,
    params: &TextRoiParams,
    out: &mut ScoreMap,
) -> Result<(), OpsError> {
    run_with_scratch(|s| s.run(gray, params, out, None))
}

/// A text-ROI detector owning its parameters and scratch memory.
#[derive(Debug, Default)]
pub struct TextRoiDetector {
    params: TextRoiParams,
    scratch: Scratch,
}

impl TextRoiDetector {
    /// A detector; fails when `params` do not validate.
    pub fn new(params: TextRoiParams) -> Result<Self, OpsError> {
        params.validate()?;
        Ok(Self {
            params,
            scratch: Scratch::default(),
        })
    }

    /// The parameters.
    pub fn params(&self) -> &TextRoiParams {
        &self.params
    }

    /// Map and boxes of `gray`.
    pub fn detect(&mut self, gray: &GrayImage) -> Result<TextRoi, OpsError> {
        let mut out = TextRoi {
            map: ScoreMap::zeros((0, 0)),
            boxes: Vec::new(),
        };
        self.detect_into(gray, &mut out)?;
        Ok(out)
    }

    /// Map and boxes of `gray` into `out`, reusing its buffers (see
    /// [`text_map_into`] for the map).
    pub fn detect_into(&mut self, gray: &GrayImage, out: &mut TextRoi) -> Result<(), OpsError> {
        self.scratch
            .run(gray, &self.params, &mut out.map, Some(&mut out.boxes))
    }
}

/// Memory reused from frame to frame (crate-visible for the OpenCV
/// backend, which fills `regions` from `cv::MSER` and calls `finish`).
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    ws: [MserWorkspace; 2],
    /// Partitioned MSER, one workspace per polarity.
    parts: [PartitionWorkspace; 2],
    /// The bright polarity's boxes while both run at once.
    bright: Vec<RegionBox>,
    pub(crate) regions: Vec<RegionBox>,
    /// The map's integral images.
    density: Density,
    /// Half-resolution frame and the resizer's memory
    /// ([`TextRoiParams::half_resolution`]).
    small: GrayImage,
    resize: ResizeScratch,
}

impl crate::ops::scratch::Scratch for Scratch {
    fn heap_bytes(&self) -> usize {
        vec_bytes(&self.regions)
            + self.density.heap_bytes()
            + vec_bytes(&self.bright)
            + self.ws[0].heap_bytes()
            + self.ws[1].heap_bytes()
            + self.parts[0].heap_bytes()
            + self.parts[1].heap_bytes()
            + self.small.len()
            + self.resize.heap_bytes()
    }
}

/// Runs `f` on this thread's scratch memory (see [`crate::ops::scratch`]:
/// fresh memory on thread teardown, released after an outsized frame).
///
/// Two slots, by nesting depth: a rayon worker waiting for the other half of
/// its polarity split steals queued work, which can be another text node
/// (another stream's, or the next frame's); with one slot that nested call
/// would find the slot taken and allocate a fresh scratch (tens of MB at
/// 1080p) every time. Deeper nesting gets fresh memory.
fn run_with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    thread_local! {
        static OUTER: Slot<Scratch> = const { Slot::new(None) };
        static NESTED: Slot<Scratch> = const { Slot::new(None) };
        static DEPTH: Cell<u32> = const { Cell::new(0) };
    }
    /// Leaves the nesting level on return or unwind.
    struct Level;
    impl Drop for Level {
        fn drop(&mut self) {
            let _ = DEPTH.try_with(|d| d.set(d.get().saturating_sub(1)));
        }
    }
    let depth = DEPTH
        .try_with(|d| {
            let v = d.get();
            d.set(v.saturating_add(1));
            v
        })
        .unwrap_or(u32::MAX);
    let _level = Level;
    with_scratch(if depth == 0 { &OUTER } else { &NESTED }, f)
}

impl Scratch {
    /// The whole node: detection, filters, the map into `map` and, when
    /// asked for, the sorted distinct boxes into `boxes`.
    fn run(
        &mut self,
        gray: &GrayImage,
        params: &TextRoiParams,
        map: &mut ScoreMap,
        boxes: Option<&mut Vec<BBox>>,
    ) -> Result<(), OpsError> {
        check_input(gray, params)?;
        // Both polarities and the map's bands run on the pool: from a thread
        // outside it, the node enters it once rather than once per step.
        if params.parallel
            && rayon::current_thread_index().is_none()
            && rayon::current_num_threads() > 1
        {
            return rayon::scope(|_| self.run_checked(gray, params, map, boxes));
        }
        self.run_checked(gray, params, map, boxes)
    }

    /// [`Self::run`] once the input is checked.
    fn run_checked(
        &mut self,
        gray: &GrayImage,
        params: &TextRoiParams,
        map: &mut ScoreMap,
        boxes: Option<&mut Vec<BBox>>,
    ) -> Result<(), OpsError> {
        let (rows, cols) = gray.dim();
        if params.half_resolution && rows >= 6 && cols >= 6 {
            self.detect_half(gray, params)?;
        } else {
            let mser = Mser::new(params.mser)?;
            self.detect(&mser, gray, params)?;
        }
        self.finish(gray.dim(), params, map, boxes);
        Ok(())
    }

    /// MSER boxes of `gray` into `self.regions`.
    fn detect(
        &mut self,
        mser: &Mser,
        gray: &GrayImage,
        params: &TextRoiParams,
    ) -> Result<(), OpsError> {
        let threads = rayon::current_num_threads();
        let retained = cortex_core::limits::FrameLimits::current().max_retained_bytes;
        let strips = params.strips_per_polarity(threads, gray.len(), retained);
        let both = params.polarity == Polarity::Both;
        match (strips, both && params.parallel && threads > 1) {
            (1, true) => {
                mser.detect_boxes_both_parallel_into(&mut self.ws, gray, &mut self.regions)
            }
            (1, false) => {
                let [ws, _] = &mut self.ws;
                mser.detect_boxes_into(ws, gray, params.polarity, &mut self.regions)
            }
            (n, true) => {
                // Both polarities at once, each on `n` strips; room for both
                // passes' regions, sized from the frame (as the plain split).
                let room = gray.len() / params.mser.min_area.max(1) as usize;
                self.regions.reserve(room.saturating_mul(2));
                let [dark, bright] = &mut self.parts;
                let (regions, tmp) = (&mut self.regions, &mut self.bright);
                let (d, b) = rayon::join(
                    || mser.detect_boxes_partitioned_into(dark, gray, Polarity::Dark, n, regions),
                    || mser.detect_boxes_partitioned_into(bright, gray, Polarity::Bright, n, tmp),
                );
                d.and(b)?;
                self.regions.extend_from_slice(&self.bright);
                Ok(())
            }
            (n, false) => {
                let [part, _] = &mut self.parts;
                mser.detect_boxes_partitioned_into(
                    part,
                    gray,
                    params.polarity,
                    n,
                    &mut self.regions,
                )
            }
        }
    }

    /// [`Self::detect`] on the frame downscaled by 2, boxes scaled back to
    /// frame coordinates (each half-resolution pixel covers the frame pixels
    /// it was averaged from, so boxes grow outward, never shrink).
    fn detect_half(&mut self, gray: &GrayImage, params: &TextRoiParams) -> Result<(), OpsError> {
        let (rows, cols) = gray.dim();
        let (h, w) = (rows / 2, cols / 2);
        let mut small = std::mem::take(&mut self.small);
        if small.dim() != (h, w) {
            small = GrayImage::zeros((h, w));
        }
        let dst = small.as_slice_mut().ok_or(OpsError::InvalidParam {
            name: "gray",
            reason: "internal buffer is not contiguous".into(),
        })?;
        let resized = match gray.as_slice() {
            Some(src) => resize_linear_exact_u8(src, (rows, cols), dst, (h, w), &mut self.resize),
            None => {
                let src: Vec<u8> = gray.iter().copied().collect();
                resize_linear_exact_u8(&src, (rows, cols), dst, (h, w), &mut self.resize)
            }
        };
        let mut p = params.mser;
        p.min_area = p.min_area.div_ceil(4).max(1);
        p.max_area = (p.max_area / 4).max(p.min_area);
        let detected = resized
            .and_then(|()| Mser::new(p))
            .and_then(|mser| self.detect(&mser, &small, params));
        self.small = small;
        detected?;
        // Half-resolution pixel `x` is averaged from frame columns
        // `[x·cols/w, (x+1)·cols/w)` (2 columns for even sides).
        let up = |v: usize, full: usize, half: usize| v * full / half;
        let up_end = |v: usize, full: usize, half: usize| (v * full).div_ceil(half);
        let area_scale = (rows * cols) as f64 / (h * w) as f64;
        for r in &mut self.regions {
            let b = r.bbox;
            r.bbox = BBox {
                x: up(b.x, cols, w),
                y: up(b.y, rows, h),
                width: up_end(b.right(), cols, w) - up(b.x, cols, w),
                height: up_end(b.bottom(), rows, h) - up(b.y, rows, h),
            };
            r.area = (f64::from(r.area) * area_scale).round() as u32;
        }
        Ok(())
    }

    /// Filters `self.regions` and builds the map and the box list.
    pub(crate) fn finish(
        &mut self,
        (rows, cols): (usize, usize),
        params: &TextRoiParams,
        map: &mut ScoreMap,
        boxes: Option<&mut Vec<BBox>>,
    ) {
        self.regions.retain(|r| params.is_text_like(r, rows));
        // `smooth_frac ≤ 1` (validated) keeps the radius within the frame;
        // the clamp keeps the window arithmetic from overflowing regardless.
        let radius = ((params.smooth_frac * rows.min(cols) as f32).round() as usize)
            .clamp(1, rows.max(cols));
        // The bands run at once when the node may use the pool (as the
        // polarities do), one after the other otherwise.
        let threads = if params.parallel {
            rayon::current_num_threads()
        } else {
            1
        };
        let bands = density::bands_for(rows, radius, threads);
        self.density.render(
            &self.regions,
            (rows, cols),
            radius,
            params.saturation,
            bands,
            map,
        );
        if let Some(b) = boxes {
            b.clear();
            b.extend(self.regions.iter().map(|r| r.bbox));
            b.sort_unstable();
            b.dedup();
        }
    }
}

/// Validates the parameters and rejects empty images and images over the
/// frame limits.
pub(crate) fn check_input(gray: &GrayImage, params: &TextRoiParams) -> Result<(), OpsError> {
    params.validate()?;
    let (rows, cols) = gray.dim();
    if rows == 0 || cols == 0 {
        return Err(OpsError::Empty {
            what: "gray",
            width: cols,
            height: rows,
        });
    }
    crate::ops::border::check_limits("gray", rows, cols)
}

registry_op! {
    /// `text_map` in the kernel registry: the MSER text score map (pure
    /// Rust only: OpenCV's MSER backend returns regions, not the map).
    TextMap = "text_map", for<'a> &'a GrayImage => ScoreMap;
    shape |g| gray_shape(g);
    kernels { pure(|g, out| text_map_into(g, &TextRoiParams::DEFAULT, out)) }
}

/// `vision.text_map`: the op as graph files, the runner and Python name it.
pub fn descriptor() -> OpDesc {
    OpDesc::builder::<TextRoiParams>(
        "vision.text_map",
        "text-likeness: MSER regions of text shape, counted and smoothed",
    )
    .calls(&["text_map", "text_map_into"])
    .kernels(&declare::kernel_labels::<TextMap>())
    .input::<GrayImage>("gray")
    .param(
        "mser.delta",
        "gray-level step over which stability is measured; >= 1",
    )
    .param("mser.min_area", "smallest region, pixels; >= 1")
    .param("mser.max_area", "largest region, pixels; >= min_area")
    .param(
        "mser.max_variation",
        "largest variation of a kept region; finite, >= 0",
    )
    .param("polarity", "\"both\", \"dark\" or \"bright\"")
    .param(
        "parallel",
        "the two polarities and the map's bands on the pool",
    )
    .param(
        "partitions",
        "strips per polarity (0: from the pool's threads)",
    )
    .param("min_aspect", "smallest width / height of a kept region")
    .param("max_aspect", "largest width / height of a kept region")
    .param(
        "min_height_frac",
        "smallest region height, fraction of the frame's",
    )
    .param(
        "max_height_frac",
        "largest region height, fraction of the frame's",
    )
    .param("min_extent", "smallest area / box area of a kept region")
    .param("max_extent", "largest area / box area of a kept region")
    .param(
        "smooth_frac",
        "smoothing radius, fraction of the smaller side; in [0, 1]",
    )
    .param("saturation", "smoothed count that scores 1")
    .param(
        "half_resolution",
        "MSER on the frame halved (about 4x less work)",
    )
    .fills(|i, p, out: &mut ScoreMap| Ok(text_map_into(i.arg(0)?, p, out)?))
}
