//! Models whose constants make tract compute huge values while loading
//! (`ConstantOfShape`, `Range`, `Expand`, `Tile`, a broadcast, a shape
//! taken from the input): each is refused at once with a typed error naming
//! the node, before tract sees it; a model folding modest constants still
//! loads and runs. The models are written here, a few hundred bytes each,
//! with a minimal protobuf writer (the crate's ONNX types cannot encode
//! without `prost` itself).

use std::sync::Arc;
use std::time::{Duration, Instant};

use cortex_models::text::TextDetector;
use cortex_models::{Infer, InputShape, Model, ModelError, Problem, MAX_TENSOR_ELEMENTS};
use cortex_vision::ops::RgbFrame;
use cortex_vision::registry::{with_registry, Registry};
use ndarray::Array4;

/// A minimal protobuf writer: fields of ONNX's messages as bytes.
mod pb {
    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    /// A varint field.
    pub fn int(out: &mut Vec<u8>, field: u32, v: i64) {
        varint(out, u64::from(field) << 3);
        varint(out, v as u64);
    }

    /// A length-delimited field (bytes, string or message).
    pub fn bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
        varint(out, (u64::from(field) << 3) | 2);
        varint(out, data.len() as u64);
        out.extend_from_slice(data);
    }
}

const FLOAT: i64 = 1;
const INT64: i64 = 7;

/// A `TensorProto` with its values as raw little-endian bytes.
fn tensor(name: &str, dtype: i64, dims: &[i64], raw: &[u8]) -> Vec<u8> {
    let mut t = Vec::new();
    for &d in dims {
        pb::int(&mut t, 1, d);
    }
    pb::int(&mut t, 2, dtype);
    pb::bytes(&mut t, 8, name.as_bytes());
    pb::bytes(&mut t, 9, raw);
    t
}

fn i64s(name: &str, dims: &[i64], values: &[i64]) -> Vec<u8> {
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    tensor(name, INT64, dims, &raw)
}

fn f32s(name: &str, dims: &[i64], values: &[f32]) -> Vec<u8> {
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    tensor(name, FLOAT, dims, &raw)
}

