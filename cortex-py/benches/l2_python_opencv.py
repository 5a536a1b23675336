"""The L2 pipeline as the original Cortex wrote it, in Python + OpenCV + numpy (the
stack cortex is measured against), and the bench that runs it beside
`cortex_rs.L2` on the same frames in memory.

    python cortex-py/benches/l2_python_opencv.py [video] [--frames 60] [--rounds 5]

Each stage does the work of the cortex node of the same name with the same
parameters (OpenCV's MSER, a 64×64 spectral-residual saliency, a 16×12
motion grid, a Gaussian centre prior, SSIM with a Gaussian window, the
Laplacian's variance, a JPEG crop of the top region at quality 85, up to
four regions and a 16-pixel QP map); it is a speed reference, not a
bit-exact twin. The video defaults to OpenCV's `vtest.avi` (768×576,
Debian's opencv-doc).
"""

import argparse
import os
import statistics
import sys
import threading
import time

import cv2
import numpy as np

VIDEO = "/usr/share/doc/opencv-doc/examples/data/vtest.avi"
BALANCED = {"wc": 0.4, "wt": 0.3, "ws": 0.2, "wm": 0.1}


def blur_detector(gray):
    return float(cv2.Laplacian(gray, cv2.CV_64F).var())


def ssim(a, b):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    g = lambda x: cv2.GaussianBlur(x, (11, 11), 1.5)
    mu_a, mu_b = g(a), g(b)
    s_aa = g(a * a) - mu_a * mu_a
    s_bb = g(b * b) - mu_b * mu_b
    s_ab = g(a * b) - mu_a * mu_b
    num = (2 * mu_a * mu_b + c1) * (2 * s_ab + c2)
    den = (mu_a ** 2 + mu_b ** 2 + c1) * (s_aa + s_bb + c2)
    return float((num / den).mean())


def center_crop(h, w, sigma=0.25):
    ys = (np.arange(h) - (h - 1) / 2) / (sigma * h)
    xs = (np.arange(w) - (w - 1) / 2) / (sigma * w)
    return np.exp(-0.5 * ys[:, None] ** 2) * np.exp(-0.5 * xs[None, :] ** 2)


MSER = cv2.MSER_create()


def text_roi(gray):
    h, w = gray.shape
    counts = np.zeros((h, w), np.float32)
    for inverted in (False, True):
        regions, boxes = MSER.detectRegions(255 - gray if inverted else gray)
        for pts, (x, y, bw, bh) in zip(regions, boxes):
            aspect = bw / bh
            extent = len(pts) / float(bw * bh)
            if 0.1 <= aspect <= 3.0 and 0.01 * h <= bh <= 0.5 * h and 0.2 <= extent <= 0.9:
                counts[y : y + bh, x : x + bw] += 1
    r = max(1, round(0.01 * min(h, w)))
    smooth = cv2.blur(counts, (2 * r + 1, 2 * r + 1), borderType=cv2.BORDER_REPLICATE)
    return np.clip(smooth, 0, 1)


def saliency_dft(gray):
    h, w = gray.shape
    small = cv2.resize(gray, (64, 64), interpolation=cv2.INTER_AREA).astype(np.float64)
    f = np.fft.fft2(small)
    log_amp = np.log(np.abs(f) + 1e-9)
    phase = np.angle(f)
    residual = log_amp - cv2.blur(log_amp, (3, 3))
    sal = np.abs(np.fft.ifft2(np.exp(residual + 1j * phase))) ** 2
    sal = cv2.GaussianBlur(sal, (0, 0), 2.5)
    sal = cv2.resize(sal, (w, h), interpolation=cv2.INTER_LINEAR)
    return (sal - sal.min()) / (np.ptp(sal) + 1e-12)


def motion_map(gray, prev):
    if prev is None or prev.shape != gray.shape:
        return np.zeros(gray.shape, np.float32)
    h, w = gray.shape
    diff = cv2.absdiff(gray, prev)
    cells = cv2.resize(diff, (16, 12), interpolation=cv2.INTER_AREA).astype(np.float32) / 255
    return cv2.resize(cells, (w, h), interpolation=cv2.INTER_NEAREST)


def roi_box(fused, rel=0.5, margin=8, min_side=64):
    h, w = fused.shape
    peak = float(fused.max())
    ys, xs = np.nonzero(fused >= rel * peak)
    x0, x1 = max(0, xs.min() - margin), min(w, xs.max() + 1 + margin)
    y0, y1 = max(0, ys.min() - margin), min(h, ys.max() + 1 + margin)
    if x1 - x0 < min_side:
        x0, x1 = max(0, min(x0, w - min_side)), min(w, max(x1, x0 + min_side))
    if y1 - y0 < min_side:
        y0, y1 = max(0, min(y0, h - min_side)), min(h, max(y1, y0 + min_side))
    return int(x0), int(y0), int(x1 - x0), int(y1 - y0), peak


def regions(fused, rel=0.5, max_regions=4):
    mask = (fused >= rel * fused.max()).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    mass = np.bincount(labels.ravel(), weights=fused.ravel(), minlength=n)
    order = sorted(range(1, n), key=lambda i: -mass[i])[:max_regions]
    return [tuple(int(v) for v in stats[i, :4]) for i in order]


