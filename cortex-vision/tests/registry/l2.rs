//! The L2 pipeline with every node calling its op through the registry: the
//! same results as the direct L2 pipeline when restricted to pure Rust, a
//! report naming every op, node annotations, and (with the backends built)
//! kernels that agree with each other.

use std::sync::Arc;

use crate::reg_l2::{RegL2, RegL2Mode};
use cortex_testkit::thread_allocs_during;
use cortex_vision::l2::{demo_clip, L2Mode, L2};
use cortex_vision::registry::{self, Config, Preference, Registry};

fn registry(preference: Preference) -> Arc<Registry> {
    Arc::new(Registry::new(Config {
        preference,
        quiet: true,
        ..Config::default()
    }))
}

#[test]
fn pure_rust_registry_pipeline_matches_the_direct_one_bit_for_bit() {
    let reg = registry(Preference::PureRustOnly);
    let mut direct = L2::new();
    let mut via = RegL2::new();
    for frame in demo_clip(3, 96, 64) {
        let a = direct.run(L2Mode::Balanced, &frame).unwrap();
        let b = registry::with_registry(&reg, || via.run(RegL2Mode::Balanced, &frame)).unwrap();
        assert_eq!(a.blur, b.blur);
        assert_eq!(a.scene, b.scene);
        assert_eq!(a.fused, b.fused);
        assert_eq!(a.roi, b.roi);
    }
    let report = reg.report();
    for op in [
        "to_gray",
        "blur_detector",
        "scene_change",
        "center_crop",
        "text_map",
        "saliency_dft",
        "motion_map",
        "score_fusion",
        "encode_roi",
    ] {
        assert!(report.contains(op), "{op} missing from\n{report}");
    }
    // The first frame has no previous gray: its own shape, decided apart.
    assert!(report.contains("96x64 first-frame"), "{report}");
    assert!(report.contains("kernel failures: 0"), "{report}");
    // Annotation of the graph's nodes, by op path.
    let notes = reg.annotate(RegL2::ir());
    let ir = RegL2::ir();
    for (node, note) in ir.nodes.iter().zip(&notes) {
        // Nodes calling plain functions (the blur verdict) have no kernel.
        if !node.op.starts_with("registry::ops::") {
            assert!(note.is_none(), "{}: {note:?}", node.name);
            continue;
        }
        let note = note
            .as_deref()
            .unwrap_or_else(|| panic!("{} not annotated", node.name));
        assert!(
            note.starts_with("pure-rust (rule) at 96x64"),
            "{}: {note}",
            node.name
        );
    }
}

#[test]
fn nodes_calling_kernels_directly_are_not_annotated() {
    let reg = registry(Preference::PureRustOnly);
    let mut via = RegL2::new();
    for frame in demo_clip(2, 64, 48) {
        registry::with_registry(&reg, || via.run(RegL2Mode::Balanced, &frame)).unwrap();
    }
    assert!(reg.kernel_for("registry::ops::to_gray").is_some());
    assert!(reg.kernel_for("registry::ops::to_gray_into").is_some());
    // Every op has decisions now, yet the same ops called directly
    // (`ops::to_gray_into` in L2, `ops::to_gray`) are not the registry's.
    assert_eq!(reg.kernel_for("ops::to_gray"), None);
    let ir = L2::ir();
    assert!(ir.nodes.iter().any(|n| n.op.starts_with("ops::to_gray")));
    for (node, note) in ir.nodes.iter().zip(reg.annotate(ir)) {
        assert!(note.is_none(), "{} ({}): {note:?}", node.name, node.op);
    }
}

#[test]
fn registry_pipeline_allocates_nothing_per_frame_after_warm_up() {
    let reg = registry(Preference::PureRustOnly);
    // The blurred stretch from frame 10 included, so every kernel's scratch
    // reaches the clip's high-water mark during the warm-up.
    let frames = demo_clip(16, 160, 120);
    let mut p = RegL2::new();
    // On a worker of a pool of its own: work the frame splits off then goes
    // to the worker's own queue, not to the queue for work from outside a
    // pool, which every test of this binary shares and which allocates a
    // block per 63 entries from whichever thread pushes the 63rd; and no
    // other test's job runs on this thread while it waits.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a pool");
    pool.install(|| {
        registry::with_registry(&reg, || {
            let mut out = p.run(RegL2Mode::Balanced, &frames[0]).unwrap();
            // Warm-up: every op decided at this shape (and at its first-frame
            // shape), every buffer and per-thread scratch at its size.
            for f in &frames {
                p.run_into(RegL2Mode::Balanced, f, &mut out).unwrap();
            }
            // The counter sees a frame's allocations when outputs are new.
            let (_, fresh, _) =
                thread_allocs_during(|| p.run(RegL2Mode::Balanced, &frames[3]).unwrap());
            assert!(fresh > 0, "a new output allocates");
            let ((), n, bytes) = thread_allocs_during(|| {
                for f in &frames {
                    p.run_into(RegL2Mode::Balanced, f, &mut out).unwrap();
                }
            });
            assert_eq!(
                n,
                0,
                "{n} allocations ({bytes} bytes) over {} frames",
                frames.len()
            );
            assert!(!out.roi.jpeg.is_empty());
        })
    });
    // Every op went through the registry, none measured again.
    assert!(
        reg.report().contains("kernel failures: 0"),
        "{}",
        reg.report()
    );
    assert_eq!(reg.decisions().len(), 9 + 2, "{}", reg.report());
}

