//! Each ONNX op's output shapes, or a bound on their size, from what is
//! known of its inputs.

use tract_onnx::pb;

use super::elementwise::{eval_elementwise, window_out, BROADCAST, SAME_SHAPE};
use super::val::*;

/// The output shapes of `node` (one per output, `None` when unknown) and,
/// when unknown, an upper bound on their element count; the values of
/// small shape arithmetic.
pub(super) fn infer(node: &pb::NodeProto, ins: &[Option<&Val>]) -> Vec<Val> {
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
