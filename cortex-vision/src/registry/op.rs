//! Ops and kernels: an op is a typed interface (its arguments, its output,
//! how a call maps to a problem shape), a kernel one implementation of it
//! with what it supports and the backend it needs.

use std::fmt;

use crate::ops::OpsError;

/// A typed interface the registry dispatches: every kernel of the op takes
/// the same arguments and returns the same output.
///
/// Implement it for a marker type, beside the op's kernels (the vision ops
/// declare theirs with `registry_op!` in their own files of
/// [`crate::ops`], next to their descriptors). Kernels must agree on their results within the op's
/// documented tolerance (the OpenCV kernels of the L2 ops are held to the
/// pure-Rust ones by `cortex-vision/tests/kernels/opencv.rs`).
pub trait Op: Sized + 'static {
    /// The op's name: the key of its decisions in the cache and the report,
    /// and the last segment of its DSL path (`registry::ops::NAME`).
    const NAME: &'static str;
    /// Which kernels measurement may choose ([`Policy`]): by default any
    /// the rules leave.
    const POLICY: Policy = Policy::MeasureAll;
    /// The arguments of one call (references to the node's inputs).
    type Args<'a>;
    /// What a call fills: every kernel writes its result into a caller's
    /// value, reusing what it holds (a buffer of the right size is filled
    /// without allocating); an owned call starts from `Default`.
    type Output: Default;
    /// The problem shape of a call: decisions are made and cached per shape.
    fn shape(args: &Self::Args<'_>) -> Shape;
    /// The memory layout of the call's images; kernels that need the
    /// standard (row-major, contiguous) layout are ruled out otherwise.
    fn layout(_args: &Self::Args<'_>) -> Layout {
        Layout::Standard
    }
    /// The kernels of the op, in order of preference when times tie (the
    /// pure-Rust kernel first, so that a tie keeps the default build's code).
    fn kernels() -> Vec<Kernel<Self>>;
}

/// A kernel's entry point: one plain function pointer, so that dispatch
/// after selection is a pointer call. It writes the call's result into the
/// caller's output (reusing its allocations); on an error the output is
/// unspecified and the next kernel overwrites it.
pub type KernelFn<O> =
    for<'a> fn(&<O as Op>::Args<'a>, &mut <O as Op>::Output) -> Result<(), OpsError>;

/// One implementation of op `O`.
pub struct Kernel<O: Op> {
    /// Its name, unique within the op (`pure-rust`, `opencv`, `turbojpeg`).
    pub name: &'static str,
    /// The backend it needs.
    pub backend: Backend,
    /// What it supports.
    pub supports: Supports,
    /// Its results are the pure-Rust kernel's bit for bit (held by a
    /// test), not merely within the op's tolerance; the pure kernel is.
    /// Read by the op's [`Policy`].
    pub exact: bool,
    /// Its entry point.
    pub run: KernelFn<O>,
}

impl<O: Op> Kernel<O> {
    /// The same kernel, declared bit-identical to the pure-Rust one.
    pub fn exact(self) -> Self {
        Kernel {
            exact: true,
            ..self
        }
    }

    /// Runs the kernel alone (no registry) into a new output.
    ///
    /// # Errors
    /// The kernel's error.
    pub fn call(&self, args: &O::Args<'_>) -> Result<O::Output, OpsError> {
        let mut out = O::Output::default();
        (self.run)(args, &mut out)?;
        Ok(out)
    }
}

// Manual impls: a derive would require `O: Clone`, which marker types need not be.
impl<O: Op> Clone for Kernel<O> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<O: Op> Copy for Kernel<O> {}

impl<O: Op> fmt::Debug for Kernel<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("op", &O::NAME)
            .field("name", &self.name)
            .field("backend", &self.backend)
            .field("supports", &self.supports)
            .field("exact", &self.exact)
            .finish()
    }
}

/// An op's determinism policy: which of its kernels the registry may
/// choose by measurement, where the choice follows the machine's load and
/// so may differ from run to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Any kernel the rules leave: the kernels agree within the op's
    /// documented tolerance, and the fastest is worth a result that may
    /// differ in the last bits between machines or runs.
    MeasureAll,
    /// Only kernels bit-identical to the pure-Rust one
    /// ([`Kernel::exact`]), so results never depend on a measurement; the
    /// others run only when chosen explicitly (forced, or their backend
    /// preferred) and stay fallbacks otherwise.
    MeasureExact,
}