#[test]
fn measuring_registry_pipeline_runs_and_reports_every_op() {
    let reg = registry(Preference::Measure);
    let mut via = RegL2::new();
    let mut direct = L2::new();
    for frame in demo_clip(3, 128, 96) {
        let a = direct.run(L2Mode::Balanced, &frame).unwrap();
        let b = registry::with_registry(&reg, || via.run(RegL2Mode::Balanced, &frame)).unwrap();
        // Kernels of other backends agree within their tolerance: same region.
        let (ra, rb) = (a.roi.bbox, b.roi.bbox);
        assert!(
            ra.x.abs_diff(rb.x) <= 4 && ra.y.abs_diff(rb.y) <= 4,
            "{ra:?} vs {rb:?}"
        );
        assert!(!b.roi.jpeg.is_empty());
        assert_eq!(a.blur.is_blurry, b.blur.is_blurry);
    }
    let decisions = reg.decisions();
    assert!(
        decisions.iter().all(|d| d.failures.is_empty()),
        "{}",
        reg.report()
    );
    if cfg!(feature = "opencv") {
        let d = decisions
            .iter()
            .find(|d| d.op == "encode_roi")
            .expect("encode_roi decided");
        assert!(
            matches!(d.reason, registry::Reason::Measured(_)),
            "{}",
            reg.report()
        );
    }
}

#[cfg(feature = "turbojpeg")]
#[test]
fn turbojpeg_kernel_encodes_the_same_region() {
    let frame = &demo_clip(2, 320, 240)[1];
    let gray = cortex_vision::ops::to_gray(frame).unwrap();
    let score = cortex_vision::ops::saliency_dft(&gray).unwrap();
    let pure = cortex_vision::ops::encode_roi(frame, &score).unwrap();
    let params = cortex_vision::ops::EncoderParams::default();
    let turbo = registry::turbo::encode_roi_with(frame, &score, &params).unwrap();
    assert_eq!(turbo.bbox, pure.bbox);
    assert_eq!(turbo.score, pure.score);
    let img = image::load_from_memory(&turbo.jpeg).unwrap().to_rgb8();
    let b = turbo.bbox;
    assert_eq!(
        (img.width() as usize, img.height() as usize),
        (b.width, b.height)
    );
    // Lossy, but close to the crop: mean absolute error of a few levels.
    let mut err = 0u64;
    for (x, y, p) in img.enumerate_pixels() {
        for c in 0..3 {
            let want = frame[[b.y + y as usize, b.x + x as usize, c]];
            err += u64::from(p[c].abs_diff(want));
        }
    }
    let mae = err as f64 / (b.width * b.height * 3) as f64;
    assert!(mae < 6.0, "mean abs error {mae}");
    // A strided frame: the kernel refuses it, the rules never pick it.
    let (h, w, _) = frame.dim();
    let mut t = cortex_vision::ops::RgbFrame::zeros((w, h, 3));
    t.swap_axes(0, 1);
    t.assign(frame);
    assert!(!t.is_standard_layout());
    assert!(registry::turbo::encode_roi_with(&t, &score, &params).is_err());
    let reg = registry(Preference::Prefer(registry::Backend::TurboJpeg));
    let out = reg.call::<registry::ops::EncodeRoi>(&(&t, &score)).unwrap();
    assert_eq!(out.bbox, pure.bbox);
    let d = reg
        .decision("encode_roi", registry::Shape::new(w, h))
        .unwrap();
    assert_ne!(d.kernel, "turbojpeg", "{}", reg.report());
    // Contiguous, the preference picks it.
    reg.call::<registry::ops::EncodeRoi>(&(frame, &score))
        .unwrap();
    assert!(reg.report().contains("turbojpeg"), "{}", reg.report());
}

#[cfg(feature = "opencv")]
#[test]
fn forcing_each_encode_kernel_gives_the_same_region() {
    use registry::ops::EncodeRoi;
    let frame = &demo_clip(2, 320, 240)[1];
    let gray = cortex_vision::ops::to_gray(frame).unwrap();
    let score = cortex_vision::ops::saliency_dft(&gray).unwrap();
    let reg = registry(Preference::Measure);
    let mut boxes = Vec::new();
    for k in reg.kernels::<EncodeRoi>() {
        reg.force::<EncodeRoi>(k.name).unwrap();
        let out = reg.call::<EncodeRoi>(&(frame, &score)).unwrap();
        let d = reg
            .decision("encode_roi", registry::Shape::new(320, 240))
            .unwrap();
        assert_eq!(d.kernel, k.name);
        boxes.push(out.bbox);
    }
    assert!(boxes.len() >= 2);
    assert!(boxes.windows(2).all(|w| w[0] == w[1]), "{boxes:?}");
}

/// Each op's descriptor lists the kernels its registry declaration gives,
/// with how the registry may choose them: what `ops NAME` prints.
#[test]
fn the_library_lists_each_op_s_registry_kernels() {
    let ops = cortex_vision::library::vision_ops();
    let show = |name: &str| ops.inspect(name).expect(name);
    let mut gray = vec!["pure-rust"];
    let mut encode = vec!["pure-rust"];
    if cfg!(feature = "opencv") {
        gray.push("opencv (bit-identical)");
        encode.push("opencv (within tolerance, measured)");
    }
    if cfg!(feature = "turbojpeg") {
        encode.push("turbojpeg (within tolerance, measured)");
    }
    for (name, kernels) in [
        ("vision.to_gray", gray),
        ("vision.encode_roi", encode),
        ("vision.text_map", vec!["pure-rust"]),
    ] {
        let text = show(name);
        let line = format!("kernels: {}\n", kernels.join(", "));
        assert!(text.contains(&line), "{name}: want {line:?} in\n{text}");
    }
    // An op the registry does not dispatch lists no kernels.
    assert!(!show("vision.blur_verdict").contains("kernels:"));
}
