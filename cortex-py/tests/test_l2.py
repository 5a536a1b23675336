"""L2 from Python against the Rust API, across engines, modes and weight
tables."""

import numpy as np
import pytest

import cortex_rs as cx


def row(r: dict) -> dict:
    """The outputs the runner's JSON lines show (`blur`, `scene`, `roi`),
    as Python has them: the same views, and the JPEG's bytes beside its
    size (a payload JSON leaves out)."""
    roi = dict(r["roi"])
    assert roi.pop("jpeg")[:2] == b"\xff\xd8"
    return {"blur": r["blur"], "scene": r["scene"], "roi": roi}


@pytest.mark.parametrize("mode", cx.L2.modes())
def test_results_equal_the_rust_api(clip, rust_reference, mode):
    l2 = cx.L2()
    ours = [row(l2.run(f, mode)) for f in clip]
    theirs = rust_reference(mode)
    assert len(theirs) == len(clip)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == {name: b[name] for name in a}, f"frame {i}, mode {mode}"


def assert_same(a, b):
    assert row(a) == row(b)
    assert a["roi"]["jpeg"] == b["roi"]["jpeg"]
    assert a["regions"] == b["regions"]
    np.testing.assert_array_equal(a["qp_map"]["offsets"], b["qp_map"]["offsets"])
    np.testing.assert_array_equal(a["fused"], b["fused"])


@pytest.mark.parametrize("mode", cx.L2.modes())
def test_the_parallel_engine_agrees_with_the_sequential_one(clip, mode):
    seq, par = cx.L2(), cx.L2()
    for f in clip[:30]:
        assert_same(seq.run(f, mode, fused=True), par.run(f, mode, parallel=True, fused=True))


@pytest.mark.parametrize("mode", cx.L2.modes())
def test_a_modes_weight_table_at_run_time_runs_its_plan(clip, mode):
    # A weight table carries no node rates (those belong to a declared
    # mode), so both sides run every node on every frame.
    by_mode, by_table, by_table_par = cx.L2(rates=False), cx.L2(rates=False), cx.L2(rates=False)
    table = cx.L2.mode_weights(mode)
    for f in clip[:30]:
        a = by_mode.run(f, mode, fused=True)
        assert_same(a, by_table.run(f, weights=table, fused=True))
        assert_same(a, by_table_par.run(f, weights=table, parallel=True, fused=True))


def test_results_are_plain_python_objects(clip):
    r = cx.L2().run(clip[0], fused=True)
    assert r["frame"] == 0
    assert isinstance(r["roi"]["jpeg"], bytes) and r["roi"]["jpeg"][:2] == b"\xff\xd8"
    assert r["roi"]["jpeg_bytes"] == len(r["roi"]["jpeg"])
    assert len(r["roi"]["roi"]) == 4 and all(isinstance(v, int) for v in r["roi"]["roi"])
    assert r["fused"].shape == (240, 320) and r["fused"].dtype == np.float32
    q = r["qp_map"]
    assert q["offsets"].dtype == np.float32
    assert q["offsets"].shape == (15, 20) and q["blocks"] == [20, 15] and q["block"] == 16
    assert q["neutral"] in (None, "blurry", "flat", "off")
    assert set(r["regions"]) == {"regions", "scores", "peak"} and r["regions"]["regions"]
    assert all(len(b) == 4 for b in r["regions"]["regions"])
    scores = r["regions"]["scores"]
    assert len(scores) == len(r["regions"]["regions"]) and max(scores) == 1.0  # relative to the peak
    assert r["blur"]["baseline"] is None and r["blur"]["ratio"] == 1.0  # a first frame
    l2 = cx.L2()
    blurs = [l2.run(f)["blur"] for f in clip[:4]]
    assert any(b["baseline"] is not None for b in blurs[1:])
    for b in blurs[1:]:
        if b["baseline"] is not None:
            assert abs(b["ratio"] * b["baseline"] - b["sharpness"]) <= 1e-9 * b["sharpness"]
    assert "fused" not in cx.L2().run(clip[0])


def test_a_zero_weight_mode_removes_nodes_from_its_plan():
    diff = cx.L2().dce_diff("POWER_SAVE")
    assert "saliency" in diff and "motion" in diff
    assert cx.L2.dot("POWER_SAVE").startswith("digraph")
    assert "flowchart" in cx.L2.mermaid()


def test_profiling_times_every_node(clip):
    l2 = cx.L2(profile=True)
    for f in clip[:5]:
        l2.run(f)
    report = l2.profile_report()
    for node in ("gray", "text", "fused", "roi"):
        assert node in report
    assert "gray" in l2.listing()
    with pytest.raises(ValueError, match="profile=True"):
        cx.L2().profile_report()


def test_stream_reuses_one_pipeline_in_order(clip):
    a = [row(r) for r in cx.stream(cx.L2(), clip[:12], "TEXT_FOCUS")]
    l2 = cx.L2()
    b = [row(l2.run(f, "TEXT_FOCUS")) for f in clip[:12]]
    assert a == b


def test_reset_starts_a_new_stream(clip):
    l2 = cx.L2()
    first = [row(l2.run(f)) for f in clip[:6]]
    l2.reset()
    assert l2.frame_index == 0
    again = [row(l2.run(f)) for f in clip[:6]]
    assert first == again
