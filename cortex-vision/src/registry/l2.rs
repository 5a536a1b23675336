//! The L2 ops as registry ops, each with its kernels: the pure-Rust kernels
//! of [`crate::ops`] always, the OpenCV backends of [`crate::ops::opencv`]
//! with feature `opencv`, and libjpeg-turbo for [`EncodeRoi`] with feature
//! `turbojpeg`. Every kernel uses the op's default parameters, as the L2
//! graph's nodes do.

use super::op::{Backend, Kernel, Layout, Op, Shape, Supports};
use crate::ops::{
    self, BlurReport, EncodedRoi, GrayImage, OpsError, RgbFrame, SceneChange, ScoreMap,
};
use cortex_core::weights::Weights;

/// The tag of a two-frame op's shape when the previous frame is missing or
/// of another size: the kernels then return the first-frame answer at no
/// cost; that case is decided apart, so its measurement never stands for
/// the real work.
pub const FIRST_FRAME: &str = "first-frame";

fn gray_shape(g: &GrayImage) -> Shape {
    Shape::new(g.ncols(), g.nrows())
}

fn layout_of(standard: bool) -> Layout {
    if standard {
        Layout::Standard
    } else {
        Layout::Strided
    }
}

fn pure<O: Op>(run: super::op::KernelFn<O>) -> Kernel<O> {
    Kernel {
        name: "pure-rust",
        backend: Backend::PureRust,
        supports: Supports::ANY,
        run,
    }
}

/// OpenCV shares the pixels of standard-layout images only.
#[cfg(feature = "opencv")]
const OPENCV: Supports = Supports {
    strided: false,
    ..Supports::ANY
};

#[cfg(feature = "opencv")]
fn opencv<O: Op>(run: super::op::KernelFn<O>) -> Kernel<O> {
    Kernel {
        name: "opencv",
        backend: Backend::OpenCv,
        supports: OPENCV,
        run,
    }
}

/// `to_gray`: RGB frame to 8-bit gray.
#[derive(Debug)]
pub struct ToGray;

impl Op for ToGray {
    const NAME: &'static str = "to_gray";
    type Args<'a> = &'a RgbFrame;
    type Output = GrayImage;
    fn shape(frame: &&RgbFrame) -> Shape {
        Shape::new(frame.dim().1, frame.dim().0)
    }
    fn layout(frame: &&RgbFrame) -> Layout {
        layout_of(frame.is_standard_layout())
    }
    fn kernels() -> Vec<Kernel<Self>> {
        fn rust(f: &&RgbFrame) -> Result<GrayImage, OpsError> {
            ops::to_gray(f)
        }
        #[allow(unused_mut)]
        let mut k = vec![pure::<Self>(rust)];
        #[cfg(feature = "opencv")]
        {
            fn cv(f: &&RgbFrame) -> Result<GrayImage, OpsError> {
                ops::opencv::to_gray(f)
            }
            k.push(opencv::<Self>(cv));
        }
        k
    }
}

/// `blur_detector`: variance of the Laplacian and the blur decision.
#[derive(Debug)]
pub struct BlurDetector;

impl Op for BlurDetector {
    const NAME: &'static str = "blur_detector";
    type Args<'a> = &'a GrayImage;
    type Output = BlurReport;
    fn shape(g: &&GrayImage) -> Shape {
        gray_shape(g)
    }
    fn layout(g: &&GrayImage) -> Layout {
        layout_of(g.is_standard_layout())
    }
    fn kernels() -> Vec<Kernel<Self>> {
        fn rust(g: &&GrayImage) -> Result<BlurReport, OpsError> {
            ops::blur_detector(g)
        }
        #[allow(unused_mut)]
        let mut k = vec![pure::<Self>(rust)];
        #[cfg(feature = "opencv")]
        {
            fn cv(g: &&GrayImage) -> Result<BlurReport, OpsError> {
                ops::opencv::blur_detector(g, &ops::BlurParams::default())
            }
            k.push(opencv::<Self>(cv));
        }
        k
    }
}

fn two_frame_shape(cur: &GrayImage, prev: &GrayImage) -> Shape {
    let s = gray_shape(cur);
    if prev.dim() == cur.dim() {
        s
    } else {
        s.tagged(FIRST_FRAME)
    }
}

/// `scene_change`: SSIM against the previous frame.
#[derive(Debug)]
pub struct SceneChangeOp;

