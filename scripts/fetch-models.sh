#!/usr/bin/env bash
# Fetches PP-OCRv4's text detector (ch_PP-OCRv4_det_infer.onnx, 4.7 MB,
# Apache-2.0) from the rapidocr-onnxruntime wheel on PyPI — the only network
# access — checks its SHA-256 and puts it where the tests, benches and
# examples look: models/ at the repository root (git-ignored), or the file
# named by $CORTEX_TEXT_MODEL. Needs python3 with pip, and unzip or python3's
# zipfile. Idempotent: a file with the right hash is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

NAME=ch_PP-OCRv4_det_infer.onnx
SHA256=d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9
DEST=${CORTEX_TEXT_MODEL:-models/$NAME}

have() { [ -f "$DEST" ] && echo "$SHA256  $DEST" | sha256sum --check --status; }
if have; then
  echo "$DEST: present, SHA-256 checked"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: \
  --dest "$tmp" rapidocr-onnxruntime==1.4.4
wheel=$(ls "$tmp"/rapidocr_onnxruntime-1.4.4-*.whl)
python3 - "$wheel" "$NAME" "$tmp/$NAME" <<'PY'
import sys, zipfile
wheel, name, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    member = next(m for m in z.namelist() if m.endswith("/" + name))
    with open(out, "wb") as f:
        f.write(z.read(member))
PY
echo "$SHA256  $tmp/$NAME" | sha256sum --check --status || {
  echo "fetch-models: $NAME from rapidocr-onnxruntime 1.4.4 has SHA-256 $(sha256sum "$tmp/$NAME" | cut -d' ' -f1), expected $SHA256" >&2
  exit 1
}
mkdir -p "$(dirname "$DEST")"
mv "$tmp/$NAME" "$DEST"
echo "$DEST: fetched, SHA-256 checked"
