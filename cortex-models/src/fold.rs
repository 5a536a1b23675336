//! What tract may compute from a model's constants while loading it, bounded
//! from the ONNX graph before tract sees the model.
//!
//! tract evaluates every node whose inputs are all known — during its
//! analysis as soon as the facts are known, then again when it optimises —
//! and only afterwards weighs the result: a few bytes of graph
//! (`ConstantOfShape` of 100000×100000, `Range(0, 3e9)`, an `Expand` or a
//! `Tile` of a constant) make it allocate gigabytes at load. So the graph is
//! walked here first, in topological order, tracking which values are known
//! at load (initializers, `Constant` nodes, the `Shape` of a tensor whose
//! shape is known, and the outputs of nodes over known values only), their
//! shapes, and the values of small numeric ones (the shape vectors that
//! feed `ConstantOfShape`, `Expand`, `Reshape`, `Tile`, `Range`, `Resize`,
//! …). Every node over known values gets an upper bound on its output's
//! element count; over [`MAX_TENSOR_ELEMENTS`], or unknown, it is refused,
//! and so is a model whose computed constants add up to more than
//! [`MAX_FOLD_BYTES`]. Shapes of the other values are inferred for the
//! common operators so that a `Shape` of them is known as tract would know
//! it.

use std::collections::HashMap;

use tract_onnx::pb::{self, attribute_proto::AttributeType};

use crate::check::MAX_TENSOR_ELEMENTS;
use crate::error::Problem;

/// The most bytes the constants tract computes while loading a model may
/// add up to (the sum of every computed constant's bound, whether tract
/// keeps it or not): 2³¹, 2 GiB. Weights a model converts at load
/// (a transposition, a cast, a dequantisation) count once per step; a file
/// of at most 512 MiB stays well inside.
pub const MAX_FOLD_BYTES: u64 = 1 << 31;

/// The most elements of a known value whose values are kept: shape vectors,
/// indices and scalars are far smaller, weights far larger.
const MAX_KEPT_VALUES: u64 = 4096;

/// The most characters of a node's name or op quoted in an error: the
/// strings are the file's own.
const MAX_NAME_CHARS: usize = 80;

/// What the check knows of one value of the graph.
#[derive(Debug, Clone)]
struct Val {
    /// Known at load: tract may compute it before any frame.
    konst: bool,
    /// Its ONNX element type (0 when unknown).
    dtype: i32,
    /// Its exact shape, when known.
    dims: Option<Vec<u64>>,
    /// An upper bound on its element count, when known (always, when
    /// `dims` is).
    bound: Option<u64>,
    /// Its values, for a known value of at most [`MAX_KEPT_VALUES`]
    /// numbers.
    values: Option<Vec<f64>>,
}

impl Val {
    fn runtime(dtype: i32, dims: Option<Vec<u64>>) -> Val {
        let bound = dims.as_deref().map(product);
        Val {
            konst: false,
            dtype,
            dims,
            bound,
            values: None,
        }
    }

    fn unknown() -> Val {
        Val::runtime(0, None)
    }

    fn known(dtype: i32, dims: Vec<u64>, values: Option<Vec<f64>>) -> Val {
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
fn product(dims: &[u64]) -> u64 {
    dims.iter().fold(1u64, |a, &d| a.saturating_mul(d))
}

/// ONNX's element types that the rules below name.
const INT32: i32 = 6;
const INT64: i32 = 7;
const BOOL: i32 = 9;

/// Whether ONNX element type `t` holds integers (or booleans).
fn is_int(t: i32) -> bool {
    matches!(t, 2..=7 | 9 | 12 | 13)
}

/// Bytes per element of ONNX element type `t`.
fn esize(t: i32) -> u64 {
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
fn tensor_val(t: &pb::TensorProto) -> Val {
    let dims: Vec<u64> = t.dims.iter().map(|&d| d.max(0) as u64).collect();
    let n = product(&dims);
    let values = (n <= MAX_KEPT_VALUES)
        .then(|| tensor_values(t, n as usize))
        .flatten();
    Val::known(t.data_type, dims, values)
}

/// The `n` numbers of `t`, from its raw bytes or its typed fields.
fn tensor_values(t: &pb::TensorProto, n: usize) -> Option<Vec<f64>> {
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
fn attr<'a>(node: &'a pb::NodeProto, name: &str) -> Option<&'a pb::AttributeProto> {
    node.attribute.iter().find(|a| a.name == name)
}

fn attr_i(node: &pb::NodeProto, name: &str, default: i64) -> i64 {
    attr(node, name).map_or(default, |a| a.i)
}

fn attr_ints<'a>(node: &'a pb::NodeProto, name: &str) -> Option<&'a [i64]> {
    attr(node, name).map(|a| a.ints.as_slice())
}

fn attr_s<'a>(node: &'a pb::NodeProto, name: &str) -> &'a [u8] {
    attr(node, name).map_or(&[][..], |a| a.s.as_slice())
}

/// `axis` (negative from the end) as an index into `rank` axes.
fn axis(a: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let a = if a < 0 { a + r } else { a };
    (0..r).contains(&a).then_some(a as usize)
}