impl Op for SceneChangeOp {
    const NAME: &'static str = "scene_change";
    type Args<'a> = (&'a GrayImage, &'a GrayImage);
    type Output = SceneChange;
    fn shape(a: &(&GrayImage, &GrayImage)) -> Shape {
        two_frame_shape(a.0, a.1)
    }
    fn layout(a: &(&GrayImage, &GrayImage)) -> Layout {
        layout_of(a.0.is_standard_layout() && a.1.is_standard_layout())
    }
    fn kernels() -> Vec<Kernel<Self>> {
        fn rust(a: &(&GrayImage, &GrayImage)) -> Result<SceneChange, OpsError> {
            ops::scene_change(a.0, a.1)
        }
        #[allow(unused_mut)]
        let mut k = vec![pure::<Self>(rust)];
        #[cfg(feature = "opencv")]
        {
            fn cv(a: &(&GrayImage, &GrayImage)) -> Result<SceneChange, OpsError> {
                ops::opencv::scene_change(a.0, a.1, &ops::SceneParams::default())
            }
            k.push(opencv::<Self>(cv));
        }
        k
    }
}

/// `center_crop`: the centre prior (pure Rust only).
#[derive(Debug)]
pub struct CenterCrop;

impl Op for CenterCrop {
    const NAME: &'static str = "center_crop";
    type Args<'a> = &'a GrayImage;
    type Output = ScoreMap;
    fn shape(g: &&GrayImage) -> Shape {
        gray_shape(g)
    }
    fn kernels() -> Vec<Kernel<Self>> {
        fn rust(g: &&GrayImage) -> Result<ScoreMap, OpsError> {
            ops::center_crop(g)
        }
        vec![pure::<Self>(rust)]
    }
}

/// `text_map`: the MSER text score map (pure Rust only: OpenCV's MSER
/// backend returns regions, not the map).
#[derive(Debug)]
pub struct TextMap;

impl Op for TextMap {
    const NAME: &'static str = "text_map";
    type Args<'a> = &'a GrayImage;
    type Output = ScoreMap;
    fn shape(g: &&GrayImage) -> Shape {
        gray_shape(g)
    }
    fn kernels() -> Vec<Kernel<Self>> {
        fn rust(g: &&GrayImage) -> Result<ScoreMap, OpsError> {
            ops::text_roi::text_map(g)
        }
        vec![pure::<Self>(rust)]
    }
}

/// `saliency_dft`: spectral-residual saliency.
#[derive(Debug)]
pub struct SaliencyDft;

impl Op for SaliencyDft {
    const NAME: &'static str = "saliency_dft";
    type Args<'a> = &'a GrayImage;
    type Output = ScoreMap;
    fn shape(g: &&GrayImage) -> Shape {
        gray_shape(g)
    }
    fn layout(g: &&GrayImage) -> Layout {
        layout_of(g.is_standard_layout())
    }
    fn kernels() -> Vec<Kernel<Self>> {
        fn rust(g: &&GrayImage) -> Result<ScoreMap, OpsError> {
            ops::saliency_dft(g)
        }
        #[allow(unused_mut)]
        let mut k = vec![pure::<Self>(rust)];
        #[cfg(feature = "opencv")]
        {
            fn cv(g: &&GrayImage) -> Result<ScoreMap, OpsError> {
                ops::opencv::saliency_dft(g)
            }
            k.push(opencv::<Self>(cv));
        }
        k
    }
}

/// `motion_map`: frame difference pooled on a grid.
#[derive(Debug)]
pub struct MotionMap;

impl Op for MotionMap {
    const NAME: &'static str = "motion_map";
    type Args<'a> = (&'a GrayImage, &'a GrayImage);
    type Output = ScoreMap;
    fn shape(a: &(&GrayImage, &GrayImage)) -> Shape {
        two_frame_shape(a.0, a.1)
    }
    fn layout(a: &(&GrayImage, &GrayImage)) -> Layout {
        layout_of(a.0.is_standard_layout() && a.1.is_standard_layout())
    }
    fn kernels() -> Vec<Kernel<Self>> {
        fn rust(a: &(&GrayImage, &GrayImage)) -> Result<ScoreMap, OpsError> {
            ops::motion_map(a.0, a.1)
        }
        #[allow(unused_mut)]
        let mut k = vec![pure::<Self>(rust)];
        #[cfg(feature = "opencv")]
        {
            fn cv(a: &(&GrayImage, &GrayImage)) -> Result<ScoreMap, OpsError> {
                ops::opencv::motion_map(a.0, a.1, &ops::MotionParams::default())
            }
            k.push(opencv::<Self>(cv));
        }
        k
    }
}

