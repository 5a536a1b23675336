//! What the folding check knows of one value (known at load, type, shape,
//! bound, small values) and reading it from ONNX tensors and attributes.

use tract_onnx::pb;

/// The most elements of a known value whose values are kept: shape vectors,
/// indices and scalars are far smaller, weights far larger.
pub(super) const MAX_KEPT_VALUES: u64 = 4096;

/// What the check knows of one value of the graph.
#[derive(Debug, Clone)]
pub(super) struct Val {
    /// Known at load: tract may compute it before any frame.
    pub(super) konst: bool,
    /// Its ONNX element type (0 when unknown).
    pub(super) dtype: i32,
    /// Its exact shape, when known.
    pub(super) dims: Option<Vec<u64>>,
    /// An upper bound on its element count, when known (always, when
    /// `dims` is).
    pub(super) bound: Option<u64>,
    /// Its values, for a known value of at most [`MAX_KEPT_VALUES`]
    /// numbers.
    pub(super) values: Option<Vec<f64>>,
}

impl Val {
    pub(super) fn runtime(dtype: i32, dims: Option<Vec<u64>>) -> Val {
        let bound = dims.as_deref().map(product);
        Val {
            konst: false,
            dtype,
            dims,
            bound,
            values: None,
        }
    }

    pub(super) fn unknown() -> Val {
        Val::runtime(0, None)
    }

    pub(super) fn known(dtype: i32, dims: Vec<u64>, values: Option<Vec<f64>>) -> Val {
        let n = product(&dims);
        Val {
            konst: true,
            dtype,
            bound: Some(n),
            values: values.filter(|v| v.len() as u64 == n && n <= MAX_KEPT_VALUES),
            dims: Some(dims),
        }
    }
}

/// The product of `dims`, saturating.
pub(super) fn product(dims: &[u64]) -> u64 {
    dims.iter().fold(1u64, |a, &d| a.saturating_mul(d))
}

/// ONNX's element types that the rules below name.
pub(super) const INT32: i32 = 6;
pub(super) const INT64: i32 = 7;
pub(super) const BOOL: i32 = 9;

/// Whether ONNX element type `t` holds integers (or booleans).
pub(super) fn is_int(t: i32) -> bool {
    matches!(t, 2..=7 | 9 | 12 | 13)
}

/// Bytes per element of ONNX element type `t`.
pub(super) fn esize(t: i32) -> u64 {
    match t {
        2 | 3 | 9 => 1,        // uint8, int8, bool
        4 | 5 | 10 | 16 => 2,  // uint16, int16, float16, bfloat16
        1 | 6 | 12 => 4,       // float, int32, uint32
        7 | 11 | 13 | 14 => 8, // int64, double, uint64, complex64
        15 => 16,              // complex128
        17..=23 => 1,          // the 8- and 4-bit types
        _ => 8,                // strings and unknown types: their slots
    }
}

/// A tensor of the file as a value: its shape, and its numbers when few.
pub(super) fn tensor_val(t: &pb::TensorProto) -> Val {
    let dims: Vec<u64> = t.dims.iter().map(|&d| d.max(0) as u64).collect();
    let n = product(&dims);
    let values = (n <= MAX_KEPT_VALUES)
        .then(|| tensor_values(t, n as usize))
        .flatten();
    Val::known(t.data_type, dims, values)
}

/// The `n` numbers of `t`, from its raw bytes or its typed fields.
pub(super) fn tensor_values(t: &pb::TensorProto, n: usize) -> Option<Vec<f64>> {
    if !t.raw_data.is_empty() {
        let raw = &t.raw_data;
        // Little-endian words of `W` bytes, each read by `f`.
        fn words<const W: usize>(raw: &[u8], n: usize, f: fn([u8; W]) -> f64) -> Option<Vec<f64>> {
            (raw.len() == n * W).then(|| {
                raw.chunks_exact(W)
                    .map(|c| {
                        let mut w = [0u8; W];
                        w.copy_from_slice(c);
                        f(w)
                    })
                    .collect()
            })
        }
        return match t.data_type {
            1 => words::<4>(raw, n, |w| f32::from_le_bytes(w) as f64),
            11 => words::<8>(raw, n, f64::from_le_bytes),
            6 => words::<4>(raw, n, |w| i32::from_le_bytes(w) as f64),
            7 => words::<8>(raw, n, |w| i64::from_le_bytes(w) as f64),
            12 => words::<4>(raw, n, |w| u32::from_le_bytes(w) as f64),
            13 => words::<8>(raw, n, |w| u64::from_le_bytes(w) as f64),
            2 | 9 => words::<1>(raw, n, |w| w[0] as f64),
            3 => words::<1>(raw, n, |w| w[0] as i8 as f64),
            _ => None,
        };
    }
    let v: Vec<f64> = match t.data_type {
        1 => t.float_data.iter().map(|&x| x as f64).collect(),
        11 => t.double_data.clone(),
        7 => t.int64_data.iter().map(|&x| x as f64).collect(),
        13 => t.uint64_data.iter().map(|&x| x as f64).collect(),
        2 | 3 | 4 | 5 | 6 | 9 | 12 => t.int32_data.iter().map(|&x| x as f64).collect(),
        _ => return None,
    };
    (v.len() == n).then_some(v)
}

/// A node's attribute by name.
pub(super) fn attr<'a>(node: &'a pb::NodeProto, name: &str) -> Option<&'a pb::AttributeProto> {
    node.attribute.iter().find(|a| a.name == name)
}

pub(super) fn attr_i(node: &pb::NodeProto, name: &str, default: i64) -> i64 {
    attr(node, name).map_or(default, |a| a.i)
}

pub(super) fn attr_ints<'a>(node: &'a pb::NodeProto, name: &str) -> Option<&'a [i64]> {
    attr(node, name).map(|a| a.ints.as_slice())
}

pub(super) fn attr_s<'a>(node: &'a pb::NodeProto, name: &str) -> &'a [u8] {
    attr(node, name).map_or(&[][..], |a| a.s.as_slice())
}

/// `axis` (negative from the end) as an index into `rank` axes.
pub(super) fn axis(a: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let a = if a < 0 { a + r } else { a };
    (0..r).contains(&a).then_some(a as usize)
}

/// Numpy broadcasting of `shapes` (a 1 takes the other's size; a mismatch,
/// which tract refuses, takes the larger, which only over-estimates).
pub(super) fn broadcast<'a>(shapes: impl IntoIterator<Item = &'a [u64]>) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for s in shapes {
        if s.len() > out.len() {
            let mut wider = vec![1; s.len() - out.len()];
            wider.extend_from_slice(&out);
            out = wider;
        }
        let off = out.len() - s.len();
        for (o, &d) in out[off..].iter_mut().zip(s) {
            *o = if *o == 1 {
                d
            } else if d == 1 {
                *o
            } else {
                (*o).max(d)
            };
        }
    }
    out
}

/// Values as non-negative sizes, `None` when one is negative, not whole,
/// or not finite.
pub(super) fn sizes(v: &[f64]) -> Option<Vec<u64>> {
    v.iter()
        .map(|&x| (x.is_finite() && x >= 0.0 && x.fract() == 0.0).then_some(x as u64))
        .collect()
}
