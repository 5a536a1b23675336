//! What the run-time L2 tests share: the graph file, the bit-for-bit
//! comparison of the compiled L2's outputs with a run-time graph's, and
//! frames of OpenCV's `vtest.avi`.

// Each test binary that includes this module uses part of it.
#![allow(dead_code)]

use std::process::Command;
use std::sync::Arc;

use cortex_core::dynamic::{DynOutputs, Value};
use cortex_core::{ParallelPipeline, Pipeline};
use cortex_vision::l2::{BlurVerdict, L2Mode, L2Outputs, L2};
use cortex_vision::library::vision_ops;
use cortex_vision::ops::qp_map::QpMap;
use cortex_vision::ops::roi_regions::RoiRegions;
use cortex_vision::ops::{EncodedRoi, RgbFrame, SceneChange, ScoreMap};

/// The L2 graph file shipped in `examples/graphs/l2.json`.
pub const L2_FILE: &str = include_str!("../../../examples/graphs/l2.json");

/// L2's outputs, in declaration order.
pub const L2_OUTPUTS: &[&str] = &["fused", "blur", "scene", "roi", "regions", "qp_map"];

/// Every output of both, compared bit for bit (floats by their bits,
/// structures by their full `Debug` text, which prints every float so it
/// reads back to the same bits).
pub fn assert_same(frame: usize, compiled: &L2Outputs, dynamic: &DynOutputs) {
    assert_same_read(frame, compiled, dynamic, L2_OUTPUTS);
}

/// The outputs named in `read` compared as [`assert_same`] compares them;
/// the run-time outputs not read must be absent.
pub fn assert_same_read(frame: usize, compiled: &L2Outputs, dynamic: &DynOutputs, read: &[&str]) {
    let get = |name: &str| {
        dynamic
            .value(name)
            .unwrap_or_else(|| panic!("frame {frame}: output {name} missing"))
    };
    let dbg = |v: &dyn std::fmt::Debug| format!("{v:?}");
    let same = |name: &str, want: String, got: String| {
        assert_eq!(got, want, "frame {frame}: {name}");
    };
    for &name in L2_OUTPUTS {
        if !read.contains(&name) {
            assert!(
                dynamic.value(name).is_none(),
                "frame {frame}: {name} not read but present"
            );
            continue;
        }
        match name {
            "fused" => {
                let fused = get("fused").downcast_ref::<ScoreMap>().expect("a ScoreMap");
                assert_eq!(
                    fused.dim(),
                    compiled.fused.dim(),
                    "frame {frame}: fused size"
                );
                let differ = fused
                    .iter()
                    .zip(compiled.fused.iter())
                    .filter(|(a, b)| a.to_bits() != b.to_bits())
                    .count();
                assert_eq!(differ, 0, "frame {frame}: fused differs at {differ} pixels");
            }
            "blur" => same(
                "blur",
                dbg(&compiled.blur),
                dbg(get("blur").downcast_ref::<BlurVerdict>().expect("type")),
            ),
            "scene" => same(
                "scene",
                dbg(&compiled.scene),
                dbg(get("scene").downcast_ref::<SceneChange>().expect("type")),
            ),
            "roi" => same(
                "roi",
                dbg(&compiled.roi),
                dbg(get("roi").downcast_ref::<EncodedRoi>().expect("type")),
            ),
            "regions" => {
                let regions = get("regions").downcast_ref::<RoiRegions>().expect("type");
                let r = |x: &RoiRegions| format!("{:?} {:?}", x.regions, x.peak.to_bits());
                same("regions", r(&compiled.regions), r(regions));
            }
            _ => same(
                "qp_map",
                dbg(&compiled.qp_map),
                dbg(get("qp_map").downcast_ref::<QpMap>().expect("type")),
            ),
        }
    }
}

/// The first `count` frames of OpenCV's `vtest.avi` (768×576), decoded by
/// the `ffmpeg` program to RGB; `None` when either is missing.
pub fn vtest_frames(count: usize) -> Option<Vec<RgbFrame>> {
    let path = std::env::var("CORTEX_VTEST")
        .unwrap_or_else(|_| "/usr/share/doc/opencv-doc/examples/data/vtest.avi".into());
    if !std::path::Path::new(&path).exists() {
        return None;
    }
    let out = Command::new("ffmpeg")
        .args(["-v", "error", "-i", &path, "-frames:v", &count.to_string()])
        .args(["-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        .output()
        .ok()?;
    let (w, h) = (768, 576);
    if !out.status.success() || out.stdout.len() != count * w * h * 3 {
        return None;
    }
    Some(
        out.stdout
            .chunks_exact(w * h * 3)
            .map(|c| RgbFrame::from_shape_vec((h, w, 3), c.to_vec()).expect("sized"))
            .collect(),
    )
}

/// `frames` streamed pipelined through the compiled L2 and through the L2
/// built from the graph file, both with fusion `fused`, mode `mode`: the same
/// results frame by frame, in order, a failing frame failing alone in
/// both.
pub fn compare_streams(frames: &[RgbFrame], mode: L2Mode, fused: bool) {
    use cortex_core::dynamic::GraphFile;
    use cortex_core::stream::StreamOptions;
    let options = StreamOptions {
        in_flight: 2,
        ..StreamOptions::DEFAULT
    };
    let mut compiled = L2::new();
    compiled.set_fusion(fused);
    let mut want = Vec::new();
    compiled
        .run_stream(mode, frames.iter().map(|f| (f.clone(),)), &options, |f| {
            want.push((f.index, f.result));
            std::ops::ControlFlow::Continue(())
        })
        .expect("compiled stream");
    let mut dynamic = GraphFile::parse(L2_FILE)
        .expect("reads")
        .build(&vision_ops())
        .expect("builds");
    dynamic.set_fusion(fused);
    let mut got = Vec::new();
    let inputs = frames
        .iter()
        .map(|f| ((), vec![Arc::new(f.clone()) as Value]));
    let run = &mut cortex_core::run::Run::mode(mode as usize);
    dynamic
        .run_stream_with(run, inputs, &options, |f| {
            got.push((f.index, f.take_result()));
            std::ops::ControlFlow::Continue(())
        })
        .expect("run-time stream");
    assert_eq!(got.len(), frames.len());
    assert_eq!(want.len(), frames.len());
    for ((wi, w), (gi, g)) in want.iter().zip(&got) {
        assert_eq!(wi, gi, "frames in source order");
        match (w, g) {
            (Ok(w), Ok(g)) => assert_same(*wi as usize, w, g),
            (Err(w), Err(g)) => assert_eq!(w.to_string(), g.to_string(), "frame {wi}"),
            _ => panic!(
                "frame {wi}: compiled {:?}, run-time {:?}",
                w.is_ok(),
                g.is_ok()
            ),
        }
    }
    assert_eq!(dynamic.holds(), compiled.holds());
    assert_eq!(dynamic.frame_index(), compiled.frame_index());
}
