"""Pipelines built in Python against the compiled L2 and the Rust run-time
graph they drive, the cost of a Python node, and four streams on a
two-thread pool.

    python cortex-py/benches/graph_bench.py [/tmp/vtest60.y4m] [--rounds 7] [--cortex-l2 target/release/cortex]

The video (a Y4M; 60 frames of OpenCV's vtest.avi, 768x576, made with
``ffmpeg -i vtest.avi -frames:v 60 -pix_fmt yuv420p vtest60.y4m``) is
decoded once (``cx.open``) into numpy arrays. Variants run in interleaved
rounds (each round runs every variant over the whole clip); medians and
minimums of the rounds' per-frame times are printed with the load average
and the machine. "Rust run-time graph" is the same built pipeline's frames
run by Rust alone (``cortex_rs._native._time_frames``: the frames read into
the pipeline's values once, then each frame timed in Rust with no Python
between frames), so the Python call and the graph it drives are compared in
one process on the same frames.
"""

import argparse
import os
import platform
import statistics
import subprocess
import time

import numpy as np

import cortex_rs as cx
from cortex_rs import _native


def load() -> float:
    return os.getloadavg()[0]


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{os.cpu_count()} cores, {model}"


def per_frame_ms(fn, frames) -> float:
    t = time.perf_counter()
    for f in frames:
        fn(f)
    return (time.perf_counter() - t) * 1e3 / len(frames)


def in_rust(p, parallel=False):
    """A round of the built pipeline ``p``'s frames timed inside Rust."""
    return lambda frames: statistics.fmean(_native._time_frames(p, frames, "BALANCED", parallel))


def interleave(variants, frames, rounds):
    """Each variant is ``(name, per-frame function)`` or ``(name, round
    function, True)`` (a function timing a whole round itself)."""
    times = {v[0]: [] for v in variants}
    for _ in range(rounds):
        for v in variants:
            name, fn = v[0], v[1]
            times[name].append(fn(frames) if len(v) > 2 else per_frame_ms(fn, frames))
    return {k: (statistics.median(v), min(v)) for k, v in times.items()}


def table(res, base_name, title):
    base = res[base_name][0]
    print(f"\n{title}")
    print(f"| variant | median ms | min ms | vs {base_name} |")
    print("|---|---|---|---|")
    for name, (med, mn) in res.items():
        print(f"| {name} | {med:.2f} | {mn:.2f} | {med / base:.3f} |")


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


