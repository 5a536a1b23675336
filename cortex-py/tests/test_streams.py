"""`run_streams` on the pool that hands each stream's pipeline and profiler
back: profiles stay per stream, and a frames iterable that uses one of its
own call's pipelines fails the call instead of waiting for it."""

import pytest

import cortex_rs as cx


def gray_graph():
    g = cx.Graph("G")
    frame = g.input("frame", cx.RgbFrame)
    gray = g.node("gray", "vision.to_gray", frame)
    prev = g.state("_prev_gray", cx.GrayImage, keeps=gray)
    scene = g.node("scene", "vision.scene_change", gray, prev)
    g.outputs(gray, scene)
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


def test_frames_using_a_pipeline_of_their_own_call_raise_instead_of_waiting(clip):
    p, q = gray_graph().build(), gray_graph().build()

    def frames():
        yield clip[0]
        # q is held by this very call until its streams end.
        q.run(clip[1])
        yield clip[1]

    with pytest.raises(RuntimeError, match="cannot be used until the call ends"):
        cx.run_streams([(p, frames()), (q, clip[:2])], threads=2)
    # Both are free again, with what ran before the failure.
    assert q.frame_index == 2
    assert p.run(clip[1])["frame"] == 1
