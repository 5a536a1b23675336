//! `roi_regions`: up to K separate regions of the fused score map, most
//! important first, each with a score — what an encoder's region-of-interest
//! interface (FFmpeg's `AVRegionOfInterest`, GStreamer's ROI meta) takes.
//!
//! A region is a 4-connected component of the pixels whose score is at
//! least `rel_threshold × peak` (the peak is the map's largest finite
//! value). Components smaller than `min_area` of the frame are dropped as
//! speckle. Importance is a component's *mass*, the sum of its scores: a
//! large salient area outranks a small one of the same strength, and a
//! strong one a weak one of the same size. Each region's box is its
//! component's bounding box grown by `margin` pixels (clamped to the map).
//!
//! A map with no positive finite value, or one where nothing stands out
//! (every pixel is above the threshold, e.g. a flat map), gives no region:
//! a box over the whole frame tells an encoder nothing.

use cortex_core::dynamic::OpDesc;
use cortex_core::heap::HeapBytes;

use super::border::{check_frame, contiguous};
use super::fastdiv::RowSplitter;
use super::types::BBox;
use super::types::{OpsError, ScoreMap};

/// The default strength of [`Region::qp_offset`]: the strongest region
/// gets 0.2 of the encoder's quantiser range finer (10 QP steps of
/// H.264's 51).
pub const DEFAULT_QP_STRENGTH: f32 = 0.2;

impl Region {
    /// The quantiser offset an encoder should give this region, as a
    /// fraction of its QP range in `-1 ..= 0` (finer is negative, FFmpeg's
    /// `AVRegionOfInterest` scale): `strength` for the region holding the
    /// peak, less for weaker ones in proportion to their score.
    pub fn qp_offset(&self, strength: f32) -> f32 {
        -(strength.clamp(0.0, 1.0) * self.score.clamp(0.0, 1.0))
    }

    /// [`Region::qp_offset`] in QP steps of a codec whose QP range has
    /// `qp_range` steps (51 for H.264 and H.265): what VA-API's and Media
    /// SDK's `delta-qp` take.
    pub fn delta_qp(&self, strength: f32, qp_range: u32) -> i32 {
        (self.qp_offset(strength) * qp_range as f32).round() as i32
    }
}

/// Parameters of [`roi_regions_with`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RegionParams {
    /// At most this many regions, the most important kept. At least 1.
    /// Default 4.
    pub max_regions: usize,
    /// A pixel belongs to a region when its score is at least
    /// `rel_threshold × peak`. In `(0, 1]`. Default `0.5`.
    pub rel_threshold: f32,
    /// Components covering less than this fraction of the map are
    /// dropped. In `[0, 1)`. Default `0.001` (307 pixels at 640×480).
    pub min_area: f32,
    /// Pixels added on every side of a region's box. Default 8.
    pub margin: usize,
}

impl RegionParams {
    /// The documented defaults, as a constant.
    pub const DEFAULT: RegionParams = RegionParams {
        max_regions: 4,
        rel_threshold: 0.5,
        min_area: 0.001,
        margin: 8,
    };

    /// Checks the fields.
    ///
    /// # Errors
    /// [`OpsError::InvalidParam`] for a field out of its range.
    pub fn validate(&self) -> Result<(), OpsError> {
        if self.max_regions == 0 {
            return Err(OpsError::InvalidParam {
                name: "max_regions",
                reason: "must be at least 1".into(),
            });
        }
        if !(self.rel_threshold > 0.0 && self.rel_threshold <= 1.0) {
            return Err(OpsError::InvalidParam {
                name: "rel_threshold",
                reason: format!("must be in (0, 1], got {}", self.rel_threshold),
            });
        }
        if !(self.min_area >= 0.0 && self.min_area < 1.0) {
            return Err(OpsError::InvalidParam {
                name: "min_area",
                reason: format!("must be in [0, 1), got {}", self.min_area),
            });
        }
        Ok(())
    }
}

impl Default for RegionParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One region of interest.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Region {
    /// The component's bounding box grown by the margin, in map pixels.
    pub bbox: BBox,
    /// The component's strongest score relative to the map's peak, in
    /// `[rel_threshold, 1]` (1 for the region holding the peak).
    pub score: f32,
    /// Pixels in the component (before the margin).
    pub area: usize,
    /// Sum of the component's scores: its importance.
    pub mass: f32,
}

/// The regions of one map, most important first. Equality and copies
/// concern the regions and the peak, not the working buffers: a clone
/// starts with empty ones, and `clone_from` keeps the target's (so copying
/// into an earlier frame's value allocates nothing once it has room).
#[derive(Debug, Default)]
pub struct RoiRegions {
    /// At most `max_regions`, by decreasing mass.
    pub regions: Vec<Region>,
    /// The map's peak (0 when it has no positive finite value).
    pub peak: f32,
    /// Per-pixel state of the labelling, kept between frames.
    state: Vec<u8>,
    /// Pixels waiting to be visited, kept between frames.
    stack: Vec<u32>,
}

