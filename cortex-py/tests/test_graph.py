"""Pipelines built in Python: L2 from the op library against `cx.L2` and
the graph file, Python callables as nodes (against numpy run on
the same values), every engine against the sequential run, modes and
rates, and one error per mistake."""

import functools
import pathlib

import numpy as np
import pytest

import cortex_rs as cx

REPO = pathlib.Path(__file__).resolve().parents[2]
MODES = ["BALANCED", "POWER_SAVE", "TEXT_FOCUS"]


def same(a, b):
    """Two results alike: every view equal, every array and payload bit for
    bit."""
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], np.ndarray):
            np.testing.assert_array_equal(a[k], b[k])
        elif isinstance(a[k], dict):
            assert a[k].keys() == b[k].keys()
            for f in a[k]:
                if isinstance(a[k][f], np.ndarray):
                    np.testing.assert_array_equal(a[k][f], b[k][f])
                else:
                    assert a[k][f] == b[k][f], (k, f)
        else:
            assert a[k] == b[k], k


@pytest.mark.parametrize("mode", MODES)
def test_cx_l2_is_the_l2_graph_built(clip, mode):
    # The compiled L2 against this graph is the Rust tests' (dynamic_l2),
    # and against cx.L2 test_l2's (the runner's JSON lines).
    built = cx.l2_graph().build()
    l2 = cx.L2()
    for f in clip:
        r = l2.run(f, mode, fused=True)
        assert isinstance(r["roi"]["jpeg"], bytes)
        assert r["qp_map"]["offsets"].dtype == np.float32
        same(built.run(f, mode), r)


def test_l2_built_in_python_is_the_graph_file():
    from_python = cx.l2_graph()
    from_file = cx.load_graph(REPO / "examples" / "graphs" / "l2.json")
    assert from_python.build().listing() == from_file.listing()
    assert from_python.build().program() == from_file.program()


def summary(r):
    """What a result says, arrays (also a view's payload) as bytes, for
    exact comparison."""
    if isinstance(r, dict):
        return {k: summary(v) for k, v in r.items()}
    return r.tobytes() if isinstance(r, np.ndarray) else r


def test_every_engine_gives_the_sequential_results(clip):
    frames = clip[:12]
    for mode in MODES:
        want = [summary(r) for r in map(cx.l2_graph().build().run, frames, [mode] * 12)]
        p = cx.l2_graph().build()
        assert [summary(p.run(f, mode, parallel=True)) for f in frames] == want
        assert [summary(r) for r in cx.l2_graph().build().stream(frames, mode)] == want
        unfused = cx.l2_graph().build()
        unfused.set_fusion(False)
        assert [summary(unfused.run(f, mode)) for f in frames] == want


def test_a_run_reading_some_outputs_runs_only_their_producers(clip):
    # `counted` is a Python node only the `counted` output needs.
    calls = []

    def count(gray):
        calls.append(1)
        return gray

    def graph():
        g = cx.Graph("Read")
        gray = g.node("gray", "vision.to_gray", g.input("frame", cx.RgbFrame))
        prev = g.state("_prev_gray", cx.GrayImage, keeps=gray)
        scene = g.node("scene", "vision.scene_change", gray, prev)
        g.outputs(scene, g.node("counted", count, gray, returns=cx.GrayImage))
        return g.build()

    frames = clip[:6]
    q = graph()
    full = [q.run(f) for f in frames]
    assert len(calls) == len(frames)
    calls.clear()
    p = graph()
    for parallel in (False, True):
        got = [p.run(f, outputs=["scene"], parallel=parallel) for f in frames]
        p.reset()
        assert [r.keys() for r in got] == [{"frame", "scene"}] * len(frames)
        assert [r["scene"] for r in got] == [r["scene"] for r in full]
    streamed = graph().stream(frames, outputs=["scene"])
    assert [r["scene"] for r in streamed] == [r["scene"] for r in full]
    assert all(r.keys() == {"frame", "scene"} for r in streamed)
    assert calls == []
    with pytest.raises(ValueError, match="outputs: .*scen.*"):
        p.run(frames[0], outputs=["scen"])
    with pytest.raises(ValueError, match="outputs: "):
        p.stream(frames, outputs=["nope"])
    assert p.frame_index == 0


def test_four_streams_on_two_threads_give_each_streams_own_results(clip):
    sources = [clip[i : i + 8] for i in (0, 8, 16, 24)]
    want = []
    for frames in sources:
        p = cx.l2_graph().build()
        want.append([summary(p.run(f, "BALANCED")) for f in frames])
    pipes = [cx.l2_graph().build() for _ in sources]
    got = cx.run_streams([(p, frames, "BALANCED") for p, frames in zip(pipes, sources)], threads=2)
    assert [[summary(r) for r in s] for s in got] == want
    with pytest.raises(ValueError, match="its own pipeline"):
        cx.run_streams([(pipes[0], sources[0]), (pipes[0], sources[1])])


