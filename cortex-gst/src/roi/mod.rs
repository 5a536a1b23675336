//! cortex inside GStreamer: a video filter element that runs any one-frame
//! cortex pipeline on every buffer, attaches the region of interest as a
//! standard `GstVideoRegionOfInterestMeta` and optionally posts the outputs
//! as an element message (feature `gstreamer`).
//!
//! # Using it with your own pipeline
//!
//! A pipeline whose only input is an [`RgbFrame`] becomes an element in two
//! steps: say how its outputs become a box, a score and message fields
//! ([`RoiPipeline`]), then generate the element type with
//! [`gst_roi_element!`](crate::gst_roi_element):
//!
//! ```rust,ignore
//! impl cortex::gst::RoiPipeline for MyPipeline {
//!     fn report(out: &MyPipelineOutputs) -> cortex::gst::RoiReport {
//!         cortex::gst::RoiReport::new(Some(my_box(out)), out.score as f64)
//!     }
//! }
//! cortex::gst::gst_roi_element! {
//!     /// My element.
//!     pub struct MyRoi {
//!         pipeline: MyPipeline,
//!         imp: my_roi_imp,
//!         type_name: "GstMyRoi",
//!         element_name: "myroi",
//!         long_name: "My ROI",
//!         description: "Scores frames with MyPipeline",
//!     }
//! }
//! // in plugin_init: MyRoi::register(Some(plugin))?;
//! ```
//!
//! [`CortexRoi`] (`cortexroi`) is the reference pipeline [`L2`] wrapped
//! this way; `examples/gstcortex.rs` makes it a loadable plugin.
//!
//! # Behaviour
//!
//! * Formats: packed 8-bit RGB, BGR, RGBx, BGRx, RGBA, BGRA (see
//!   [`meta::FORMATS`]); anything else through `videoconvert`.
//! * Properties: `mode` (a string, one of the pipeline's mode names,
//!   validated on set — a string rather than a GEnum so one generic element
//!   needs no per-pipeline enum type registration), `weights` (`k=v,…`
//!   overriding the mode's table, run with `run_weights`), `emit-messages`,
//!   `roi-strength` (the quantiser offset of the strongest region).
//! * Results: one `GstVideoRegionOfInterestMeta` per buffer, type
//!   `cortex-roi`, box clamped into the frame, parameter structure
//!   `cortex-roi` with `score`; then one per encoder region (L2's
//!   `regions`, most important first), type `cortex-region`, with the
//!   parameter structures VA-API and Media SDK encoders read, `roi/vaapi`
//!   and `roi/msdk` with `delta-qp` (see [`meta::attach_regions`]); with
//!   `emit-messages`, a `cortex-roi` element message per frame (see
//!   [`meta::message_structure`]).
//! * Errors: see [`ElementCore::transform_ip`] for the failing-frame policy
//!   and [`ElementCore::set_property`] for refused settings. A caps change
//!   (size or format) resets the pipeline's state.

use std::sync::LazyLock;

pub mod element;
pub mod meta;

pub use element::{parse_weights, ElementCore};
pub use meta::{FORMATS, ROI_TYPE};

use cortex_core::pipeline::{CompiledPipeline, Pipeline};
use cortex_vision::l2::{L2Outputs, L2};
use cortex_vision::ops::roi_regions::Region;
use cortex_vision::ops::RgbFrame;
use cortex_vision::views;

/// The element's debug category (`GST_DEBUG=cortex:5`).
pub(crate) static CAT: LazyLock<gst::DebugCategory> = LazyLock::new(|| {
    gst::DebugCategory::new(
        "cortex",
        gst::DebugColorFlags::empty(),
        Some("cortex pipeline elements"),
    )
});

/// A region of interest in pixels, `(x, y)` its top-left corner: the
/// project's one box type, the one the kernels report. The meta and the
/// element message carry its fields as `guint` (see [`meta::attach_roi`]).
pub use cortex_vision::ops::BBox as RoiBox;

/// A value in the element message.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue {
    /// A boolean (`gboolean`).
    Bool(bool),
    /// A double.
    F64(f64),
    /// An unsigned 64-bit integer (`guint64`).
    U64(u64),
    /// A string.
    Str(String),
}

/// What one frame's outputs mean to the element.
#[derive(Debug, Clone, PartialEq)]
pub struct RoiReport {
    /// The box to attach as meta; `None`: no meta on this buffer.
    pub roi: Option<RoiBox>,
    /// The box's score (the meta's `score` parameter).
    pub score: f64,
    /// Extra fields of the element message, e.g. `("blurry".into(),
    /// Bool(true))`. Names must be valid GstStructure field names (letters
    /// first).
    pub fields: Vec<(std::borrow::Cow<'static, str>, FieldValue)>,
    /// The regions an encoder should spend bits on, most important first:
    /// each becomes a meta with `roi/vaapi` and `roi/msdk` `delta-qp`.
    pub regions: Vec<Region>,
}

impl RoiReport {
    /// A report with a box and score and no extra fields.
    pub fn new(roi: Option<RoiBox>, score: f64) -> Self {
        Self {
            roi,
            score,
            fields: Vec::new(),
            regions: Vec::new(),
        }
    }

