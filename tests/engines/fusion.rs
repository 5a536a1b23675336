//! Fused groups in generated pipelines: L2 with its groups fused against
//! the same pipeline with fusion off, on every engine and mode, bit for bit,
//! across a cut, a blurred stretch, odd and tiny sizes and failing frames;
//! a user strip form whose kernel refuses some strips: the group declines
//! those frames and the node's own call gives their values.
#![cfg(feature = "runner")]

use cortex::cortex_graph;
use cortex::l2::{L2Mode, L2Outputs, L2};
use cortex::ops::strip::GrayStrip;
use cortex::ops::{self, GrayImage, OpsError, RgbFrame};
use cortex::runner::sources::SyntheticClip;
use cortex::strip::form::store_array2;
use cortex::strip::group::Value;
use cortex::strip::{
    FusedGroup, Geometry, GroupBuilder, Inputs, Kind, Map, StripError, StripForm, StripKernel,
    StripMut,
};
use cortex::Run;
use cortex::{prelude::Observer, PipelineError, Weights};

/// Counts the fused groups that ran fused and those that declined a frame.
#[derive(Default)]
struct Groups {
    fused: usize,
    declined: usize,
}

impl Observer for Groups {
    fn group_end(&mut self, fused: bool) {
        if fused {
            self.fused += 1;
        } else {
            self.declined += 1;
        }
    }
}

/// Frames of the synthetic clip (blurred 10–15, a cut at 24) at 160×120,
/// then odd and tiny sizes, then frames every op refuses (no pixels, two
/// channels); each with the index of its size.
fn frames() -> Vec<(usize, RgbFrame)> {
    let mut out: Vec<(usize, RgbFrame)> = Vec::new();
    let clip = SyntheticClip::new(160, 120);
    out.extend((0..30).map(|f| (0, clip.frame(f))));
    for (i, (w, h)) in [(97, 61), (3, 2), (1, 1)].into_iter().enumerate() {
        let clip = SyntheticClip::new(w, h);
        out.extend((0..3).map(|f| (i + 1, clip.frame(f))));
    }
    out.push((4, RgbFrame::zeros((0, 0, 3))));
    out.push((4, RgbFrame::zeros((8, 8, 2))));
    // Back to the first size after the failures.
    out.extend((30..33).map(|f| (0, clip.frame(f))));
    out
}

fn same(
    what: &str,
    got: &Result<L2Outputs, PipelineError>,
    want: &Result<L2Outputs, PipelineError>,
) {
    match (got, want) {
        (Ok(g), Ok(w)) => {
            assert_eq!(g.fused, w.fused, "{what}: fused");
            assert_eq!(g.blur, w.blur, "{what}: blur");
            assert_eq!(g.scene, w.scene, "{what}: scene");
            assert_eq!(g.roi, w.roi, "{what}: roi");
        }
        (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string(), "{what}: error"),
        _ => panic!("{what}: {} vs {}", got.is_ok(), want.is_ok()),
    }
}

#[test]
fn l2_fused_is_bit_identical_to_unfused_on_every_engine_and_mode() {
    for &mode in L2Mode::ALL {
        let mut plain = L2::new();
        plain.set_fusion(false);
        assert!(!plain.fusion());
        let (mut seq, mut par, mut into) = (L2::new(), L2::new(), L2::new());
        for p in [&mut seq, &mut par, &mut into] {
            p.set_fusion(true);
        }
        assert!(seq.fusion());
        let mut groups = Groups::default();
        let mut reused: Option<L2Outputs> = None;
        let mut last_size = 0;
        for (f, (size, frame)) in frames().into_iter().enumerate() {
            if size != last_size {
                // A new size: every pipeline starts over, as the runner does.
                for p in [&mut plain, &mut seq, &mut par, &mut into] {
                    p.reset();
                }
                last_size = size;
            }
            let what = format!("{mode:?} frame {f} (size {size})");
            let want = plain.run(mode, &frame);
            same(
                &format!("{what} run"),
                &seq.run_with_fresh(&mut Run::mode(mode).observed(&mut groups), &frame),
                &want,
            );
            same(
                &format!("{what} run_parallel"),
                &par.run_with_fresh(&mut Run::mode(mode).parallel(), &frame),
                &want,
            );
            let got = match reused.as_mut() {
                None => into.run(mode, &frame).inspect(|o| reused = Some(o.clone())),
                Some(out) => into.run_into(mode, &frame, out).map(|()| out.clone()),
            };
            same(&format!("{what} run_into"), &got, &want);
        }
        // Every plan fuses at least one group; at 160×120 they all run
        // fused (the frames that fail, fail before any group runs or make
        // the group decline).
        assert!(groups.fused >= 33, "{mode:?}: {} fused", groups.fused);
    }
}

