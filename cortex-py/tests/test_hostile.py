"""The Python API used wrongly on purpose: each mistake is one clear
exception at the call that made it, a callable's exception on any engine
leaves the state as it was, a callable running its own pipeline is refused
rather than waiting for itself, and Ctrl-C inside a callable stops the call
as it would in Python."""

import numpy as np
import pytest

import cortex_rs as cx


def gray_graph(fn=None, returns=cx.ScoreMap, name="G", weight=None):
    g = cx.Graph(name)
    frame = g.input("frame", cx.RgbFrame)
    gray = g.node("gray", "vision.to_gray", frame)
    prev = g.state("_prev_gray", cx.GrayImage, keeps=gray)
    scene = g.node("scene", "vision.scene_change", gray, prev)
    outs = [gray, scene]
    if fn is not None:
        outs.append(g.node("py", fn, gray, returns=returns, weight=weight))
    g.outputs(*outs)
    return g


def as_map(gray):
    return gray.astype(np.float32) / 255


@pytest.mark.parametrize(
    "declare, error, message",
    [
        (lambda g, f: g.node("n", "vision.to_gray", 5), TypeError, "node `n` reads a value of the graph"),
        (lambda g, f: g.node("n", "vision.to_gray", None), TypeError, "not NoneType"),
        (lambda g, f: g.node("n", 42, f), TypeError, "op is a library op's name or a callable"),
        (lambda g, f: g.node(7, "vision.to_gray", f), TypeError, "a node's name must be a str"),
        (lambda g, f: g.node("n", lambda a, b: a, f), TypeError, "cannot take the node's 1 input"),
        (lambda g, f: g.node("n", lambda: 0, f), TypeError, "cannot take the node's 1 input"),
        (lambda g, f: g.mode("M", wc="0.4"), TypeError, "weight `wc` must be a number"),
        (lambda g, f: g.mode("M", wc=True), TypeError, "weight `wc` must be a number"),
        (lambda g, f: g.mode("M", wc=1.0, rates={"gray": 4}), TypeError, "must be cortex_rs.every"),
        (lambda g, f: g.mode("M", wc=1.0, rates=["gray"]), TypeError, "rates is a dict"),
        (lambda g, f: cx.every(0), ValueError, "int >= 1"),
        (lambda g, f: cx.every(2.5), ValueError, "int >= 1"),
        (lambda g, f: cx.every(2, trigger=1), TypeError, "node.field"),
        (lambda g, f: g.outputs(3), TypeError, "an output is a value of the graph"),
        (lambda g, f: g.mode("M", wc=float("nan")), ValueError, "weight `wc` must be finite"),
        (lambda g, f: g.node("n", "vision.text_map", f, mser={"delta": object()}), TypeError,
         "node `n`: parameters are JSON values"),
        (lambda g, f: g.node("n", "vision.text_map", f, mser={"delta": float("inf")}), TypeError,
         "node `n`: parameters are JSON values"),
    ],
)
def test_each_wrong_declaration_is_one_error_at_its_call(declare, error, message):
    g = cx.Graph("Bad")
    frame = g.input("frame", cx.RgbFrame)
    with pytest.raises(error, match=message):
        declare(g, frame)


def test_a_state_that_keeps_nothing_is_one_error_naming_it():
    g = cx.Graph("Unkept")
    gray = g.node("gray", "vision.to_gray", g.input("frame", cx.RgbFrame))
    g.state("_prev", cx.GrayImage)
    g.outputs(gray)
    with pytest.raises(cx.GraphError, match=r"test_hostile.py:\d+: state `_prev` keeps no node"):
        g.build()


