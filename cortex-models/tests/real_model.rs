//! PP-OCRv4's text detector, when `scripts/fetch-models.sh` has fetched it
//! (or `CORTEX_TEXT_MODEL` names it); each test prints why it skips
//! otherwise. On OpenCV's scene-text photographs (package `opencv-doc`):
//! tract's probability map against ONNX Runtime's (through
//! `scripts/ort_run.py`, when a Python with `onnxruntime` is found), DB's
//! boxes on the words, and the text map's contract.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use cortex_models::text::{self, TextBox, TextDetector};
use cortex_models::{ModelBackend, Output};
use cortex_vision::ops::{RgbFrame, ScoreMap};
use ndarray::{Array4, IxDyn};

/// Largest difference of a probability allowed between tract and ONNX
/// Runtime: both compute in f32, in different orders of summation over
/// ~100 layers; a sigmoid output moves by ~1e-5 typically, and 1e-3 is
/// still ten times below any DB threshold's meaning.
const PROB_TOLERANCE: f32 = 1e-3;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn model_or_skip(test: &str) -> Option<PathBuf> {
    let path = text::model_path(&repo());
    if path.is_file() {
        Some(path)
    } else {
        println!(
            "{test}: skipped: no model at {} (run scripts/fetch-models.sh, or set {})",
            path.display(),
            text::MODEL_ENV
        );
        None
    }
}

const SCENETEXT: &str = "/usr/share/doc/opencv-doc/examples/text";

fn image_or_skip(test: &str, name: &str) -> Option<RgbFrame> {
    let path = Path::new(SCENETEXT).join(name);
    let Ok(img) = image::open(&path) else {
        println!(
            "{test}: skipped: no {} (package opencv-doc)",
            path.display()
        );
        return None;
    };
    let rgb = img.to_rgb8();
    let (w, h) = rgb.dimensions();
    Some(RgbFrame::from_shape_vec((h as usize, w as usize, 3), rgb.into_raw()).unwrap())
}