/// Numpy broadcasting of `shapes` (a 1 takes the other's size; a mismatch,
/// which tract refuses, takes the larger, which only over-estimates).
fn broadcast<'a>(shapes: impl IntoIterator<Item = &'a [u64]>) -> Vec<u64> {
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
fn sizes(v: &[f64]) -> Option<Vec<u64>> {
    v.iter()
        .map(|&x| (x.is_finite() && x >= 0.0 && x.fract() == 0.0).then_some(x as u64))
        .collect()
}

/// Ops whose output has the shape of their first input.
const SAME_SHAPE: &[&str] = &[
    "Abs",
    "Acos",
    "Acosh",
    "Asin",
    "Asinh",
    "Atan",
    "Atanh",
    "BatchNormalization",
    "Cast",
    "CastLike",
    "Ceil",
    "Celu",
    "Clip",
    "Cos",
    "Cosh",
    "CumSum",
    "DequantizeLinear",
    "Dropout",
    "Elu",
    "Erf",
    "Exp",
    "EyeLike",
    "Floor",
    "Gelu",
    "HardSigmoid",
    "HardSwish",
    "Hardmax",
    "Identity",
    "InstanceNormalization",
    "IsInf",
    "IsNaN",
    "LayerNormalization",
    "LeakyRelu",
    "Log",
    "LogSoftmax",
    "LpNormalization",
    "LRN",
    "MeanVarianceNormalization",
    "Mish",
    "Neg",
    "Not",
    "QuantizeLinear",
    "Reciprocal",
    "Relu",
    "ReverseSequence",
    "Round",
    "Scatter",
    "ScatterElements",
    "ScatterND",
    "Selu",
    "Shrink",
    "Sigmoid",
    "Sign",
    "Sin",
    "Sinh",
    "Softmax",
    "Softplus",
    "Softsign",
    "Sqrt",
    "Tan",
    "Tanh",
    "ThresholdedRelu",
    "Trilu",
    "BitwiseNot",
];

/// Ops that broadcast their inputs against each other.
const BROADCAST: &[&str] = &[
    "Add",
    "And",
    "BitShift",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "Div",
    "Equal",
    "Greater",
    "GreaterOrEqual",
    "Less",
    "LessOrEqual",
    "Max",
    "Mean",
    "Min",
    "Mod",
    "Mul",
    "Or",
    "Pow",
    "PRelu",
    "Sub",
    "Sum",
    "Where",
    "Xor",
];

/// Ops whose values this check computes (on small known values): the
/// arithmetic of shape vectors.
fn eval_elementwise(
    op: &str,
    ins: &[&[f64]],
    out: &[u64],
    in_dims: &[&[u64]],
    int: bool,
) -> Option<Vec<f64>> {
    let n = product(out);
    if n > MAX_KEPT_VALUES {
        return None;
    }
    // The flat index of output element `i` in each (broadcast) input.
    let rank = out.len();
    let mut res = Vec::with_capacity(n as usize);
    for i in 0..n {
        let mut args = [0.0f64; 3];
        for (k, (v, d)) in ins.iter().zip(in_dims).enumerate().take(3) {
            let mut rem = i;
            let mut idx = 0u64;
            let mut stride = 1u64;
            for ax in (0..rank).rev() {
                let c = rem % out[ax];
                rem /= out[ax];
                if let Some(j) = (ax + d.len()).checked_sub(rank) {
                    let dim = d[j];
                    idx += if dim == 1 { 0 } else { c } * stride;
                    stride *= dim;
                }
            }
            args[k] = *v.get(idx as usize)?;
        }
        let [a, b, c] = args;
        res.push(match op {
            "Add" | "Sum" => a + b,
            "Sub" => a - b,
            "Mul" => a * b,
            // Integers divide towards zero, as tract's do.
            "Div" => {
                if b == 0.0 {
                    return None;
                }
                if int {
                    (a / b).trunc()
                } else {
                    a / b
                }
            }
            "Max" => a.max(b),
            "Min" => a.min(b),
            "Equal" => f64::from(u8::from(a == b)),
            "Less" => f64::from(u8::from(a < b)),
            "Greater" => f64::from(u8::from(a > b)),
            "Where" => {
                if a != 0.0 {
                    b
                } else {
                    c
                }
            }
            "Neg" => -a,
            "Abs" => a.abs(),
            "Floor" => a.floor(),
            "Ceil" => a.ceil(),
            "Cast" if int => a.trunc(),
            "Identity" | "Cast" => a,
            _ => return None,
        });
    }
    Some(res)
}

/// The spatial output size of a convolution or pooling window.
fn window_out(
    input: u64,
    k: u64,
    stride: u64,
    dil: u64,
    pads: u64,
    ceil: bool,
    auto: &[u8],
) -> u64 {
    let stride = stride.max(1);
    if auto == b"SAME_UPPER" || auto == b"SAME_LOWER" {
        return input.div_ceil(stride);
    }
    let span = dil
        .max(1)
        .saturating_mul(k.saturating_sub(1))
        .saturating_add(1);
    let room = input.saturating_add(pads).saturating_sub(span);
    if ceil {
        room.div_ceil(stride).saturating_add(1)
    } else {
        (room / stride).saturating_add(1)
    }
}

/// The output shapes of `node` (one per output, `None` when unknown) and,
/// when unknown, an upper bound on their element count; the values of
/// small shape arithmetic.
fn infer(node: &pb::NodeProto, ins: &[Option<&Val>]) -> Vec<Val> {
    let op = node.op_type.as_str();
    let nout = node.output.len();
    let get = |i: usize| ins.get(i).copied().flatten();
    let dims = |i: usize| get(i).and_then(|v| v.dims.clone());
    let vals = |i: usize| get(i).and_then(|v| v.values.clone());
    let es0 = get(0).map_or(1, |v| v.dtype);
    // Further outputs (a dropout's mask, a pooling's indices) are taken to
    // be of the first one's shape.
    let one =
        |dtype: i32, d: Option<Vec<u64>>| -> Vec<Val> { vec![Val::runtime(dtype, d); nout.max(1)] };
    // Output shapes bounded but not exactly known.
    let bounded = |dtype: i32, bound: Option<u64>| -> Vec<Val> {
        let v = Val {
            konst: false,
            dtype,
            dims: None,
            bound,
            values: None,
        };
        vec![v; nout.max(1)]
    };
    if SAME_SHAPE.contains(&op) {
        let es = match op {
            "Cast" => attr_i(node, "to", 1) as i32,
            "CastLike" => get(1).map_or(es0, |v| v.dtype),
            "IsInf" | "IsNaN" | "Not" => BOOL,
            "QuantizeLinear" => get(2).map_or(2, |v| v.dtype),
            "DequantizeLinear" => 1,
            "EyeLike" => attr(node, "dtype").map_or(es0, |a| a.i as i32),
            _ => es0,
        };
        let mut out = one(es, dims(0));
        if out[0].dims.is_none() {
            out[0].bound = get(0).and_then(|v| v.bound);
        }
        if let (Some(v), Some(d)) = (vals(0), dims(0)) {
            out[0].values = eval_elementwise(op, &[&v], &d, &[&d], is_int(es));
        }
        return out;
    }
    if BROADCAST.contains(&op) {
        let es = match op {
            "Equal" | "Greater" | "GreaterOrEqual" | "Less" | "LessOrEqual" | "And" | "Or"
            | "Xor" => BOOL,
            "Where" => get(1).map_or(1, |v| v.dtype),
            _ => es0,
        };
        let all: Option<Vec<Vec<u64>>> = ins.iter().flatten().map(|v| v.dims.clone()).collect();
        let Some(all) = all else {
            // Broadcasting makes at most the product of its inputs.
            let b = ins
                .iter()
                .flatten()
                .try_fold(1u64, |a, v| v.bound.map(|b| a.saturating_mul(b)));
            return bounded(es, b);
        };
        let out = broadcast(all.iter().map(Vec::as_slice));
        let mut res = one(es, Some(out.clone()));
        let values: Option<Vec<Vec<f64>>> =
            ins.iter().flatten().map(|v| v.values.clone()).collect();
        if let Some(values) = values {
            let v: Vec<&[f64]> = values.iter().map(Vec::as_slice).collect();
            let d: Vec<&[u64]> = all.iter().map(Vec::as_slice).collect();
            res[0].values = eval_elementwise(op, &v, &out, &d, is_int(es));
        }
        return res;
    }
    match op {
        "Constant" => {
            let Some(a) = node.attribute.first() else {
                return one(0, None);
            };
            let v = match a.name.as_str() {
                "value" => a.t.as_ref().map_or_else(Val::unknown, tensor_val),
                "value_float" => Val::known(1, vec![], Some(vec![a.f as f64])),
                "value_int" => Val::known(INT64, vec![], Some(vec![a.i as f64])),
                "value_floats" => Val::known(
                    1,
                    vec![a.floats.len() as u64],
                    Some(a.floats.iter().map(|&x| x as f64).collect()),
                ),
                "value_ints" => Val::known(
                    INT64,
                    vec![a.ints.len() as u64],
                    Some(a.ints.iter().map(|&x| x as f64).collect()),
                ),
                "value_string" => Val::known(8, vec![], None),
                "value_strings" => Val::known(8, vec![a.strings.len() as u64], None),
                "sparse_value" => a.sparse_tensor.as_ref().map_or_else(Val::unknown, |s| {
                    let d: Vec<u64> = s.dims.iter().map(|&d| d.max(0) as u64).collect();
                    Val::known(s.values.as_ref().map_or(0, |v| v.data_type), d, None)
                }),
                _ => Val::unknown(),
            };
            vec![v]
        }
        "Shape" => {
            let Some(d) = dims(0) else {
                return one(INT64, None);
            };
            let r = d.len() as i64;
            let clamp = |x: i64| (if x < 0 { x + r } else { x }).clamp(0, r) as usize;
            let start = clamp(attr_i(node, "start", 0));
            let end = clamp(attr_i(node, "end", r));
            let d = &d[start..end.max(start)];
            // The shape of a tensor whose shape is known: tract knows it too.
            vec![Val::known(
                INT64,
                vec![d.len() as u64],
                Some(d.iter().map(|&x| x as f64).collect()),
            )]
        }
        "Size" => match dims(0) {
            Some(d) => vec![Val::known(INT64, vec![], Some(vec![product(&d) as f64]))],
            None => one(INT64, Some(vec![])),
        },
        "ConstantOfShape" => {
            let es = attr(node, "value")
                .and_then(|a| a.t.as_ref())
                .map_or(1, |t| t.data_type);
            one(es, vals(0).and_then(|v| sizes(&v)))
        }
        "Expand" => {
            let out = dims(0)
                .zip(vals(1).and_then(|v| sizes(&v)))
                .map(|(a, b)| broadcast([a.as_slice(), b.as_slice()]));
            one(es0, out)
        }
        "Tile" => {
            let out = dims(0)
                .zip(vals(1).and_then(|v| sizes(&v)))
                .and_then(|(a, r)| {
                    (a.len() == r.len()).then(|| {
                        a.iter()
                            .zip(&r)
                            .map(|(x, y)| x.saturating_mul(*y))
                            .collect()
                    })
                });
            one(es0, out)
        }
        "Range" => {
            let scalar = |i: usize| vals(i).filter(|v| v.len() == 1).map(|v| v[0]);
            let n = match (scalar(0), scalar(1), scalar(2)) {
                (Some(s), Some(l), Some(d)) if d != 0.0 => {
                    let n = ((l - s) / d).ceil();
                    // NaN or infinite: no bound.
                    (n.is_finite()).then(|| n.max(0.0).min(u64::MAX as f64) as u64)
                }
                _ => None,
            };
            let mut out = one(es0, n.map(|n| vec![n]));
            if let (Some(n), Some(s), Some(d)) = (n, scalar(0), scalar(2)) {
                if n <= MAX_KEPT_VALUES {
                    out[0].values = Some((0..n).map(|i| s + d * i as f64).collect());
                }
            }
            out
        }
        "Concat" => {
            let all: Option<Vec<Vec<u64>>> = ins.iter().flatten().map(|v| v.dims.clone()).collect();
            let out = all.and_then(|all| {
                let first = all.first()?.clone();
                let ax = axis(attr_i(node, "axis", 0), first.len())?;
                let mut out = first;
                out[ax] = all
                    .iter()
                    .map(|d| d.get(ax).copied().unwrap_or(0))
                    .fold(0u64, u64::saturating_add);
                Some(out)
            });
            let mut res = one(es0, out.clone());
            if out.is_none() {
                // A concatenation is the sum of its parts.
                res[0].bound = ins
                    .iter()
                    .flatten()
                    .try_fold(0u64, |a, v| v.bound.map(|b| a.saturating_add(b)));
            } else if out.as_ref().is_some_and(|d| d.len() == 1) {
                let values: Option<Vec<f64>> = ins
                    .iter()
                    .flatten()
                    .map(|v| v.values.clone())
                    .collect::<Option<Vec<_>>>()
                    .map(|v| v.concat());
                res[0].values = values;
            }
            res
        }
        "Gather" => {
            let out = dims(0).zip(dims(1)).and_then(|(d, i)| {
                let ax = axis(attr_i(node, "axis", 0), d.len())?;
                Some([&d[..ax], &i[..], &d[ax + 1..]].concat())
            });
            let mut res = one(es0, out);
            if let (Some(d), Some(v), Some(idx)) = (dims(0), vals(0), vals(1)) {
                if d.len() == 1 && attr_i(node, "axis", 0) == 0 {
                    let n = d[0] as f64;
                    res[0].values = idx
                        .iter()
                        .map(|&i| {
                            let i = if i < 0.0 { i + n } else { i };
                            v.get(i as usize).copied().filter(|_| i >= 0.0)
                        })
                        .collect();
                }
            }
            if res[0].dims.is_none() {
                res[0].bound = get(0)
                    .and_then(|v| v.bound)
                    .zip(get(1).and_then(|v| v.bound))
                    .map(|(a, b)| a.saturating_mul(b));
            }
            res
        }
        "GatherElements" => one(es0, dims(1)),
        "Unsqueeze" | "Squeeze" => {
            let axes: Option<Vec<i64>> = match attr_ints(node, "axes") {
                Some(a) => Some(a.to_vec()),
                None if get(1).is_some() => vals(1).map(|v| v.iter().map(|&x| x as i64).collect()),
                None => Some(vec![]),
            };
            let out = dims(0).zip(axes).and_then(|(d, axes)| {
                if op == "Squeeze" {
                    if axes.is_empty() {
                        return Some(d.into_iter().filter(|&x| x != 1).collect());
                    }
                    let ax: Option<Vec<usize>> = axes.iter().map(|&a| axis(a, d.len())).collect();
                    let ax = ax?;
                    Some(
                        d.iter()
                            .enumerate()
                            .filter(|(i, _)| !ax.contains(i))
                            .map(|(_, &x)| x)
                            .collect(),
                    )
                } else {
                    let r = d.len() + axes.len();
                    let ax: Option<Vec<usize>> = axes.iter().map(|&a| axis(a, r)).collect();
                    let ax = ax?;
                    let mut rest = d.into_iter();
                    (0..r)
                        .map(|i| {
                            if ax.contains(&i) {
                                Some(1)
                            } else {
                                rest.next()
                            }
                        })
                        .collect()
                }
            });
            let mut res = one(es0, out);
            res[0].values = vals(0);
            res[0].bound = res[0].bound.or_else(|| get(0).and_then(|v| v.bound));
            res
        }
        "Reshape" => {
            let n = get(0).and_then(|v| v.bound);
            let allow_zero = attr_i(node, "allowzero", 0) != 0;
            let out = dims(0).zip(vals(1)).and_then(|(d, s)| {
                let mut out = Vec::with_capacity(s.len());
                let mut hole = None;
                for (i, &x) in s.iter().enumerate() {
                    if x == -1.0 && hole.is_none() {
                        hole = Some(i);
                        out.push(1);
                    } else if x == 0.0 && !allow_zero {
                        out.push(*d.get(i)?);
                    } else {
                        out.push(sizes(&[x])?[0]);
                    }
                }
                if let Some(h) = hole {
                    let rest = product(&out);
                    out[h] = product(&d).checked_div(rest)?;
                }
                Some(out)
            });
            let mut res = one(es0, out);
            res[0].values = vals(0);
            // A reshape keeps its element count, whatever its shape says.
            res[0].bound = res[0].bound.map(|b| b.min(n.unwrap_or(b))).or(n);
            res
        }
        "Flatten" => {
            let out = dims(0).and_then(|d| {
                let ax = if attr_i(node, "axis", 1) == d.len() as i64 {
                    d.len()
                } else {
                    axis(attr_i(node, "axis", 1), d.len())?
                };
                Some(vec![product(&d[..ax]), product(&d[ax..])])
            });
            one(es0, out)
        }
        "Transpose" => {
            let out = dims(0).and_then(|d| match attr_ints(node, "perm") {
                Some(p) => p
                    .iter()
                    .map(|&i| d.get(usize::try_from(i).ok()?).copied())
                    .collect(),
                None => Some(d.iter().rev().copied().collect()),
            });
            one(es0, out)
        }
        "Slice" => {
            let (starts, ends, axes, steps) = if let Some(s) = attr_ints(node, "starts") {
                let f = |v: &[i64]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
                (
                    Some(f(s)),
                    attr_ints(node, "ends").map(f),
                    attr_ints(node, "axes").map(f),
                    None,
                )
            } else {
                (vals(1), vals(2), vals(3), vals(4))
            };
            let out = dims(0).zip(starts).zip(ends).and_then(|((d, s), e)| {
                let mut out = d.clone();
                for (k, (&s, &e)) in s.iter().zip(&e).enumerate() {
                    let ax = match &axes {
                        Some(a) => axis(*a.get(k)? as i64, d.len())?,
                        None => k,
                    };
                    let step = steps
                        .as_ref()
                        .map_or(1.0, |st| st.get(k).copied().unwrap_or(1.0));
                    let n = *d.get(ax)? as f64;
                    let fix =
                        |x: f64, lo: f64, hi: f64| (if x < 0.0 { x + n } else { x }).clamp(lo, hi);
                    let len = if step > 0.0 {
                        ((fix(e, 0.0, n) - fix(s, 0.0, n)) / step).ceil()
                    } else if step < 0.0 {
                        ((fix(s, -1.0, n - 1.0) - fix(e, -1.0, n - 1.0)) / -step).ceil()
                    } else {
                        return None;
                    };
                    out[ax] = len.max(0.0) as u64;
                }
                Some(out)
            });
            let mut res = one(es0, out);
            if res[0].dims.is_none() {
                res[0].bound = get(0).and_then(|v| v.bound);
            } else if let (Some(d), Some(v), Some(o)) = (dims(0), vals(0), res[0].dims.clone()) {
                // A 1-D slice with unit steps: shape arithmetic.
                let start = attr_ints(node, "starts")
                    .and_then(|s| s.first().map(|&x| x as f64))
                    .or_else(|| vals(1).and_then(|s| s.first().copied()));
                let unit = vals(4).is_none_or(|st| st == [1.0]);
                if let (1, true, Some(s)) = (d.len(), unit, start) {
                    let n = d[0] as f64;
                    let s = (if s < 0.0 { s + n } else { s }).clamp(0.0, n) as usize;
                    res[0].values = v.get(s..s + o[0] as usize).map(<[f64]>::to_vec);
                }
            }
            res
        }
        "Split" => {
            let d = dims(0);
            let ax = d
                .as_ref()
                .and_then(|d| axis(attr_i(node, "axis", 0), d.len()));
            let parts: Option<Vec<u64>> = match attr_ints(node, "split") {
                Some(s) => sizes(&s.iter().map(|&x| x as f64).collect::<Vec<_>>()),
                None if get(1).is_some() => vals(1).and_then(|v| sizes(&v)),
                None => d.as_ref().zip(ax).map(|(d, ax)| {
                    let k = nout.max(1) as u64;
                    let each = d[ax].div_ceil(k);
                    (0..k)
                        .map(|i| each.min(d[ax].saturating_sub(i.saturating_mul(each))))
                        .collect()
                }),
            };
            let mut res = Vec::with_capacity(nout);
            for i in 0..nout {
                let out = d
                    .clone()
                    .zip(ax)
                    .zip(parts.as_ref())
                    .and_then(|((mut d, ax), p)| {
                        d[ax] = *p.get(i)?;
                        Some(d)
                    });
                let mut v = Val::runtime(es0, out);
                v.bound = v.bound.or_else(|| get(0).and_then(|v| v.bound));
                res.push(v);
            }
            res
        }
        "Pad" => {
            let pads: Option<Vec<f64>> = match attr_ints(node, "pads") {
                Some(p) => Some(p.iter().map(|&x| x as f64).collect()),
                None => vals(1),
            };
            let out = dims(0).zip(pads).and_then(|(d, p)| {
                let r = d.len();
                if get(3).is_some() || p.len() != 2 * r {
                    // Pads of some axes only (opset 18): bounded below.
                    return None;
                }
                d.iter()
                    .enumerate()
                    .map(|(i, &x)| {
                        let n = x as f64 + p[i] + p[i + r];
                        (n.is_finite() && n >= 0.0).then(|| n.min(u64::MAX as f64) as u64)
                    })
                    .collect()
            });
            one(es0, out)
        }
        "OneHot" => {
            let depth = vals(1)
                .filter(|v| v.len() == 1)
                .and_then(|v| sizes(&v[..1].iter().map(|x| x.trunc()).collect::<Vec<_>>()));
            let out = dims(0).zip(depth).and_then(|(d, depth)| {
                let a = attr_i(node, "axis", -1);
                let ax = axis(a, d.len() + 1)?;
                let mut out = d;
                out.insert(ax, depth[0]);
                Some(out)
            });
            one(get(2).map_or(1, |v| v.dtype), out)
        }
        "Resize" | "Upsample" => {
            let (scales, size) = if op == "Upsample" {
                let s = attr(node, "scales")
                    .map(|a| a.floats.iter().map(|&x| x as f64).collect())
                    .or_else(|| vals(1));
                (s, None)
            } else if ins.len() == 2 {
                (vals(1), None)
            } else {
                (
                    get(2).filter(|v| v.bound != Some(0)).and(vals(2)),
                    get(3).and(vals(3)),
                )
            };
            let out = dims(0).and_then(|d| {
                if let Some(s) = size.and_then(|s| sizes(&s)) {
                    return (s.len() == d.len()).then_some(s);
                }
                let s = scales?;
                (s.len() == d.len()).then_some(())?;
                d.iter()
                    .zip(&s)
                    .map(|(&x, &k)| {
                        // Rounded up: an upper bound whatever the mode.
                        let n = (x as f64 * k).ceil();
                        (n.is_finite() && n >= 0.0).then(|| n.min(u64::MAX as f64) as u64)
                    })
                    .collect()
            });
            one(es0, out)
        }
        "MatMul" | "MatMulInteger" | "QLinearMatMul" => {
            let (a, b) = if op == "QLinearMatMul" {
                (dims(0), dims(3))
            } else {
                (dims(0), dims(1))
            };
            let out = a.zip(b).and_then(|(a, b)| {
                let (mut a, mut b) = (a, b);
                let (va, vb) = (a.len() == 1, b.len() == 1);
                if va {
                    a.insert(0, 1);
                }
                if vb {
                    b.push(1);
                }
                if a.len() < 2 || b.len() < 2 {
                    return None;
                }
                let m = a[a.len() - 2];
                let n = b[b.len() - 1];
                let mut out = broadcast([&a[..a.len() - 2], &b[..b.len() - 2]]);
                if !va {
                    out.push(m);
                }
                if !vb {
                    out.push(n);
                }
                Some(out)
            });
            let es = if op == "MatMulInteger" { INT32 } else { es0 };
            one(es, out)
        }
        "Gemm" => {
            let out = dims(0).zip(dims(1)).and_then(|(a, b)| {
                let m = if attr_i(node, "transA", 0) != 0 {
                    *a.get(1)?
                } else {
                    *a.first()?
                };
                let n = if attr_i(node, "transB", 0) != 0 {
                    *b.first()?
                } else {
                    *b.get(1)?
                };
                Some(vec![m, n])
            });
            one(es0, out)
        }
        "Conv" | "ConvInteger" | "QLinearConv" | "MaxPool" | "AveragePool" | "LpPool"
        | "ConvTranspose" => {
            let w = match op {
                "QLinearConv" => dims(3),
                "Conv" | "ConvInteger" | "ConvTranspose" => dims(1),
                _ => None,
            };
            let out = dims(0).and_then(|x| {
                let sp = x.len().checked_sub(2)?;
                let k: Vec<u64> = match (&w, attr_ints(node, "kernel_shape")) {
                    (_, Some(k)) => k.iter().map(|&v| v.max(0) as u64).collect(),
                    (Some(w), None) => w.get(2..)?.to_vec(),
                    (None, None) => return None,
                };
                let at = |name: &str, i: usize, def: i64| {
                    attr_ints(node, name)
                        .and_then(|v| v.get(i).copied())
                        .unwrap_or(def)
                        .max(0) as u64
                };
                let auto = attr_s(node, "auto_pad");
                let channels = match op {
                    "ConvTranspose" => w
                        .as_ref()?
                        .get(1)?
                        .saturating_mul(attr_i(node, "group", 1).max(1) as u64),
                    "Conv" | "ConvInteger" | "QLinearConv" => *w.as_ref()?.first()?,
                    _ => x[1],
                };
                let mut out = vec![x[0], channels];
                for i in 0..sp {
                    let pads = at("pads", i, 0).saturating_add(at("pads", i + sp, 0));
                    let (s, d) = (at("strides", i, 1), at("dilations", i, 1));
                    let ki = *k.get(i)?;
                    out.push(if op == "ConvTranspose" {
                        if let Some(os) = attr_ints(node, "output_shape") {
                            os.get(i).copied()?.max(0) as u64
                        } else {
                            // Saturating: the attributes are the file's.
                            let full = s
                                .saturating_mul(x[2 + i].saturating_sub(1))
                                .saturating_add(at("output_padding", i, 0))
                                .saturating_add(d.max(1).saturating_mul(ki.saturating_sub(1)))
                                .saturating_add(1);
                            if auto.starts_with(b"SAME") {
                                x[2 + i].saturating_mul(s.max(1))
                            } else {
                                full.saturating_sub(pads)
                            }
                        }
                    } else {
                        window_out(
                            x[2 + i],
                            ki,
                            s,
                            d,
                            pads,
                            attr_i(node, "ceil_mode", 0) != 0,
                            auto,
                        )
                    });
                }
                Some(out)
            });
            let mut res = one(if op == "ConvInteger" { INT32 } else { es0 }, out);
            if op == "MaxPool" && nout > 1 {
                res[1] = Val::runtime(INT64, res[0].dims.clone());
            }
            res
        }
        "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => {
            let out = dims(0).map(|d| {
                d.iter()
                    .enumerate()
                    .map(|(i, &x)| if i < 2 { x } else { 1 })
                    .collect()
            });
            one(es0, out)
        }
        "ArgMax" | "ArgMin" | "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin"
        | "ReduceProd" | "ReduceL1" | "ReduceL2" | "ReduceLogSum" | "ReduceLogSumExp"
        | "ReduceSumSquare" => {
            let arg = op.starts_with("Arg");
            let keep = attr_i(node, "keepdims", 1) != 0;
            let axes: Option<Vec<i64>> = if arg {
                Some(vec![attr_i(node, "axis", 0)])
            } else if let Some(a) = attr_ints(node, "axes") {
                Some(a.to_vec())
            } else if get(1).is_some() {
                vals(1).map(|v| v.iter().map(|&x| x as i64).collect())
            } else {
                Some(vec![])
            };
            let noop = attr_i(node, "noop_with_empty_axes", 0) != 0;
            let out = dims(0).zip(axes).and_then(|(d, axes)| {
                let ax: Option<Vec<usize>> = axes.iter().map(|&a| axis(a, d.len())).collect();
                let ax = ax?;
                if ax.is_empty() && noop {
                    return Some(d);
                }
                let all = ax.is_empty();
                Some(
                    d.iter()
                        .enumerate()
                        .filter_map(|(i, &x)| match (all || ax.contains(&i), keep) {
                            (false, _) => Some(x),
                            (true, true) => Some(1),
                            (true, false) => None,
                        })
                        .collect(),
                )
            });
            let mut res = one(if arg { INT64 } else { es0 }, out);
            res[0].bound = res[0].bound.or_else(|| get(0).and_then(|v| v.bound));
            res
        }
        "DepthToSpace" | "SpaceToDepth" => {
            let b = attr_i(node, "blocksize", 1).max(1) as u64;
            let out = dims(0).filter(|d| d.len() == 4).map(|d| {
                if op == "DepthToSpace" {
                    vec![
                        d[0],
                        d[1] / b.saturating_mul(b),
                        d[2].saturating_mul(b),
                        d[3].saturating_mul(b),
                    ]
                } else {
                    vec![
                        d[0],
                        d[1].saturating_mul(b).saturating_mul(b),
                        d[2] / b,
                        d[3] / b,
                    ]
                }
            });
            one(es0, out)
        }
        "TopK" => {
            let out = dims(0).zip(vals(1)).and_then(|(mut d, k)| {
                let ax = axis(attr_i(node, "axis", -1), d.len())?;
                d[ax] = d[ax].min(sizes(k.get(..1)?)?[0]);
                Some(d)
            });
            let mut res = one(es0, out.clone());
            res.truncate(1);
            res.push(Val::runtime(INT64, out));
            res.resize(nout.max(1), Val::unknown());
            for r in &mut res {
                r.bound = r.bound.or_else(|| get(0).and_then(|v| v.bound));
            }
            res
        }
        // A value-dependent selection of its input.
        "Compress" => bounded(es0, get(0).and_then(|v| v.bound)),
        "NonZero" => bounded(
            INT64,
            get(0).and_then(|v| Some(v.bound?.saturating_mul(v.dims.as_ref()?.len() as u64))),
        ),
        // An einsum is at most the product of everything its inputs index.
        "Einsum" => bounded(
            es0,
            ins.iter()
                .flatten()
                .try_fold(1u64, |a, v| v.bound.map(|b| a.saturating_mul(b))),
        ),
        "RandomNormal" | "RandomUniform" => {
            let d = attr_ints(node, "shape").map(|s| s.iter().map(|&x| x.max(0) as u64).collect());
            one(attr(node, "dtype").map_or(1, |a| a.i as i32), d)
        }
        "RandomNormalLike" | "RandomUniformLike" | "Bernoulli" => one(es0, dims(0)),
        _ => {
            // An op this check does not model: bounded by the product, over
            // the right-aligned axes of its inputs, of their largest
            // dimension — exact for elementwise ops and reductions, an
            // over-estimate for most others. Ops whose output size comes
            // from their inputs' values are modelled above.
            let all: Option<Vec<Vec<u64>>> = ins.iter().flatten().map(|v| v.dims.clone()).collect();
            let b = all.filter(|a| !a.is_empty()).map(|all| {
                let r = all.iter().map(Vec::len).max().unwrap_or(0);
                let mut m = vec![1u64; r];
                for d in &all {
                    for (o, &x) in m[r - d.len()..].iter_mut().zip(d) {
                        *o = (*o).max(x);
                    }
                }
                product(&m)
            });
            bounded(es0, b)
        }
    }
}