def test_run_streams_keeps_each_pipelines_state_profile_and_counts(clip):
    # Two calls on the same pipelines equal one sequential run each: the
    # state (and frame count) a stream reaches stays its pipeline's.
    frames = clip[:6]
    want = [summary(r) for r in map(cx.l2_graph().build().run, frames, ["BALANCED"] * 6)]
    p = cx.l2_graph().build(profile=True)
    q = cx.l2_graph().build()
    first, stats = cx.run_streams(
        [(p, frames[:3], "BALANCED"), (q, frames[:2], "POWER_SAVE")], threads=2, stats=True
    )
    (second,) = cx.run_streams([(p, frames[3:], "BALANCED")], threads=1)
    assert [summary(r) for r in first[0] + second] == want
    assert p.frame_index == 6 and q.frame_index == 2
    assert "(6 frames)" in p.profile_report()
    assert [(s["received"], s["processed"], s["failed"], s["end"]) for s in stats] == [
        (3, 3, 0, "finished"),
        (2, 2, 0, "finished"),
    ]
    assert all(s["latency_p50_ms"] <= s["latency_p99_ms"] for s in stats)


def inverted(gray):
    """A numpy node: the gray image as a score map in [0, 1], dark = 1."""
    assert gray.dtype == np.uint8 and gray.ndim == 2
    return (255 - gray).astype(np.float32) / 255


def mine_graph(fn=inverted, returns=cx.ScoreMap):
    """A graph of library ops around one Python node, two modes and a rate."""
    g = cx.Graph("Mine")
    frame = g.input("frame", cx.RgbFrame)
    gray = g.node("gray", "vision.to_gray", frame)
    prev = g.state("_prev_gray", cx.GrayImage, keeps=gray)
    scene = g.node("scene", "vision.scene_change", gray, prev)
    dark = g.node("dark", fn, gray, returns=returns, weight="wd")
    text = g.node("text", "vision.text_map", gray, weight="wt", mser={"delta": 3})
    center = g.node("center", "vision.center_crop", gray, weight="wc")
    fused = g.node("fused", "vision.score_fusion", center, text, dark, dark)
    g.mode("ALL", wc=0.4, wt=0.3, wd=0.3)
    g.mode("FAST", wc=0.5, wt=0.0, wd=0.5, rates={"dark": cx.every(4, trigger="scene.changed")})
    g.outputs(gray, scene, fused, optional=[dark])
    return g


def test_a_python_node_gets_numpy_in_and_gives_its_value_out(clip):
    p = mine_graph().build()
    for f in clip[:4]:
        r = p.run(f, "ALL")
        np.testing.assert_array_equal(r["dark"], inverted(r["gray"]))


def test_a_python_node_in_the_middle_equals_the_same_map_given_by_a_library_op(clip):
    """score_fusion reads a Python node's map exactly as it reads a library
    op's: a Python node returning the centre prior gives the library's
    fused map bit for bit."""
    def center(gray):
        return reference.run(frame)["center"]

    ref = cx.Graph("Ref")
    rf = ref.input("frame", cx.RgbFrame)
    rg = ref.node("gray", "vision.to_gray", rf)
    rc = ref.node("center", "vision.center_crop", rg)
    ref.outputs(rc)
    reference = ref.build()
    for frame in clip[:3]:
        lib = mine_graph().build().run(frame, "ALL")
        py = mine_graph().build()
        g = cx.Graph("Swapped")
        fr = g.input("frame", cx.RgbFrame)
        gray = g.node("gray", "vision.to_gray", fr)
        c = g.node("center", center, gray, returns=cx.ScoreMap, weight="wc")
        t = g.node("text", "vision.text_map", gray, weight="wt", mser={"delta": 3})
        d = g.node("dark", inverted, gray, returns=cx.ScoreMap, weight="wd")
        fused = g.node("fused", "vision.score_fusion", c, t, d, d)
        g.mode("ALL", wc=0.4, wt=0.3, wd=0.3)
        g.outputs(fused)
        np.testing.assert_array_equal(g.build().run(frame)["fused"], lib["fused"])
        del py


def test_modes_eliminate_and_rates_hold_a_python_node(clip):
    calls = []

    def counted(gray):
        calls.append(1)
        return inverted(gray)

    p = mine_graph(counted).build()
    for f in clip[:8]:
        p.run(f, "FAST")
    # Every 4th frame (0 and 4), and on the cut-free clip start no trigger.
    assert len(calls) == 2
    calls.clear()
    g = mine_graph(counted)
    g.mode("NO_DARK", wc=0.5, wt=0.5, wd=0.0)
    p = g.build()
    r = p.run(clip[0], "NO_DARK")
    assert calls == [] and r["dark"] is None
    assert "dark" in p.dce_diff("NO_DARK")