#[test]
fn a_failing_frame_leaves_the_fused_pipelines_state_as_it_was() {
    let clip = SyntheticClip::new(96, 64);
    let (mut fused, mut plain) = (L2::new(), L2::new());
    fused.set_fusion(true);
    plain.set_fusion(false);
    for f in 0..4 {
        fused.run(L2Mode::Balanced, &clip.frame(f)).unwrap();
        plain.run(L2Mode::Balanced, &clip.frame(f)).unwrap();
    }
    let before = fused.state().clone();
    assert!(fused
        .run(L2Mode::Balanced, &RgbFrame::zeros((64, 96, 2)))
        .is_err());
    assert_eq!(fused.state(), &before);
    // The next frame compares against the last good one in both.
    let (a, b) = (
        fused.run(L2Mode::Balanced, &clip.frame(9)).unwrap(),
        plain.run(L2Mode::Balanced, &clip.frame(9)).unwrap(),
    );
    assert_eq!(a.fused, b.fused);
    assert_eq!(a.scene, b.scene);
}

/// `255 - gray`, whole frame.
fn invert_into(gray: &GrayImage, out: &mut GrayImage) -> Result<(), OpsError> {
    *out = gray.mapv(|v| 255 - v);
    Ok(())
}

/// `255 - gray` on strips, refusing any strip holding a black pixel: a strip
/// form may refuse what the whole-frame function takes, and the frame then
/// runs unfused.
#[derive(Debug, Clone, Copy)]
struct InvertStrip;

impl StripKernel for InvertStrip {
    type Out = u8;
    fn name(&self) -> &str {
        "invert"
    }
    fn kind(&self) -> Kind {
        Kind::Pointwise
    }
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        Ok(inputs[0])
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, u8>) -> Result<(), StripError> {
        let src = inputs.plane::<u8>(0)?.span(out.rows())?;
        if src.contains(&0) {
            return Err(StripError::failed("invert", "a black pixel"));
        }
        for (d, s) in out.as_mut_slice().iter_mut().zip(src) {
            *d = 255 - s;
        }
        Ok(())
    }
}

impl StripForm for InvertStrip {
    type Value = GrayImage;
    type Shape = Map;
    fn add(
        &self,
        group: &mut GroupBuilder,
        inputs: &[Option<Value>],
        _weights: &Weights,
    ) -> Result<Value, StripError> {
        let [Some(gray)] = inputs else {
            return Err(StripError::Group("invert reads one value".into()));
        };
        group.kernel(*self, &[*gray])
    }
    fn store(
        &self,
        group: &mut FusedGroup,
        k: usize,
        into: &mut GrayImage,
    ) -> Result<(), StripError> {
        store_array2(group, k, into)
    }
}

cortex_graph! {
    pipeline Inverted {
        input frame: RgbFrame;
        #[compilable(strip = GrayStrip)]
        node gray: GrayImage = ops::to_gray_into(frame, &mut gray)?;
        #[compilable(strip = InvertStrip)]
        node inverted: GrayImage = invert_into(gray, &mut inverted)?;
        output inverted: GrayImage;
    }
}