    /// Adds the fields of an output's JSON view (`cortex::views`), the same
    /// names and values the runner's JSON lines show: booleans, numbers and
    /// strings; a `null` (a value the frame does not have) is left out, as
    /// are arrays and objects (the box is the meta's).
    pub fn view(mut self, view: serde_json::Value) -> Self {
        if let serde_json::Value::Object(m) = view {
            for (name, v) in m {
                if let Some(v) = FieldValue::from_json(&v) {
                    self.fields.push((name.into(), v));
                }
            }
        }
        self
    }
}

impl FieldValue {
    /// A JSON scalar as a field: `None` for `null`, arrays and objects.
    pub fn from_json(v: &serde_json::Value) -> Option<FieldValue> {
        use serde_json::Value as J;
        match v {
            J::Bool(b) => Some(FieldValue::Bool(*b)),
            J::Number(n) => n
                .as_u64()
                .map(FieldValue::U64)
                .or_else(|| n.as_f64().map(FieldValue::F64)),
            J::String(s) => Some(FieldValue::Str(s.clone())),
            J::Null | J::Array(_) | J::Object(_) => None,
        }
    }
}

/// A pipeline the element can run: one [`RgbFrame`] in, a box and a score
/// out. `Send` because GStreamer runs the element on its streaming thread.
pub trait RoiPipeline:
    CompiledPipeline + for<'a> Pipeline<Inputs<'a> = (&'a RgbFrame,)> + Send + 'static
{
    /// Turns one frame's outputs into the meta and message content.
    fn report(outputs: &Self::Outputs) -> RoiReport;
}

impl RoiPipeline for L2 {
    /// The JPEG region's box and peak score; message fields from the views
    /// of the blur verdict, the scene change and the region, as the
    /// runner's JSON lines show them: `sharpness`, `baseline`, `blurry`,
    /// `below_100`, `ssim` (when there was a comparable previous frame),
    /// `cut`, `score` and `jpeg_bytes`.
    fn report(out: &L2Outputs) -> RoiReport {
        let mut report = RoiReport::new(Some(out.roi.bbox), f64::from(out.roi.score))
            .view(views::blur_verdict(&out.blur))
            .view(views::scene_change(&out.scene))
            .view(views::encoded_roi(&out.roi));
        report.regions = out.regions.regions.clone();
        report
    }
}

/// The sink and src pad templates of a cortex element: `video/x-raw` in
/// one of [`FORMATS`], any size and rate.
pub fn pad_templates() -> Vec<gst::PadTemplate> {
    let caps = gst_video::VideoCapsBuilder::new()
        .format_list(FORMATS.iter().copied())
        .build();
    [gst::PadDirection::Src, gst::PadDirection::Sink]
        .into_iter()
        .filter_map(|dir| {
            let name = if dir == gst::PadDirection::Src {
                "src"
            } else {
                "sink"
            };
            // Cannot fail for these fixed names and caps; skip rather than
            // panic if a future GStreamer disagrees.
            gst::PadTemplate::new(name, dir, gst::PadPresence::Always, &caps).ok()
        })
        .collect()
}

/// What [`gst_roi_element!`](crate::gst_roi_element) expands to needs;
/// not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use gst;
    pub use gst::glib;
    pub use gst_base;
    pub use gst_video;
}

/// Generates a GStreamer element type over a [`RoiPipeline`]: an in-place
/// `GstVideoFilter` subclass forwarding to [`ElementCore`], with an
/// associated `register(plugin: Option<&gst::Plugin>)`.
///
/// `imp` names a module the macro creates for the GObject implementation;
/// `type_name` is the GType name, `element_name` the factory name used in
/// launch lines.
#[macro_export]
macro_rules! gst_roi_element {
    (
        $(#[$attr:meta])*
        $vis:vis struct $name:ident {
            pipeline: $pipeline:ty,
            imp: $imp:ident,
            type_name: $type_name:literal,
            element_name: $element_name:literal,
            long_name: $long_name:literal,
            description: $description:literal $(,)?
        }
    ) => {
        #[doc(hidden)]
        mod $imp {
            #[allow(unused_imports)]
            use super::*;
            use $crate::__private::{glib, gst, gst_base, gst_video};
            use glib::subclass::prelude::*;
            use gst::prelude::*;
            use gst::subclass::prelude::*;
            use gst_base::subclass::prelude::*;
            use gst_video::subclass::prelude::*;

            /// The GObject implementation: forwards to the generic core.
            #[derive(Default)]
            pub struct Imp {
                core: $crate::ElementCore<$pipeline>,
            }

            #[glib::object_subclass]
            impl ObjectSubclass for Imp {
                const NAME: &'static str = $type_name;
                type Type = super::$name;
                type ParentType = gst_video::VideoFilter;
            }

            impl ObjectImpl for Imp {
                fn properties() -> &'static [glib::ParamSpec] {
                    static PROPS: std::sync::OnceLock<Vec<glib::ParamSpec>> =
                        std::sync::OnceLock::new();
                    PROPS.get_or_init($crate::ElementCore::<$pipeline>::param_specs)
                }

                fn set_property(&self, _id: usize, value: &glib::Value, pspec: &glib::ParamSpec) {
                    self.core.set_property(self.obj().upcast_ref(), value, pspec)
                }

                fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
                    self.core.property(pspec)
                }
            }

            impl GstObjectImpl for Imp {}

            impl ElementImpl for Imp {
                fn metadata() -> Option<&'static gst::subclass::ElementMetadata> {
                    static META: std::sync::OnceLock<gst::subclass::ElementMetadata> =
                        std::sync::OnceLock::new();
                    Some(META.get_or_init(|| {
                        gst::subclass::ElementMetadata::new(
                            $long_name,
                            "Filter/Analyzer/Video",
                            $description,
                            "cortex",
                        )
                    }))
                }

                fn pad_templates() -> &'static [gst::PadTemplate] {
                    static TEMPLATES: std::sync::OnceLock<Vec<gst::PadTemplate>> =
                        std::sync::OnceLock::new();
                    TEMPLATES.get_or_init($crate::pad_templates)
                }
            }

