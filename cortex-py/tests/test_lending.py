"""numpy memory shared without a copy: a built pipeline's `run` lends a
C-ordered array of the right dtype to the frame (other layouts are copied,
wrong ones refused), and gives its images and maps back as read-only
arrays over the pipeline's own values. The results are those of a copy,
the caller's arrays are untouched and free again after the frame, and a
kept result stays valid."""

import sys

import numpy as np
import pytest

import cortex_rs as cx


def seen_graph(seen):
    """Gray → a Python node that records what it is given and returns a
    map; the frame itself also goes to a Python node."""
    g = cx.Graph("Seen")
    frame = g.input("frame", cx.RgbFrame)
    gray = g.node("gray", "vision.to_gray", frame)
    prev = g.state("_prev_gray", cx.GrayImage, keeps=gray)
    scene = g.node("scene", "vision.scene_change", gray, prev)

    def look(f):
        seen.append(f)
        return float(f.mean())

    mean = g.node("mean", look, frame, returns="f64")
    g.outputs(gray, scene, mean)
    return g


def plain_graph():
    g = cx.Graph("Plain")
    frame = g.input("frame", cx.RgbFrame)
    gray = g.node("gray", "vision.to_gray", frame)
    prev = g.state("_prev_gray", cx.GrayImage, keeps=gray)
    scene = g.node("scene", "vision.scene_change", gray, prev)
    text = g.node("text", "vision.text_map", gray)
    g.outputs(gray, scene, text)
    return g


def same(a, b):
    assert a["frame"] == b["frame"] and a["scene"] == b["scene"]
    np.testing.assert_array_equal(a["gray"], b["gray"])
    np.testing.assert_array_equal(a["text"], b["text"])


LAYOUTS = {
    "fortran": np.asfortranarray,
    "strided": lambda f: np.repeat(f, 2, axis=1)[:, ::2],
    "reversed": lambda f: f[::-1, ::-1].copy()[::-1, ::-1],
    "readonly": lambda f: _readonly(f.copy()),
    "broadcast_free": lambda f: np.ascontiguousarray(f),
}


def _readonly(a):
    a.setflags(write=False)
    return a


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_lent_and_copied_frames_give_the_same_results(clip, layout):
    frames = clip[:6]
    lent = plain_graph().build()
    other = plain_graph().build()
    for f in frames:
        g = LAYOUTS[layout](f)
        assert np.array_equal(f, g)
        same(lent.run(f), other.run(g))
    # And the parallel engine on lent frames gives the sequential results.
    seq, par = plain_graph().build(), plain_graph().build()
    for f in frames:
        same(seq.run(f), par.run(f, parallel=True))


def test_a_c_ordered_frame_is_read_in_place_and_other_layouts_are_copied(clip):
    seen = []
    p = seen_graph(seen).build()
    f = clip[0].copy()
    p.run(f)
    # The Python node reading the input sees the caller's own memory, read-only.
    assert np.shares_memory(seen[-1], f) and not seen[-1].flags.writeable
    p.run(f, parallel=True)  # from a worker thread too
    assert np.shares_memory(seen[-1], f) and not seen[-1].flags.writeable
    fortran = np.asfortranarray(clip[1])
    p.run(fortran)
    assert not np.shares_memory(seen[-1], fortran)
    np.testing.assert_array_equal(seen[-1], fortran)


def test_the_frame_is_the_callers_again_after_the_frame(clip):
    p = plain_graph().build()
    f = clip[2].copy()
    before = sys.getrefcount(f)
    r = p.run(f)
    assert sys.getrefcount(f) == before  # nothing keeps it
    assert f.flags.writeable
    f[:] = 0  # writable, and writing it changes no result already given
    np.testing.assert_array_equal(r["gray"], plain_graph().build().run(clip[2])["gray"])


def test_a_frame_kept_by_a_python_node_stays_valid(clip):
    """A callable may keep what it is given: it keeps a view of the
    caller's array (not of memory the pipeline lends), which stays valid."""
    seen = []
    p = seen_graph(seen).build()
    frames = [f.copy() for f in clip[:4]]
    for f in frames:
        p.run(f)
    del frames
    for got, want in zip(seen, clip[:4]):
        np.testing.assert_array_equal(got, want)


