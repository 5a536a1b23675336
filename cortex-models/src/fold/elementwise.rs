//! The ops whose output shape follows their inputs' (the same shape, or
//! broadcast), the values of small shape arithmetic, and the spatial size
//! of a window.

use super::val::*;

/// Ops whose output has the shape of their first input.
pub(super) const SAME_SHAPE: &[&str] = &[
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
pub(super) const BROADCAST: &[&str] = &[
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
pub(super) fn eval_elementwise(
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
pub(super) fn window_out(
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