#[test]
fn a_group_that_declines_a_frame_runs_its_nodes_own_calls() {
    let clip = SyntheticClip::new(64, 48);
    let (mut fused, mut plain) = (Inverted::new(), Inverted::new());
    fused.set_fusion(true);
    plain.set_fusion(false);
    let mut groups = Groups::default();
    let bright = clip.frame(3).mapv(|v| v.max(1));
    let mut dark = bright.clone();
    dark[[40, 5, 0]] = 0;
    dark[[40, 5, 1]] = 0;
    dark[[40, 5, 2]] = 0;
    for (frame, fused_runs) in [(&bright, 1), (&dark, 0), (&bright, 1)] {
        let before = (groups.fused, groups.declined);
        let got = fused
            .run_with_fresh(
                &mut Run::mode(InvertedMode::Full).observed(&mut groups),
                frame,
            )
            .unwrap();
        let want = plain.run(InvertedMode::Full, frame).unwrap();
        assert_eq!(got.inverted, want.inverted);
        assert_eq!(
            (groups.fused - before.0, groups.declined - before.1),
            (fused_runs, 1 - fused_runs)
        );
    }
    let direct = ops::to_gray(&dark).unwrap().mapv(|v| 255 - v);
    assert_eq!(
        fused.run(InvertedMode::Full, &dark).unwrap().inverted,
        direct
    );
}

cortex_graph! {
    /// A thumbnail and a map brought back up, both resized inside the
    /// group that computes their sources.
    pipeline Thumbnails {
        input frame: RgbFrame;
        #[compilable(strip = GrayStrip)]
        node gray: GrayImage = ops::to_gray_into(frame, &mut gray)?;
        #[compilable(strip = ops::strip::ResizeStrip::to(36, 48))]
        node small: GrayImage = ops::resize::resize_gray_into(gray, (36, 48), &mut small)?;
        #[compilable(strip = ops::strip::CenterForm(ops::CenterParams::DEFAULT))]
        node prior: ops::ScoreMap = ops::center_crop_into(small, &ops::CenterParams::DEFAULT, &mut prior)?;
        #[compilable(strip = ops::strip::ResizeMapStrip::to(100, 90))]
        node big: ops::ScoreMap = ops::resize::resize_map_into(prior, (100, 90), &mut big)?;
        output small: GrayImage, big: ops::ScoreMap;
    }
}

#[test]
fn resizes_run_inside_their_group_bit_identical_to_the_whole_frame_calls() {
    let (mut fused, mut plain) = (Thumbnails::new(), Thumbnails::new());
    fused.set_fusion(true);
    plain.set_fusion(false);
    let mut groups = Groups::default();
    for (w, h) in [(160, 120), (97, 61), (48, 36), (1, 1)] {
        let clip = SyntheticClip::new(w, h);
        for i in [3, 11, 30] {
            let frame = clip.frame(i);
            let before = groups.fused;
            let got = fused
                .run_with_fresh(
                    &mut Run::mode(ThumbnailsMode::Full).observed(&mut groups),
                    &frame,
                )
                .unwrap();
            let want = plain.run(ThumbnailsMode::Full, &frame).unwrap();
            assert_eq!(got.small, want.small, "{w}x{h} frame {i}");
            assert_eq!(
                got.big.mapv(f32::to_bits),
                want.big.mapv(f32::to_bits),
                "{w}x{h} frame {i}"
            );
            assert_eq!(groups.fused - before, 1, "one group, run fused");
        }
    }
    assert_eq!(groups.declined, 0);
}

/// What each frame's groups did, and which nodes ran their own calls.
#[derive(Default)]
struct Calls {
    ir: Option<&'static cortex::model::ir::GraphIr>,
    fused: usize,
    declined: usize,
    own: Vec<String>,
}

impl Observer for Calls {
    fn frame_begin(
        &mut self,
        ir: &'static cortex::model::ir::GraphIr,
        _plan: &cortex::prelude::Plan,
    ) {
        self.ir = Some(ir);
    }
    fn node_end(&mut self, node: cortex::model::ir::NodeId) {
        if let Some(ir) = self.ir {
            self.own.push(ir.nodes[node as usize].name.to_string());
        }
    }
    fn group_end(&mut self, fused: bool) {
        if fused {
            self.fused += 1;
        } else {
            self.declined += 1;
        }
    }
}