def fan(n, fn, ty, input_ty):
    """``n`` Python nodes, each reading the input."""
    g = cx.Graph("Fan")
    x = g.input("x", input_ty)
    g.outputs(*[g.node(f"n{i}", fn, x, returns=ty) for i in range(n)])
    return g.build()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("video", nargs="?", default="/tmp/vtest60.y4m")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cortex-l2", default="target/release/cortex")
    ap.add_argument("--skip-streams", action="store_true")
    a = ap.parse_args()
    frames = list(cx.open(a.video))
    h, w, _ = frames[0].shape
    print(f"{len(frames)} frames {w}x{h} of {a.video}; {machine()}; load {os.getloadavg()}")

    # 1. L2: built in Python (its call, and its frames inside Rust),
    # compiled, and with a numpy node in the middle; both engines.
    built, built_par = cx.l2_graph().build(), cx.l2_graph().build()
    rust, rust_par = cx.l2_graph().build(), cx.l2_graph().build()
    compiled, compiled_par = cx.L2(), cx.L2()
    filed = cx.load_graph(os.path.join(os.path.dirname(__file__), "../../examples/graphs/l2.json"))
    pynode, pynode_par = l2_with_python_node().build(), l2_with_python_node().build()
    variants = [
        ("Rust run-time graph", in_rust(rust), True),
        ("built in Python", lambda f: built.run(f, "BALANCED")),
        ("load_graph(l2.json)", lambda f: filed.run(f, "BALANCED")),
        ("cx.L2 (compiled)", lambda f: compiled.run(f, "BALANCED")),
        ("built + a numpy node", lambda f: pynode.run(f, "BALANCED")),
        ("Rust run-time graph, parallel", in_rust(rust_par, True), True),
        ("built, parallel", lambda f: built_par.run(f, "BALANCED", parallel=True)),
        ("cx.L2, parallel", lambda f: compiled_par.run(f, "BALANCED", parallel=True)),
        ("built + a numpy node, parallel", lambda f: pynode_par.run(f, "BALANCED", parallel=True)),
    ]
    for v in variants:  # warm up: first frames, pools, page faults
        if len(v) > 2:
            v[1](frames[:2])
        else:
            v[1](frames[0])
    start = load()
    res = interleave(variants, frames, a.rounds)
    table(res, "Rust run-time graph", f"L2 BALANCED, per frame ({a.rounds} rounds; load {start:.2f} -> {load():.2f})")
    seq = res["built in Python"][0] / res["Rust run-time graph"][0]
    par = res["built, parallel"][0] / res["Rust run-time graph, parallel"][0]
    print(f"built in Python / Rust run-time graph: sequential {seq:.3f}, parallel {par:.3f}")

    # 1b. Paired: frame by frame, two twin pipelines on the same frame one
    # right after the other (order alternating), so load drifts between
    # rounds cancel: the Python call against the Rust run-time graph it
    # drives, and L2 with a numpy node in the middle against L2.
    def python_call(p, parallel):
        def timed(f):
            t = time.perf_counter()
            p.run(f, "BALANCED", parallel=parallel)
            return (time.perf_counter() - t) * 1e3
        return timed

    def rust_frame(p, parallel):
        return lambda f: _native._time_frames(p, [f], "BALANCED", parallel)[0]

    pairs = [
        ("built in Python / Rust run-time graph", lambda: cx.l2_graph().build(), lambda: cx.l2_graph().build(), python_call, rust_frame),
        ("built + a numpy node / built in Python", l2_with_python_node().build, lambda: cx.l2_graph().build(), python_call, python_call),
    ]
    print("\n| paired, per frame (medians over rounds x frames) | engine | a ms | b ms | median a/b |")
    print("|---|---|---|---|---|")
    for name, make_a, make_b, time_a, time_b in pairs:
        for parallel in (False, True):
            pa, pb = make_a(), make_b()
            ta, tb = time_a(pa, parallel), time_b(pb, parallel)
            ratios, a_ms, b_ms = [], [], []
            for r in range(a.rounds):
                pa.reset(), pb.reset()
                for i, f in enumerate(frames):
                    if (i + r) % 2:
                        y = tb(f)
                        x = ta(f)
                    else:
                        x = ta(f)
                        y = tb(f)
                    ratios.append(x / y)
                    a_ms.append(x)
                    b_ms.append(y)
            engine = "parallel" if parallel else "sequential"
            print(
                f"| {name} | {engine} | {statistics.median(a_ms):.2f} | {statistics.median(b_ms):.2f} "
                f"| {statistics.median(ratios):.3f} |"
            )
    print(f"(load {load():.2f})")

    # 2. A Python node's cost per call.
    fused = cx.l2_graph().build().run(frames[0])["fused"]
    gray_img = np.ascontiguousarray((fused * 255).astype(np.uint8))
    n = 20
    obj_chain = chain(n, lambda x: x, cx.PyObject, "f64")
    gray_chain = chain(n, lambda g: g, cx.GrayImage, cx.GrayImage)
    map_chain = chain(n, lambda m: m, cx.ScoreMap, cx.ScoreMap)
    map_read = fan(n, lambda m: float(m[0, 0]), "f64", cx.ScoreMap)
    reps = 20
    per = {}
    cases = [
        ("PyObject: a float passed through", obj_chain, 1.0),
        (f"GrayImage {w}x{h} passed through (read in place, the returned array copied)", gray_chain, gray_img),
        (f"ScoreMap {w}x{h} passed through (read in place, the returned array copied)", map_chain, fused),
        (f"ScoreMap {w}x{h} read (the input, lent), a float returned", map_read, np.ascontiguousarray(fused)),
    ]
    for name, p, x in cases:
        p.run(x)
    samples = {name: [] for name, _, _ in cases}
    start = load()
    for _ in range(a.rounds):
        for name, p, x in cases:
            t = time.perf_counter()
            for _ in range(reps):
                p.run(x)
            samples[name].append((time.perf_counter() - t) * 1e6 / reps / n)
    print(f"\nA trivial Python node, µs per call (chains of {n}; load {start:.2f} -> {load():.2f})")
    print("| node | median | min |")
    print("|---|---|---|")
    for name, v in samples.items():
        print(f"| {name} | {statistics.median(v):.1f} | {min(v):.1f} |")

    if a.skip_streams:
        return
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
        print(f"| Rust: cortex run, 4 inputs, --threads 2 (compiled L2, StreamPool) | {statistics.median(rust_fps):.1f} | max {max(rust_fps):.1f} |")


if __name__ == "__main__":
    main()