/// The Python that has `onnxruntime`: `$CORTEX_MODELS_PYTHON`, else
/// `python3`.
fn python_with_ort(test: &str) -> Option<String> {
    let python = std::env::var("CORTEX_MODELS_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(&python)
        .args(["-c", "import onnxruntime, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Some(python)
    } else {
        println!("{test}: ONNX Runtime comparison skipped: `{python}` cannot import onnxruntime (set CORTEX_MODELS_PYTHON)");
        None
    }
}

fn write_f32(path: &Path, values: impl Iterator<Item = f32>) {
    let bytes: Vec<u8> = values.flat_map(f32::to_le_bytes).collect();
    std::fs::write(path, bytes).unwrap();
}

fn read_f32(path: &Path) -> Vec<f32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// ONNX Runtime's first output of `model` on `input`.
fn onnx_runtime(python: &str, model: &Path, input: &Array4<f32>) -> Vec<f32> {
    let dir = std::env::temp_dir().join(format!("cortex-models-ort-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (x, y) = (dir.join("input.f32"), dir.join("output.f32"));
    write_f32(&x, input.iter().copied());
    let (n, c, h, w) = input.dim();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/ort_run.py");
    let status = Command::new(python)
        .arg(script)
        .arg(model)
        .arg(&x)
        .args([n, c, h, w].map(|d| d.to_string()))
        .arg(&y)
        .status()
        .unwrap();
    assert!(status.success());
    let out = read_f32(&y);
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// The detector fixed at `scenetext01.jpg`'s size, and that photograph's
/// tensor; `None` (with the reason printed) without the model or the image.
fn photograph_tensor(test: &str) -> Option<(PathBuf, TextDetector, Array4<f32>)> {
    let path = model_or_skip(test)?;
    let frame = image_or_skip(test, "scenetext01.jpg")?;
    let (h, w, _) = frame.dim();
    let detector = TextDetector::load(&path, w, h).unwrap();
    let mut tensor = Array4::zeros((0, 0, 0, 0));
    cortex_models::prep::frame_tensor_into(
        &frame,
        detector.model(),
        &cortex_models::prep::Normalize::PP_OCR,
        &mut tensor,
    )
    .unwrap();
    Some((path, detector, tensor))
}

#[test]
fn tract_agrees_with_onnx_runtime_on_a_photograph() {
    let test = "tract_agrees_with_onnx_runtime_on_a_photograph";
    let Some((path, detector, tensor)) = photograph_tensor(test) else {
        return;
    };
    let model = detector.model();
    let [_, _, mh, mw] = model.input_shape();
    assert_eq!((mh % 32, mw % 32), (0, 0));
    let mut prob = Output::zeros(IxDyn(&[0]));
    model
        .run_on(ModelBackend::Tract, tensor.view(), &mut prob)
        .unwrap();
    assert_eq!(prob.shape(), &[1, 1, mh, mw]);
    assert!(prob.iter().all(|p| (0.0..=1.0).contains(p)));
    let Some(python) = python_with_ort(test) else {
        return;
    };
    let reference = onnx_runtime(&python, &path, &tensor);
    assert_eq!(reference.len(), prob.len());
    let max = prob
        .iter()
        .zip(&reference)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    let text_px = reference.iter().filter(|&&p| p > 0.3).count();
    println!("{test}: {mw}x{mh}: max |tract − onnxruntime| = {max:.2e}; {text_px} pixels over DB's threshold");
    assert!(max <= PROB_TOLERANCE, "max difference {max}");
    assert!(text_px > 100, "the photograph has text");
}

#[test]
fn boxes_cover_the_words_and_the_map_keeps_the_contract() {
    let test = "boxes_cover_the_words_and_the_map_keeps_the_contract";
    let name = "scenetext_segmented_word01";
    let (Some(path), Some(frame)) = (
        model_or_skip(test),
        image_or_skip(test, &format!("{name}.jpg")),
    ) else {
        return;
    };
    let Some(mask) = image_or_skip(test, &format!("{name}_mask.png")) else {
        return;
    };
    let (h, w, _) = frame.dim();
    let detector = TextDetector::load(&path, w, h).unwrap();
    let mut boxes: Vec<TextBox> = Vec::new();
    detector.detect_into(&frame, &mut boxes).unwrap();
    assert!(!boxes.is_empty(), "a word is found");
    let mut map = ScoreMap::zeros((0, 0));
    text::text_map_into(&frame, &detector, &mut map).unwrap();
    assert_eq!(map.dim(), (h, w));
    assert!(map.iter().all(|v| (0.0..=1.0).contains(v)));
    // The share of the word's mask pixels inside the detected boxes.
    let (mut inside, mut total) = (0usize, 0usize);
    for ((y, x, c), &m) in mask.indexed_iter() {
        if c == 0 && m > 127 {
            total += 1;
            inside += usize::from(map[[y, x]] > 0.0);
        }
    }
    let share = inside as f64 / total.max(1) as f64;
    println!(
        "{test}: {} boxes, {:.1} % of the mask inside",
        boxes.len(),
        share * 100.0
    );
    assert!(total > 0);
    assert!(share > 0.5, "most of the word is inside a box: {share}");
}

/// OpenCV's DNN module against tract on the real model, when OpenCV 4.6's
/// importer takes it; a refusal must be one error naming the model and the
/// backend (the registry then falls back to tract).
#[cfg(feature = "opencv")]
#[test]
fn opencv_agrees_with_tract_on_a_photograph() {
    let test = "opencv_agrees_with_tract_on_a_photograph";
    let Some((path, detector, tensor)) = photograph_tensor(test) else {
        return;
    };
    let model = detector.model();
    let (mut tr, mut cv) = (Output::zeros(IxDyn(&[0])), Output::zeros(IxDyn(&[0])));
    model
        .run_on(ModelBackend::Tract, tensor.view(), &mut tr)
        .unwrap();
    match model.run_on(ModelBackend::OpenCvDnn, tensor.view(), &mut cv) {
        Ok(()) => {
            assert_eq!(cv.shape(), tr.shape());
            let max = cv
                .iter()
                .zip(&tr)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            println!("{test}: max |opencv-dnn − tract| = {max:.2e}");
            assert!(max <= PROB_TOLERANCE, "{max}");
        }
        Err(e) => {
            let text = e.to_string();
            println!("{test}: OpenCV refused the model: {text}");
            assert!(text.contains(&path.display().to_string()) && text.contains("opencv-dnn"));
        }
    }
}

/// The Python that has OpenCV and pyclipper for `scripts/db_reference.py`.
fn python_with_db_reference(test: &str) -> Option<String> {
    let python = std::env::var("CORTEX_MODELS_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(&python)
        .args(["-c", "import cv2, pyclipper, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Some(python)
    } else {
        println!("{test}: skipped: `{python}` cannot import cv2 and pyclipper (pip install opencv-python-headless pyclipper; set CORTEX_MODELS_PYTHON)");
        None
    }
}

/// The eleven scene-text photographs of `opencv-doc`.
const PHOTOGRAPHS: [&str; 11] = [
    "scenetext01.jpg",
    "scenetext02.jpg",
    "scenetext03.jpg",
    "scenetext04.jpg",
    "scenetext05.jpg",
    "scenetext06.jpg",
    "scenetext_segmented_word01.jpg",
    "scenetext_segmented_word02.jpg",
    "scenetext_segmented_word03.jpg",
    "scenetext_segmented_word04.jpg",
    "scenetext_segmented_word05.jpg",
];

/// A box as PaddleOCR's reference gives it.
struct RefBox {
    quad: [[f32; 2]; 4],
    score: f32,
    /// A corner of its scored rectangle is a float32 hair off an integer,
    /// so its score counts pixels a row or column away from the exact
    /// rectangle's.
    ambiguous: bool,
}

fn reference_boxes(
    python: &str,
    map: &ndarray::Array2<f32>,
    (fw, fh): (usize, usize),
) -> Vec<RefBox> {
    let dir = std::env::temp_dir().join(format!("cortex-models-db-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("prob.f32");
    write_f32(&path, map.iter().copied());
    let (h, w) = map.dim();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/db_reference.py");
    let out = Command::new(python)
        .arg(script)
        .arg("post")
        .arg(&path)
        .args([h, w, fw, fh].map(|d| d.to_string()))
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let q = &b["quad"];
            let p = |i: usize, j: usize| q[i][j].as_f64().unwrap() as f32;
            RefBox {
                quad: std::array::from_fn(|i| [p(i, 0), p(i, 1)]),
                score: b["score"].as_f64().unwrap() as f32,
                ambiguous: b["ambiguous"].as_bool().unwrap(),
            }
        })
        .collect()
}

/// How far a corner may be from the reference's, in map pixels: pyclipper
/// offsets PaddleOCR's rectangle with its corners truncated to integers
/// (under 1 pixel each way) and gives integer points (0.5), where cortex
/// grows the exact rectangle; both round the scaled corner (0.5).
const CORNER_TOLERANCE: f32 = 2.0;

/// How far a score may be from the reference's: OpenCV rasterises the
/// rectangle's edges by its own fixed-point rule, cortex takes the pixel
/// centres inside; a border row or column of a box of tens of pixels.
const SCORE_TOLERANCE: f32 = 0.02;

#[test]
fn db_boxes_match_paddleocrs_rules_on_photographs() {
    let test = "db_boxes_match_paddleocrs_rules_on_photographs";
    let (Some(path), Some(python)) = (model_or_skip(test), python_with_db_reference(test)) else {
        return;
    };
    let params = text::DbParams::PP_OCR;
    let (mut total, mut tilted, mut ambiguous) = (0, 0, 0);
    for name in PHOTOGRAPHS {
        let Some(frame) = image_or_skip(test, name) else {
            return;
        };
        let (h, w, _) = frame.dim();
        let detector = TextDetector::load(&path, w, h).unwrap();
        let mut map = ndarray::Array2::zeros((0, 0));
        detector.probability_into(&frame, &mut map).unwrap();
        let mut ours = Vec::new();
        text::db::db_boxes_into(
            map.view(),
            (w, h),
            &params,
            &mut text::DbScratch::default(),
            &mut ours,
        );
        let reference = reference_boxes(&python, &map, (w, h));
        let (sx, sy) = (w as f32 / map.dim().1 as f32, h as f32 / map.dim().0 as f32);
        let near = |a: &[[f32; 2]; 4], b: &[[f32; 2]; 4]| {
            a.iter().zip(b).all(|(p, q)| {
                (p[0] - q[0]).abs() <= CORNER_TOLERANCE * sx + 0.5
                    && (p[1] - q[1]).abs() <= CORNER_TOLERANCE * sy + 0.5
            })
        };
        // A box whose score is within the tolerance of the threshold may
        // fall on either side of it.
        let certain = |s: f32| (s - params.box_thresh).abs() > SCORE_TOLERANCE;
        for r in reference.iter().filter(|r| certain(r.score)) {
            let m = ours.iter().find(|o| near(&o.quad, &r.quad));
            let Some(m) = m else {
                panic!(
                    "{name}: reference box {:?} ({}) not found in {:?}",
                    r.quad, r.score, ours
                );
            };
            assert!(
                r.ambiguous || (m.score - r.score).abs() <= SCORE_TOLERANCE,
                "{name}: score {} vs {}",
                m.score,
                r.score
            );
            ambiguous += usize::from(r.ambiguous);
        }
        for o in ours.iter().filter(|o| certain(o.score)) {
            assert!(
                reference.iter().any(|r| near(&o.quad, &r.quad)),
                "{name}: box {:?} ({}) is not the reference's",
                o.quad,
                o.score
            );
        }
        tilted += ours.iter().filter(|o| o.quad[0][1] != o.quad[1][1]).count();
        total += ours.len();
        println!(
            "{test}: {name}: {} boxes, reference {}",
            ours.len(),
            reference.len()
        );
    }
    println!(
        "{test}: {total} boxes on the {} photographs, {tilted} tilted, {ambiguous} scored by the reference a pixel off",
        PHOTOGRAPHS.len()
    );
    assert!(tilted > 0, "some lines on these photographs are tilted");
}

/// The Python that has RapidOCR (`rapidocr-onnxruntime`).
fn python_with_rapidocr(test: &str) -> Option<String> {
    let python = std::env::var("CORTEX_MODELS_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(&python)
        .args(["-c", "import rapidocr_onnxruntime"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Some(python)
    } else {
        println!("{test}: skipped: `{python}` cannot import rapidocr_onnxruntime (pip install rapidocr-onnxruntime==1.4.4; set CORTEX_MODELS_PYTHON)");
        None
    }
}

/// The axis-aligned box around a quadrilateral: x0, y0, x1, y1.
fn extent(q: &[[f32; 2]; 4]) -> [f32; 4] {
    let xs = q.map(|p| p[0]);
    let ys = q.map(|p| p[1]);
    let lo = |v: [f32; 4]| v.into_iter().fold(f32::MAX, f32::min);
    let hi = |v: [f32; 4]| v.into_iter().fold(f32::MIN, f32::max);
    [lo(xs), lo(ys), hi(xs), hi(ys)]
}

fn iou(a: [f32; 4], b: [f32; 4]) -> f32 {
    let w = (a[2].min(b[2]) - a[0].max(b[0])).max(0.0);
    let h = (a[3].min(b[3]) - a[1].max(b[1])).max(0.0);
    let inter = w * h;
    let area = |r: [f32; 4]| (r[2] - r[0]) * (r[3] - r[1]);
    inter / (area(a) + area(b) - inter)
}

/// Detect → recognise on the photographs against RapidOCR's own pipeline
/// (same models, ONNX Runtime, its own pre- and post-processing): the
/// share of its lines cortex finds at IoU ≥ 0.5, and of those the share
/// read identically.
#[test]
fn ocr_reads_like_rapidocr() {
    let test = "ocr_reads_like_rapidocr";
    let rec_path = text::rec::rec_model_path(&repo());
    let (Some(det_path), Some(python)) = (model_or_skip(test), python_with_rapidocr(test)) else {
        return;
    };
    if !rec_path.is_file() {
        println!(
            "{test}: skipped: no recogniser at {} (scripts/fetch-models.sh)",
            rec_path.display()
        );
        return;
    }
    let images: Vec<PathBuf> = PHOTOGRAPHS
        .iter()
        .map(|n| Path::new(SCENETEXT).join(n))
        .collect();
    if !images.iter().all(|p| p.is_file()) {
        println!("{test}: skipped: no photographs in {SCENETEXT} (package opencv-doc)");
        return;
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/rapidocr_run.py");
    let out = Command::new(&python)
        .arg(script)
        .args(&images)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reference: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let recognizer = text::TextRecognizer::load(&rec_path, 6, 320, 1600).unwrap();
    let (mut theirs, mut matched, mut same) = (0, 0, 0);
    let mut same_on_their_boxes = 0;
    for (name, path) in PHOTOGRAPHS.iter().zip(&images) {
        let frame = image_or_skip(test, name).unwrap();
        let (h, w, _) = frame.dim();
        let detector = TextDetector::load(&det_path, w, h).unwrap();
        let mut boxes = Vec::new();
        detector.detect_into(&frame, &mut boxes).unwrap();
        let mut lines = Vec::new();
        recognizer.read_into(&frame, &boxes, &mut lines).unwrap();
        assert_eq!(lines.len(), boxes.len());
        let refs: Vec<([[f32; 2]; 4], &str)> = reference[path.to_str().unwrap()]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let q = &r["quad"];
                let p = |i: usize, j: usize| q[i][j].as_f64().unwrap() as f32;
                (
                    std::array::from_fn(|i| [p(i, 0), p(i, 1)]),
                    r["text"].as_str().unwrap(),
                )
            })
            .collect();
        // The recogniser alone: on RapidOCR's own boxes.
        let their_boxes: Vec<TextBox> = refs
            .iter()
            .map(|(q, _)| {
                let [x0, y0, x1, y1] = extent(q);
                let bbox = cortex_vision::ops::BBox::from_corners(
                    x0 as usize,
                    y0 as usize,
                    x1 as usize,
                    y1 as usize,
                );
                TextBox {
                    quad: *q,
                    ..TextBox::upright(bbox, 1.0)
                }
            })
            .collect();
        let mut read = Vec::new();
        recognizer
            .read_into(&frame, &their_boxes, &mut read)
            .unwrap();
        for ((_, text), l) in refs.iter().zip(&read) {
            same_on_their_boxes += usize::from(l.text == *text);
            if l.text != *text {
                println!(
                    "{test}: {name}: on RapidOCR's box: {text:?} / cortex {:?}",
                    l.text
                );
            }
        }
        for &(quad, text) in &refs {
            theirs += 1;
            let best = lines
                .iter()
                .map(|l| (iou(extent(&l.quad), extent(&quad)), l))
                .max_by(|a, b| a.0.total_cmp(&b.0));
            match best {
                Some((o, l)) if o >= 0.5 => {
                    matched += 1;
                    same += usize::from(l.text == text);
                    println!(
                        "{test}: {name}: {text:?} / cortex {:?} ({:.2}, IoU {o:.2})",
                        l.text, l.confidence
                    );
                }
                _ => println!("{test}: {name}: {text:?} / cortex: no box at IoU >= 0.5"),
            }
        }
    }
    let found = matched as f64 / theirs.max(1) as f64;
    let identical = same as f64 / matched.max(1) as f64;
    let recognised = same_on_their_boxes as f64 / theirs.max(1) as f64;
    println!(
        "{test}: RapidOCR read {theirs} lines; on its boxes cortex reads {same_on_their_boxes} identically ({:.0} %); with cortex's own boxes (PaddleOCR's DB defaults) it finds {matched} ({:.0} %), {same} read identically ({:.0} % of those)",
        recognised * 100.0,
        found * 100.0,
        identical * 100.0
    );
    assert!(theirs > 20, "the photographs have text");
    assert!(
        recognised >= 0.9,
        "strings identical on RapidOCR's boxes: {recognised}"
    );
    // RapidOCR's detector runs at a short side of 736 with its own
    // normalisation and DB settings (box_thresh 0.5, unclip 1.6, dilation):
    // its boxes are other crops, and some strings differ with them.
    assert!(found >= 0.8, "boxes found: {found}");
}

/// PP-OCRv4's detector asked to run at 100×100: tract cannot (its stages
/// halve the image five times and double it back); the error says what the
/// model needs, in the user's terms, and what was asked.
#[test]
fn a_size_the_detector_cannot_take_is_said_in_its_terms() {
    let test = "a_size_the_detector_cannot_take_is_said_in_its_terms";
    let Some(path) = model_or_skip(test) else {
        return;
    };
    let err = cortex_models::Model::load(&path, cortex_models::InputShape::image(3, 100, 100))
        .unwrap_err();
    let text = err.to_string();
    println!("{test}: {text} ({} characters)", text.chars().count());
    assert!(
        matches!(
            err.problem,
            cortex_models::Problem::SideMultiple { stride: 32, .. }
        ),
        "{text}"
    );
    assert!(
        text.contains("1x3x100x100")
            && text.contains("multiples of 32")
            && text.contains("1x3x128x128"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1);
}