#[test]
fn motion_declines_alone_and_the_rest_of_its_group_runs_fused() {
    // 97×61: the 16×12 motion grid does not divide the frame; 160×120 does,
    // but its first frame has no previous one. Either way motion runs its
    // own call and the rest of {gray, laplacian, scene, center, motion}
    // stays fused — bit-identical to the unfused pipeline.
    for (w, h) in [(97, 61), (160, 120)] {
        let clip = SyntheticClip::new(w, h);
        let (mut fused, mut plain) = (L2::new(), L2::new());
        plain.set_fusion(false);
        for i in 0..3 {
            let frame = clip.frame(i);
            let mut calls = Calls::default();
            let got = fused
                .run_with_fresh(
                    &mut Run::mode(L2Mode::Balanced).observed(&mut calls),
                    &frame,
                )
                .unwrap();
            let want = plain.run(L2Mode::Balanced, &frame).unwrap();
            assert_eq!(got.fused.mapv(f32::to_bits), want.fused.mapv(f32::to_bits));
            assert_eq!(got.blur, want.blur);
            assert_eq!(got.scene, want.scene);
            assert_eq!(got.qp_map, want.qp_map);
            let ctx = format!("{w}x{h} frame {i}");
            assert_eq!(calls.declined, 0, "{ctx}: no group fell back whole");
            assert!(calls.fused >= 2, "{ctx}");
            // Scene reads the previous frame too: alone on the first frame.
            for (member, alone) in [
                ("motion", w == 97 || i == 0),
                ("scene", i == 0),
                ("gray", false),
                ("laplacian", false),
                ("center", false),
            ] {
                assert_eq!(
                    calls.own.iter().any(|n| n == member),
                    alone,
                    "{ctx}: {member} in {:?}",
                    calls.own
                );
            }
        }
    }
}

#[test]
fn l2_fused_stream_is_bit_identical_to_unfused_at_every_depth() {
    use cortex::stream::{Overflow, StreamOptions};
    use std::ops::ControlFlow;
    // Frames that run and frames that fail, then the clip again.
    let frames: Vec<RgbFrame> = frames()
        .into_iter()
        .filter(|(size, _)| *size == 0 || *size == 4)
        .map(|(_, f)| f)
        .collect();
    for &mode in L2Mode::ALL {
        let mut plain = L2::new();
        let want: Vec<String> = frames
            .iter()
            .map(|f| {
                format!(
                    "{:?}",
                    plain
                        .run(mode, f)
                        .map(|o| (o.fused, o.blur, o.scene, o.roi))
                )
            })
            .collect();
        for in_flight in [1, 2, 4] {
            let mut p = L2::new();
            p.set_fusion(true);
            let mut got = Vec::new();
            let opts = StreamOptions {
                in_flight,
                queue: 2,
                overflow: Overflow::Block,
            };
            p.run_stream(mode, frames.iter().cloned().map(|f| (f,)), &opts, |r| {
                got.push(format!(
                    "{:?}",
                    r.result.map(|o| (o.fused, o.blur, o.scene, o.roi))
                ));
                ControlFlow::Continue(())
            })
            .unwrap();
            assert_eq!(got, want, "{mode:?}, {in_flight} in flight");
            assert_eq!(p.state(), plain.state(), "{mode:?}, {in_flight} in flight");
        }
    }
}

/// Strips computed by [`CountingInvert`], to see that a run used its group.
static COUNTED_STRIPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// `255 - gray` on strips, counting the strips it computes.
#[derive(Debug, Clone, Copy)]
struct CountingInvert;

