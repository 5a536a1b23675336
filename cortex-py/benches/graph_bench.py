"""Pipelines built in Python against the compiled L2 and the Rust run-time
graph, the cost of a Python node, and four streams on a two-thread pool.

    ffmpeg -i /usr/share/doc/opencv-doc/examples/data/vtest.avi -frames:v 60 -pix_fmt yuv420p vtest.y4m
    python cortex-py/benches/graph_bench.py vtest.y4m [--rounds 7] [--cortex-l2 target/release/cortex-l2]

Frames are decoded once (``cx.open``) into numpy arrays. Variants run in
interleaved rounds (each round runs every variant over the whole clip);
medians and minimums of the per-frame times are printed with the load
average. The L2 built in Python is the Rust run-time graph of
``examples/graphs/l2.json`` (the same program: ``tests/test_graph.py``);
``cargo bench --bench dynamic --features runner`` compares that graph with
the compiled L2 in Rust.
"""

import argparse
import os
import statistics
import subprocess
import time

import numpy as np

import cortex_rs as cx


def load() -> float:
    return os.getloadavg()[0]


def per_frame_ms(fn, frames) -> float:
    t = time.perf_counter()
    for f in frames:
        fn(f)
    return (time.perf_counter() - t) * 1e3 / len(frames)


def interleave(variants, frames, rounds):
    times = {name: [] for name, _ in variants}
    for _ in range(rounds):
        for name, fn in variants:
            times[name].append(per_frame_ms(fn, frames))
    return {k: (statistics.median(v), min(v)) for k, v in times.items()}


def l2_with_python_node():
    """L2 with a trivial numpy node between the fused map and its three
    readers."""
    g = cx.l2_graph()
    # Rebuild the tail: roi, regions and qp_map read the Python node.
    g._nodes = [(d, at) for d, at in g._nodes if d["name"] not in ("roi", "regions", "qp_map")]
    g._outputs = []
    passed = g.node("passed", lambda m: m, "fused", returns=cx.ScoreMap)
    roi = g.node("roi", "vision.encode_roi", "frame", passed)
    regions = g.node("regions", "vision.roi_regions", passed)
    qp = g.node("qp_map", "vision.qp_map", passed, "blur")
    g.outputs("blur", "scene", "fused", roi, regions, qp)
    return g


def chain(n, fn, ty, input_ty):
    g = cx.Graph("Chain")
    v = g.input("x", input_ty)
    for i in range(n):
        v = g.node(f"n{i}", fn, v, returns=ty)
    g.outputs(v)
    return g.build()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("video")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cortex-l2", default="target/release/cortex-l2")
    a = ap.parse_args()
    frames = list(cx.open(a.video))
    h, w, _ = frames[0].shape
    print(f"{len(frames)} frames {w}x{h}, load {os.getloadavg()}")

    # 1. L2: compiled, built in Python, and the same built graph's time inside Rust.
    compiled, built, built_par, compiled_par = cx.L2(), cx.l2_graph().build(), cx.l2_graph().build(), cx.L2()
    filed = cx.load_graph(os.path.join(os.path.dirname(__file__), "../../examples/graphs/l2.json"))
    pynode = l2_with_python_node().build()
    pynode_par = l2_with_python_node().build()
    variants = [
        ("cx.L2 (compiled)", lambda f: compiled.run(f, "BALANCED")),
        ("built in Python", lambda f: built.run(f, "BALANCED")),
        ("load_graph(l2.json)", lambda f: filed.run(f, "BALANCED")),
        ("built + a numpy node", lambda f: pynode.run(f, "BALANCED")),
        ("cx.L2 parallel", lambda f: compiled_par.run(f, "BALANCED", parallel=True)),
        ("built, parallel", lambda f: built_par.run(f, "BALANCED", parallel=True)),
        ("built + a numpy node, parallel", lambda f: pynode_par.run(f, "BALANCED", parallel=True)),
    ]
    for _, fn in variants:
        fn(frames[0])
    start = load()
    res = interleave(variants, frames, a.rounds)
    base = res["cx.L2 (compiled)"][0]
    print(f"\nL2 BALANCED, ms per frame (load {start:.2f} -> {load():.2f})")
    print("| variant | median | min | vs cx.L2 |")
    for name, (med, mn) in res.items():
        print(f"| {name} | {med:.2f} | {mn:.2f} | {med / base:.3f} |")

    # 2. A Python node's cost per call.
    gray = cx.l2_graph().build().run(frames[0])["fused"]
    n = 20
    obj_chain = chain(n, lambda x: x, cx.PyObject, "f64")
    gray_img = (gray * 255).astype(np.uint8)
    gray_chain = chain(n, lambda g: g, cx.GrayImage, cx.GrayImage)
    map_chain = chain(n, lambda m: m, cx.ScoreMap, cx.ScoreMap)
    reps = 200
    per = {}
    for name, p, x in [
        ("PyObject (a float, passed through)", obj_chain, 1.0),
        (f"GrayImage {w}x{h} (copied in and out)", gray_chain, gray_img),
        (f"ScoreMap {w}x{h} (copied in and out)", map_chain, gray),
    ]:
        p.run(x)
        samples = []
        for _ in range(a.rounds):
            t = time.perf_counter()
            for _ in range(reps // 10):
                p.run(x)
            samples.append((time.perf_counter() - t) * 1e6 / (reps // 10) / n)
        per[name] = (statistics.median(samples), min(samples))
    print(f"\nA trivial Python node, µs per call (chains of {n}; load {load():.2f})")
    print("| node | median | min |")
    for name, (med, mn) in per.items():
        print(f"| {name} | {med:.1f} | {mn:.1f} |")

    # 3. Four streams on a two-thread pool.
    clip = frames[:30]
    rounds = max(3, a.rounds // 2)
    py_fps, rust_fps = [], []
    for _ in range(rounds):
        pipes = [cx.l2_graph().build() for _ in range(4)]
        t = time.perf_counter()
        out = cx.run_streams([(p, clip, "BALANCED") for p in pipes], threads=2)
        py_fps.append(4 * len(clip) / (time.perf_counter() - t))
        assert all(len(s) == len(clip) for s in out)
        if os.path.exists(a.cortex_l2):
            cmd = [a.cortex_l2, "run", "-q", "--mode", "BALANCED", "--threads", "2", "--frames", str(len(clip))]
            for _ in range(4):
                cmd += ["--input", a.video]
            t = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            rust_fps.append(4 * len(clip) / (time.perf_counter() - t))
    print(f"\nFour streams of {len(clip)} frames on two threads, frames/s (load {load():.2f})")
    print(f"| Python: cx.run_streams, L2 built in Python | {statistics.median(py_fps):.1f} | max {max(py_fps):.1f} |")
    if rust_fps:
        print(f"| Rust: cortex-l2 run, 4 inputs, --threads 2 (compiled L2, StreamPool) | {statistics.median(rust_fps):.1f} | max {max(rust_fps):.1f} |")


if __name__ == "__main__":
    main()
