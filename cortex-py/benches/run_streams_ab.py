"""Two builds of the wheel's module compared on ``cx.run_streams``: four
streams of the L2 built in Python, 30 frames each, on a two-thread pool.

    python cortex-py/benches/run_streams_ab.py OLD_DIR NEW_DIR [/tmp/vtest60.y4m] [--rounds 7]

Each DIR holds a ``cortex_rs`` package (the python sources with the built
``_native`` module copied in, as .ci/run's step 2d makes one). Rounds are
interleaved (each round runs both builds, in alternating order, each in a
fresh process that decodes the clip, warms up, then times one call);
medians and bests of the rounds' frames per second are printed with the
load average.
"""

import statistics

import ab

INNER = r"""
import sys, time
import numpy as np
import cortex_rs as cx
frames = [np.array(f) for _, f in zip(range(30), cx.open(sys.argv[1]))]
pipes = [cx.l2_graph().build() for _ in range(4)]
cx.run_streams([(p, frames[:2], "BALANCED") for p in pipes], threads=2)
pipes = [cx.l2_graph().build() for _ in range(4)]
t = time.perf_counter()
out = cx.run_streams([(p, frames, "BALANCED") for p in pipes], threads=2)
dt = time.perf_counter() - t
assert all(len(s) == len(frames) for s in out)
print(4 * len(frames) / dt)
"""


def main() -> None:
    a = ab.arguments().parse_args()
    fps = {"old": [], "new": []}
    for name, out in ab.rounds(a, INNER, a.video):
        if name == "load":
            loads = out
            continue
        fps[name].append(float(out.strip()))
    print(f"four streams of 30 frames, two threads, frames/s over {a.rounds} rounds")
    print(f"load average during the rounds: {min(loads):.2f} to {max(loads):.2f}")
    for name in ("old", "new"):
        print(f"| {name} | {statistics.median(fps[name]):.1f} | best {max(fps[name]):.1f} |")


if __name__ == "__main__":
    main()
