#!/usr/bin/env python3
"""Runs an ONNX model on a raw float32 tensor with ONNX Runtime: the
reference cortex-models' tests and measurements hold tract and OpenCV DNN
to.

    ort_run.py MODEL INPUT.f32 N C H W OUTPUT.f32 [--threads T] [--time ROUNDS]
               [--profile ROUNDS]

INPUT.f32 is the tensor little-endian, NCHW; the model's first output is
written the same way to OUTPUT.f32. With --time, the model also runs ROUNDS
more times and the per-inference times (ms) are printed, one line:
`onnxruntime threads=T min=… median=… ms`. With --profile, ROUNDS more
runs under ONNX Runtime's profiler, and the mean time per operator type.
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
    p.add_argument("--profile", type=int, default=0)
    a = p.parse_args()
    x = np.fromfile(a.input, dtype="<f4").reshape(a.dims)
    opts = ort.SessionOptions()
    if a.threads:
        opts.intra_op_num_threads = a.threads
        opts.inter_op_num_threads = 1
    if a.profile:
        opts.enable_profiling = True
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
    if a.profile:
        profile(sess, name, x, a.profile)


def profile(sess, name, x, rounds):
    """Per operator type, the mean ms a run spends in its kernels (ONNX
    Runtime's own profiler), one line each: `op OP_TYPE ms=… nodes=…`."""
    import json
    import os

    for _ in range(rounds):
        sess.run(None, {name: x})
    path = sess.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    per_op, nodes, runs = {}, {}, 0
    for e in events:
        if e.get("cat") == "Session" and e.get("name") == "model_run":
            runs += 1
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        op = e["args"]["op_name"]
        per_op[op] = per_op.get(op, 0.0) + e["dur"] / 1e3
        nodes.setdefault(op, set()).add(e["name"])
    for op, ms in sorted(per_op.items(), key=lambda kv: -kv[1]):
        print(f"op {op} ms={ms / max(runs, 1):.2f} nodes={len(nodes[op])}")


if __name__ == "__main__":
    main()
