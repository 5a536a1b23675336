//! The L2 ops as registry ops, each with its kernels: the pure-Rust kernels
//! of [`crate::ops`] always, the OpenCV backends of [`crate::ops::opencv`]
//! with feature `opencv`, and libjpeg-turbo for [`EncodeRoi`] with feature
//! `turbojpeg`. Every kernel uses the op's default parameters, as the L2
//! graph's nodes do.
//!
//! Each op is one [`registry_op!`] declaration: its name, arguments and
//! output, how a call maps to a shape and a layout, and one line per kernel.

use super::op::{Backend, Kernel, KernelFn, Layout, Op, Shape, Supports};
#[cfg(feature = "opencv")]
use crate::ops::opencv as cv;
use crate::ops::{
    self, BlurReport, EncodedRoi, GrayImage, OpsError, RgbFrame, SceneChange, ScoreMap,
};
use cortex_core::weights::Weights;

/// The OpenCV kernel of `encode_roi`: the region from [`ops::select_roi`],
/// the crop encoded by `cv::imencode`.
#[cfg(feature = "opencv")]
pub use crate::ops::opencv::encode_roi_with as encode_roi_opencv;

/// The tag of a two-frame op's shape when the previous frame is missing or
/// of another size: the kernels then return the first-frame answer at no
/// cost; that case is decided apart, so its measurement never stands for
/// the real work.
pub const FIRST_FRAME: &str = "first-frame";

