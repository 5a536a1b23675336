#!/usr/bin/env python3
"""Frames per second of a `cortex run --json` command in steady state: the
command's JSON lines timed as they arrive (the first line, which pays the
models' loading and the first frame, excluded), and the median of the
frames' summed node times.

    stream_rate.py -- CORTEX_COMMAND...

Prints one line: `frames=N interval_ms=… fps=… node_ms_median=…`.
"""

import json
import statistics
import subprocess
import sys
import time


def main():
    cmd = sys.argv[sys.argv.index("--") + 1:]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    stamps, node_ms = [], []
    for line in proc.stdout:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        stamps.append(time.perf_counter())
        ms = record.get("node_ms")
        if isinstance(ms, dict):
            node_ms.append(sum(v for v in ms.values() if isinstance(v, (int, float))))
    if proc.wait() != 0 or len(stamps) < 3:
        sys.exit(f"stream_rate: the command failed or gave {len(stamps)} lines")
    interval = (stamps[-1] - stamps[0]) / (len(stamps) - 1) * 1e3
    median = statistics.median(node_ms) if node_ms else float("nan")
    print(f"frames={len(stamps)} interval_ms={interval:.1f} fps={1e3 / interval:.2f} node_ms_median={median:.1f}")


if __name__ == "__main__":
    main()
