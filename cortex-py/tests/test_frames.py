"""numpy layouts and bad input: every layout numpy gives runs, and gives
the results of the same pixels in C order; mistakes raise, never crash,
and a failed frame leaves the pipeline's state as it was."""

import numpy as np
import pytest

import cortex_rs as cx


def results(frames, mode="BALANCED"):
    l2 = cx.L2()
    return [l2.run(f, mode, fused=True) for f in frames]


def same(a, b):
    assert a["blur"] == b["blur"] and a["scene"] == b["scene"]
    assert a["roi"]["roi"] == b["roi"]["roi"] and a["roi"]["jpeg"] == b["roi"]["jpeg"]
    np.testing.assert_array_equal(a["fused"], b["fused"])


@pytest.mark.parametrize(
    "layout",
    ["fortran", "flipped_twice", "strided_view", "channels_last_of_planar", "readonly"],
)
def test_every_numpy_layout_gives_the_c_order_results(clip, layout):
    frames = clip[:8]
    if layout == "fortran":
        other = [np.asfortranarray(f) for f in frames]
    elif layout == "flipped_twice":
        other = [f[::-1, ::-1][::-1, ::-1] for f in frames]
    elif layout == "strided_view":
        # Every other column of a frame twice as wide: a view with a
        # column stride of 6 bytes.
        other = [np.repeat(f, 2, axis=1)[:, ::2] for f in frames]
    elif layout == "channels_last_of_planar":
        other = [np.ascontiguousarray(f.transpose(2, 0, 1)).transpose(1, 2, 0) for f in frames]
    else:
        other = []
        for f in frames:
            g = f.copy()
            g.setflags(write=False)
            other.append(g)
    for f, g in zip(frames, other):
        assert np.array_equal(f, g)
    for a, b in zip(results(frames), results(other)):
        same(a, b)


def test_frames_of_changing_size_run(clip):
    l2 = cx.L2()
    small = cx.demo_clip(2, 160, 120)
    for f in (clip[0], small[0], clip[1], small[1]):
        r = l2.run(f)
        assert r["roi"]["roi"][0] + r["roi"]["roi"][2] <= f.shape[1]


@pytest.mark.parametrize(
    "frame, error, message",
    [
        (np.zeros((120, 160, 3), np.float32), TypeError, "uint8"),
        (np.zeros((120, 160), np.uint8), ValueError, "H×W×3"),
        (np.zeros((120, 160, 4), np.uint8), ValueError, "H×W×3"),
        ([[[0, 0, 0]]], TypeError, "numpy array"),
        ("frame.png", TypeError, "numpy array"),
    ],
)
def test_a_wrong_frame_is_refused(frame, error, message):
    with pytest.raises(error, match=message):
        cx.L2().run(frame)


def test_a_wrong_mode_or_weight_table_is_a_value_error(clip):
    l2 = cx.L2()
    with pytest.raises(ValueError, match="unknown mode `FAST`.*BALANCED"):
        l2.run(clip[0], "FAST")
    with pytest.raises(ValueError, match="weights"):
        l2.run(clip[0], weights=[("wc", 1.0)])
    with pytest.raises(ValueError, match="weights"):
        l2.run(clip[0], weights=[("wc", float("nan")), ("wt", 0.0), ("ws", 0.0), ("wm", 0.0)])
    with pytest.raises(ValueError):
        cx.L2.mode_weights("nope")
    assert l2.frame_index == 0


def test_a_failed_frame_leaves_the_state_as_it_was(clip):
    l2, reference = cx.L2(), cx.L2()
    for f in clip[:5]:
        l2.run(f)
        reference.run(f)
    with pytest.raises(cx.PipelineError, match="node `"):
        l2.run(np.zeros((0, 0, 3), np.uint8))
    assert l2.frame_index == reference.frame_index
    for f in clip[5:12]:
        same(l2.run(f, fused=True), reference.run(f, fused=True))


def test_sources_read_frames_and_refuse_what_they_cannot_open(tmp_path):
    with pytest.raises(OSError):
        cx.open(str(tmp_path / "missing.y4m"))
    bad = tmp_path / "bad.y4m"
    bad.write_bytes(b"not a y4m stream")
    with pytest.raises(OSError):
        list(cx.open(str(bad)))
    with pytest.raises(ValueError, match="too large|limit"):
        cx.demo_clip(1, 1 << 20, 1 << 20)


@pytest.mark.parametrize(
    "header",
    [
        # The audit's file: a header field starting with a two-byte UTF-8
        # character, once a panic (`PanicException`) in the header parser.
        b"YUV4MPEG2 W4 H4 \xd4\x96x\n",
        # A field of one three-byte character, and bytes that are not UTF-8.
        b"YUV4MPEG2 W4 H4 \xe2\x82\xac\n",
        b"YUV4MPEG2 W4 H4 \xff\xfe\n",
        b"YUV4MPEG2 \xc3\xa9 W4 H4\n",
    ],
)
def test_a_y4m_header_with_non_ascii_fields_is_an_os_error_not_a_panic(tmp_path, header):
    path = tmp_path / "u.y4m"
    path.write_bytes(header + b"FRAME\n")
    with pytest.raises(OSError):
        list(cx.open(str(path)))


def test_a_y4m_file_reads_back_the_frames_it_was_written_from(tmp_path, clip):
    # A 4:4:4 Y4M file written here with BT.601 limited range (what Y4M
    # carries, and what the source converts back from).
    path = tmp_path / "clip.y4m"
    frames = clip[:3]
    h, w, _ = frames[0].shape
    with open(path, "wb") as out:
        out.write(f"YUV4MPEG2 W{w} H{h} F30:1 Ip A1:1 C444\n".encode())
        for f in frames:
            r, g, b = (f[..., c].astype(np.float64) for c in range(3))
            y = 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255
            cb = 128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255
            cr = 128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255
            out.write(b"FRAME\n")
            for plane in (y, cb, cr):
                out.write(np.clip(np.rint(plane), 0, 255).astype(np.uint8).tobytes())
    read = list(cx.open(str(path)))
    assert len(read) == 3
    for f, g in zip(frames, read):
        assert g.shape == f.shape and g.dtype == np.uint8
        # Rounded to 8 bits in YCbCr (steps of 255/219 in Y and 255/224 in
        # chroma), then back: within 3 levels.
        assert np.abs(f.astype(int) - g.astype(int)).max() <= 3
