//! The `cortexroi` element in in-process GStreamer pipelines (registered
//! from the test, no plugin .so): negotiation, one ROI meta per buffer,
//! messages, mode and weights at run time, caps changes, refusals, several
//! streams.
#![cfg(feature = "gstreamer")]

use std::sync::{Arc, Mutex, OnceLock};

use gst::prelude::*;

/// A `cortex-region` meta: its box, the `delta-qp` of its `roi/vaapi`
/// and `roi/msdk` parameters, its score.
type SeenRegion = ((u32, u32, u32, u32), i32, i32, f64);

/// What a probe after the element saw on one buffer.
#[derive(Debug, Clone)]
struct Seen {
    width: u32,
    height: u32,
    /// `(x, y, w, h, score)` of every `cortex-roi` meta.
    rois: Vec<(u32, u32, u32, u32, f64)>,
    /// Every `cortex-region` meta: its box, the `delta-qp` of its
    /// `roi/vaapi` and `roi/msdk` parameters, its score.
    regions: Vec<SeenRegion>,
    /// ROI metas of another type.
    other: usize,
}

/// The run of one pipeline to EOS (or error).
#[derive(Debug, Default)]
struct Run {
    buffers: Vec<Seen>,
    messages: Vec<gst::Structure>,
    warnings: Vec<String>,
    errors: Vec<String>,
}

fn init() {
    static INIT: OnceLock<()> = OnceLock::new();
    INIT.get_or_init(|| {
        gst::init().expect("gst init");
        gstcortex::register(None).expect("register cortexroi");
    });
}

