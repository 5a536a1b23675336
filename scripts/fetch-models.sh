#!/usr/bin/env bash
# Fetches PP-OCRv4's text detector (ch_PP-OCRv4_det_infer.onnx, 4.7 MB) and
# text recogniser (ch_PP-OCRv4_rec_infer.onnx, 10.9 MB; its character list
# is in the model's metadata), both Apache-2.0, from the
# rapidocr-onnxruntime wheel on PyPI — the only network access — checks
# their SHA-256 and puts them where the tests, benches and examples look:
# models/ at the repository root (git-ignored), or the files named by
# $CORTEX_TEXT_MODEL and $CORTEX_REC_MODEL. Needs python3 with pip, and
# unzip or python3's zipfile. Idempotent: a file with the right hash is
# left alone, and the wheel is downloaded only when a file is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

DET=ch_PP-OCRv4_det_infer.onnx
DET_SHA256=d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9
DET_DEST=${CORTEX_TEXT_MODEL:-models/$DET}
REC=ch_PP-OCRv4_rec_infer.onnx
REC_SHA256=48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b
REC_DEST=${CORTEX_REC_MODEL:-models/$REC}

have() { [ -f "$2" ] && echo "$1  $2" | sha256sum --check --status; }
if have "$DET_SHA256" "$DET_DEST" && have "$REC_SHA256" "$REC_DEST"; then
  echo "$DET_DEST, $REC_DEST: present, SHA-256 checked"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: \
  --dest "$tmp" rapidocr-onnxruntime==1.4.4
wheel=$(ls "$tmp"/rapidocr_onnxruntime-1.4.4-*.whl)

fetch() {
  local name=$1 sha=$2 dest=$3
  if have "$sha" "$dest"; then
    echo "$dest: present, SHA-256 checked"
    return
  fi
  python3 - "$wheel" "$name" "$tmp/$name" <<'PY'
import sys, zipfile
wheel, name, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    member = next(m for m in z.namelist() if m.endswith("/" + name))
    with open(out, "wb") as f:
        f.write(z.read(member))
PY
  echo "$sha  $tmp/$name" | sha256sum --check --status || {
    echo "fetch-models: $name from rapidocr-onnxruntime 1.4.4 has SHA-256 $(sha256sum "$tmp/$name" | cut -d' ' -f1), expected $sha" >&2
    exit 1
  }
  mkdir -p "$(dirname "$dest")"
  mv "$tmp/$name" "$dest"
  echo "$dest: fetched, SHA-256 checked"
}
fetch "$DET" "$DET_SHA256" "$DET_DEST"
fetch "$REC" "$REC_SHA256" "$REC_DEST"
