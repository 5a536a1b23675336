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

import json
import statistics

import ab

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
    a = ab.arguments(parallel="time the parallel engine").parse_args()
    times = {"old": [], "new": []}
    medians = {"old": [], "new": []}
    for name, out in ab.rounds(a, INNER, a.video, "1" if a.parallel else "0"):
        if name == "load":
            loads = out
            continue
        t = json.loads(out)
        times[name].extend(t)
        medians[name].append(statistics.median(t))
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