/// The library a kernel runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The crate's own kernels (always built with the `ops` feature).
    PureRust,
    /// OpenCV 4.x (feature `opencv`).
    OpenCv,
    /// libjpeg-turbo (feature `turbojpeg`).
    TurboJpeg,
    /// Any other implementation (user or test kernels).
    Other(&'static str),
}

impl Backend {
    /// Its name in reports and preferences.
    pub fn name(self) -> &'static str {
        match self {
            Backend::PureRust => "pure-rust",
            Backend::OpenCv => "opencv",
            Backend::TurboJpeg => "turbojpeg",
            Backend::Other(name) => name,
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The memory layout of a call's images.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Row-major and contiguous (what `ndarray` allocates).
    Standard,
    /// Anything else (a strided view, a transposed array).
    Strided,
}

pub use cortex_core::autotune::CpuFeature;

/// What a kernel supports; the first rule of selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Supports {
    /// Smallest width and height it accepts.
    pub min_side: usize,
    /// Largest width it accepts.
    pub max_width: usize,
    /// Largest height it accepts.
    pub max_height: usize,
    /// Whether it accepts strided images (else only [`Layout::Standard`]).
    pub strided: bool,
    /// CPU features it needs.
    pub cpu: &'static [CpuFeature],
}

impl Supports {
    /// Any size from 1 pixel, any layout, no CPU feature.
    pub const ANY: Supports = Supports {
        min_side: 1,
        max_width: usize::MAX,
        max_height: usize::MAX,
        strided: true,
        cpu: &[],
    };

    /// Why it does not support `shape` in `layout` on this CPU, or `None`.
    pub fn refuses(&self, shape: &Shape, layout: Layout) -> Option<String> {
        if shape.width < self.min_side || shape.height < self.min_side {
            return Some(format!("smaller than {} pixels per side", self.min_side));
        }
        if shape.width > self.max_width || shape.height > self.max_height {
            return Some(format!(
                "larger than {}x{}",
                self.max_width, self.max_height
            ));
        }
        if layout == Layout::Strided && !self.strided {
            return Some("needs the standard layout".into());
        }
        if let Some(f) = self.cpu.iter().find(|f| !f.detected()) {
            return Some(format!("needs {}", f.name()));
        }
        None
    }
}

/// The problem shape of a call: decisions are made, cached and reported per
/// shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shape {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// A variant of the problem that costs differently at the same size
    /// (e.g. `first-frame` when a two-frame op has no previous frame yet);
    /// empty for none.
    pub tag: &'static str,
}

impl Shape {
    /// A `width × height` problem without a tag.
    pub const fn new(width: usize, height: usize) -> Shape {
        Shape {
            width,
            height,
            tag: "",
        }
    }

    /// The same size with a tag.
    pub const fn tagged(self, tag: &'static str) -> Shape {
        Shape { tag, ..self }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)?;
        if !self.tag.is_empty() {
            write!(f, " {}", self.tag)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_prints_its_tag() {
        assert_eq!(Shape::new(640, 480).to_string(), "640x480");
        assert_eq!(
            Shape::new(640, 480).tagged("first-frame").to_string(),
            "640x480 first-frame"
        );
    }

    #[test]
    fn supports_names_the_rule_that_refuses() {
        let s = Supports {
            min_side: 8,
            max_width: 100,
            max_height: 50,
            strided: false,
            cpu: &[],
        };
        assert_eq!(s.refuses(&Shape::new(64, 32), Layout::Standard), None);
        assert!(s.refuses(&Shape::new(4, 32), Layout::Standard).is_some());
        assert!(s.refuses(&Shape::new(101, 32), Layout::Standard).is_some());
        assert!(s.refuses(&Shape::new(64, 51), Layout::Standard).is_some());
        let why = s.refuses(&Shape::new(64, 32), Layout::Strided);
        assert_eq!(why.as_deref(), Some("needs the standard layout"));
        assert_eq!(
            Supports::ANY.refuses(&Shape::new(1, 1), Layout::Strided),
            None
        );
    }
}
