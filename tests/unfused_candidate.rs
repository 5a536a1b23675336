//! The strip tuner's unfused candidate on L2: with every group's setting
//! `unfused` (forced by the policy, as the tuner decides for a group that
//! gains nothing from fusing), the macro-compiled L2 and the L2 built at run
//! time from `examples/graphs/l2.json` both run each group's members over
//! whole frames inside the group — no strip, no member's own call except
//! the members that decline a frame alone — and give bit for bit what
//! fusion off gives, in every mode, over a clip with a cut and a blurred
//! stretch, on the sequential and parallel engines.
//!
//! One test in its own binary: the policy is the process's.
#![cfg(feature = "runner")]

use std::sync::Arc;

use cortex::dynamic::{DynOutputs, DynPipeline, GraphFile, Value};
use cortex::l2::{L2Mode, L2Outputs, L2};
use cortex::model::ir::NodeId;
use cortex::prelude::Observer;
use cortex::runner::sources::SyntheticClip;
use cortex::strip::tune::{self, StripPolicy};
use cortex::Pipeline;
use cortex::Run;

/// Group ends and members' own calls, per frame.
#[derive(Default)]
struct Events {
    members: Vec<NodeId>,
    fused: usize,
    declined: usize,
    /// Members' own calls after their group ran (declined alone).
    own: Vec<NodeId>,
}

impl Events {
    /// Every group of frame `frame` ran (unfused, inside the group): none
    /// declined, and a member declined alone only on the first frame (one
    /// reading the previous frame).
    fn ran_in_groups(&self, frame: usize, what: &str) {
        assert!(self.fused >= 1, "{what}: {} groups", self.fused);
        assert_eq!(self.declined, 0, "{what}");
        if frame > 0 {
            assert!(self.own.is_empty(), "{what}: own calls {:?}", self.own);
        }
    }
}

impl Observer for Events {
    fn group_begin(&mut self, members: &'static [NodeId]) {
        self.members.extend_from_slice(members);
    }
    fn group_end(&mut self, fused: bool) {
        if fused {
            self.fused += 1;
        } else {
            self.declined += 1;
        }
    }
    fn node_begin(&mut self, node: NodeId) {
        if self.members.contains(&node) {
            self.own.push(node);
        }
    }
}

/// Outputs compared bit for bit: floats by their bits, the rest by their
/// full `Debug` text (which prints every float so it reads back exactly).
fn key(o: &L2Outputs) -> String {
    let bits: Vec<u32> = o.fused.iter().map(|v| v.to_bits()).collect();
    format!(
        "{:?} {:?} {:?} {:?} {:?} {:?}",
        o.fused.dim(),
        bits,
        o.blur,
        o.scene,
        o.roi,
        o.qp_map
    )
}

fn dyn_key(o: &DynOutputs) -> String {
    let get = |name: &str| o.value(name).unwrap_or_else(|| panic!("no {name}"));
    let fused = get("fused")
        .downcast_ref::<cortex::ops::ScoreMap>()
        .expect("a ScoreMap");
    let bits: Vec<u32> = fused.iter().map(|v| v.to_bits()).collect();
    format!(
        "{:?} {:?} {:?} {:?} {:?} {:?}",
        fused.dim(),
        bits,
        get("blur")
            .downcast_ref::<cortex::l2::BlurVerdict>()
            .expect("blur"),
        get("scene")
            .downcast_ref::<cortex::ops::SceneChange>()
            .expect("scene"),
        get("roi")
            .downcast_ref::<cortex::ops::EncodedRoi>()
            .expect("roi"),
        get("qp_map")
            .downcast_ref::<cortex::ops::qp_map::QpMap>()
            .expect("qp_map"),
    )
}

fn from_file() -> DynPipeline {
    GraphFile::parse(include_str!("../examples/graphs/l2.json"))
        .expect("reads")
        .build(&cortex::library::vision_ops())
        .expect("builds")
}

#[test]
fn l2_with_every_group_unfused_is_bit_identical_compiled_and_at_run_time() {
    tune::set_cache_path(None);
    tune::set_policy(Some(StripPolicy::Unfused));
    let clip = SyntheticClip::new(160, 120);
    // Frames 8–27: the blurred stretch (10–15) and the cut (24).
    let frames: Vec<_> = (8..28).map(|f| clip.frame(f)).collect();
    for &mode in L2Mode::ALL {
        let mut plain = L2::new();
        plain.set_fusion(false);
        let (mut compiled, mut compiled_par) = (L2::new(), L2::new());
        let (mut dynamic, mut dynamic_par) = (from_file(), from_file());
        assert!(compiled.fusion() && dynamic.fusion());
        for (i, frame) in frames.iter().enumerate() {
            let what = format!("{mode:?} frame {i}");
            let want = key(&plain.run(mode, frame).expect("plain"));
            let mut events = Events::default();
            let got = compiled
                .run_with_fresh(&mut Run::mode(mode).observed(&mut events), frame)
                .expect("compiled");
            assert_eq!(key(&got), want, "{what}: compiled");
            events.ran_in_groups(i, &format!("{what}: compiled"));
            let got = compiled_par
                .run_with_fresh(&mut Run::mode(mode).parallel(), frame)
                .expect("compiled parallel");
            assert_eq!(key(&got), want, "{what}: compiled parallel");
            let input: Value = Arc::new(frame.clone());
            let mut events = Events::default();
            let got = dynamic
                .run_with_fresh(
                    &mut Run::mode(mode as usize).observed(&mut events),
                    std::slice::from_ref(&input),
                )
                .expect("run time");
            assert_eq!(dyn_key(&got), want, "{what}: run time");
            events.ran_in_groups(i, &format!("{what}: run time"));
            let got = dynamic_par
                .run_with_fresh(
                    &mut Run::mode(mode as usize).parallel(),
                    std::slice::from_ref(&input),
                )
                .expect("run time parallel");
            assert_eq!(dyn_key(&got), want, "{what}: run time parallel");
        }
    }
    tune::set_policy(None);
}
