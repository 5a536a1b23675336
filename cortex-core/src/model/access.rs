//! How a strip kernel reads its inputs ([`Kind`], [`Window`]) and what a
//! node declares of its strip form ([`StripShape`]): what the fusion pass
//! needs to know of an op to decide what may share a strip, without the
//! kernel itself.

/// Rows of context a kernel reads above and below each output row (in its
/// inputs' rows, after mapping an output row to the input rows it covers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Window {
    /// Rows read above.
    pub above: usize,
    /// Rows read below.
    pub below: usize,
}

impl Window {
    /// No context: each output row reads only its own input rows.
    pub const ZERO: Window = Window { above: 0, below: 0 };

    /// `rows` above and below (a `2·rows + 1`-tall stencil).
    pub const fn symmetric(rows: usize) -> Window {
        Window {
            above: rows,
            below: rows,
        }
    }
}

/// What kind of op a strip kernel is. The executor needs only the window;
/// the kind tells the tools and the fusion pass what can share a strip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Each output pixel from the same pixel of the inputs.
    Pointwise,
    /// Each output row from a window of input rows around it.
    Stencil(Window),
    /// Output of another height than the input: output row `y` of an `H`-row
    /// output reads input rows `y·h/H ..= (y+1)·h/H` of an `h`-row input
    /// (the ratio `H/h` comes from the geometries), widened by the window.
    Resample(Window),
    /// A value folded from every row: one partial per input row, folded in
    /// row order once every strip is done, so the result is the same for any
    /// strip count. Its result leaves the group.
    Reduction(Window),
}

impl Kind {
    /// The rows of context it reads.
    pub const fn window(self) -> Window {
        match self {
            Kind::Pointwise => Window::ZERO,
            Kind::Stencil(w) | Kind::Resample(w) | Kind::Reduction(w) => w,
        }
    }

    /// A short name for listings: `pointwise`, `stencil ±a/b`, ….
    pub fn describe(self) -> String {
        let w = self.window();
        match self {
            Kind::Pointwise => "pointwise".into(),
            Kind::Stencil(_) => format!("stencil -{}/+{}", w.above, w.below),
            Kind::Resample(_) => format!("resample -{}/+{}", w.above, w.below),
            Kind::Reduction(_) => format!("reduction -{}/+{}", w.above, w.below),
        }
    }
}

/// What a node declares of its strip form (`#[compilable(strip = …)]` or
/// `#[compilable(reduce = …)]`): all the fusion pass needs to know to
/// group it, since a reduction's result needs every row and so cannot be
/// read inside the strip that produced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StripShape {
    /// Each output row from a window of input rows (pointwise, stencil or
    /// resample): its consumers may share its strips.
    Map,
    /// A value folded from every row: it leaves the group.
    Reduction,
}

impl StripShape {
    /// The DSL key declaring it: `strip` or `reduce`.
    pub const fn key(self) -> &'static str {
        match self {
            StripShape::Map => "strip",
            StripShape::Reduction => "reduce",
        }
    }
}

impl From<Kind> for StripShape {
    fn from(kind: Kind) -> StripShape {
        match kind {
            Kind::Reduction(_) => StripShape::Reduction,
            _ => StripShape::Map,
        }
    }
}

/// Per member of a fused group (members indexed in the group's order):
/// whether it may decline a frame alone while the rest of the group runs
/// fused. It may when its value leaves the group (`leaving[i]`), no member
/// reads it, and every member value it reads leaves the group too — so its
/// own whole-frame call can run after the group from values that exist
/// outside it. `reads[i]` lists the members member `i` reads. The one rule
/// the macro's code generation and the runtime's fused groups both apply.
pub fn may_decline_alone(leaving: &[bool], reads: &[Vec<usize>]) -> Vec<bool> {
    let mut read = vec![false; leaving.len()];
    for r in reads {
        for &j in r {
            if let Some(x) = read.get_mut(j) {
                *x = true;
            }
        }
    }
    (0..leaving.len())
        .map(|i| {
            leaving[i]
                && !read[i]
                && reads
                    .get(i)
                    .is_none_or(|r| r.iter().all(|&j| leaving.get(j).copied().unwrap_or(false)))
        })
        .collect()
}