impl StripKernel for CountingInvert {
    type Out = u8;
    fn name(&self) -> &str {
        "counting_invert"
    }
    fn kind(&self) -> Kind {
        Kind::Pointwise
    }
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        Ok(inputs[0])
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, u8>) -> Result<(), StripError> {
        COUNTED_STRIPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let src = inputs.plane::<u8>(0)?.span(out.rows())?;
        for (d, s) in out.as_mut_slice().iter_mut().zip(src) {
            *d = 255 - s;
        }
        Ok(())
    }
}

impl StripForm for CountingInvert {
    type Value = GrayImage;
    type Shape = Map;
    fn add(
        &self,
        group: &mut GroupBuilder,
        inputs: &[Option<Value>],
        _weights: &Weights,
    ) -> Result<Value, StripError> {
        let [Some(gray)] = inputs else {
            return Err(StripError::Group("invert reads one value".into()));
        };
        group.kernel(*self, &[*gray])
    }
    fn store(
        &self,
        group: &mut FusedGroup,
        k: usize,
        into: &mut GrayImage,
    ) -> Result<(), StripError> {
        store_array2(group, k, into)
    }
}

fn changed(cur: &GrayImage, prev: &GrayImage) -> bool {
    cur.dim() != prev.dim() || cur.iter().zip(prev).any(|(a, b)| a.abs_diff(*b) > 40)
}

cortex_graph! {
    #[parallel]
    pipeline Counted {
        input frame: RgbFrame;
        state _prev: GrayImage = GrayImage::zeros((0, 0));
        #[compilable(strip = GrayStrip)]
        node gray: GrayImage = ops::to_gray_into(frame, &mut gray)?;
        #[compilable(strip = CountingInvert)]
        node inverted: GrayImage = invert_into(gray, &mut inverted)?;
        node moved = changed(inverted, _prev);
        inverted -> _prev;
        output inverted: GrayImage, moved: bool;
    }
}

#[test]
fn a_pipelined_run_runs_its_first_stages_groups() {
    use cortex::stream::{Overflow, StreamOptions};
    use std::ops::ControlFlow;
    use std::sync::atomic::Ordering;
    let clip = SyntheticClip::new(96, 64);
    let frames: Vec<RgbFrame> = (0..12).map(|f| clip.frame(f + 20)).collect();
    let mut plain = Counted::new();
    let want: Vec<CountedOutputs> = frames
        .iter()
        .map(|f| plain.run(CountedMode::Full, f).unwrap())
        .collect();
    for in_flight in [1, 2, 4] {
        let mut p = Counted::new();
        p.set_fusion(true);
        let before = COUNTED_STRIPS.load(Ordering::Relaxed);
        let mut got = Vec::new();
        let opts = StreamOptions {
            in_flight,
            queue: 2,
            overflow: Overflow::Block,
        };
        p.run_stream(
            CountedMode::Full,
            frames.iter().cloned().map(|f| (f,)),
            &opts,
            |r| {
                got.push(r.result.unwrap());
                ControlFlow::Continue(())
            },
        )
        .unwrap();
        assert_eq!(got, want, "{in_flight} in flight");
        assert_eq!(p.state(), plain.state());
        // Every frame ran the group {gray, inverted} in strips.
        assert!(
            COUNTED_STRIPS.load(Ordering::Relaxed) - before >= frames.len(),
            "{in_flight} in flight: the group did not run"
        );
    }
}

