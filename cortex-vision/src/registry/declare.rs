//! How an op declares itself to the registry, beside its kernel in
//! [`crate::ops`]: [`registry_op!`] makes its marker type and [`Op`] impl
//! (name, arguments, output, shape, layout, determinism policy and one line
//! per kernel), the backend constructors make its kernels, and
//! [`kernel_labels`] gives its descriptor the kernels to list. Nothing else
//! names an op's kernels.

use super::op::{Backend, Kernel, KernelFn, Layout, Op, Policy, Shape, Supports};
use crate::ops::{GrayImage, OpsError, RgbFrame};

/// The tag of a two-frame op's shape when the previous frame is missing or
/// of another size: the kernels then return the first-frame answer at no
/// cost; that case is decided apart, so its measurement never stands for
/// the real work.
pub const FIRST_FRAME: &str = "first-frame";

/// Declares a registry op beside its kernels: a marker type, its [`Op`]
/// impl and its kernels, each kernel a backend constructor (`pure`,
/// `opencv`, …), `[exact]` when its results are the pure kernel's bit for
/// bit (a test holds it so), applied to a closure with the op's
/// entry-point signature ([`KernelFn`]: the arguments and the output to
/// fill). `policy` (default [`Policy::MeasureAll`]) says which kernels
/// measurement may choose.
macro_rules! registry_op {
    (
        $(#[$doc:meta])*
        $name:ident = $op:literal, for<$lt:lifetime> $args:ty => $out:ty;
        shape |$sa:pat_param| $shape:expr;
        $(layout |$la:pat_param| $layout:expr;)?
        $(policy $policy:ident;)?
        kernels { $($(#[$cfg:meta])* $backend:ident $([$flag:ident])? ($run:expr)),+ $(,)? }
    ) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name;

        impl $crate::registry::Op for $name {
            const NAME: &'static str = $op;
            $(const POLICY: $crate::registry::Policy = $crate::registry::Policy::$policy;)?
            type Args<$lt> = $args;
            type Output = $out;
            fn shape($sa: &Self::Args<'_>) -> $crate::registry::Shape {
                #[allow(unused_imports)]
                use $crate::registry::declare::*;
                $shape
            }
            $(fn layout($la: &Self::Args<'_>) -> $crate::registry::Layout {
                use $crate::registry::declare::*;
                $layout
            })?
            fn kernels() -> Vec<$crate::registry::Kernel<Self>> {
                use $crate::registry::declare::*;
                Vec::from([$($(#[$cfg])* $backend::<Self>($run) $(.$flag())?),+])
            }
        }
    };
}
pub(crate) use registry_op;

/// The kernels of `O` as its descriptor lists them: each kernel's name and
/// how the registry may choose it (`pure-rust`, `opencv (bit-identical)`,
/// `opencv (within tolerance, measured)`, `opencv (within tolerance,
/// explicit only)`).
pub fn kernel_labels<O: Op>() -> Vec<String> {
    O::kernels()
        .iter()
        .map(|k| match (k.backend, k.exact, O::POLICY) {
            (Backend::PureRust, _, _) => k.name.to_string(),
            (_, true, _) => format!("{} (bit-identical)", k.name),
            (_, false, Policy::MeasureAll) => format!("{} (within tolerance, measured)", k.name),
            (_, false, Policy::MeasureExact) => {
                format!("{} (within tolerance, explicit only)", k.name)
            }
        })
        .collect()
}

/// The shape of a gray image.
pub fn gray_shape(g: &GrayImage) -> Shape {
    Shape::new(g.ncols(), g.nrows())
}

/// The shape of an RGB frame.
pub fn frame_shape(f: &RgbFrame) -> Shape {
    Shape::new(f.dim().1, f.dim().0)
}

/// A two-frame op's shape: tagged [`FIRST_FRAME`] when `prev` is not of
/// `cur`'s size.
pub fn two_frame_shape(cur: &GrayImage, prev: &GrayImage) -> Shape {
    let s = gray_shape(cur);
    if prev.dim() == cur.dim() {
        s
    } else {
        s.tagged(FIRST_FRAME)
    }
}

/// The layout of a call whose images are all standard (`true`) or not.
pub fn layout_of(standard: bool) -> Layout {
    if standard {
        Layout::Standard
    } else {
        Layout::Strided
    }
}

/// The entry of a kernel that returns a new value (a small result, or a
/// backend that allocates its own): stores it in the caller's output.
///
/// # Errors
/// The kernel's.
pub fn set<T>(out: &mut T, value: Result<T, OpsError>) -> Result<(), OpsError> {
    *out = value?;
    Ok(())
}

/// The pure-Rust kernel: any size and layout; the reference the others
/// are held to.
pub fn pure<O: Op>(run: KernelFn<O>) -> Kernel<O> {
    Kernel {
        name: "pure-rust",
        backend: Backend::PureRust,
        supports: Supports::ANY,
        exact: true,
        run,
    }
}

/// An OpenCV kernel: it shares the pixels of standard-layout images only.
#[cfg(feature = "opencv")]
pub fn opencv<O: Op>(run: KernelFn<O>) -> Kernel<O> {
    Kernel {
        name: "opencv",
        backend: Backend::OpenCv,
        supports: Supports {
            strided: false,
            ..Supports::ANY
        },
        exact: false,
        run,
    }
}

/// An OpenCV kernel that copies its input first, so any layout will do.
#[cfg(feature = "opencv")]
pub fn opencv_copying<O: Op>(run: KernelFn<O>) -> Kernel<O> {
    Kernel {
        supports: Supports::ANY,
        ..opencv(run)
    }
}

/// The libjpeg-turbo kernel: it compresses in place through the frame's
/// row pitch, so standard layout only.
#[cfg(feature = "turbojpeg")]
pub fn turbojpeg<O: Op>(run: KernelFn<O>) -> Kernel<O> {
    Kernel {
        name: "turbojpeg",
        backend: Backend::TurboJpeg,
        supports: Supports {
            strided: false,
            ..Supports::ANY
        },
        exact: false,
        run,
    }
}