/// A node's name for errors: its own, else its first output's, else its
/// position; at most [`MAX_NAME_CHARS`] characters, on one line.
fn node_name(node: &pb::NodeProto, index: usize) -> String {
    let raw = if !node.name.is_empty() {
        node.name.as_str()
    } else {
        node.output.first().map_or("", String::as_str)
    };
    if raw.is_empty() {
        return format!("#{index}");
    }
    clean(raw)
}

/// A string of the file, quotable in a one-line message.
fn clean(s: &str) -> String {
    let mut out: String = s
        .chars()
        .take(MAX_NAME_CHARS)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if s.chars().count() > MAX_NAME_CHARS {
        out.push('…');
    }
    out
}

/// The bytes of constants computed so far, against [`MAX_FOLD_BYTES`].
struct Budget {
    bytes: u64,
}

/// The values a graph sees: its own, then its parents' (a control-flow
/// body reads the values around it without copying them).
struct Scope<'a> {
    own: HashMap<String, Val>,
    parent: Option<&'a Scope<'a>>,
}

impl Scope<'_> {
    fn get(&self, name: &str) -> Option<&Val> {
        self.own
            .get(name)
            .or_else(|| self.parent.and_then(|p| p.get(name)))
    }
}

/// Checks everything tract may compute from the constants of `graph` while
/// loading it, `input` being fixed at `shape`.
///
/// # Errors
/// [`Problem::FoldTooLarge`], [`Problem::FoldUnbounded`] or
/// [`Problem::FoldBudget`] for the first node in topological order that
/// breaks the rule.
pub(crate) fn check_folding(
    graph: &pb::GraphProto,
    input: &str,
    shape: [usize; 4],
) -> Result<(), Problem> {
    let mut scope = Scope {
        own: HashMap::new(),
        parent: None,
    };
    let fixed = Val::runtime(1, Some(shape.iter().map(|&d| d as u64).collect()));
    let mut budget = Budget { bytes: 0 };
    walk(graph, &mut scope, &mut budget, Some((input, fixed)))
}