            impl BaseTransformImpl for Imp {
                const MODE: gst_base::subclass::BaseTransformMode =
                    gst_base::subclass::BaseTransformMode::AlwaysInPlace;
                const PASSTHROUGH_ON_SAME_CAPS: bool = false;
                const TRANSFORM_IP_ON_PASSTHROUGH: bool = false;

                fn start(&self) -> Result<(), gst::ErrorMessage> {
                    self.core.start()
                }

                fn stop(&self) -> Result<(), gst::ErrorMessage> {
                    self.core.stop()
                }

                // Replaces VideoFilter's own transform_ip: it would map the
                // frame read-write and hide the buffer, while we only read
                // pixels and need the buffer to attach the meta.
                fn transform_ip(
                    &self,
                    buf: &mut gst::BufferRef,
                ) -> Result<gst::FlowSuccess, gst::FlowError> {
                    self.core.transform_ip(self.obj().upcast_ref(), buf)
                }
            }

            impl VideoFilterImpl for Imp {
                fn set_info(
                    &self,
                    _incaps: &gst::Caps,
                    in_info: &gst_video::VideoInfo,
                    _outcaps: &gst::Caps,
                    _out_info: &gst_video::VideoInfo,
                ) -> Result<(), gst::LoggableError> {
                    self.core.set_info(self.obj().upcast_ref(), in_info)
                }
            }
        }

        $crate::__private::glib::wrapper! {
            $(#[$attr])*
            $vis struct $name(ObjectSubclass<$imp::Imp>)
                @extends $crate::__private::gst_video::VideoFilter,
                    $crate::__private::gst_base::BaseTransform,
                    $crate::__private::gst::Element,
                    $crate::__private::gst::Object;
        }

        impl $name {
            /// Registers the element factory (with `plugin`, or for this
            /// process only with `None`).
            ///
            /// # Errors
            /// When GStreamer refuses the registration (e.g. not initialized).
            pub fn register(
                plugin: Option<&$crate::__private::gst::Plugin>,
            ) -> Result<(), $crate::__private::glib::BoolError> {
                use $crate::__private::glib::prelude::StaticType;
                $crate::__private::gst::Element::register(
                    plugin,
                    $element_name,
                    $crate::__private::gst::Rank::NONE,
                    <$name as StaticType>::static_type(),
                )
            }
        }
    };
}

gst_roi_element! {
    /// `cortexroi`: the reference pipeline [`L2`] as a video filter.
    pub struct CortexRoi {
        pipeline: L2,
        imp: cortex_roi_imp,
        type_name: "GstCortexRoi",
        element_name: "cortexroi",
        long_name: "cortex L2 region of interest",
        description: "Runs the cortex L2 pipeline per frame; attaches the ROI as GstVideoRegionOfInterestMeta",
    }
}

/// Registers every element of this module (`cortexroi`) with `plugin`
/// (`None`: for this process only, e.g. in tests).
///
/// # Errors
/// As [`CortexRoi::register`].
pub fn register(plugin: Option<&gst::Plugin>) -> Result<(), gst::glib::BoolError> {
    CortexRoi::register(plugin)
}