/// Builds `launch`, which must name its element `roi`, and lets `setup`
/// change things before it plays (it gets the pipeline); a probe on the
/// element's src pad records every buffer and calls `on_buffer(index, pipeline)`.
fn run_launch(launch: &str, on_buffer: impl Fn(usize, &gst::Bin) + Send + Sync + 'static) -> Run {
    init();
    let pipeline = gst::parse::launch(launch)
        .expect("launch line")
        .downcast::<gst::Pipeline>()
        .expect("a pipeline");
    let roi = pipeline.by_name("roi").expect("element named roi");
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let seen2 = seen.clone();
    let weak = pipeline.downgrade();
    let src = roi.static_pad("src").expect("src pad");
    src.add_probe(gst::PadProbeType::BUFFER, move |pad, info| {
        if let Some(gst::PadProbeData::Buffer(buf)) = &info.data {
            let caps = pad.current_caps().expect("negotiated caps");
            let vi = gst_video::VideoInfo::from_caps(&caps).expect("video caps");
            let mut rois = Vec::new();
            let mut regions = Vec::new();
            let mut other = 0;
            for m in buf.iter_meta::<gst_video::VideoRegionOfInterestMeta>() {
                if m.roi_type() == "cortex-region" {
                    let qp = |name: &str| {
                        m.param(name)
                            .and_then(|s| s.get::<i32>("delta-qp").ok())
                            .unwrap_or(i32::MIN)
                    };
                    let score = m
                        .param("cortex-region")
                        .and_then(|s| s.get::<f64>("score").ok())
                        .unwrap_or(f64::NAN);
                    regions.push((m.rect(), qp("roi/vaapi"), qp("roi/msdk"), score));
                } else if m.roi_type() == "cortex-roi" {
                    let (x, y, w, h) = m.rect();
                    let score = m
                        .param("cortex-roi")
                        .and_then(|s| s.get::<f64>("score").ok())
                        .unwrap_or(f64::NAN);
                    rois.push((x, y, w, h, score));
                } else {
                    other += 1;
                }
            }
            let index = {
                let mut v = seen2.lock().unwrap();
                v.push(Seen {
                    width: vi.width(),
                    height: vi.height(),
                    rois,
                    regions,
                    other,
                });
                v.len() - 1
            };
            if let Some(p) = weak.upgrade() {
                on_buffer(index, p.upcast_ref());
            }
        }
        gst::PadProbeReturn::Ok
    });
    let mut run = Run::default();
    let bus = pipeline.bus().expect("bus");
    if pipeline.set_state(gst::State::Playing).is_err() {
        run.errors.push("state change to PLAYING failed".into());
    }
    for msg in bus.iter_timed(gst::ClockTime::from_seconds(120)) {
        use gst::MessageView;
        match msg.view() {
            MessageView::Eos(_) => break,
            MessageView::Error(e) => {
                run.errors.push(e.error().to_string());
                break;
            }
            MessageView::Warning(w) => run.warnings.push(w.error().to_string()),
            MessageView::Element(e) => {
                if let Some(s) = e.structure() {
                    if s.name() == "cortex-roi" {
                        run.messages.push(s.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    pipeline.set_state(gst::State::Null).expect("to NULL");
    run.buffers = seen.lock().unwrap().clone();
    run
}

fn assert_one_roi_inside(run: &Run) {
    for (i, b) in run.buffers.iter().enumerate() {
        assert_eq!(b.rois.len(), 1, "buffer {i}: {b:?}");
        assert_eq!(b.other, 0, "buffer {i}");
        let (x, y, w, h, score) = b.rois[0];
        assert!(w > 0 && h > 0, "buffer {i}: empty box {b:?}");
        assert!(
            x + w <= b.width && y + h <= b.height,
            "buffer {i}: box outside {b:?}"
        );
        assert!(score.is_finite(), "buffer {i}: score {score}");
    }
}

fn node_names(s: &gst::Structure) -> Vec<String> {
    let nodes = s.get::<gst::Structure>("node-ms").expect("node-ms");
    nodes.fields().map(|f| f.to_string()).collect()
}

#[test]
fn negotiates_and_attaches_one_roi_per_buffer() {
    let run = run_launch(
        "videotestsrc num-buffers=12 pattern=ball ! video/x-raw,format=RGB,width=160,height=120 \
         ! cortexroi name=roi ! fakesink",
        |_, _| {},
    );
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.buffers.len(), 12);
    assert_one_roi_inside(&run);
    // Messages are off by default.
    assert!(run.messages.is_empty());
}

/// Every region meta lies inside its frame and carries the `delta-qp` the
/// regions' own rule gives at the element's strength, the same for both
/// hardware encoders; the strongest region (score 1) gets the full
/// strength.
fn assert_regions(run: &Run, strength: f32) {
    let mut any = 0;
    for (i, b) in run.buffers.iter().enumerate() {
        assert!(b.regions.len() <= 4, "buffer {i}: {:?}", b.regions);
        for &((x, y, w, h), vaapi, msdk, score) in &b.regions {
            assert!(
                w > 0 && h > 0 && x + w <= b.width && y + h <= b.height,
                "buffer {i}: {b:?}"
            );
            let want = (-(strength * score as f32) * 51.0).round() as i32;
            assert_eq!((vaapi, msdk), (want, want), "buffer {i}: score {score}");
            any += 1;
        }
        if !b.regions.is_empty() {
            let top = b.regions.iter().map(|r| r.1).min().unwrap_or(0);
            assert_eq!(
                top,
                (-(strength * 51.0)).round() as i32,
                "buffer {i}: the peak's region"
            );
        }
    }
    assert!(any > 0, "no region on any buffer");
}

#[test]
fn attaches_encoder_regions_with_delta_qp() {
    let run = run_launch(
        "videotestsrc num-buffers=6 pattern=ball ! video/x-raw,format=RGB,width=160,height=120 ! cortexroi name=roi ! fakesink",
        |_, _| {},
    );
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_regions(&run, 0.2);
    let stronger = run_launch(
        "videotestsrc num-buffers=6 pattern=ball ! video/x-raw,format=RGB,width=160,height=120 ! cortexroi name=roi roi-strength=0.5 ! fakesink",
        |_, _| {},
    );
    assert!(stronger.errors.is_empty(), "{:?}", stronger.errors);
    assert_regions(&stronger, 0.5);
}

#[test]
fn accepts_bgrx_through_the_same_path() {
    let run = run_launch(
        "videotestsrc num-buffers=4 pattern=smpte ! video/x-raw,format=BGRx,width=100,height=80 \
         ! cortexroi name=roi ! fakesink",
        |_, _| {},
    );
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.buffers.len(), 4);
    assert_one_roi_inside(&run);
}

#[test]
fn refuses_formats_it_does_not_convert() {
    init();
    // I420 needs a colour conversion: the caps do not intersect, so the
    // launch line does not even link.
    let err = gst::parse::launch(
        "videotestsrc num-buffers=2 ! video/x-raw,format=I420,width=64,height=64 \
         ! cortexroi name=roi ! fakesink",
    )
    .expect_err("I420 linked to cortexroi");
    assert!(err.to_string().contains("can't handle caps"), "{err}");
}

#[test]
fn posts_one_message_per_frame_when_enabled() {
    let run = run_launch(
        "videotestsrc num-buffers=6 pattern=ball ! video/x-raw,format=RGB,width=160,height=120 \
         ! cortexroi name=roi emit-messages=true ! fakesink",
        |_, _| {},
    );
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.messages.len(), 6);
    for (i, m) in run.messages.iter().enumerate() {
        assert_eq!(m.get::<u64>("frame").unwrap(), i as u64);
        assert_eq!(m.get::<&str>("mode").unwrap(), "BALANCED");
        let (x, y, w, h) = (
            m.get::<u32>("x").unwrap(),
            m.get::<u32>("y").unwrap(),
            m.get::<u32>("width").unwrap(),
            m.get::<u32>("height").unwrap(),
        );
        // The message reports the same box as the meta.
        assert_eq!((x, y, w, h), {
            let r = run.buffers[i].rois[0];
            (r.0, r.1, r.2, r.3)
        });
        // The views' fields, as the runner's JSON lines show them.
        assert!(m.get::<f64>("sharpness").unwrap() >= 0.0);
        // No baseline (null in the view, absent here) on the first frame.
        assert_eq!(m.has_field("baseline"), i > 0, "frame {i}");
        m.get::<bool>("blurry").unwrap();
        m.get::<bool>("below_100").unwrap();
        m.get::<bool>("cut").unwrap();
        assert!(m.get::<u64>("jpeg_bytes").unwrap() > 0);
        assert!(m.get::<f64>("run-ms").unwrap() > 0.0);
        // The first frame has no previous frame to compare with.
        assert_eq!(m.has_field("ssim"), i > 0, "frame {i}");
        // Each node timed alone, or with its fused group (`a+b+c`).
        let nodes = node_names(m);
        for n in [
            "gray",
            "laplacian",
            "blur",
            "scene",
            "center",
            "text",
            "saliency",
            "motion",
            "fused",
            "roi",
        ] {
            assert!(
                nodes.iter().any(|x| x.split('+').any(|m| m == n)),
                "frame {i}: {n} missing from {nodes:?}"
            );
        }
        if i > 0 {
            assert!(
                nodes
                    .iter()
                    .any(|x| x == "gray+laplacian+scene+center+motion"),
                "frame {i}: no fused group in {nodes:?}"
            );
        }
    }
}

#[test]
fn mode_changes_at_run_time() {
    let run = run_launch(
        "videotestsrc num-buffers=10 pattern=ball ! video/x-raw,format=RGB,width=160,height=120 \
         ! cortexroi name=roi emit-messages=true ! fakesink",
        |i, bin| {
            if i == 4 {
                bin.by_name("roi")
                    .unwrap()
                    .set_property("mode", "POWER_SAVE");
            }
        },
    );
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.messages.len(), 10);
    assert_one_roi_inside(&run);
    let modes: Vec<&str> = run
        .messages
        .iter()
        .map(|m| m.get::<&str>("mode").unwrap())
        .collect();
    // Frames 0..=4 ran before the probe of frame 4 returned.
    assert!(modes[..5].iter().all(|m| *m == "BALANCED"), "{modes:?}");
    assert!(modes[5..].iter().all(|m| *m == "POWER_SAVE"), "{modes:?}");
    for (i, m) in run.messages.iter().enumerate().skip(5) {
        let nodes = node_names(m);
        assert!(
            !nodes.iter().any(|n| n == "saliency" || n == "motion"),
            "{nodes:?}"
        );
        // POWER_SAVE computes the text map on its first frame (BALANCED
        // kept no held value) and every 4th frame after, holding it in
        // between.
        let computes = i == 5 || i == 9;
        assert_eq!(
            nodes.iter().any(|n| n == "text"),
            computes,
            "frame {i}: {nodes:?}"
        );
    }
}

#[test]
fn run_time_weights_apply_and_bad_ones_are_refused() {
    init();
    let e = gst::ElementFactory::make("cortexroi").build().unwrap();
    assert_eq!(e.property::<String>("weights"), "");
    for bad in [
        "wc=abc",
        "wz=1",
        "wc=-1",
        "wc=NaN",
        "wc",
        "wc=1,wc=2",
        "wc=inf",
    ] {
        e.set_property("weights", bad);
        assert_eq!(e.property::<String>("weights"), "", "`{bad}` was accepted");
    }
    e.set_property("mode", "NOPE");
    assert_eq!(e.property::<String>("mode"), "BALANCED");
    e.set_property("weights", "ws=0, wm=0");
    assert_eq!(e.property::<String>("weights"), "ws=0, wm=0");

    // Valid weights: run with run_weights; saliency and motion eliminated.
    let run = run_launch(
        "videotestsrc num-buffers=3 pattern=ball ! video/x-raw,format=RGB,width=96,height=64 \
         ! cortexroi name=roi emit-messages=true weights=\"ws=0,wm=0\" ! fakesink",
        |_, _| {},
    );
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.messages.len(), 3);
    for m in &run.messages {
        assert_eq!(m.get::<&str>("mode").unwrap(), "weights");
        let nodes = node_names(m);
        assert!(
            !nodes.iter().any(|n| n == "saliency" || n == "motion"),
            "{nodes:?}"
        );
    }

    // A refused value in the launch line stops the pipeline at start
    // instead of running with weights nobody asked for.
    let run = run_launch(
        "videotestsrc num-buffers=3 ! video/x-raw,format=RGB,width=96,height=64 \
         ! cortexroi name=roi weights=\"wc=oops\" ! fakesink",
        |_, _| {},
    );
    assert!(!run.errors.is_empty(), "started with refused weights");
    assert!(run.buffers.is_empty());
}

#[test]
fn survives_a_caps_change_mid_stream() {
    let run = run_launch(
        "videotestsrc num-buffers=12 pattern=ball ! capsfilter name=cf \
         caps=video/x-raw,format=RGB,width=160,height=120 \
         ! cortexroi name=roi emit-messages=true ! fakesink",
        |i, bin| {
            if i == 4 {
                let caps = gst::Caps::builder("video/x-raw")
                    .field("format", "RGB")
                    .field("width", 96i32)
                    .field("height", 64i32)
                    .build();
                bin.by_name("cf").unwrap().set_property("caps", caps);
            }
        },
    );
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.buffers.len(), 12);
    assert_one_roi_inside(&run);
    let sizes: Vec<(u32, u32)> = run.buffers.iter().map(|b| (b.width, b.height)).collect();
    let first_small = sizes
        .iter()
        .position(|s| *s == (96, 64))
        .expect("the new size never arrived");
    assert!(
        sizes[..first_small].iter().all(|s| *s == (160, 120)),
        "{sizes:?}"
    );
    assert!(
        sizes[first_small..].iter().all(|s| *s == (96, 64)),
        "{sizes:?}"
    );
    // After the reset the first small frame has nothing to compare with,
    // the next ones do.
    assert!(!run.messages[first_small].has_field("ssim"));
    assert!(run.messages[first_small + 1].has_field("ssim"));
}