impl Clone for RoiRegions {
    fn clone(&self) -> Self {
        RoiRegions {
            regions: self.regions.clone(),
            peak: self.peak,
            state: Vec::new(),
            stack: Vec::new(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.regions.clone_from(&source.regions);
        self.peak = source.peak;
    }
}

impl PartialEq for RoiRegions {
    fn eq(&self, other: &Self) -> bool {
        self.regions == other.regions && self.peak == other.peak
    }
}

impl HeapBytes for RoiRegions {
    fn heap_bytes(&self) -> usize {
        self.regions.capacity() * std::mem::size_of::<Region>()
            + self.state.capacity()
            + self.stack.capacity() * std::mem::size_of::<u32>()
    }
}

/// [`roi_regions_with`] with [`RegionParams::DEFAULT`].
///
/// # Errors
/// As [`roi_regions_with`].
pub fn roi_regions(score: &ScoreMap) -> Result<RoiRegions, OpsError> {
    roi_regions_with(score, &RegionParams::DEFAULT)
}

/// The regions of `score` (see the module documentation).
///
/// # Errors
/// [`OpsError::InvalidParam`] for bad parameters; [`OpsError::Empty`] /
/// [`OpsError::TooLarge`] for a map with no pixel or over the frame limits.
pub fn roi_regions_with(score: &ScoreMap, params: &RegionParams) -> Result<RoiRegions, OpsError> {
    let mut out = RoiRegions::default();
    roi_regions_into(score, params, &mut out)?;
    Ok(out)
}

const BELOW: u8 = 0;
const OPEN: u8 = 1;
const SEEN: u8 = 2;

/// [`roi_regions_with`] into a caller-owned result. Its working buffers
/// are sized to the map on the first call and reused, so steady-state calls
/// allocate nothing for a map in standard layout (a map in another memory
/// order is copied row-major first).
///
/// # Errors
/// As [`roi_regions_with`]; `out` is unspecified after an error.
pub fn roi_regions_into(
    score: &ScoreMap,
    params: &RegionParams,
    out: &mut RoiRegions,
) -> Result<(), OpsError> {
    params.validate()?;
    let (h, w) = score.dim();
    check_frame("score map", h, w)?;
    let n = h * w;
    out.regions.clear();
    if out.regions.capacity() < params.max_regions + 1 {
        out.regions.reserve(params.max_regions + 1);
    }
    let values = contiguous(score.view());
    let values: &[f32] = &values;
    let peak = finite_max(values);
    out.peak = if peak > 0.0 { peak } else { 0.0 };
    // Finite values only: `peak` is a number or −∞, never NaN.
    if peak <= 0.0 {
        return Ok(());
    }
    // The stack holds `u32` pixel indices.
    if u32::try_from(n).is_err() {
        return Err(OpsError::InvalidParam {
            name: "score map",
            reason: format!("{w}x{h} is too large (at most {} pixels)", u32::MAX),
        });
    }
    let thr = peak * params.rel_threshold;
    out.state.clear();
    out.state.resize(n, BELOW);
    let mut open = 0usize;
    for (s, v) in out.state.iter_mut().zip(values) {
        if *v >= thr && v.is_finite() {
            *s = OPEN;
            open += 1;
        }
    }
    if open == n {
        // Nothing stands out.
        return Ok(());
    }
    // Every pixel is pushed at most once (it is marked when pushed), so a
    // stack of `n` never grows.
    if out.stack.capacity() < n {
        out.stack.reserve(n - out.stack.len());
    }
    let labelling = Labelling {
        values,
        w,
        h,
        peak,
        min_area: ((params.min_area as f64 * n as f64).ceil() as usize).max(1),
        params,
    };
    // The multiply-by-reciprocal split needs two columns or more.
    match u32::try_from(w) {
        Ok(width) if width >= 2 => {
            let rows = RowSplitter::new(width);
            labelling.run(out, |i| {
                let (x, y) = rows.split(i);
                (x as usize, y as usize)
            });
        }
        _ => labelling.run(out, |i| (i as usize % w, i as usize / w)),
    }
    Ok(())
}

/// The map being labelled and what a component needs to become a region.
struct Labelling<'a> {
    values: &'a [f32],
    w: usize,
    h: usize,
    peak: f32,
    min_area: usize,
    params: &'a RegionParams,
}

impl Labelling<'_> {
    /// Floods every open pixel's component (depth first, neighbours pushed
    /// left, right, up, down) and keeps the heaviest as `out.regions`.
    /// `split` turns a pixel index into `(x, y)`.
    fn run(&self, out: &mut RoiRegions, split: impl Fn(u32) -> (usize, usize)) {
        let (w, h, values) = (self.w, self.h, self.values);
        let RoiRegions {
            regions,
            state,
            stack,
            ..
        } = out;
        for start in 0..values.len() {
            if state[start] != OPEN {
                continue;
            }
            state[start] = SEEN;
            stack.clear();
            stack.push(start as u32);
            let (mut y0, mut x0, mut y1, mut x1) = (h, w, 0, 0);
            let (mut area, mut mass, mut top) = (0usize, 0f64, 0f32);
            while let Some(i) = stack.pop() {
                let (x, y) = split(i);
                let i = i as usize;
                let v = values[i];
                area += 1;
                mass += f64::from(v);
                top = top.max(v);
                (y0, y1, x0, x1) = (y0.min(y), y1.max(y), x0.min(x), x1.max(x));
                let mut visit = |j: usize| {
                    if state[j] == OPEN {
                        state[j] = SEEN;
                        stack.push(j as u32);
                    }
                };
                if x > 0 {
                    visit(i - 1);
                }
                if x + 1 < w {
                    visit(i + 1);
                }
                if y > 0 {
                    visit(i - w);
                }
                if y + 1 < h {
                    visit(i + w);
                }
            }
            if area < self.min_area {
                continue;
            }
            let m = self.params.margin;
            let (bx0, by0) = (x0.saturating_sub(m), y0.saturating_sub(m));
            let (bx1, by1) = ((x1 + m).min(w - 1), (y1 + m).min(h - 1));
            let region = Region {
                bbox: BBox {
                    x: bx0,
                    y: by0,
                    width: bx1 - bx0 + 1,
                    height: by1 - by0 + 1,
                },
                score: top / self.peak,
                area,
                mass: mass as f32,
            };
            // Keep the list sorted by mass and at most `max_regions` long
            // (capacity `max_regions + 1`, so the insert never reallocates).
            let pos = regions
                .iter()
                .position(|r| r.mass < region.mass)
                .unwrap_or(regions.len());
            if pos < self.params.max_regions {
                regions.insert(pos, region);
                regions.truncate(self.params.max_regions);
            }
        }
    }
}