/// The arguments of [`ScoreFusion`]: the four maps (a weighted edge may be
/// absent) and the weights.
pub type FusionArgs<'a> = (
    Option<&'a ScoreMap>,
    Option<&'a ScoreMap>,
    Option<&'a ScoreMap>,
    Option<&'a ScoreMap>,
    &'a Weights,
);

/// `score_fusion`: the weighted sum of the score maps (pure Rust only).
#[derive(Debug)]
pub struct ScoreFusion;

impl Op for ScoreFusion {
    const NAME: &'static str = "score_fusion";
    type Args<'a> = FusionArgs<'a>;
    type Output = ScoreMap;
    fn shape(a: &FusionArgs<'_>) -> Shape {
        [a.0, a.1, a.2, a.3]
            .into_iter()
            .flatten()
            .next()
            .map_or(Shape::new(0, 0), |m| Shape::new(m.ncols(), m.nrows()))
    }
    fn kernels() -> Vec<Kernel<Self>> {
        fn rust(a: &FusionArgs<'_>) -> Result<ScoreMap, OpsError> {
            ops::score_fusion(a.0, a.1, a.2, a.3, a.4)
        }
        vec![pure::<Self>(rust)]
    }
}

/// `encode_roi`: select the region of interest, crop it, JPEG-encode it.
#[derive(Debug)]
pub struct EncodeRoi;

impl Op for EncodeRoi {
    const NAME: &'static str = "encode_roi";
    type Args<'a> = (&'a RgbFrame, &'a ScoreMap);
    type Output = EncodedRoi;
    fn shape(a: &(&RgbFrame, &ScoreMap)) -> Shape {
        Shape::new(a.0.dim().1, a.0.dim().0)
    }
    fn layout(a: &(&RgbFrame, &ScoreMap)) -> Layout {
        layout_of(a.0.is_standard_layout())
    }
    fn kernels() -> Vec<Kernel<Self>> {
        fn rust(a: &(&RgbFrame, &ScoreMap)) -> Result<EncodedRoi, OpsError> {
            ops::encode_roi(a.0, a.1)
        }
        #[allow(unused_mut)]
        let mut k = vec![pure::<Self>(rust)];
        #[cfg(feature = "opencv")]
        {
            fn cv(a: &(&RgbFrame, &ScoreMap)) -> Result<EncodedRoi, OpsError> {
                encode_roi_opencv(a.0, a.1, &ops::EncoderParams::default())
            }
            // Crops by copy, so any layout will do.
            k.push(Kernel {
                supports: Supports::ANY,
                ..opencv::<Self>(cv)
            });
        }
        #[cfg(feature = "turbojpeg")]
        {
            fn turbo(a: &(&RgbFrame, &ScoreMap)) -> Result<EncodedRoi, OpsError> {
                super::turbo::encode_roi_with(a.0, a.1, &ops::EncoderParams::default())
            }
            k.push(Kernel {
                name: "turbojpeg",
                backend: Backend::TurboJpeg,
                // Compresses the crop in place through the frame's row pitch.
                supports: Supports {
                    strided: false,
                    ..Supports::ANY
                },
                run: turbo,
            });
        }
        k
    }
}

/// `encode_roi` on OpenCV: the region from [`ops::select_roi`], the crop
/// encoded by `cv::imencode` ([`ops::opencv::encode_jpeg`]: RGB to BGR,
/// then libjpeg(-turbo) inside OpenCV).
///
/// # Errors
/// As [`ops::encode_roi_with`], or OpenCV's error.
#[cfg(feature = "opencv")]
pub fn encode_roi_opencv(
    frame: &RgbFrame,
    score: &ScoreMap,
    params: &ops::EncoderParams,
) -> Result<EncodedRoi, OpsError> {
    use ndarray::s;
    let (bbox, peak) = ops::encoder::roi_of(frame, score, params)?;
    let crop = frame
        .slice(s![
            bbox.y..bbox.y + bbox.height,
            bbox.x..bbox.x + bbox.width,
            ..
        ])
        .to_owned();
    let jpeg = ops::opencv::encode_jpeg(&crop, params.quality)?;
    Ok(EncodedRoi {
        bbox,
        score: peak,
        jpeg,
    })
}