/// A rated mode's generated code never fuses the nodes its triggers need
/// with the rest (the phase is decided between them), and the tools show
/// the groups it runs.
/// A run reading some outputs runs its plan cut down to them with the full
/// graph's groups: fused when the plan runs every member of a group and
/// what it reads (BALANCED reading the runner's JSON fields), unfused when
/// the plan leaves a member out (TEXT_FOCUS has no motion) or fusion is
/// off. The outputs read are bit-identical to the unfused every-output
/// run's on both engines.
#[test]
fn a_run_reading_some_outputs_fuses_the_groups_its_plan_runs_whole() {
    use cortex::run::{Engine, OutputSet};
    let ir = L2::ir();
    let json = OutputSet::named(ir, &["blur", "scene", "roi"]).unwrap();
    let frames: Vec<RgbFrame> = frames().into_iter().take(30).map(|(_, f)| f).collect();
    for (mode, whole) in [(L2Mode::Balanced, true), (L2Mode::TextFocus, false)] {
        for engine in [Engine::Sequential, Engine::Parallel] {
            for on in [true, false] {
                let (mut part, mut plain) = (L2::new(), L2::new());
                part.set_fusion(on);
                plain.set_fusion(false);
                let mut got = part.run(mode, &frames[0]).unwrap();
                plain.run(mode, &frames[0]).unwrap();
                let mut groups = Groups::default();
                for (f, frame) in frames.iter().enumerate().skip(1) {
                    let want = plain.run(mode, frame).unwrap();
                    let mut run = Run::mode(mode)
                        .engine(engine)
                        .outputs(json)
                        .observed(&mut groups);
                    part.run_with(&mut run, frame, &mut got).unwrap();
                    let what = format!("{mode:?} {engine:?} fusion {on}, frame {f}");
                    assert_eq!(got.blur, want.blur, "{what}");
                    assert_eq!(got.scene, want.scene, "{what}");
                    assert_eq!(got.roi, want.roi, "{what}");
                }
                let what = format!("{mode:?} {engine:?} fusion {on}");
                let runs = frames.len() - 1;
                match (whole, on) {
                    // Both groups (the five kernels reading `gray`, and
                    // `fused`) on every frame after the first.
                    (true, true) => {
                        assert_eq!((groups.fused, groups.declined), (2 * runs, 0), "{what}")
                    }
                    (_, false) => assert_eq!(groups.fused, 0, "{what}"),
                    // No group of the full graph runs whole: nothing is
                    // grouped at all.
                    (false, true) => assert_eq!((groups.fused, groups.declined), (0, 0), "{what}"),
                }
            }
        }
    }
}

cortex_graph! {
    /// Groups reading values computed outside them: one returned by value
    /// (`gray`), one filled into the pipeline's buffer (`copy`).
    #[parallel]
    pipeline OutsideReads {
        input frame: RgbFrame;
        node gray = ops::to_gray(frame)?;
        node copy: GrayImage = ops::to_gray_into(frame, &mut copy)?;
        #[compilable(strip = InvertStrip)]
        node inverted: GrayImage = invert_into(gray, &mut inverted)?;
        #[compilable(strip = InvertStrip)]
        node back: GrayImage = invert_into(inverted, &mut back)?;
        #[compilable(strip = InvertStrip)]
        node other: GrayImage = invert_into(copy, &mut other)?;
        output inverted: GrayImage, back: GrayImage, other: GrayImage;
    }
}

/// A plan-driven run whose groups read values from outside them runs them
/// fused, reading those values; its outputs are the closed forms
/// (`255 - gray` and `gray` again) and the unfused run's.
#[test]
fn a_plan_driven_group_reads_the_values_computed_outside_it() {
    use cortex::run::{Engine, OutputSet};
    let ir = OutsideReads::ir();
    let clip = SyntheticClip::new(64, 48);
    for read in [
        &["back", "other"][..],
        &["inverted", "back", "other"],
        &["other"],
    ] {
        let set = OutputSet::named(ir, read).unwrap();
        for engine in [Engine::Sequential, Engine::Parallel] {
            let (mut part, mut plain) = (OutsideReads::new(), OutsideReads::new());
            part.set_fusion(true);
            plain.set_fusion(false);
            let first = clip.frame(0).mapv(|v| v.max(1));
            let mut got = part.run(OutsideReadsMode::Full, &first).unwrap();
            let mut groups = Groups::default();
            for f in 1..4 {
                let frame = clip.frame(f).mapv(|v| v.max(1));
                let want = plain.run(OutsideReadsMode::Full, &frame).unwrap();
                let mut run = Run::mode(OutsideReadsMode::Full)
                    .engine(engine)
                    .outputs(set)
                    .observed(&mut groups);
                part.run_with(&mut run, &frame, &mut got).unwrap();
                let gray = ops::to_gray(&frame).unwrap();
                let what = format!("reading {read:?}, {engine:?}, frame {f}");
                if set.contains(1) {
                    assert_eq!(got.back, gray, "{what}");
                    assert_eq!(got.back, want.back, "{what}");
                }
                assert_eq!(got.other, gray.mapv(|v| 255 - v), "{what}");
                assert_eq!(got.other, want.other, "{what}");
            }
            assert!(
                groups.fused >= 3,
                "reading {read:?}, {engine:?}: {} fused",
                groups.fused
            );
            assert_eq!(groups.declined, 0, "reading {read:?}, {engine:?}");
        }
    }
}