def test_numpy_scalars_are_the_numbers_and_bools_they_hold(clip):
    g = cx.Graph("Scalars")
    gray = g.node("gray", "vision.to_gray", g.input("frame", cx.RgbFrame))
    b = g.node("b", lambda x: (x > 300).any(), gray, returns="bool")
    m = g.node("m", lambda x: x.mean(dtype=np.float32), gray, returns="f64")
    g.outputs(b, m)
    r = g.build().run(clip[0])
    assert r["b"] is False and r["m"] == pytest.approx(clip[0].mean(), rel=0.05)
    bad = cx.Graph("Bad")
    gray = bad.node("gray", "vision.to_gray", bad.input("frame", cx.RgbFrame))
    bad.outputs(bad.node("b", lambda x: np.int64(1), gray, returns="bool"))
    with pytest.raises(cx.PipelineError, match="expected a bool, got numpy.int64"):
        bad.build().run(clip[0])


def test_more_threads_than_streams_start_no_more_threads(clip):
    p = gray_graph().build()
    out = cx.run_streams([(p, clip[:2])], threads=10**6)
    assert [r["frame"] for r in out[0]] == [0, 1]


def test_a_value_of_another_graph_is_refused():
    a, b = cx.Graph("A"), cx.Graph("B")
    fa = a.input("frame", cx.RgbFrame)
    b.input("frame", cx.RgbFrame)
    with pytest.raises(ValueError, match="`frame` of graph `A`, not of `B`"):
        b.node("gray", "vision.to_gray", fa)
    with pytest.raises(ValueError, match="of graph `A`"):
        b.outputs(fa)


def test_a_callable_with_defaults_or_varargs_is_accepted(clip):
    g = cx.Graph("Flexible")
    gray = g.node("gray", "vision.to_gray", g.input("frame", cx.RgbFrame))
    a = g.node("a", lambda x, scale=1.0: float(x.mean()) * scale, gray, returns="f64")
    b = g.node("b", lambda *xs: len(xs), gray, a)
    g.outputs(a, b)
    r = g.build().run(clip[0])
    assert r["b"] == 2 and r["a"] == pytest.approx(float(r["a"]))


def summary(r):
    return r["frame"], r["scene"], r["gray"].tobytes()


@pytest.mark.parametrize("engine", ["sequential", "parallel", "stream", "run_streams"])
def test_a_raising_callable_keeps_the_state_on_every_engine(clip, engine):
    boom = {"on": False}

    def fragile(gray):
        if boom["on"]:
            raise ZeroDivisionError("on purpose")
        return as_map(gray)

    p, q = gray_graph(fragile).build(), gray_graph(as_map).build()
    frames = clip[:3]

    def run(pipe, f):
        if engine == "sequential":
            return pipe.run(f)
        if engine == "parallel":
            return pipe.run(f, parallel=True)
        if engine == "stream":
            return pipe.stream([f])[0]
        return cx.run_streams([(pipe, [f])], threads=2)[0][0]

    run(p, frames[0]), run(q, frames[0])
    boom["on"] = True
    if engine in ("stream", "run_streams"):
        err = run(p, frames[1])  # a failed frame is its result, not raised
        assert isinstance(err, cx.PipelineError) and isinstance(err.__cause__, ZeroDivisionError)
    else:
        with pytest.raises(cx.PipelineError) as e:
            run(p, frames[1])
        assert isinstance(e.value.__cause__, ZeroDivisionError)
    assert p.frame_index == 1
    boom["on"] = False
    # The next frame compares with the last good one, as if the failed one never ran.
    assert summary(run(p, frames[2])) == summary(run(q, frames[2]))


def test_a_callable_running_its_own_pipeline_is_refused_not_a_deadlock(clip):
    holder = {}

    def recurse(gray):
        holder["p"].run(clip[0])
        return as_map(gray)

    def recurse_streams(gray):
        cx.run_streams([(holder["p"], [clip[0]])])
        return as_map(gray)

    for fn in (recurse, recurse_streams):
        p = gray_graph(fn).build()
        holder["p"] = p
        for parallel in (False, True):
            with pytest.raises(cx.PipelineError, match="cannot use G itself") as e:
                p.run(clip[0], parallel=parallel)
            assert isinstance(e.value.__cause__, RuntimeError)
            assert p.frame_index == 0
    # Another pipeline may be run from a callable.
    other = gray_graph().build()

    def nested(gray):
        other.run(clip[0])
        return as_map(gray)

    p = gray_graph(nested).build()
    p.run(clip[0])
    assert other.frame_index == 1


