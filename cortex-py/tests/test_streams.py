"""`run_streams` on the pool that hands each stream's pipeline and profiler
back: profiles stay per stream, and a frames iterable that uses one of its
own call's pipelines fails the call instead of waiting for it; live streams
(an overflow policy) read their frames on threads of their own, holding no
worker, and drop what a full queue cannot keep."""

import threading

import numpy as np
import pytest

import cortex_rs as cx


def gray_graph(counted=None):
    """Grey image and scene change; with `counted` (a callable of the grey
    image), its result as a third output."""
    g = cx.Graph("G")
    frame = g.input("frame", cx.RgbFrame)
    gray = g.node("gray", "vision.to_gray", frame)
    prev = g.state("_prev_gray", cx.GrayImage, keeps=gray)
    scene = g.node("scene", "vision.scene_change", gray, prev)
    outputs = [gray, scene]
    if counted is not None:
        outputs.append(g.node("counted", counted, gray, returns=cx.GrayImage))
    g.outputs(*outputs)
    return g


def test_each_streams_profile_counts_its_own_frames(clip):
    p, q = gray_graph().build(profile=True), gray_graph().build(profile=True)
    r = gray_graph().build()
    out = cx.run_streams([(p, clip[:3]), (q, clip[:5]), (r, clip[:4])], threads=2)
    assert [len(s) for s in out] == [3, 5, 4]
    assert "(3 frames)" in p.profile_report()
    assert "(5 frames)" in q.profile_report()
    # The profiles and states come back to their pipelines: a sequential
    # frame after the call is counted on top.
    assert p.run(clip[3])["frame"] == 3
    assert "(4 frames)" in p.profile_report()
    assert (p.frame_index, q.frame_index, r.frame_index) == (4, 5, 4)


@pytest.mark.parametrize("overflow", [None, "block"])
def test_frames_using_a_pipeline_of_their_own_call_raise_instead_of_waiting(clip, overflow):
    p, q = gray_graph().build(), gray_graph().build()

    def frames():
        yield clip[0]
        # q is held by this very call until its streams end.
        q.run(clip[1])
        yield clip[1]

    with pytest.raises(RuntimeError, match="cannot be used until the call ends"):
        cx.run_streams([(p, frames()), (q, clip[:2])], threads=2, overflow=overflow)
    # Both are free again, with what ran before the failure.
    assert q.frame_index == 2
    assert p.run(clip[1])["frame"] == 1


def test_live_streams_that_block_give_what_pulled_streams_give(clip):
    pulled = cx.run_streams([(gray_graph().build(), clip[:6]), (gray_graph().build(), clip[6:10])])
    live, stats = cx.run_streams(
        [(gray_graph().build(), clip[:6]), (gray_graph().build(), clip[6:10])],
        threads=1,
        overflow="block",
        queue=1,
        stats=True,
    )
    for got, want in zip(live, pulled):
        assert [r["scene"] for r in got] == [r["scene"] for r in want]
        assert all(np.array_equal(g["gray"], w["gray"]) for g, w in zip(got, want))
    assert [(s["received"], s["processed"], s["dropped"]) for s in stats] == [(6, 6, 0), (4, 4, 0)]
    assert [s["end"] for s in stats] == ["finished", "finished"]


def test_keep_latest_drops_the_frames_a_busy_stream_cannot_take(clip):
    frames = clip[:8]
    pushed = threading.Event()
    calls = []

    def hold(gray):
        # The first frame runs until every frame was pushed: the queue of
        # one keeps only the newest of those waiting.
        if not calls:
            assert pushed.wait(30), "the reader never finished"
        calls.append(1)
        return gray

    def source():
        yield from frames
        pushed.set()

    g = cx.Graph("Held")
    gray = g.node("gray", "vision.to_gray", g.input("frame", cx.RgbFrame))
    g.outputs(g.node("held", hold, gray, returns=cx.GrayImage))
    out, stats = cx.run_streams([(g.build(), source())], overflow="keep_latest", stats=True)
    s = stats[0]
    assert s["received"] == len(frames)
    assert s["processed"] + s["dropped"] == len(frames)
    # Whichever frame ran first, only the newest waited behind it.
    assert s["dropped"] >= len(frames) - 2
    assert len(out[0]) == s["processed"] == len(calls)
    last = gray_graph().build().run(frames[-1])["gray"]
    assert np.array_equal(out[0][-1]["held"], last)


def test_a_live_stream_waiting_for_its_frames_holds_no_worker(clip):
    # One worker. Stream A's frames wait until stream B's third frame ran:
    # pulled on the pool, A's wait would hold the only worker B needs.
    b_ran = threading.Event()
    runs = []

    def count(gray):
        runs.append(1)
        if len(runs) == 3:
            b_ran.set()
        return gray

    def a_frames():
        yield clip[0]
        assert b_ran.wait(30), "stream B did not run while A waited"
        yield clip[1]

    g = cx.Graph("Counted")
    gray = g.node("gray", "vision.to_gray", g.input("frame", cx.RgbFrame))
    g.outputs(g.node("counted", count, gray, returns=cx.GrayImage))
    out = cx.run_streams(
        [(gray_graph().build(), a_frames()), (g.build(), clip[:3])],
        threads=1,
        overflow="block",
    )
    assert [len(s) for s in out] == [2, 3]


def test_live_options_are_checked(clip):
    p = gray_graph().build()
    with pytest.raises(ValueError, match="one of `block`, `drop_oldest`, `keep_latest`"):
        cx.run_streams([(p, clip[:2])], overflow="newest")
    with pytest.raises(ValueError, match="queue must be at least 1"):
        cx.run_streams([(p, clip[:2])], overflow="block", queue=0)
    # Nothing ran: the pipeline is as it was.
    assert p.frame_index == 0


@pytest.mark.parametrize("overflow", [None, "block"])
def test_streams_reading_some_outputs_run_only_their_producers(clip, overflow):
    calls = []

    def count(gray):
        calls.append(1)
        return gray

    def counted_graph():
        return gray_graph(counted=count).build()

    frames = [clip[:5], clip[10:16]]
    full = cx.run_streams([(counted_graph(), f) for f in frames])
    calls.clear()
    got = cx.run_streams(
        [(counted_graph(), f) for f in frames], threads=2, overflow=overflow, outputs=["scene"]
    )
    # Each stream's first frame has no outputs to run into and makes them
    # all; every later frame runs into its stream's earlier outputs.
    assert len(calls) == len(frames)
    for g, w in zip(got, full):
        assert [r.keys() for r in g] == [{"frame", "scene"}] * len(w)
        assert [r["scene"] for r in g] == [r["scene"] for r in w]
    with pytest.raises(ValueError, match="outputs: "):
        cx.run_streams([(counted_graph(), frames[0])], outputs=["nope"])