def test_results_are_read_only_views_that_outlive_later_frames(clip):
    p = plain_graph().build()
    first = p.run(clip[0])
    kept = {k: first[k].copy() for k in ("gray", "text")}
    for k in ("gray", "text"):
        assert not first[k].flags.writeable and not first[k].flags.owndata
        with pytest.raises(ValueError, match="read-only"):
            first[k][0, 0] = 1
    for f in clip[1:6]:
        p.run(f)
    for k in kept:
        np.testing.assert_array_equal(first[k], kept[k])
    writable = first["text"].copy()
    writable[0, 0] = 2.0


def test_a_python_node_given_a_map_gets_it_read_only(clip):
    def in_place(gray):
        gray += 1  # the pipeline's own value: refused
        return gray

    g = cx.Graph("InPlace")
    gray = g.node("gray", "vision.to_gray", g.input("frame", cx.RgbFrame))
    g.outputs(g.node("up", in_place, gray, returns=cx.GrayImage))
    p = g.build()
    with pytest.raises(cx.PipelineError, match="read-only") as e:
        p.run(clip[0])
    assert isinstance(e.value.__cause__, ValueError)
    assert p.frame_index == 0


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda f: f.astype(np.float32), TypeError, "must be a uint8 array"),
        (lambda f: f.astype(np.int8), TypeError, "must be a uint8 array"),
        (lambda f: f[..., :2], ValueError, r"shape H×W×3"),
        (lambda f: f[..., 0], ValueError, r"shape H×W×3"),
        (lambda f: f.tolist(), TypeError, "numpy array"),
    ],
)
def test_wrong_frames_are_one_error_and_keep_the_state(clip, make, error, message):
    p = plain_graph().build()
    p.run(clip[0])
    with pytest.raises(error, match=message):
        p.run(make(clip[1]))
    assert p.frame_index == 1
    same(p.run(clip[1]), (lambda q: (q.run(clip[0]), q.run(clip[1]))[1])(plain_graph().build()))


def test_maps_in_every_layout_and_alignment(clip):
    """A ScoreMap input: C order lent, Fortran order, a big-endian dtype
    refused, a misaligned buffer copied."""
    g = cx.Graph("Maps")
    m = g.input("m", cx.ScoreMap)
    g.outputs(g.node("regions", "vision.roi_regions", m), g.node("same", lambda x: x * 1, m, returns=cx.ScoreMap))
    base = plain_graph().build().run(clip[3])["text"].copy()
    raw = np.zeros(base.size * 4 + 1, np.uint8)
    misaligned = np.frombuffer(raw.data, np.float32, base.size, offset=1).reshape(base.shape)
    misaligned[...] = base
    assert not misaligned.flags.aligned
    want = g.build().run(base)
    for other in (np.asfortranarray(base), misaligned):
        got = g.build().run(other)
        assert got["regions"] == want["regions"]
        np.testing.assert_array_equal(got["same"], want["same"])
    with pytest.raises(TypeError, match="float32"):
        g.build().run(base.astype(">f4"))


def test_the_compiled_l2_reads_a_c_ordered_frame_in_place_with_the_copys_results(clip):
    lent, copied = cx.L2(), cx.L2()
    for f in clip[:6]:
        g = f.copy()
        before = sys.getrefcount(g)
        a = lent.run(g, fused=True)
        b = copied.run(np.asfortranarray(f), fused=True)
        assert sys.getrefcount(g) == before and g.flags.writeable
        assert a["blur"] == b["blur"] and a["scene"] == b["scene"] and a["roi"] == b["roi"]
        np.testing.assert_array_equal(a["fused"], b["fused"])
        g[:] = 0  # the caller's again: later frames do not see it


def test_frames_timed_in_rust_move_the_state_as_run_does(clip):
    """The bench helper: each frame's time, and the same state as `run`."""
    from cortex_rs import _native

    timed, ran = plain_graph().build(), plain_graph().build()
    ms = _native._time_frames(timed, clip[:3])
    assert len(ms) == 3 and all(t > 0 for t in ms)
    for f in clip[:3]:
        ran.run(f)
    assert timed.frame_index == ran.frame_index == 3
    same(timed.run(clip[3]), ran.run(clip[3]))