def test_a_python_object_passes_between_python_nodes(clip):
    g = cx.Graph("Objects")
    frame = g.input("frame", cx.RgbFrame)
    gray = g.node("gray", "vision.to_gray", frame)
    stats = g.node("stats", lambda a: {"mean": float(a.mean()), "shape": a.shape}, gray)
    scene = g.node("scene", "vision.scene_change", gray, g.state("_p", cx.GrayImage, keeps=gray))
    label = g.node("label", lambda s, sc: f"{s['shape']} {sc['cut']}", stats, scene, returns=cx.PyObject)
    g.outputs(gray, stats, label)
    r = g.build().run(clip[0])
    assert r["stats"] == {"mean": float(r["gray"].mean()), "shape": r["gray"].shape}
    assert r["label"] == f"{r['gray'].shape} False"


def test_a_python_exception_fails_the_frame_and_keeps_the_state(clip):
    boom = {"on": False}

    def fragile(gray):
        if boom["on"]:
            raise ZeroDivisionError("on purpose")
        return inverted(gray)

    p = mine_graph(fragile).build()
    q = mine_graph().build()
    p.run(clip[0], "ALL")
    q.run(clip[0], "ALL")
    boom["on"] = True
    with pytest.raises(cx.PipelineError, match="(?s)node `dark` failed.*ZeroDivisionError: on purpose") as e:
        p.run(clip[1], "ALL")
    assert isinstance(e.value.__cause__, ZeroDivisionError)
    assert "in fragile" in str(e.value)  # the traceback, kept
    assert p.frame_index == 1
    boom["on"] = False
    # The failed frame left the state (the previous gray) as it was.
    assert summary(p.run(clip[2], "ALL")) == summary(q.run(clip[2], "ALL"))


@pytest.mark.parametrize(
    "returned, message",
    [
        (lambda g: g, "must return ScoreMap.*float32"),
        (lambda g: g.astype(np.float64), "must return ScoreMap.*float32"),
        (lambda g: g[None].astype(np.float32), "must return ScoreMap.*H×W"),
        (lambda g: [[0.0]], "must return ScoreMap.*numpy array"),
    ],
)
def test_a_callable_returning_the_wrong_type_is_the_frames_error(clip, returned, message):
    p = mine_graph(returned).build()
    with pytest.raises(cx.PipelineError, match=message) as e:
        p.run(clip[0], "ALL")
    assert isinstance(e.value.__cause__, TypeError)
    assert p.frame_index == 0


def one_error(g):
    with pytest.raises(cx.GraphError) as e:
        g.build()
    assert len(e.value.problems) == 1, e.value
    return str(e.value)


def small(op="vision.to_gray", **params):
    g = cx.Graph("Small")
    frame = g.input("frame", cx.RgbFrame)
    gray = g.node("gray", op, frame, **params)
    return g, frame, gray


def test_each_mistake_is_one_error_at_its_python_line():
    g, _, gray = small("vision.to_grey")
    g.outputs(gray)
    m = one_error(g)
    assert "no op `vision.to_grey`" in m and "did you mean `vision.to_gray`" in m
    assert "test_graph.py:" in m  # the line that declared the node

    g, _, gray = small()
    g.node("text", "vision.text_map", gray, mser={"dleta": 3})
    g.outputs(gray)
    assert "unknown field `dleta`, expected one of `delta`" in one_error(g)

    g, _, gray = small()
    g.outputs(g.node("motion", "vision.motion_map", gray, "nowhere"))
    assert "nowhere" in one_error(g)

    g = cx.Graph("Cycle")
    frame = g.input("frame", cx.RgbFrame)
    g.node("a", lambda x, y: x, frame, "b", returns=cx.RgbFrame)
    b = g.node("b", lambda x: x, "a", returns=cx.RgbFrame)
    g.outputs(b)
    assert "cycle" in one_error(g).lower()

    g, frame, gray = small()
    x = g.node("x", inverted, gray, returns=cx.ScoreMap)
    g.outputs(g.node("gray2", "vision.to_gray", x))
    assert "is a `ScoreMap`" in one_error(g)

    g, _, gray = small()
    g.outputs(g.node("odd", inverted, gray, returns="BlurReport"))
    assert "returns one of" in one_error(g)