/// Declares a registry op: a marker type, its [`Op`] impl and its kernels,
/// each kernel a backend constructor (`pure`, `opencv`, …) applied to a
/// closure with the op's entry-point signature ([`KernelFn`]: the
/// arguments and the output to fill).
macro_rules! registry_op {
    (
        $(#[$doc:meta])*
        $name:ident = $op:literal, for<$lt:lifetime> $args:ty => $out:ty;
        shape |$sa:pat_param| $shape:expr;
        $(layout |$la:pat_param| $layout:expr;)?
        kernels { $($(#[$cfg:meta])* $backend:ident($run:expr)),+ $(,)? }
    ) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name;

        impl Op for $name {
            const NAME: &'static str = $op;
            type Args<$lt> = $args;
            type Output = $out;
            fn shape($sa: &Self::Args<'_>) -> Shape {
                $shape
            }
            $(fn layout($la: &Self::Args<'_>) -> Layout {
                $layout
            })?
            fn kernels() -> Vec<Kernel<Self>> {
                Vec::from([$($(#[$cfg])* $backend::<Self>($run)),+])
            }
        }
    };
}

fn gray_shape(g: &GrayImage) -> Shape {
    Shape::new(g.ncols(), g.nrows())
}

fn frame_size(f: &RgbFrame) -> Shape {
    Shape::new(f.dim().1, f.dim().0)
}

/// A two-frame op's shape: tagged [`FIRST_FRAME`] when `prev` is not of
/// `cur`'s size.
fn two_frame_shape(cur: &GrayImage, prev: &GrayImage) -> Shape {
    let s = gray_shape(cur);
    if prev.dim() == cur.dim() {
        s
    } else {
        s.tagged(FIRST_FRAME)
    }
}

/// The entry of a kernel that returns a new value (a small result, or a
/// backend that allocates its own): stores it in the caller's output.
fn set<T>(out: &mut T, value: Result<T, OpsError>) -> Result<(), OpsError> {
    *out = value?;
    Ok(())
}

fn layout_of(standard: bool) -> Layout {
    if standard {
        Layout::Standard
    } else {
        Layout::Strided
    }
}

/// The pure-Rust kernel: any size and layout.
fn pure<O: Op>(run: KernelFn<O>) -> Kernel<O> {
    Kernel {
        name: "pure-rust",
        backend: Backend::PureRust,
        supports: Supports::ANY,
        run,
    }
}

/// An OpenCV kernel: it shares the pixels of standard-layout images only.
#[cfg(feature = "opencv")]
fn opencv<O: Op>(run: KernelFn<O>) -> Kernel<O> {
    Kernel {
        name: "opencv",
        backend: Backend::OpenCv,
        supports: Supports {
            strided: false,
            ..Supports::ANY
        },
        run,
    }
}

/// An OpenCV kernel that copies its input first, so any layout will do.
#[cfg(feature = "opencv")]
fn opencv_copying<O: Op>(run: KernelFn<O>) -> Kernel<O> {
    Kernel {
        supports: Supports::ANY,
        ..opencv(run)
    }
}

/// The libjpeg-turbo kernel: it compresses in place through the frame's
/// row pitch, so standard layout only.
#[cfg(feature = "turbojpeg")]
fn turbojpeg<O: Op>(run: KernelFn<O>) -> Kernel<O> {
    Kernel {
        name: "turbojpeg",
        backend: Backend::TurboJpeg,
        supports: Supports {
            strided: false,
            ..Supports::ANY
        },
        run,
    }
}

registry_op! {
    /// `to_gray`: RGB frame to 8-bit gray.
    ToGray = "to_gray", for<'a> &'a RgbFrame => GrayImage;
    shape |f| frame_size(f);
    layout |f| layout_of(f.is_standard_layout());
    kernels {
        pure(|f, out| ops::to_gray_into(f, out)),
        #[cfg(feature = "opencv")] opencv(|f, out| set(out, cv::to_gray(f))),
    }
}

registry_op! {
    /// `blur_detector`: variance of the Laplacian and the blur decision.
    BlurDetector = "blur_detector", for<'a> &'a GrayImage => BlurReport;
    shape |g| gray_shape(g);
    layout |g| layout_of(g.is_standard_layout());
    kernels {
        pure(|g, out| set(out, ops::blur_detector(g))),
        #[cfg(feature = "opencv")] opencv(|g, out| set(out, cv::blur_detector(g, &ops::BlurParams::default()))),
    }
}

registry_op! {
    /// `scene_change`: SSIM against the previous frame.
    SceneChangeOp = "scene_change", for<'a> (&'a GrayImage, &'a GrayImage) => SceneChange;
    shape |(cur, prev)| two_frame_shape(cur, prev);
    layout |(cur, prev)| layout_of(cur.is_standard_layout() && prev.is_standard_layout());
    kernels {
        pure(|(cur, prev), out| set(out, ops::scene_change(cur, prev))),
        #[cfg(feature = "opencv")]
        opencv(|(cur, prev), out| set(out, cv::scene_change(cur, prev, &ops::SceneParams::default()))),
    }
}

registry_op! {
    /// `center_crop`: the centre prior (pure Rust only).
    CenterCrop = "center_crop", for<'a> &'a GrayImage => ScoreMap;
    shape |g| gray_shape(g);
    kernels { pure(|g, out| ops::center_crop_into(g, &ops::CenterParams::DEFAULT, out)) }
}

registry_op! {
    /// `text_map`: the MSER text score map (pure Rust only: OpenCV's MSER
    /// backend returns regions, not the map).
    TextMap = "text_map", for<'a> &'a GrayImage => ScoreMap;
    shape |g| gray_shape(g);
    kernels { pure(|g, out| ops::text_roi::text_map_into(g, &ops::text_roi::TextRoiParams::DEFAULT, out)) }
}

registry_op! {
    /// `saliency_dft`: spectral-residual saliency.
    SaliencyDft = "saliency_dft", for<'a> &'a GrayImage => ScoreMap;
    shape |g| gray_shape(g);
    layout |g| layout_of(g.is_standard_layout());
    kernels {
        pure(|g, out| ops::saliency_dft_into(g, &ops::SaliencyParams::DEFAULT, out)),
        #[cfg(feature = "opencv")] opencv(|g, out| set(out, cv::saliency_dft(g))),
    }
}

registry_op! {
    /// `motion_map`: frame difference pooled on a grid.
    MotionMap = "motion_map", for<'a> (&'a GrayImage, &'a GrayImage) => ScoreMap;
    shape |(cur, prev)| two_frame_shape(cur, prev);
    layout |(cur, prev)| layout_of(cur.is_standard_layout() && prev.is_standard_layout());
    kernels {
        pure(|(cur, prev), out| ops::motion_map_into(cur, prev, &ops::MotionParams::DEFAULT, out)),
        #[cfg(feature = "opencv")]
        opencv(|(cur, prev), out| set(out, cv::motion_map(cur, prev, &ops::MotionParams::default()))),
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

/// The shape of a fusion: the first map present (0×0 when none is).
fn fusion_shape(a: &FusionArgs<'_>) -> Shape {
    [a.0, a.1, a.2, a.3]
        .into_iter()
        .flatten()
        .next()
        .map_or(Shape::new(0, 0), |m| Shape::new(m.ncols(), m.nrows()))
}

registry_op! {
    /// `score_fusion`: the weighted sum of the score maps (pure Rust only).
    ScoreFusion = "score_fusion", for<'a> FusionArgs<'a> => ScoreMap;
    shape |a| fusion_shape(a);
    kernels { pure(|&(c, t, s, m, w), out| ops::score_fusion_into(c, t, s, m, w, out)) }
}

registry_op! {
    /// `encode_roi`: select the region of interest, crop it, JPEG-encode it.
    EncodeRoi = "encode_roi", for<'a> (&'a RgbFrame, &'a ScoreMap) => EncodedRoi;
    shape |(f, _)| frame_size(f);
    layout |(f, _)| layout_of(f.is_standard_layout());
    kernels {
        pure(|(f, s), out| ops::encode_roi_into(f, s, &ops::EncoderParams::DEFAULT, out)),
        #[cfg(feature = "opencv")]
        opencv_copying(|(f, s), out| cv::encode_roi_into(f, s, &ops::EncoderParams::DEFAULT, out)),
        #[cfg(feature = "turbojpeg")]
        turbojpeg(|(f, s), out| super::turbo::encode_roi_into(f, s, &ops::EncoderParams::DEFAULT, out)),
    }
}
