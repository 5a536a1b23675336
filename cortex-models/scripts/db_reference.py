#!/usr/bin/env python3
"""PaddleOCR's DB post-processing (`DBPostProcess`, box type "quad", score
mode "fast") as PaddleOCR's inference code writes it, with OpenCV, numpy,
shapely-free area/length and pyclipper: the reference cortex-models' DB
boxes are held to.

    db_reference.py post PROB.f32 H W FRAME_W FRAME_H
        boxes of a probability map (little-endian f32, H x W) for a frame of
        FRAME_W x FRAME_H
    db_reference.py detect MODEL IMAGE
        ONNX Runtime on IMAGE with PaddleOCR's detector pre-processing (BGR,
        sides rounded to multiples of 32, ImageNet normalisation), then the
        same post-processing

Prints one JSON object: {"map": [W, H], "boxes": [{"quad": [[x, y] x 4],
"score": s, "ambiguous": a}, ...]} in frame pixels, in PaddleOCR's order (contours as
OpenCV lists them) after its `filter_tag_det_res`.
"""

import json
import sys

import cv2
import numpy as np
import pyclipper

THRESH, BOX_THRESH, UNCLIP_RATIO, MIN_SIZE, MAX_CANDIDATES = 0.3, 0.6, 1.5, 3, 1000


def get_mini_boxes(contour):
    rect = cv2.minAreaRect(contour)
    points = sorted(list(cv2.boxPoints(rect)), key=lambda p: p[0])
    i1, i4 = (0, 1) if points[1][1] > points[0][1] else (1, 0)
    i2, i3 = (2, 3) if points[3][1] > points[2][1] else (3, 2)
    return [points[i1], points[i2], points[i3], points[i4]], min(rect[1])


def box_score_fast(pred, box):
    h, w = pred.shape
    box = box.copy()
    xmin = int(np.clip(np.floor(box[:, 0].min()), 0, w - 1))
    xmax = int(np.clip(np.ceil(box[:, 0].max()), 0, w - 1))
    ymin = int(np.clip(np.floor(box[:, 1].min()), 0, h - 1))
    ymax = int(np.clip(np.ceil(box[:, 1].max()), 0, h - 1))
    mask = np.zeros((ymax - ymin + 1, xmax - xmin + 1), dtype=np.uint8)
    box[:, 0] -= xmin
    box[:, 1] -= ymin
    cv2.fillPoly(mask, box.reshape(1, -1, 2).astype(np.int32), 1)
    return cv2.mean(pred[ymin:ymax + 1, xmin:xmax + 1], mask)[0]


def ambiguous(points):
    """Whether a corner of the scored rectangle is a hair off an integer
    (OpenCV computes it in float32): `box_score_fast` truncates it, so
    285.99997 scores the pixels of 285, a row or column away from the exact
    rectangle's."""
    off = np.abs(points - np.round(points))
    return bool(np.any((off > 0) & (off < 1e-3)))


def polygon_area_length(box):
    x, y = box[:, 0].astype(np.float64), box[:, 1].astype(np.float64)
    area = 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
    length = np.sum(np.hypot(np.roll(x, -1) - x, np.roll(y, -1) - y))
    return area, length


def unclip(box):
    area, length = polygon_area_length(box)
    distance = area * UNCLIP_RATIO / length
    offset = pyclipper.PyclipperOffset()
    offset.AddPath(box, pyclipper.JT_ROUND, pyclipper.ET_CLOSEDPOLYGON)
    return np.array(offset.Execute(distance))


def boxes(pred, frame_w, frame_h):
    height, width = pred.shape
    bitmap = ((pred > THRESH) * 255).astype(np.uint8)
    contours, _ = cv2.findContours(bitmap, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    out = []
    for contour in contours[:MAX_CANDIDATES]:
        points, sside = get_mini_boxes(contour)
        if sside < MIN_SIZE:
            continue
        points = np.array(points)
        score = box_score_fast(pred, points.reshape(-1, 2))
        if BOX_THRESH > score:
            continue
        expanded = unclip(points).reshape(-1, 1, 2)
        box, sside = get_mini_boxes(expanded)
        if sside < MIN_SIZE + 2:
            continue
        box = np.array(box)
        box[:, 0] = np.clip(np.round(box[:, 0] / width * frame_w), 0, frame_w)
        box[:, 1] = np.clip(np.round(box[:, 1] / height * frame_h), 0, frame_h)
        out.append((box.astype(np.int32), float(score), ambiguous(points)))
    return filter_tag_det_res(out, frame_w, frame_h)


def order_points_clockwise(pts):
    rect = np.zeros((4, 2), dtype="float32")
    s = pts.sum(axis=1)
    rect[0] = pts[np.argmin(s)]
    rect[2] = pts[np.argmax(s)]
    tmp = np.delete(pts, (np.argmin(s), np.argmax(s)), axis=0)
    diff = np.diff(np.array(tmp), axis=1)
    rect[1] = tmp[np.argmin(diff)]
    rect[3] = tmp[np.argmax(diff)]
    return rect


def filter_tag_det_res(found, frame_w, frame_h):
    kept = []
    for box, score, unsure in found:
        box = order_points_clockwise(box.astype(np.float32))
        box[:, 0] = np.clip(box[:, 0], 0, frame_w - 1)
        box[:, 1] = np.clip(box[:, 1], 0, frame_h - 1)
        w = int(np.linalg.norm(box[0] - box[1]))
        h = int(np.linalg.norm(box[0] - box[3]))
        if w <= 3 or h <= 3:
            continue
        kept.append({"quad": box.tolist(), "score": score, "ambiguous": unsure})
    return kept


def detect(model, image):
    import onnxruntime as ort

    img = cv2.imread(image, cv2.IMREAD_COLOR)
    fh, fw = img.shape[:2]
    h = max(int(round(fh / 32) * 32), 32)
    w = max(int(round(fw / 32) * 32), 32)
    x = cv2.resize(img, (w, h)).astype(np.float32) / 255.0
    x = (x - np.array([0.485, 0.456, 0.406], np.float32)) / np.array([0.229, 0.224, 0.225], np.float32)
    x = x.transpose(2, 0, 1)[None].astype(np.float32)
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    pred = sess.run(None, {sess.get_inputs()[0].name: x})[0][0, 0]
    return {"map": [w, h], "boxes": boxes(pred, fw, fh)}


def main():
    if sys.argv[1] == "post":
        path, h, w, fw, fh = sys.argv[2], *map(int, sys.argv[3:7])
        pred = np.fromfile(path, dtype="<f4").reshape(h, w)
        result = {"map": [w, h], "boxes": boxes(pred, fw, fh)}
    elif sys.argv[1] == "detect":
        result = detect(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"db_reference.py: unknown mode {sys.argv[1]!r} (post or detect)")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