/// Walks `graph` (the main one or a body of a control-flow node, which sees
/// its parents' values in `scope`).
fn walk(
    graph: &pb::GraphProto,
    scope: &mut Scope<'_>,
    budget: &mut Budget,
    fixed: Option<(&str, Val)>,
) -> Result<(), Problem> {
    // A body's own inputs are run-time values; the main graph's one input
    // has its fixed shape. An initializer of the same name stands for it.
    for i in &graph.input {
        let v = match &fixed {
            Some((name, v)) if *name == i.name => v.clone(),
            _ => Val::unknown(),
        };
        scope.own.insert(i.name.clone(), v);
    }
    for init in &graph.initializer {
        scope.own.insert(init.name.clone(), tensor_val(init));
    }
    for s in &graph.sparse_initializer {
        if let Some(v) = &s.values {
            let d: Vec<u64> = s.dims.iter().map(|&d| d.max(0) as u64).collect();
            scope
                .own
                .insert(v.name.clone(), Val::known(v.data_type, d, None));
        }
    }
    // Kahn's order: a hostile file need not list its nodes sorted, and tract
    // sorts them itself.
    let produced: HashMap<&str, usize> = graph
        .node
        .iter()
        .enumerate()
        .flat_map(|(i, n)| n.output.iter().map(move |o| (o.as_str(), i)))
        .collect();
    let mut waiting: Vec<usize> = vec![0; graph.node.len()];
    let mut consumers: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, n) in graph.node.iter().enumerate() {
        for inp in n.input.iter().filter(|s| !s.is_empty()) {
            if let Some(&p) = produced.get(inp.as_str()) {
                if p != i && scope.get(inp).is_none() {
                    waiting[i] += 1;
                    consumers.entry(p).or_default().push(i);
                }
            }
        }
    }
    let mut ready: Vec<usize> = (0..graph.node.len())
        .filter(|&i| waiting[i] == 0)
        .rev()
        .collect();
    while let Some(i) = ready.pop() {
        let node = &graph.node[i];
        visit(node, i, scope, budget)?;
        for &c in consumers.get(&i).map_or(&[][..], Vec::as_slice) {
            waiting[c] -= 1;
            if waiting[c] == 0 {
                ready.push(c);
            }
        }
    }
    // Nodes left waiting are in a cycle, which tract refuses.
    Ok(())
}