def test_a_callable_using_a_pipeline_of_its_run_streams_call_fails_its_frame(clip):
    # The call holds its pipelines until every stream ends: waiting for one
    # from a frame of the call would never end, so that frame fails instead.
    holder = {}

    def uses_q(gray):
        holder["q"].run(clip[0])
        return as_map(gray)

    p, q = gray_graph(uses_q).build(), gray_graph().build()
    holder["q"] = q
    out = cx.run_streams([(p, clip[:2]), (q, clip[:2])], threads=2)
    assert all(isinstance(r, cx.PipelineError) for r in out[0])
    assert isinstance(out[0][0].__cause__, RuntimeError)
    assert "cannot be used until the call ends" in str(out[0][0].__cause__)
    assert [r["frame"] for r in out[1]] == [0, 1]
    # Outside the call both are free again.
    assert p.run(clip[0])["frame"] == 0 and q.frame_index == 3


def test_keyboard_interrupt_in_a_callable_is_raised_as_it_is(clip):
    def interrupted(gray):
        raise KeyboardInterrupt

    p = gray_graph(interrupted).build()
    with pytest.raises(KeyboardInterrupt):
        p.run(clip[0])
    with pytest.raises(KeyboardInterrupt):
        p.stream(clip[:3])
    with pytest.raises(KeyboardInterrupt):
        cx.run_streams([(p, clip[:3])])
    assert p.frame_index == 0


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda p, f: p.run(f, "NOPE"), ValueError, "unknown mode `NOPE`"),
        (lambda p, f: p.run(f, weights={"nope": 1.0}), ValueError, None),
        (lambda p, f: p.run(f, weights={"wx": "1"}), TypeError, "weight `wx` must be a number"),
        (lambda p, f: p.run(f, weights={"wx": True}), TypeError, "weight `wx` must be a number"),
        (lambda p, f: p.run((f, f)), ValueError, "takes 1 inputs"),
        (lambda p, f: p.run({"frame": f, "x": f}), ValueError, "`x` is not an input"),
        (lambda p, f: p.run({}), ValueError, "input `frame` is missing"),
        (lambda p, f: p.stream(5), TypeError, "not iterable"),
        (lambda p, f: p.stream([f], on_result=5), TypeError, "on_result must be callable"),
        (lambda p, f: p.stream([f], in_flight=0), ValueError, None),
        (lambda p, f: p.dce_diff("NOPE"), ValueError, "unknown mode"),
        (lambda p, f: p.profile_report(), ValueError, "profile=True"),
    ],
)
def test_each_wrong_call_is_one_error_and_keeps_the_state(clip, call, error, message):
    g = gray_graph(as_map, weight="wx")
    g.mode("M", wx=1.0)
    p = g.build()
    p.run(clip[0])
    with pytest.raises(error, match=message):
        call(p, clip[1])
    assert p.frame_index == 1


def test_a_bad_returned_value_is_one_error_per_frame(clip):
    """Wrong returns on the first and on a later frame (after a good one
    filled the node's buffer) fail their frame alone."""
    answers = iter([as_map, lambda g: "x", lambda g: as_map(g)[None], as_map])

    def varying(gray):
        return next(answers)(gray)

    p = gray_graph(varying).build()
    p.run(clip[0])
    for message in ("must return ScoreMap.*numpy array", "must return ScoreMap.*H×W"):
        with pytest.raises(cx.PipelineError, match=message):
            p.run(clip[1])
    r = p.run(clip[1])
    np.testing.assert_array_equal(r["py"], as_map(r["gray"]))
    assert p.frame_index == 2