@pytest.mark.parametrize(
    "trigger, says",
    [
        ("scen.changed", "`scen`"),
        ("scene.chnged", "no `bool` field `chnged`; its `bool` fields are `changed`"),
        ("scene", "`scene` is a `SceneChange`, not a `bool`"),
    ],
)
def test_a_trigger_naming_a_missing_node_or_field_is_one_build_error(trigger, says):
    g, _, gray = small()
    prev = g.state("prev", cx.GrayImage)
    prev.keeps(gray)
    scene = g.node("scene", "vision.scene_change", gray, prev)
    text = g.node("text", "vision.text_map", gray)
    g.mode("SLOW", rates={"text": cx.every(4, trigger=trigger)})
    g.outputs(scene, text)
    m = one_error(g)
    assert says in m and "SLOW" in m, m


def test_the_op_library_is_introspectable():
    ops = {d["name"]: d for d in cx.ops()}
    text = ops["vision.text_map"]
    assert text["inputs"] == [("gray", "GrayImage", False)]
    assert text["output"] == "ScoreMap"
    assert ("mser.delta", 5, text["params"][0][2]) in text["params"]
    assert "mser.delta" in cx.inspect("vision.text_map")
    assert "vision.to_gray" in cx.inspect()
    with pytest.raises(KeyError):
        cx.inspect("vision.nothing")


def test_the_tools_show_a_built_pipeline(clip):
    p = mine_graph().build(profile=True)
    for f in clip[:3]:
        p.run(f, "ALL")
    assert "dark" in p.listing() and "ms" in p.listing()
    assert "frame" in p.profile_report()
    assert p.dot("FAST").startswith("digraph")
    assert "flowchart" in p.mermaid()
    assert p.modes == ["ALL", "FAST"] and p.inputs == ["frame"]
    assert p.outputs == ["gray", "scene", "fused", "dark"]
    assert p.mode_weights("FAST") == [("wd", 0.5), ("wt", 0.0), ("wc", 0.5)] or dict(
        p.mode_weights("FAST")
    ) == {"wc": 0.5, "wt": 0.0, "wd": 0.5}


def test_inputs_by_position_or_name_and_wrong_inputs(clip):
    g = cx.Graph("Two")
    a = g.input("a", cx.RgbFrame)
    b = g.input("b", cx.GrayImage)
    ga = g.node("ga", "vision.to_gray", a)
    m = g.node("m", "vision.motion_map", ga, b)
    g.outputs(m)
    p = g.build()
    gray = mine_graph().build().run(clip[0])["gray"]
    x = p.run((clip[1], gray))["m"]
    p2 = g.build()
    np.testing.assert_array_equal(p2.run({"b": gray, "a": clip[1]})["m"], x)
    with pytest.raises(TypeError, match="2 inputs"):
        p.run(clip[0])
    with pytest.raises(ValueError, match="`c` is not an input"):
        p.run({"a": clip[0], "b": gray, "c": 1})
    with pytest.raises(TypeError, match="GrayImage must be a uint8"):
        p.run((clip[0], gray.astype(np.float32)))


def test_a_graph_file_with_a_python_function(tmp_path, clip):
    g = mine_graph()
    path = tmp_path / "mine.json"
    path.write_text(g.to_json())
    p = cx.load_graph(path, functions={"py.dark": inverted})
    q = g.build()
    assert summary(p.run(clip[0], "ALL")) == summary(q.run(clip[0], "ALL"))
    with pytest.raises(cx.GraphError, match="no op `py.dark`"):
        cx.load_graph(path)
    with pytest.raises(cx.GraphError, match="no node calls it"):
        cx.load_graph(path, functions={"py.dark": inverted, "py.other": inverted})


@pytest.mark.skipif(not cx.MODELS, reason="the wheel was built without `models`")
def test_a_model_node_and_a_python_node_read_its_boxes(monkeypatch):
    """PP-OCR's detector as a node declared in Python gives the boxes of
    `examples/graphs/l2_dnn.json` (L2 with its text node substituted,
    checked against its references in Rust); a Python node reads the boxes' view, and its text map is a
    ScoreMap of the frame's size."""
    monkeypatch.chdir(REPO)
    g = cx.Graph("Dnn")
    frame = g.input("frame", cx.RgbFrame)
    boxes = g.node(
        "boxes", "model.text_boxes", frame,
        path="models/ch_PP-OCRv4_det_infer.onnx", width=640, height=480,
    )
    text = g.node("text", "model.boxes_map", frame, boxes)
    count = g.node("count", lambda b: len(b["boxes"]), boxes)
    g.outputs(boxes, text, count)
    mine = g.build()
    ref = cx.load_graph(REPO / "examples" / "graphs" / "l2_dnn.json")
    for f in cx.demo_clip(2, 640, 480):
        a, b = mine.run(f), ref.run(f, "BALANCED")
        assert a["boxes"] == b["boxes"] and a["boxes"]["boxes"]
        assert a["count"] == len(a["boxes"]["boxes"])
        assert a["text"].shape == (480, 640) and a["text"].dtype == np.float32