#[test]
fn a_rated_mode_keeps_its_trigger_work_in_groups_of_its_own() {
    use cortex::passes::rates::shown_fusion_plan;
    let ir = L2::ir();
    let id = |n: &str| ir.node_id(n).unwrap();
    let together = |mode: L2Mode, a: &str, b: &str| {
        let f = shown_fusion_plan(ir, mode.plan());
        f.group_of(id(a)).is_some() && f.group_of(id(a)) == f.group_of(id(b))
    };
    // BALANCED has no rates: the SSIM and the Laplacian run in one group.
    assert!(together(L2Mode::Balanced, "scene", "laplacian"));
    // POWER_SAVE decides its phase on `scene.changed`: `gray` and `scene`
    // form their own group; the Laplacian and the centre prior, which read
    // only `gray`, are fused apart from it.
    assert!(together(L2Mode::PowerSave, "gray", "scene"));
    assert!(!together(L2Mode::PowerSave, "scene", "laplacian"));
    assert!(!together(L2Mode::PowerSave, "gray", "center"));
}

#[test]
fn run_weights_with_a_modes_zero_pattern_runs_that_modes_fused_groups() {
    use crate::common::l2_fresh::L2Fresh;
    let table = |wc: f64, wt: f64, ws: f64, wm: f64| {
        Weights::new()
            .with("wc", wc)
            .with("wt", wt)
            .with("ws", ws)
            .with("wm", wm)
    };
    // BALANCED's zero pattern (none zero) with other values, then TEXT_FOCUS's
    // (wm zero), then a pattern no mode has (wc zero), then BALANCED's again
    // with new values: the groups are built again for new weights.
    let tables = [
        table(0.1, 0.5, 0.3, 0.1),
        table(0.3, 0.3, 0.4, 0.0),
        table(0.0, 0.5, 0.25, 0.25),
        table(0.25, 0.25, 0.25, 0.25),
    ];
    let (mut fused, mut reference) = (L2::new(), L2Fresh::new());
    for (f, (_, frame)) in frames().into_iter().enumerate() {
        let k = (f / 5) % tables.len();
        let mut groups = Groups::default();
        let got = fused.run_with_fresh(&mut Run::weights(&tables[k]).observed(&mut groups), &frame);
        let want = reference.run_with_fresh(&mut Run::weights(&tables[k]), &frame);
        match (&got, &want) {
            (Ok(g), Ok(w)) => {
                assert_eq!(g.fused, w.fused, "frame {f}, table {k}");
                assert_eq!(g.blur, w.blur, "frame {f}, table {k}");
                assert_eq!(g.roi, w.roi, "frame {f}, table {k}");
                assert_eq!(g.regions, w.regions, "frame {f}, table {k}");
            }
            (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string(), "frame {f}"),
            _ => panic!("frame {f}: {} vs {}", got.is_ok(), want.is_ok()),
        }
        if let (Ok(_), true) = (&got, frame.dim().0 >= 16) {
            // Frame 0 of each size has no previous frame and its group
            // declines; after that, a mode's pattern runs fused groups and
            // the other pattern none.
            let expect_groups = k != 2;
            assert_eq!(
                groups.fused + groups.declined > 0,
                expect_groups,
                "frame {f}, table {k}"
            );
        }
    }
}
