"""Two builds of the wheel's module compared on ``cx.L2().run``: the
per-frame time of L2 BALANCED on the frames of a clip, frames in memory.

    python cortex-py/benches/l2_ab.py OLD_DIR NEW_DIR [/tmp/vtest60.y4m] [--rounds 7] [--parallel]

Each DIR holds a ``cortex_rs`` package (the python sources with the built
``_native`` module copied in). Rounds are interleaved (each round runs both
builds, in alternating order, each in a fresh process that decodes the
clip, warms up on two frames, then times every frame's ``run`` call with
the result dict built); the medians of every frame's time and of the
rounds' medians are printed with the load average.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

INNER = r"""
import json, sys, time
import numpy as np
import cortex_rs as cx
frames = [np.array(f) for _, f in zip(range(60), cx.open(sys.argv[1]))]
parallel = sys.argv[2] == "1"
l2 = cx.L2()
for f in frames[:2]:
    l2.run(f, "BALANCED", parallel=parallel)
l2 = cx.L2()
times = []
for f in frames:
    t = time.perf_counter()
    l2.run(f, "BALANCED", parallel=parallel)
    times.append((time.perf_counter() - t) * 1e3)
print(json.dumps(times))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("video", nargs="?", default="/tmp/vtest60.y4m")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--parallel", action="store_true")
    a = ap.parse_args()
    times = {"old": [], "new": []}
    medians = {"old": [], "new": []}
    loads = []
    for r in range(a.rounds):
        order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
        for name in order:
            env = dict(os.environ, PYTHONPATH=getattr(a, name))
            out = subprocess.run(
                [sys.executable, "-c", INNER, a.video, "1" if a.parallel else "0"],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            t = json.loads(out.stdout)
            times[name].extend(t)
            medians[name].append(statistics.median(t))
        loads.append(os.getloadavg()[0])
    engine = "parallel" if a.parallel else "sequential"
    print(f"cx.L2().run BALANCED, {engine}, per frame (ms) over {a.rounds} rounds")
    print(f"load average during the rounds: {min(loads):.2f} to {max(loads):.2f}")
    for name in ("old", "new"):
        print(
            f"| {name} | median {statistics.median(times[name]):.2f} | min {min(times[name]):.2f} "
            f"| median of round medians {statistics.median(medians[name]):.2f} |"
        )


if __name__ == "__main__":
    main()
