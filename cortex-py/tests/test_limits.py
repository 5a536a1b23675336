"""Frames beyond cortex's frame limits, as numpy gives them: refused with
`cortex_rs.PipelineError` before anything is copied or allocated for them,
on every way a numpy frame enters a pipeline.

A broadcast array (stride 0) can claim any size while owning three bytes,
so these frames cost nothing to make; a copy of one would cost its full
claimed size. Each case runs in a child interpreter whose address space is
capped at 8 GB (what `ulimit -v 8000000` sets) and reports its peak
resident memory: a regression then fails this test instead of aborting the
whole pytest run, and a copy that happens to fit the cap still shows up in
the peak."""

import json
import resource
import subprocess
import sys

import numpy as np
import pytest

import cortex_rs as cx

# `ulimit -v 8000000`: kilobytes, so 8 GB of address space.
ADDRESS_SPACE = 8_000_000 * 1024

CHILD = r"""
import json, resource, sys
import numpy as np
import cortex_rs as cx

h, w, entry = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
frame = np.broadcast_to(np.zeros((1, 1, 3), np.uint8), (h, w, 3))
l2 = cx.L2()
try:
    if entry == "run":
        l2.run(frame)
    elif entry == "parallel":
        l2.run(frame, parallel=True, fused=True)
    elif entry == "weights":
        l2.run(frame, weights=[("wc", 1.0), ("wt", 1.0), ("ws", 1.0), ("wm", 1.0)])
    elif entry == "stream":
        list(cx.stream(l2, [frame], "POWER_SAVE"))
    error = None
except cx.PipelineError as e:
    error = str(e)
# The pipeline still runs frames after the refused one.
ok = l2.run(np.zeros((48, 64, 3), np.uint8))["frame"]
print(json.dumps({
    "error": error,
    "frame_index": l2.frame_index,
    "next_frame": ok,
    "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
}))
"""


def cap_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


@pytest.mark.parametrize("entry", ["run", "parallel", "weights", "stream"])
@pytest.mark.parametrize(
    "height, width",
    [
        # The audit's frame: 120 GB if copied, beyond any memory here.
        (200_000, 200_000),
        # 1.2 GB if copied: fits the cap, so only the peak shows a copy.
        (20_000, 20_000),
    ],
)
def test_an_oversized_broadcast_frame_is_refused_before_it_is_copied(height, width, entry):
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(height), str(width), entry],
        capture_output=True,
        text=True,
        preexec_fn=cap_address_space,
        timeout=300,
    )
    assert child.returncode == 0, f"the interpreter died ({child.returncode}): {child.stderr[-2000:]}"
    report = json.loads(child.stdout.strip().splitlines()[-1])
    assert report["error"] is not None, "the oversized frame ran"
    assert f"{width}x{height}" in report["error"] and "limit" in report["error"]
    # Refused before the frame counted, and the pipeline still works.
    assert report["next_frame"] == 0 and report["frame_index"] == 1
    # The interpreter, numpy and the extension take ~100 MB; the smaller
    # frame alone would take 1200 MB.
    assert report["peak_kb"] < 600_000, f"peak resident memory {report['peak_kb']} kB"


def test_a_frame_within_the_limits_broadcast_runs_like_its_copy():
    pixel = np.array([[[200, 30, 90]]], np.uint8)
    wide = np.broadcast_to(pixel, (120, 160, 3))
    assert wide.strides == (0, 0, 1)
    a = cx.L2().run(wide, fused=True)
    b = cx.L2().run(np.ascontiguousarray(wide), fused=True)
    assert a["blur"] == b["blur"] and a["roi"]["roi"] == b["roi"]["roi"]
    np.testing.assert_array_equal(a["fused"], b["fused"])
