#!/usr/bin/env python3
"""RapidOCR's own pipeline (`rapidocr-onnxruntime`: PP-OCRv4's detector,
angle classifier and recogniser on ONNX Runtime, with its default
configuration): the reference of what cortex's detect → recognise reads.

    rapidocr_run.py IMAGE...

Prints one JSON object: {IMAGE: [{"quad": [[x, y] x 4], "text": s,
"confidence": c}, ...], ...}.
"""

import json
import sys

from rapidocr_onnxruntime import RapidOCR


def main():
    engine = RapidOCR()
    out = {}
    for image in sys.argv[1:]:
        result, _ = engine(image)
        out[image] = [
            {"quad": [[float(v) for v in p] for p in quad], "text": text, "confidence": float(conf)}
            for quad, text, conf in (result or [])
        ]
    print(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    main()