/// An attribute of a node.
enum Attr {
    Int(&'static str, i64),
    Tensor(&'static str, Vec<u8>),
}

fn node(op: &str, name: &str, inputs: &[&str], outputs: &[&str], attrs: &[Attr]) -> Vec<u8> {
    let mut n = Vec::new();
    for i in inputs {
        pb::bytes(&mut n, 1, i.as_bytes());
    }
    for o in outputs {
        pb::bytes(&mut n, 2, o.as_bytes());
    }
    pb::bytes(&mut n, 3, name.as_bytes());
    pb::bytes(&mut n, 4, op.as_bytes());
    for a in attrs {
        let mut m = Vec::new();
        match a {
            Attr::Int(k, v) => {
                pb::bytes(&mut m, 1, k.as_bytes());
                pb::int(&mut m, 3, *v);
                pb::int(&mut m, 20, 2);
            }
            Attr::Tensor(k, t) => {
                pb::bytes(&mut m, 1, k.as_bytes());
                pb::bytes(&mut m, 5, t);
                pb::int(&mut m, 20, 4);
            }
        }
        pb::bytes(&mut n, 5, &m);
    }
    n
}

/// A `ValueInfoProto` of an f32 tensor (`dims` empty: unknown shape).
fn value_info(name: &str, dims: Option<&[i64]>) -> Vec<u8> {
    let mut tt = Vec::new();
    pb::int(&mut tt, 1, FLOAT);
    if let Some(dims) = dims {
        let mut shape = Vec::new();
        for &d in dims {
            let mut dim = Vec::new();
            pb::int(&mut dim, 1, d);
            pb::bytes(&mut shape, 1, &dim);
        }
        pb::bytes(&mut tt, 2, &shape);
    }
    let mut ty = Vec::new();
    pb::bytes(&mut ty, 1, &tt);
    let mut v = Vec::new();
    pb::bytes(&mut v, 1, name.as_bytes());
    pb::bytes(&mut v, 2, &ty);
    v
}

/// A model of input `x` (1x3x8x8 f32), output `y`, opset 17.
fn model(nodes: &[Vec<u8>], inits: &[Vec<u8>], output: Option<&[i64]>) -> Vec<u8> {
    let mut g = Vec::new();
    for n in nodes {
        pb::bytes(&mut g, 1, n);
    }
    pb::bytes(&mut g, 2, b"g");
    for i in inits {
        pb::bytes(&mut g, 5, i);
    }
    pb::bytes(&mut g, 11, &value_info("x", Some(&[1, 3, 8, 8])));
    pb::bytes(&mut g, 12, &value_info("y", output));
    let mut opset = Vec::new();
    pb::bytes(&mut opset, 1, b"");
    pb::int(&mut opset, 2, 17);
    let mut m = Vec::new();
    pb::int(&mut m, 1, 8);
    pb::bytes(&mut m, 8, &opset);
    pb::bytes(&mut m, 7, &g);
    m
}

const SHAPE: InputShape = InputShape::image(3, 8, 8);

/// `big` (a constant computed from `inits` by `nodes`) summed into a
/// scalar and added to `x`: the huge value feeds the output, so nothing can
/// prune it.
fn summed(mut nodes: Vec<Vec<u8>>, inits: &[Vec<u8>]) -> Vec<u8> {
    nodes.push(node(
        "ReduceSum",
        "sum",
        &["big"],
        &["s"],
        &[Attr::Int("keepdims", 1)],
    ));
    nodes.push(node("Add", "out", &["x", "s"], &["y"], &[]));
    model(&nodes, inits, None)
}

/// Loads `bytes`, expecting a refusal within a second.
fn refused(bytes: Vec<u8>) -> ModelError {
    assert!(bytes.len() < 1000, "a tiny file: {} bytes", bytes.len());
    let start = Instant::now();
    let err = Model::from_bytes("folding.onnx", bytes, SHAPE).unwrap_err();
    let took = start.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "refused at once, not after computing: {took:?}"
    );
    assert_eq!(err.to_string().lines().count(), 1, "{err}");
    err
}

fn too_large(node: &str, op: &str, elements: u64) -> Problem {
    Problem::FoldTooLarge {
        node: node.into(),
        op: op.into(),
        elements,
        max: MAX_TENSOR_ELEMENTS,
    }
}

fn constant_of_shape(dims: &[i64]) -> Vec<u8> {
    summed(
        vec![node(
            "ConstantOfShape",
            "big",
            &["shape"],
            &["big"],
            &[Attr::Tensor("value", f32s("v", &[1], &[1.0]))],
        )],
        &[i64s("shape", &[dims.len() as i64], dims)],
    )
}

#[test]
fn constant_of_shape_huge() {
    let err = refused(constant_of_shape(&[1, 1, 100_000, 100_000]));
    assert_eq!(
        err.problem,
        too_large("big", "ConstantOfShape", 10_000_000_000),
        "{err}"
    );
    assert!(
        err.to_string().contains("node `big` (ConstantOfShape)"),
        "{err}"
    );
}

#[test]
fn constant_of_shape_just_over_the_limit() {
    // The audit's 207-byte model: 9e8 elements, 3.6 GB computed at load.
    let err = refused(constant_of_shape(&[1, 1, 30_000, 30_000]));
    assert_eq!(
        err.problem,
        too_large("big", "ConstantOfShape", 900_000_000)
    );
    // One over the limit is refused; at the limit it is a bound, not a
    // refusal (not loaded here: 1 GiB of f32).
    let err = refused(constant_of_shape(&[
        1,
        1,
        1,
        (MAX_TENSOR_ELEMENTS + 1) as i64,
    ]));
    assert_eq!(
        err.problem,
        too_large("big", "ConstantOfShape", MAX_TENSOR_ELEMENTS + 1)
    );
}

#[test]
fn range_of_three_billion() {
    let nodes = vec![
        node("Range", "r", &["start", "limit", "delta"], &["ri"], &[]),
        node("Cast", "big", &["ri"], &["big"], &[Attr::Int("to", FLOAT)]),
    ];
    let inits = [
        i64s("start", &[], &[0]),
        i64s("limit", &[], &[3_000_000_000]),
        i64s("delta", &[], &[1]),
    ];
    let err = refused(summed(nodes, &inits));
    assert_eq!(err.problem, too_large("r", "Range", 3_000_000_000), "{err}");
}

#[test]
fn range_to_a_limit_the_check_cannot_know() {
    // The limit is a reduction of a constant: tract computes it (3e9) and
    // then the range; the check keeps no values of reductions, so it cannot
    // bound the range and refuses it rather than let tract find out.
    let nodes = vec![
        node(
            "ReduceMax",
            "m",
            &["limits"],
            &["limit"],
            &[Attr::Int("keepdims", 0)],
        ),
        node("Range", "r", &["start", "limit", "delta"], &["ri"], &[]),
        node("Cast", "big", &["ri"], &["big"], &[Attr::Int("to", FLOAT)]),
    ];
    let inits = [
        i64s("start", &[], &[0]),
        i64s("limits", &[2], &[1, 3_000_000_000]),
        i64s("delta", &[], &[1]),
    ];
    let err = refused(summed(nodes, &inits));
    assert_eq!(
        err.problem,
        Problem::FoldUnbounded {
            node: "r".into(),
            op: "Range".into()
        },
        "{err}"
    );
}

#[test]
fn expand_of_a_constant() {
    let nodes = vec![node("Expand", "big", &["one", "shape"], &["big"], &[])];
    let inits = [
        f32s("one", &[1], &[1.0]),
        i64s("shape", &[4], &[1, 1, 100_000, 100_000]),
    ];
    let err = refused(summed(nodes, &inits));
    assert_eq!(
        err.problem,
        too_large("big", "Expand", 10_000_000_000),
        "{err}"
    );
}

#[test]
fn tile_with_huge_repeats() {
    let nodes = vec![node("Tile", "big", &["four", "repeats"], &["big"], &[])];
    let inits = [
        f32s("four", &[1, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0]),
        i64s("repeats", &[4], &[1, 1, 50_000, 50_000]),
    ];
    let err = refused(summed(nodes, &inits));
    assert_eq!(
        err.problem,
        too_large("big", "Tile", 10_000_000_000),
        "{err}"
    );
}

/// A column and a row of 100000 ones each, made by `ConstantOfShape`
/// (0.8 MB each: within the limits), then `op` of the two.
fn outer(op: &str) -> Vec<u8> {
    let one = || Attr::Tensor("value", f32s("v", &[1], &[1.0]));
    let nodes = vec![
        node("ConstantOfShape", "col", &["cs"], &["col"], &[one()]),
        node("ConstantOfShape", "row", &["rs"], &["row"], &[one()]),
        node(op, "big", &["col", "row"], &["big"], &[]),
    ];
    let inits = [
        i64s("cs", &[2], &[100_000, 1]),
        i64s("rs", &[2], &[1, 100_000]),
    ];
    summed(nodes, &inits)
}

#[test]
fn matmul_of_two_small_constants() {
    let err = refused(outer("MatMul"));
    assert_eq!(
        err.problem,
        too_large("big", "MatMul", 10_000_000_000),
        "{err}"
    );
}

#[test]
fn broadcast_of_two_small_constants() {
    let err = refused(outer("Add"));
    assert_eq!(
        err.problem,
        too_large("big", "Add", 10_000_000_000),
        "{err}"
    );
}

#[test]
fn shape_of_the_input_scaled_up() {
    // Shape(x) is known once the input is fixed, so tract folds what is
    // computed from it: 1x3x8x8 times 10000 per spatial axis.
    let nodes = vec![
        node("Shape", "shape", &["x"], &["xs"], &[]),
        node("Mul", "scaled", &["xs", "k"], &["s2"], &[]),
        node(
            "ConstantOfShape",
            "big",
            &["s2"],
            &["big"],
            &[Attr::Tensor("value", f32s("v", &[1], &[1.0]))],
        ),
    ];
    let inits = [i64s("k", &[4], &[1, 1, 10_000, 10_000])];
    let err = refused(summed(nodes, &inits));
    assert_eq!(
        err.problem,
        too_large("big", "ConstantOfShape", 3 * 80_000 * 80_000),
        "{err}"
    );
}

#[test]
fn modest_folding_still_loads_and_runs() {
    // x + sum(ones(1x1x64x64)) + ones(shape(x)) · 0.5: folded by tract at
    // load, 4096 + 192 values.
    let nodes = vec![
        node(
            "ConstantOfShape",
            "big",
            &["shape"],
            &["big"],
            &[Attr::Tensor("value", f32s("v", &[1], &[1.0]))],
        ),
        node(
            "ReduceSum",
            "sum",
            &["big"],
            &["s"],
            &[Attr::Int("keepdims", 1)],
        ),
        node("Shape", "xs", &["x"], &["xs"], &[]),
        node(
            "ConstantOfShape",
            "halves",
            &["xs"],
            &["h"],
            &[Attr::Tensor("value", f32s("v", &[1], &[0.5]))],
        ),
        node("Add", "sh", &["s", "h"], &["sh"], &[]),
        node("Add", "out", &["x", "sh"], &["y"], &[]),
    ];
    let inits = [i64s("shape", &[4], &[1, 1, 64, 64])];
    let bytes = model(&nodes, &inits, Some(&[1, 3, 8, 8]));
    let model = Model::from_bytes("modest.onnx", bytes, SHAPE).expect("a modest model loads");
    let input = Array4::from_shape_fn((1, 3, 8, 8), |(_, c, y, x)| (c * 64 + y * 8 + x) as f32);
    let out = cortex_models::infer(&model, &input).expect("runs");
    let want = input.mapv(|v| v + 4096.5).into_dyn();
    assert_eq!(out.shape(), want.shape());
    assert!(out.iter().zip(&want).all(|(a, b)| a == b));
}

#[test]
fn scalar_output_is_named_a_scalar() {
    // A model whose output is rank 0, given to the text detector (which
    // needs a 1x1xHxW map): the message says what it got. On tract: OpenCV's
    // DNN module has no rank-0 matrix and hands back 1x1 instead.
    let nodes = vec![node(
        "ReduceSum",
        "all",
        &["x"],
        &["y"],
        &[Attr::Int("keepdims", 0)],
    )];
    let bytes = model(&nodes, &[], Some(&[]));
    let model = Model::from_bytes("scalar.onnx", bytes, SHAPE).expect("loads");
    let detector = TextDetector::new(model);
    let frame = RgbFrame::from_elem((8, 8, 3), 100);
    let reg = Arc::new(Registry::in_memory());
    reg.force::<Infer>("tract").unwrap();
    let err = with_registry(&reg, || detector.detect_into(&frame, &mut Vec::new())).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("gave a scalar output"), "{text}");
}
