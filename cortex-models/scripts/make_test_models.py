#!/usr/bin/env python3
"""Writes the small ONNX models cortex-models' tests load (no download).

`tiny.onnx` is a text-detector in miniature: NCHW float input with free
batch, height and width (as PP-OCR's detector declares it), two 3x3
convolutions, a ReLU and a sigmoid, so its output is a probability map of the
input's size. The weights come from a fixed seed. Beside it,
`tiny_expected.f32` holds ONNX Runtime's output on the input of
`tiny_input(c, y, x)` below (raw little-endian float32, 1x1x24x40): the
reference the tests hold every backend to.

The hostile models each carry one defect a loader must name: an operator no
backend has, a rank-2 input, an int64 input, and an input whose declared
shape is enormous. `trilu.onnx` uses an operator tract has and OpenCV 4.6
lacks.

Run from the repository root with `onnx`, `onnxruntime` and `numpy`
installed: python3 cortex-models/scripts/make_test_models.py
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata")
OPSET = [helper.make_opsetid("", 13)]
# The reference input's size; any size works for the model itself.
H, W = 24, 40


def tiny_input(c, y, x):
    """The test input: small integers over 16, exact in float32, so that
    Rust can build the very same tensor."""
    return ((x * 7 + y * 13 + c * 5) % 17) / 16.0 - 0.5


def save(model, name):
    model.ir_version = 8
    path = os.path.join(OUT, name)
    onnx.save(model, path)
    return path


def tiny():
    rng = np.random.default_rng(33)
    w1 = (rng.standard_normal((4, 3, 3, 3)) * 0.4).astype(np.float32)
    b1 = (rng.standard_normal(4) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((1, 4, 3, 3)) * 0.4).astype(np.float32)
    b2 = np.array([0.2], dtype=np.float32)
    # `kernel_shape` is optional in ONNX but OpenCV 4.6's importer needs it.
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c2"], ["prob"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_text",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["N", 1, "H", "W"])],
        [numpy_helper.from_array(a, n) for a, n in [(w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2")]],
    )
    model = helper.make_model(graph, opset_imports=OPSET, producer_name="cortex-models tests")
    onnx.checker.check_model(model)
    return save(model, "tiny.onnx")


def unknown_op():
    node = helper.make_node("CortexNoSuchOp", ["x"], ["y"], domain="cortex.test")
    graph = helper.make_graph(
        [node],
        "unknown_op",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8, 8])],
    )
    opsets = OPSET + [helper.make_opsetid("cortex.test", 1)]
    save(helper.make_model(graph, opset_imports=opsets), "unknown_op.onnx")


def rank2():
    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph(
        [node],
        "rank2",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])],
    )
    save(helper.make_model(graph, opset_imports=OPSET), "rank2.onnx")


def int_input():
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)
    graph = helper.make_graph(
        [node],
        "int_input",
        [helper.make_tensor_value_info("x", TensorProto.INT64, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8, 8])],
    )
    save(helper.make_model(graph, opset_imports=OPSET), "int_input.onnx")


def huge_shape():
    # 1 x 3 x 200000 x 200000 floats: 480 GB if anything allocated it.
    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph(
        [node],
        "huge_shape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 200000, 200000])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 200000, 200000])],
    )
    save(helper.make_model(graph, opset_imports=OPSET), "huge_shape.onnx")


def trilu():
    # Trilu (opset 14) is in tract but not in OpenCV 4.6's ONNX importer: the
    # model one backend refuses and the other runs, for the fallback test.
    node = helper.make_node("Trilu", ["x"], ["y"], upper=1)
    graph = helper.make_graph(
        [node],
        "trilu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8, 8])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(model)
    save(model, "trilu.onnx")


def expected(path):
    import onnxruntime as ort

    x = np.fromfunction(lambda c, y, x: tiny_input(c, y, x), (3, H, W)).astype(np.float32)[None]
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    (prob,) = sess.run(None, {"x": x})
    assert prob.shape == (1, 1, H, W), prob.shape
    prob.astype("<f4").tofile(os.path.join(OUT, "tiny_expected.f32"))


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    path = tiny()
    unknown_op()
    rank2()
    int_input()
    huge_shape()
    trilu()
    expected(path)
    for name in sorted(os.listdir(OUT)):
        print(name, os.path.getsize(os.path.join(OUT, name)))
