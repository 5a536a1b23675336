//! Hostile and wrong model files: each gives one error naming the file and
//! the problem, at load, without a panic, a hang or an allocation of what
//! the file declares.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use cortex_models::{InputShape, Model, ModelError, Problem, MAX_TENSOR_ELEMENTS};
use support::{testdata, H, W};

const SHAPE: InputShape = InputShape::image(3, H, W);

fn load_err(path: &Path, shape: InputShape) -> ModelError {
    let err = Model::load(path, shape).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&path.display().to_string()),
        "names the file: {text}"
    );
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    err
}

fn bytes_err(bytes: Vec<u8>, shape: InputShape) -> ModelError {
    let err = Model::from_bytes("suspect.onnx", bytes, shape).unwrap_err();
    assert_eq!(err.model, "suspect.onnx");
    err
}

#[test]
fn truncated_file() {
    let bytes = std::fs::read(testdata("tiny.onnx")).unwrap();
    for cut in [1, 10, bytes.len() / 3, bytes.len() / 2, bytes.len() - 1] {
        let err = bytes_err(bytes[..cut].to_vec(), SHAPE);
        assert!(
            matches!(err.problem, Problem::Parse(_)),
            "cut at {cut}: {err}"
        );
    }
}

#[test]
fn garbage_file() {
    let dir = tempdir("garbage");
    let path = dir.join("garbage.onnx");
    // A fixed pseudo-random stream (xorshift), not a protobuf.
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let bytes: Vec<u8> = (0..4096)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s as u8
        })
        .collect();
    std::fs::write(&path, &bytes).unwrap();
    let err = load_err(&path, SHAPE);
    assert!(matches!(err.problem, Problem::Parse(_)), "{err}");
    // Text is not a model either.
    std::fs::write(&path, "this is not an onnx model\n").unwrap();
    let err = load_err(&path, SHAPE);
    assert!(matches!(err.problem, Problem::Parse(_)), "{err}");
    // Nor is an empty file (an empty protobuf has no graph).
    std::fs::write(&path, "").unwrap();
    let err = load_err(&path, SHAPE);
    assert!(matches!(err.problem, Problem::Parse(_)), "{err}");
}

#[test]
fn operator_the_backend_lacks() {
    let err = load_err(&testdata("unknown_op.onnx"), InputShape::image(3, 8, 8));
    assert_eq!(
        err.problem,
        Problem::UnsupportedOp {
            op: "cortex.test::CortexNoSuchOp".into(),
            backend: "tract"
        },
        "{err}"
    );
}

#[test]
fn input_of_another_rank() {
    let err = load_err(&testdata("rank2.onnx"), SHAPE);
    assert_eq!(
        err.problem,
        Problem::Rank {
            input: "x".into(),
            rank: 2
        }
    );
}

#[test]
fn input_of_another_type() {
    let err = load_err(&testdata("int_input.onnx"), InputShape::image(3, 8, 8));
    assert_eq!(
        err.problem,
        Problem::DType {
            input: "x".into(),
            dtype: "int64".into()
        }
    );
}

#[test]
fn huge_declared_shape() {
    let path = testdata("huge_shape.onnx");
    // Taken as declared: 1x3x200000x200000, refused before allocating.
    let err = load_err(&path, InputShape::Declared);
    assert_eq!(
        err.problem,
        Problem::TooLarge {
            what: "input `x`".into(),
            shape: "1x3x200000x200000".into(),
            elements: 120_000_000_000,
            max: MAX_TENSOR_ELEMENTS,
        }
    );
    // Asked at another size: the declared dimensions are fixed.
    let err = load_err(&path, SHAPE);
    assert!(
        matches!(err.problem, Problem::ShapeMismatch { .. }),
        "{err}"
    );
    // A huge size asked of a model with free dimensions.
    let err = load_err(
        &testdata("tiny.onnx"),
        InputShape::image(3, 100_000, 100_000),
    );
    assert!(matches!(err.problem, Problem::TooLarge { .. }), "{err}");
    // Free dimensions cannot be taken as declared.
    let err = load_err(&testdata("tiny.onnx"), InputShape::Declared);
    assert!(
        matches!(err.problem, Problem::ShapeMismatch { .. }),
        "{err}"
    );
    // Nor can a zero dimension be asked for.
    let err = load_err(&testdata("tiny.onnx"), InputShape::image(3, 0, W));
    assert!(
        matches!(err.problem, Problem::ShapeMismatch { .. }),
        "{err}"
    );
}

#[test]
fn weights_larger_than_the_file() {
    // tiny.onnx with its first weight's dimensions rewritten: `w1` is
    // declared 4x3x3x3, which protobuf writes as four (tag 0x08, value)
    // pairs. Same length, larger values: 127 per dimension is 127⁴ ≈ 2.6e8
    // values, far more than the file's bytes.
    let bytes = std::fs::read(testdata("tiny.onnx")).unwrap();
    let pattern = [0x08, 0x04, 0x08, 0x03, 0x08, 0x03, 0x08, 0x03];
    let at = bytes
        .windows(pattern.len())
        .position(|w| w == pattern)
        .expect("w1's dims in tiny.onnx");
    let mut hostile = bytes.clone();
    for i in 0..4 {
        hostile[at + 2 * i + 1] = 0x7f;
    }
    let err = bytes_err(hostile, SHAPE);
    assert!(matches!(err.problem, Problem::Initializer { .. }), "{err}");
}

#[cfg(unix)]
#[test]
fn fifo_is_refused_without_blocking() {
    let dir = tempdir("fifo");
    let path = dir.join("model.onnx");
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let start = Instant::now();
    let err = load_err(&path, SHAPE);
    assert_eq!(err.problem, Problem::NotAFile("a FIFO"));
    // No writer ever comes: a blocking open would never return.
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn folder_is_refused() {
    let dir = tempdir("folder");
    let err = load_err(&dir, SHAPE);
    assert_eq!(err.problem, Problem::NotAFile("a folder"));
}

#[test]
fn missing_file() {
    let path = testdata("no-such-model.onnx");
    let err = load_err(&path, SHAPE);
    assert!(matches!(err.problem, Problem::Io(_)), "{err}");
}

/// A fresh folder for one test.
fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cortex-models-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