/// Checks one node and records its outputs in `scope`.
fn visit(
    node: &pb::NodeProto,
    index: usize,
    scope: &mut Scope<'_>,
    budget: &mut Budget,
) -> Result<(), Problem> {
    let ins: Vec<Option<Val>> = node
        .input
        .iter()
        .map(|n| (!n.is_empty()).then(|| scope.get(n).cloned().unwrap_or_else(Val::unknown)))
        .collect();
    let refs: Vec<Option<&Val>> = ins.iter().map(Option::as_ref).collect();
    let bodies: Vec<&pb::GraphProto> = node
        .attribute
        .iter()
        .filter(|a| {
            a.r#type == AttributeType::Graph as i32
                || a.r#type == AttributeType::Graphs as i32
                || a.g.is_some()
                || !a.graphs.is_empty()
        })
        .flat_map(|a| a.g.iter().chain(&a.graphs))
        .collect();
    let mut outs = if bodies.is_empty() {
        infer(node, &refs)
    } else {
        // Control flow: each body is checked with the values around it; its
        // results are not modelled.
        for body in &bodies {
            let mut inner = Scope {
                own: HashMap::new(),
                parent: Some(scope),
            };
            walk(body, &mut inner, budget, None)?;
        }
        vec![Val::unknown(); node.output.len()]
    };
    // tract evaluates a node as soon as every input is known; `Shape` and
    // `Size` of a tensor of known shape are known whatever its values;
    // `Constant` and the random generators have no inputs at all.
    let present: Vec<&Val> = refs.iter().flatten().copied().collect();
    let konst = match node.op_type.as_str() {
        "Shape" | "Size" => outs.first().is_some_and(|v| v.dims.is_some()),
        "EyeLike" | "ConstantLike" => present.first().is_some_and(|v| v.dims.is_some()),
        "Constant" => true,
        _ => (!present.is_empty() || node.input.is_empty()) && present.iter().all(|v| v.konst),
    };
    if konst {
        let name = || node_name(node, index);
        let op = || clean(&node.op_type);
        for out in &mut outs {
            out.konst = true;
            let sparse = node.attribute.iter().any(|a| a.name == "sparse_value");
            if node.op_type == "Constant" && !sparse {
                // Its values are in the file, which tract reads only when
                // they are all there; nothing is computed. A sparse one is
                // made dense: that is computed.
                continue;
            }
            let Some(n) = out.bound else {
                return Err(Problem::FoldUnbounded {
                    node: name(),
                    op: op(),
                });
            };
            if n > MAX_TENSOR_ELEMENTS {
                return Err(Problem::FoldTooLarge {
                    node: name(),
                    op: op(),
                    elements: n,
                    max: MAX_TENSOR_ELEMENTS,
                });
            }
            budget.bytes = budget
                .bytes
                .saturating_add(n.saturating_mul(esize(out.dtype)));
            if budget.bytes > MAX_FOLD_BYTES {
                return Err(Problem::FoldBudget {
                    node: name(),
                    op: op(),
                    bytes: budget.bytes,
                    max: MAX_FOLD_BYTES,
                });
            }
        }
    } else {
        for out in &mut outs {
            out.konst = false;
            out.values = None;
        }
    }
    for (name, val) in node.output.iter().zip(outs) {
        if !name.is_empty() {
            scope.own.insert(name.clone(), val);
        }
    }
    Ok(())
}