/// The largest finite value of `values` (−∞ when there is none). Eight
/// running maxima, so the loop vectorises; `max` of finite values is exact
/// in any order.
fn finite_max(values: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; 8];
    let mut chunks = values.chunks_exact(8);
    for chunk in &mut chunks {
        for (m, &v) in lanes.iter_mut().zip(chunk) {
            *m = if v.is_finite() { m.max(v) } else { *m };
        }
    }
    let tail = chunks.remainder().iter().copied().filter(|v| v.is_finite());
    lanes
        .into_iter()
        .chain(tail)
        .fold(f32::NEG_INFINITY, f32::max)
}

/// `vision.roi_regions`: the op as graph files, the runner and Python name
/// it.
pub fn descriptor() -> OpDesc {
    OpDesc::builder::<RegionParams>(
        "vision.roi_regions",
        "the most important regions of a score map, as boxes",
    )
    .calls(&["roi_regions", "roi_regions_into"])
    .input::<ScoreMap>("score")
    .param("max_regions", "at most this many regions; >= 1")
    .param(
        "rel_threshold",
        "a region's pixels score at least this x peak; in (0, 1]",
    )
    .param(
        "min_area",
        "smallest region, fraction of the map; in [0, 1)",
    )
    .param("margin", "pixels added on every side of a box")
    .fills(|i, p, out: &mut RoiRegions| Ok(roi_regions_into(i.arg(0)?, p, out)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A map of `w × h` with square blobs `(x, y, side, value)` on a low
    /// background.
    fn map(w: usize, h: usize, blobs: &[(usize, usize, usize, f32)]) -> ScoreMap {
        let mut m = ScoreMap::from_elem((h, w), 0.05);
        for &(x, y, s, v) in blobs {
            m.slice_mut(ndarray::s![y..y + s, x..x + s]).fill(v);
        }
        m
    }

    #[test]
    fn separate_blobs_become_separate_regions_by_mass() {
        // A big medium blob, a small strong one, a mid-size strong one.
        let m = map(
            200,
            120,
            &[(10, 10, 40, 0.6), (150, 20, 10, 1.0), (100, 80, 20, 0.9)],
        );
        let p = RegionParams {
            margin: 0,
            ..RegionParams::DEFAULT
        };
        let r = roi_regions_with(&m, &p).unwrap();
        assert_eq!(r.peak, 1.0);
        let boxes: Vec<_> = r
            .regions
            .iter()
            .map(|g| (g.bbox.x, g.bbox.y, g.bbox.width, g.bbox.height))
            .collect();
        // Masses 40²·0.6 = 960, 20²·0.9 = 360, 10²·1.0 = 100.
        assert_eq!(
            boxes,
            vec![(10, 10, 40, 40), (100, 80, 20, 20), (150, 20, 10, 10)]
        );
        assert_eq!(r.regions[0].area, 1600);
        assert!((r.regions[0].score - 0.6).abs() < 1e-6);
        assert!((r.regions[2].score - 1.0).abs() < 1e-6);
        assert!((r.regions[1].mass - 360.0).abs() < 1e-2);
    }

    #[test]
    fn at_most_k_regions_and_speckle_dropped() {
        let blobs: Vec<_> = (0..6).map(|i| (10 + i * 30, 10, 12 + i, 0.8)).collect();
        let mut m = map(200, 60, &blobs);
        m[[50, 5]] = 0.9; // one pixel: speckle
        let p = RegionParams {
            max_regions: 3,
            margin: 2,
            ..RegionParams::DEFAULT
        };
        let r = roi_regions_with(&m, &p).unwrap();
        assert_eq!(r.regions.len(), 3);
        // The three largest (sides 17, 16, 15), with the margin.
        let sides: Vec<_> = r.regions.iter().map(|g| g.bbox.width - 4).collect();
        assert_eq!(sides, vec![17, 16, 15]);
        assert_eq!(r.regions[0].bbox.x, 10 + 5 * 30 - 2);
    }

    #[test]
    fn margin_is_clamped_to_the_map() {
        let m = map(64, 48, &[(0, 0, 10, 1.0)]);
        let r = roi_regions(&m).unwrap();
        assert_eq!(r.regions.len(), 1);
        let b = r.regions[0].bbox;
        assert_eq!((b.x, b.y, b.width, b.height), (0, 0, 18, 18));
    }

    #[test]
    fn flat_or_empty_maps_give_no_region() {
        for m in [
            ScoreMap::from_elem((40, 40), 0.7),
            ScoreMap::zeros((40, 40)),
            ScoreMap::from_elem((40, 40), f32::NAN),
        ] {
            let r = roi_regions(&m).unwrap();
            assert!(r.regions.is_empty(), "{:?}", m[[0, 0]]);
        }
    }

    #[test]
    fn bad_parameters_and_maps_are_refused() {
        let m = map(32, 32, &[(4, 4, 8, 1.0)]);
        for p in [
            RegionParams {
                max_regions: 0,
                ..RegionParams::DEFAULT
            },
            RegionParams {
                rel_threshold: 0.0,
                ..RegionParams::DEFAULT
            },
            RegionParams {
                min_area: 1.0,
                ..RegionParams::DEFAULT
            },
        ] {
            assert!(matches!(
                roi_regions_with(&m, &p),
                Err(OpsError::InvalidParam { .. })
            ));
        }
        assert!(roi_regions(&ScoreMap::zeros((0, 4))).is_err());
    }

    #[test]
    fn reuse_gives_the_same_result_without_growing() {
        let a = map(120, 80, &[(10, 10, 30, 0.9), (70, 40, 20, 1.0)]);
        let b = map(120, 80, &[(50, 5, 8, 1.0)]);
        let mut out = RoiRegions::default();
        roi_regions_into(&a, &RegionParams::DEFAULT, &mut out).unwrap();
        let bytes = out.heap_bytes();
        roi_regions_into(&b, &RegionParams::DEFAULT, &mut out).unwrap();
        assert_eq!(out.regions, roi_regions(&b).unwrap().regions);
        roi_regions_into(&a, &RegionParams::DEFAULT, &mut out).unwrap();
        assert_eq!(out.regions, roi_regions(&a).unwrap().regions);
        assert_eq!(out.heap_bytes(), bytes);
    }

    #[test]
    fn any_memory_order_gives_the_same_regions() {
        let m = map(
            90,
            70,
            &[(5, 5, 20, 0.7), (50, 30, 12, 1.0), (20, 50, 9, 0.9)],
        );
        let column_major = m.t().to_owned();
        assert!(!column_major.is_standard_layout());
        let standard = column_major.as_standard_layout().to_owned();
        let p = RegionParams {
            min_area: 0.0,
            ..RegionParams::DEFAULT
        };
        let (a, b) = (
            roi_regions_with(&column_major, &p).unwrap(),
            roi_regions_with(&standard, &p).unwrap(),
        );
        assert_eq!(a.regions.len(), 3);
        assert_eq!(a, b);
    }
}
