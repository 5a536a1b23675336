//! Every op of the [`L2`](crate::l2::L2) graph (and of
//! [`L2Fresh`](crate::l2::L2Fresh)) for graphs built at run time
//! ([`cortex_core::dynamic`]): registered under the paths L2 calls them by,
//! with the parameter constants it passes, the initial values of its
//! states and the `scene.changed` field its rates trigger on, and the
//! strip forms L2 declares (`#[compilable(strip = …)]`), so its fused
//! groups run through the strip executor. A graph file naming these runs
//! the same kernels as the compiled L2.

use cortex_core::dynamic::{Call, FormArgs, Ops};
use cortex_core::error::NodeFailure;

use crate::l2::{blur_verdict, BlurVerdict};
use crate::ops::qp_map::{self, QpMap, QpMapParams};
use crate::ops::roi_regions::{self, RegionParams, RoiRegions};
use crate::ops::strip::{BlurForm, CenterForm, FusionForm, GrayStrip, MotionForm, SceneForm};
use crate::ops::text_roi::{self, TextRoiParams};
use crate::ops::{
    self, BlurParams, BlurReport, CenterParams, EncodedRoi, EncoderParams, GrayImage, MotionParams,
    RgbFrame, SaliencyParams, SceneChange, SceneParams, ScoreMap,
};

type Done = Result<(), NodeFailure>;

/// A registry holding every op, constant and trigger field of L2, as L2
/// spells them.
pub fn l2_ops() -> Ops {
    let mut o = Ops::new();
    register_l2_ops(&mut o);
    o
}