#[test]
fn independent_streams_in_one_process() {
    // Three branches, three elements, three pipeline instances.
    let mut line = String::new();
    for (i, pattern) in ["ball", "smpte", "snow"].iter().enumerate() {
        let name = if i == 0 { "roi" } else { "roi_other" };
        line += &format!(
            "videotestsrc num-buffers=5 pattern={pattern} ! video/x-raw,format=RGB,width=96,height=64 \
             ! cortexroi name={name}{i} emit-messages=true ! fakesink  "
        );
    }
    // run_launch wants an element called `roi`: rename the first one.
    let line = line.replace("name=roi0", "name=roi");
    let run = run_launch(&line, |_, _| {});
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.buffers.len(), 5);
    assert_one_roi_inside(&run);
    assert_eq!(run.messages.len(), 15);
    // Each element counts its own frames: every stream has frames 0..5.
    let mut frames: Vec<u64> = run
        .messages
        .iter()
        .map(|m| m.get::<u64>("frame").unwrap())
        .collect();
    frames.sort_unstable();
    assert_eq!(frames, [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]);
}

#[test]
fn refused_frames_pass_through_with_one_warning() {
    // Wider than the frame limits (16384 per side): every frame is refused
    // by the pipeline's first node.
    let run = run_launch(
        "videotestsrc num-buffers=3 ! video/x-raw,format=RGB,width=16400,height=2 \
         ! cortexroi name=roi emit-messages=true ! fakesink",
        |_, _| {},
    );
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.buffers.len(), 3, "refused frames must still flow");
    assert!(run.buffers.iter().all(|b| b.rois.is_empty()));
    assert!(run.messages.is_empty());
    // One warning for the run of failures, not one per frame.
    assert_eq!(run.warnings.len(), 1, "{:?}", run.warnings);
}

#[test]
fn a_format_change_resets_the_state() {
    // Same size, other channel order: without the reset the scene check
    // would compare with last frame's gray image (same size) and report an
    // SSIM; after the reset there is no previous frame.
    let run = run_launch(
        "videotestsrc num-buffers=8 pattern=ball ! capsfilter name=cf \
         caps=video/x-raw,format=RGB,width=96,height=64 \
         ! cortexroi name=roi emit-messages=true ! fakesink",
        |i, bin| {
            if i == 3 {
                let caps = gst::Caps::builder("video/x-raw")
                    .field("format", "BGRx")
                    .field("width", 96i32)
                    .field("height", 64i32)
                    .build();
                bin.by_name("cf").unwrap().set_property("caps", caps);
            }
        },
    );
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.messages.len(), 8);
    let ssim: Vec<bool> = run.messages.iter().map(|m| m.has_field("ssim")).collect();
    // Frame 0 and the first frame after the change have no previous frame.
    let resets = ssim.iter().filter(|has| !**has).count();
    assert_eq!(resets, 2, "{ssim:?}");
    assert!(!ssim[0] && ssim[1], "{ssim:?}");
}
