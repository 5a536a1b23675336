#!/usr/bin/env python3
"""Runs an ONNX model on a raw float32 tensor with ONNX Runtime: the
reference cortex-models' tests and measurements hold tract and OpenCV DNN
to.

    ort_run.py MODEL INPUT.f32 N C H W OUTPUT.f32 [--threads T] [--time ROUNDS]

INPUT.f32 is the tensor little-endian, NCHW; the model's first output is
written the same way to OUTPUT.f32. With --time, the model also runs ROUNDS
more times and the per-inference times (ms) are printed, one line:
`onnxruntime threads=T min=… median=… ms`.
"""

import argparse
import time

import numpy as np
import onnxruntime as ort


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("input")
    p.add_argument("dims", type=int, nargs=4)
    p.add_argument("output")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--time", type=int, default=0)
    a = p.parse_args()
    x = np.fromfile(a.input, dtype="<f4").reshape(a.dims)
    opts = ort.SessionOptions()
    if a.threads:
        opts.intra_op_num_threads = a.threads
        opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(a.model, opts, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    (y, *_) = sess.run(None, {name: x})
    y.astype("<f4").tofile(a.output)
    if a.time:
        times = []
        for _ in range(a.time):
            t = time.perf_counter()
            sess.run(None, {name: x})
            times.append((time.perf_counter() - t) * 1e3)
        times.sort()
        print(f"onnxruntime threads={a.threads} min={times[0]:.2f} median={times[len(times) // 2]:.2f} ms")


if __name__ == "__main__":
    main()
