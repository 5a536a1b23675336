//! What a model file declares, checked before any engine builds anything
//! from it: one input of rank 4 and type f32, the shape asked for fitting
//! the declared one and the size limit, weights that the file really holds.
//! An engine allocates what a model declares, so every size is checked here
//! first.

use std::collections::HashSet;

use tract_onnx::pb::{self, tensor_shape_proto::dimension, type_proto};

use crate::error::{elements, shape_text, Problem};
use crate::fold::check_folding;

/// The most elements one tensor of a model may have, input or computed:
/// 2²⁸ (1 GiB of f32). A text detector at 1920×1088 peaks near 2²⁵.
pub const MAX_TENSOR_ELEMENTS: u64 = 1 << 28;

/// The input shape a model node runs at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InputShape {
    /// The shape the model declares (every dimension must be fixed there).
    Declared,
    /// This shape, `[n, c, h, w]`; the model's fixed dimensions must agree
    /// and its free ones take these values.
    Fixed([usize; 4]),
}

impl InputShape {
    /// `[1, channels, height, width]`: one image.
    pub const fn image(channels: usize, height: usize, width: usize) -> InputShape {
        InputShape::Fixed([1, channels, height, width])
    }
}

/// The model's input as declared.
#[derive(Debug, Clone)]
pub(crate) struct Declared {
    /// The input's name.
    pub name: String,
}

fn declared_text(dims: &[Option<usize>]) -> String {
    let parts: Vec<String> = dims
        .iter()
        .map(|d| d.map_or_else(|| "?".to_string(), |v| v.to_string()))
        .collect();
    parts.join("x")
}

fn dtype_name(elem_type: i32) -> String {
    pb::tensor_proto::DataType::try_from(elem_type).map_or_else(
        |_| format!("element type {elem_type}"),
        |t| t.as_str_name().to_lowercase(),
    )
}

/// Checks `proto` (of a file of `file_len` bytes) against the node's
/// contract and fixes the input shape.
///
/// # Errors
/// The first [`Problem`] found, in the order: no graph, external or
/// oversized weights, arity, element type, rank, shape, size, then what
/// tract would compute from constants while loading ([`crate::fold`]).
pub(crate) fn check(
    proto: &pb::ModelProto,
    file_len: usize,
    requested: InputShape,
) -> Result<(Declared, [usize; 4]), Problem> {
    let graph = proto
        .graph
        .as_ref()
        .ok_or_else(|| Problem::Parse("it has no graph".into()))?;
    for init in &graph.initializer {
        // `DataLocation::External`: the values are in another file.
        if init.data_location == Some(1) || !init.external_data.is_empty() {
            return Err(Problem::ExternalData(init.name.clone()));
        }
        // Every value takes at least a byte of the file: a tensor declaring
        // more values than the file has bytes would make the engine allocate
        // what the file cannot hold.
        let dims: Option<Vec<usize>> = init.dims.iter().map(|&d| usize::try_from(d).ok()).collect();
        let too_many = dims
            .as_deref()
            .is_none_or(|d| elements(d) > file_len as u64);
        if too_many {
            let shape: Vec<String> = init.dims.iter().map(i64::to_string).collect();
            return Err(Problem::Initializer {
                name: init.name.clone(),
                shape: shape.join("x"),
                bytes: file_len,
            });
        }
    }
    let weights: HashSet<&str> = graph.initializer.iter().map(|i| i.name.as_str()).collect();
    let inputs: Vec<&pb::ValueInfoProto> = graph
        .input
        .iter()
        .filter(|i| !weights.contains(i.name.as_str()))
        .collect();
    let [input] = inputs[..] else {
        return Err(Problem::Arity {
            inputs: inputs.len(),
            outputs: graph.output.len(),
        });
    };
    if graph.output.is_empty() {
        return Err(Problem::Arity {
            inputs: 1,
            outputs: 0,
        });
    }
    let name = input.name.clone();
    let tensor = match input.r#type.as_ref().and_then(|t| t.value.as_ref()) {
        Some(type_proto::Value::TensorType(t)) => t,
        None => {
            return Err(Problem::DType {
                input: name,
                dtype: "not a tensor".into(),
            })
        }
    };
    if tensor.elem_type != pb::tensor_proto::DataType::Float as i32 {
        return Err(Problem::DType {
            input: name,
            dtype: dtype_name(tensor.elem_type),
        });
    }
    // A missing shape is a tensor of unknown rank: the requested shape
    // stands for it.
    let dims: Vec<Option<usize>> = match &tensor.shape {
        Some(shape) => shape
            .dim
            .iter()
            .map(|d| match d.value {
                Some(dimension::Value::DimValue(v)) if v > 0 => usize::try_from(v).ok(),
                _ => None,
            })
            .collect(),
        None => vec![None; 4],
    };
    if dims.len() != 4 {
        return Err(Problem::Rank {
            input: name,
            rank: dims.len(),
        });
    }
    let mismatch = |requested: String| Problem::ShapeMismatch {
        input: name.clone(),
        declared: declared_text(&dims),
        requested,
    };
    let fixed: [usize; 4] = match requested {
        InputShape::Declared => {
            let mut out = [0; 4];
            for (o, d) in out.iter_mut().zip(&dims) {
                *o = d.ok_or_else(|| {
                    mismatch("its declared shape, which has free dimensions".into())
                })?;
            }
            out
        }
        InputShape::Fixed(shape) => {
            let fits = shape
                .iter()
                .zip(&dims)
                .all(|(&s, d)| s > 0 && d.is_none_or(|d| d == s));
            if !fits {
                return Err(mismatch(shape_text(&shape)));
            }
            shape
        }
    };
    check_size(&format!("input `{name}`"), &fixed)?;
    // What tract would compute from constants while loading, bounded now:
    // tract computes first and weighs afterwards.
    check_folding(graph, &name, fixed)?;
    Ok((Declared { name }, fixed))
}

/// Refuses a tensor of `dims` with more than [`MAX_TENSOR_ELEMENTS`].
///
/// # Errors
/// [`Problem::TooLarge`].
pub(crate) fn check_size(what: &str, dims: &[usize]) -> Result<(), Problem> {
    let n = elements(dims);
    if n > MAX_TENSOR_ELEMENTS {
        return Err(Problem::TooLarge {
            what: what.to_string(),
            shape: shape_text(dims),
            elements: n,
            max: MAX_TENSOR_ELEMENTS,
        });
    }
    Ok(())
}