/// Adds L2's ops, constants and trigger fields to `ops`.
pub fn register_l2_ops(o: &mut Ops) {
    // Buffer-filling forms, as `L2` calls them.
    o.op("ops::to_gray_into", |c: &mut Call<'_>| -> Done {
        let frame = c.arg::<RgbFrame>(0)?;
        Ok(ops::to_gray_into(frame, c.fill::<GrayImage>()?)?)
    });
    o.op("ops::center_crop_into", |c: &mut Call<'_>| -> Done {
        let (gray, p) = (c.arg::<GrayImage>(0)?, c.arg::<CenterParams>(1)?);
        Ok(ops::center_crop_into(gray, p, c.fill::<ScoreMap>()?)?)
    });
    o.op("ops::text_roi::text_map_into", |c: &mut Call<'_>| -> Done {
        let (gray, p) = (c.arg::<GrayImage>(0)?, c.arg::<TextRoiParams>(1)?);
        Ok(text_roi::text_map_into(gray, p, c.fill::<ScoreMap>()?)?)
    });
    o.op("ops::saliency_dft_into", |c: &mut Call<'_>| -> Done {
        let (gray, p) = (c.arg::<GrayImage>(0)?, c.arg::<SaliencyParams>(1)?);
        Ok(ops::saliency_dft_into(gray, p, c.fill::<ScoreMap>()?)?)
    });
    o.op("ops::motion_map_into", |c: &mut Call<'_>| -> Done {
        let (cur, prev) = (c.arg::<GrayImage>(0)?, c.arg::<GrayImage>(1)?);
        let p = c.arg::<MotionParams>(2)?;
        Ok(ops::motion_map_into(cur, prev, p, c.fill::<ScoreMap>()?)?)
    });
    o.op("ops::score_fusion_into", |c: &mut Call<'_>| -> Done {
        let maps = fusion_inputs(c)?;
        let w = c.weights();
        Ok(ops::score_fusion_into(
            maps[0],
            maps[1],
            maps[2],
            maps[3],
            w,
            c.fill::<ScoreMap>()?,
        )?)
    });
    o.op("ops::encode_roi_into", |c: &mut Call<'_>| -> Done {
        let (frame, score) = (c.arg::<RgbFrame>(0)?, c.arg::<ScoreMap>(1)?);
        let p = c.arg::<EncoderParams>(2)?;
        Ok(ops::encode_roi_into(
            frame,
            score,
            p,
            c.fill::<EncodedRoi>()?,
        )?)
    });
    o.op(
        "ops::roi_regions::roi_regions_into",
        |c: &mut Call<'_>| -> Done {
            let (score, p) = (c.arg::<ScoreMap>(0)?, c.arg::<RegionParams>(1)?);
            Ok(roi_regions::roi_regions_into(
                score,
                p,
                c.fill::<RoiRegions>()?,
            )?)
        },
    );
    o.op("ops::qp_map::qp_map_into", |c: &mut Call<'_>| -> Done {
        let (score, blur) = (c.arg::<ScoreMap>(0)?, c.arg::<BlurVerdict>(1)?);
        let p = c.arg::<QpMapParams>(2)?;
        Ok(qp_map::qp_map_into(score, blur, p, c.fill::<QpMap>()?)?)
    });
    // Value-returning forms, as `L2Fresh` calls them.
    o.op("ops::to_gray", |c: &mut Call<'_>| -> Done {
        let v = ops::to_gray(c.arg::<RgbFrame>(0)?)?;
        c.put(v);
        Ok(())
    });
    o.op("ops::blur_detector", |c: &mut Call<'_>| -> Done {
        let v = ops::blur_detector(c.arg::<GrayImage>(0)?)?;
        c.put(v);
        Ok(())
    });
    o.op("ops::scene_change", |c: &mut Call<'_>| -> Done {
        let v = ops::scene_change(c.arg::<GrayImage>(0)?, c.arg::<GrayImage>(1)?)?;
        c.put(v);
        Ok(())
    });
    o.op("blur_verdict", |c: &mut Call<'_>| -> Done {
        let report = c.arg::<BlurReport>(0)?;
        let v = blur_verdict(report, c.arg::<SceneChange>(1)?, c.arg::<BlurVerdict>(2)?);
        c.put(v);
        Ok(())
    });
    o.op("ops::center_crop", |c: &mut Call<'_>| -> Done {
        let v = ops::center_crop(c.arg::<GrayImage>(0)?)?;
        c.put(v);
        Ok(())
    });
    o.op("ops::text_roi::text_map", |c: &mut Call<'_>| -> Done {
        let v = text_roi::text_map(c.arg::<GrayImage>(0)?)?;
        c.put(v);
        Ok(())
    });
    o.op("ops::saliency_dft", |c: &mut Call<'_>| -> Done {
        let v = ops::saliency_dft(c.arg::<GrayImage>(0)?)?;
        c.put(v);
        Ok(())
    });
    o.op("ops::motion_map", |c: &mut Call<'_>| -> Done {
        let v = ops::motion_map(c.arg::<GrayImage>(0)?, c.arg::<GrayImage>(1)?)?;
        c.put(v);
        Ok(())
    });
    o.op("ops::score_fusion", |c: &mut Call<'_>| -> Done {
        let m = fusion_inputs(c)?;
        let v = ops::score_fusion(m[0], m[1], m[2], m[3], c.weights())?;
        c.put(v);
        Ok(())
    });
    o.op("ops::encode_roi", |c: &mut Call<'_>| -> Done {
        let v = ops::encode_roi(c.arg::<RgbFrame>(0)?, c.arg::<ScoreMap>(1)?)?;
        c.put(v);
        Ok(())
    });
    o.op(
        "ops::roi_regions::roi_regions",
        |c: &mut Call<'_>| -> Done {
            let v = roi_regions::roi_regions(c.arg::<ScoreMap>(0)?)?;
            c.put(v);
            Ok(())
        },
    );
    o.op("ops::qp_map::qp_map", |c: &mut Call<'_>| -> Done {
        let v = qp_map::qp_map(c.arg::<ScoreMap>(0)?, c.arg::<BlurVerdict>(1)?)?;
        c.put(v);
        Ok(())
    });
    register_l2_forms(o);
    o.constant("CenterParams::DEFAULT", CenterParams::DEFAULT)
        .constant("TextRoiParams::DEFAULT", TextRoiParams::DEFAULT)
        .constant("SaliencyParams::DEFAULT", SaliencyParams::DEFAULT)
        .constant("MotionParams::DEFAULT", MotionParams::DEFAULT)
        .constant("EncoderParams::DEFAULT", EncoderParams::DEFAULT)
        .constant("RegionParams::DEFAULT", RegionParams::DEFAULT)
        .constant("QpMapParams::DEFAULT", QpMapParams::DEFAULT)
        .constant("GrayImage::zeros((0, 0))", GrayImage::zeros((0, 0)))
        .constant("BlurVerdict::INITIAL", BlurVerdict::INITIAL)
        .flag::<SceneChange>("changed", |s| s.changed);
    // What the runner shows of each: the library's views.
    crate::library::register_vision_types(o);
}

/// The strip forms of L2's fusable ops, as `L2` declares them (the types
/// its groups read as planes are the library's). An op taking parameters gets its form
/// from the node's constant: a node passing parameters of another type
/// runs its own call.
fn register_l2_forms(o: &mut Ops) {
    o.strip("ops::to_gray_into", |_: &FormArgs<'_>| Some(GrayStrip))
        .strip("ops::blur_detector", |_: &FormArgs<'_>| {
            Some(BlurForm(BlurParams::DEFAULT))
        })
        .strip("ops::scene_change", |_: &FormArgs<'_>| {
            Some(SceneForm(SceneParams::DEFAULT))
        })
        .strip("ops::center_crop_into", |a: &FormArgs<'_>| {
            a.constant::<CenterParams>(1).map(|p| CenterForm(*p))
        })
        .strip("ops::motion_map_into", |a: &FormArgs<'_>| {
            a.constant::<MotionParams>(2).map(|p| MotionForm(*p))
        })
        .strip("ops::score_fusion_into", |_: &FormArgs<'_>| {
            Some(FusionForm)
        });
}

/// The four weighted maps of a fusion node: each absent when its producer
/// does not run.
fn fusion_inputs<'a>(c: &Call<'a>) -> Result<[Option<&'a ScoreMap>; 4], NodeFailure> {
    Ok([
        c.opt::<ScoreMap>(0)?,
        c.opt::<ScoreMap>(1)?,
        c.opt::<ScoreMap>(2)?,
        c.opt::<ScoreMap>(3)?,
    ])
}