def qp_map(fused, blurry, block=16, max_offset=8.0):
    h, w = fused.shape
    rows, cols = -(-h // block), -(-w // block)
    padded = np.zeros((rows * block, cols * block), np.float32)
    padded[:h, :w] = fused
    blocks = padded.reshape(rows, block, cols, block).mean(axis=(1, 3))
    if blurry or np.ptp(blocks) < 0.05 * max(blocks.max(), 1e-12):
        return np.zeros_like(blocks)
    return -max_offset * (blocks - blocks.mean()) / (np.ptp(blocks) + 1e-12)


class L2Python:
    """The pipeline's state between frames: the previous gray frame."""

    def __init__(self):
        self.prev = None

    def run(self, frame_rgb, w=BALANCED):
        gray = cv2.cvtColor(frame_rgb, cv2.COLOR_RGB2GRAY)
        sharp = blur_detector(gray)
        scene = ssim(gray, self.prev) if self.prev is not None and self.prev.shape == gray.shape else None
        h, wd = gray.shape
        maps = {"wc": center_crop(h, wd), "wt": text_roi(gray)}
        if w["ws"]:
            maps["ws"] = saliency_dft(gray)
        if w["wm"]:
            maps["wm"] = motion_map(gray, self.prev)
        fused = sum(w[k] * m.astype(np.float32) for k, m in maps.items()).astype(np.float32)
        x, y, bw, bh, score = roi_box(fused)
        ok, jpeg = cv2.imencode(".jpg", cv2.cvtColor(frame_rgb[y : y + bh, x : x + bw], cv2.COLOR_RGB2BGR),
                                [cv2.IMWRITE_JPEG_QUALITY, 85])
        out = {
            "sharpness": sharp,
            "ssim": scene,
            "roi": (x, y, bw, bh),
            "score": score,
            "jpeg": jpeg.tobytes(),
            "regions": regions(fused),
            "qp_map": qp_map(fused, sharp < 100.0),
        }
        self.prev = gray
        return out


def load(path, count):
    cap = cv2.VideoCapture(path)
    frames = []
    while len(frames) < count:
        ok, bgr = cap.read()
        if not ok:
            break
        frames.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    if not frames:
        sys.exit(f"l2_python_opencv: no frames in {path}")
    return frames


def per_frame_ms(run, frames):
    t0 = time.perf_counter()
    for f in frames:
        run(f)
    return (time.perf_counter() - t0) * 1e3 / len(frames)


def main():
    import cortex_rs as cx

    p = argparse.ArgumentParser()
    p.add_argument("video", nargs="?", default=VIDEO)
    p.add_argument("--frames", type=int, default=60)
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    frames = load(a.video, a.frames)
    h, w, _ = frames[0].shape
    print(f"{len(frames)} frames {w}×{h} from {a.video}; cv2 {cv2.__version__}, "
          f"{cv2.getNumThreads()} OpenCV threads; load average {os.getloadavg()}")

    rows = {"python+opencv": [], "cortex_rs sequential": [], "cortex_rs parallel": [],
            "cortex_rs profiled: call": [], "cortex_rs profiled: Rust inside the call": [],
            "binding overhead (call / Rust − 1, %)": [], "2 threads, 1 pipeline each (frames/s ratio)": []}
    for _ in range(a.rounds):
        py = L2Python()
        rows["python+opencv"].append(per_frame_ms(py.run, frames))
        l2 = cx.L2()
        rows["cortex_rs sequential"].append(per_frame_ms(lambda f: l2.run(f), frames))
        l2p = cx.L2()
        rows["cortex_rs parallel"].append(per_frame_ms(lambda f: l2p.run(f, parallel=True), frames))
        # The same calls, profiled: the profiler's frame time is the time
        # spent in Rust, the rest of the call is the binding's (the copy
        # in, the dicts out).
        prof = cx.L2(profile=True)
        wall = per_frame_ms(prof.run, frames)
        inside = frame_mean_ms(prof.profile_report())
        rows["cortex_rs profiled: call"].append(wall)
        rows["cortex_rs profiled: Rust inside the call"].append(inside)
        rows["binding overhead (call / Rust − 1, %)"].append(100 * (wall / inside - 1))
        one = per_frame_ms(cx.L2().run, frames)
        pipes = [cx.L2(), cx.L2()]
        t0 = time.perf_counter()
        threads = [threading.Thread(target=lambda p=p: [p.run(f) for f in frames]) for p in pipes]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        two = (time.perf_counter() - t0) * 1e3 / (2 * len(frames))
        rows["2 threads, 1 pipeline each (frames/s ratio)"].append(one / two)

    base = statistics.median(rows["python+opencv"])
    print(f"{'L2 BALANCED':<44} {'median':>9} {'min':>9} {'vs python+opencv':>17}")
    for name, values in rows.items():
        med = statistics.median(values)
        if name.startswith("2 threads"):
            print(f"{name:<44} {med:>8.2f}× {min(values):>8.2f}×")
        elif name.startswith("binding"):
            print(f"{name:<44} {med:>7.1f} % {min(values):>7.1f} %")
        else:
            print(f"{name:<44} {med:>6.2f} ms {min(values):>6.2f} ms {base / med:>16.2f}×")


def frame_mean_ms(report: str) -> float:
    """The profiler's mean frame time: the `(frame)` row's `mean ms`."""
    for line in report.splitlines():
        tokens = line.split()
        if tokens and tokens[0] == "(frame)":
            return float(tokens[2])
    raise ValueError("no (frame) row in the profile report:\n" + report)


if __name__ == "__main__":
    main()
