//! L2's outputs as plain Python objects: dicts of numbers, tuples for
//! boxes, `bytes` for the JPEG crop and numpy arrays for the maps.

use cortex_vision::l2::{BlurVerdict, L2Outputs};
use cortex_vision::ops::qp_map::{Neutral, QpMap};
use cortex_vision::ops::roi_regions::RoiRegions;
use cortex_vision::ops::{BBox, EncodedRoi, SceneChange};
use numpy::PyArray2;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

/// Which outputs become Python objects. The score map is a whole frame of
/// `float32`; it is converted only when asked for.
#[derive(Debug, Clone, Copy, Default)]
pub struct Wanted {
    /// Include `fused`, the fused score map (`H×W` `float32`).
    pub fused: bool,
}

/// One frame's results: `blur`, `scene`, `roi`, `regions`, `qp_map` (and
/// `fused` when wanted), plus `frame`, the frame's index in the stream.
pub fn outputs<'py>(
    py: Python<'py>,
    out: &L2Outputs,
    frame: u64,
    wanted: Wanted,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("frame", frame)?;
    d.set_item("blur", blur(py, &out.blur)?)?;
    d.set_item("scene", scene(py, &out.scene)?)?;
    d.set_item("roi", roi(py, &out.roi)?)?;
    d.set_item("regions", regions(py, &out.regions)?)?;
    d.set_item("qp_map", qp_map(py, &out.qp_map)?)?;
    if wanted.fused {
        d.set_item("fused", PyArray2::from_array(py, &out.fused))?;
    }
    Ok(d)
}

fn blur<'py>(py: Python<'py>, b: &BlurVerdict) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("variance", b.variance)?;
    d.set_item("baseline", b.baseline)?;
    d.set_item("ratio", b.ratio)?;
    d.set_item("is_blurry", b.is_blurry)?;
    d.set_item("below_threshold", b.below_threshold)?;
    Ok(d)
}

fn scene<'py>(py: Python<'py>, s: &SceneChange) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("changed", s.changed)?;
    d.set_item("ssim", s.ssim)?;
    Ok(d)
}

/// A box as `(x, y, width, height)`.
fn bbox(b: &BBox) -> (usize, usize, usize, usize) {
    (b.x, b.y, b.width, b.height)
}

fn roi<'py>(py: Python<'py>, r: &EncodedRoi) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("box", bbox(&r.bbox))?;
    d.set_item("score", r.score)?;
    d.set_item("jpeg", PyBytes::new(py, &r.jpeg))?;
    Ok(d)
}

fn regions<'py>(py: Python<'py>, r: &RoiRegions) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for region in &r.regions {
        let d = PyDict::new(py);
        d.set_item("box", bbox(&region.bbox))?;
        d.set_item("score", region.score)?;
        d.set_item("area", region.area)?;
        d.set_item("mass", region.mass)?;
        list.append(d)?;
    }
    Ok(list)
}

fn qp_map<'py>(py: Python<'py>, q: &QpMap) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("block", q.block)?;
    let offsets = ndarray::ArrayView2::from_shape((q.rows, q.cols), &q.offsets)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(format!("QP map: {e}")))?;
    d.set_item("offsets", PyArray2::from_array(py, &offsets))?;
    let neutral = match q.neutral {
        Neutral::No => None,
        Neutral::Blurry => Some("blurry"),
        Neutral::Flat => Some("flat"),
        Neutral::Off => Some("off"),
    };
    d.set_item("neutral", neutral)?;
    Ok(d)
}
