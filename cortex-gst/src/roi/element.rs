//! The element's behaviour, written once over any [`RoiPipeline`]: the
//! properties, the per-stream pipeline instance, caps handling and the frame
//! path. The GObject boilerplate that [`gst_roi_element!`](crate::gst_roi_element)
//! generates only forwards to [`ElementCore`].

use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use gst::glib;
use gst::prelude::*;
use gst_video::prelude::*;
use gst_video::VideoInfo;

use cortex_core::error::PipelineError;
use cortex_core::observe::{NoopObserver, Observer};
use cortex_core::pipeline::{CompiledPipeline, Pipeline, PipelineMode};
use cortex_core::run::Run;
use cortex_core::weights::{parse_overrides, Weights};
use cortex_vision::ops::RgbFrame;

use cortex_vision::ops::roi_regions::DEFAULT_QP_STRENGTH;

use super::meta::{self, FrameInfo, NodeTimer};
use super::RoiPipeline;

/// After the first failure in a run of failing frames, a warning is posted
/// for every this many further failures, so a stream that keeps failing is
/// visible on the bus without flooding it at frame rate.
pub const WARN_EVERY: u64 = 100;

/// The properties as last set.
#[derive(Debug)]
struct Settings<M> {
    mode: Option<M>,
    /// The `weights` property as given (`""`: use the mode's table).
    weights_text: String,
    /// Parsed `weights`: keys overriding the mode's table.
    overrides: Vec<(Cow<'static, str>, f64)>,
    emit_messages: bool,
    /// `roi-strength`: the quantiser offset of the strongest region.
    roi_strength: f64,
    /// Why the last `weights` or `mode` value was refused, until a valid
    /// one is set: `start` fails on it, so a misconfigured launch line
    /// stops instead of running with other weights than asked.
    refused: Option<String>,
}

/// One stream's pipeline instance and buffers (created at `start`).
struct Stream<P> {
    pipeline: P,
    frame: RgbFrame,
    info: Option<VideoInfo>,
    frames: u64,
    failures_in_a_row: u64,
}

/// The generic state and behaviour of a cortex video element.
///
/// Each element instance owns one pipeline instance (`P::default()` at
/// `start`), so N elements in one process are N independent streams.
pub struct ElementCore<P: RoiPipeline> {
    settings: Mutex<Settings<P::Mode>>,
    stream: Mutex<Option<Stream<P>>>,
}

impl<P: RoiPipeline> Default for ElementCore<P> {
    fn default() -> Self {
        Self {
            settings: Mutex::new(Settings {
                mode: P::Mode::ALL.first().copied(),
                weights_text: String::new(),
                overrides: Vec::new(),
                emit_messages: false,
                roi_strength: f64::from(DEFAULT_QP_STRENGTH),
                refused: None,
            }),
            stream: Mutex::new(None),
        }
    }
}

/// Locks a mutex, recovering the data from a poisoned one: the element
/// catches pipeline panics itself, and a poisoned settings lock must not
/// turn every later frame into a panic.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn mode_names<M: PipelineMode>() -> String {
    M::ALL
        .iter()
        .map(|m| m.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses `k=v,k=v` against the pipeline's weight keys
/// ([`parse_overrides`], the runner's parser too).
///
/// # Errors
/// A message for a missing `=`, an unknown or repeated key, or a value
/// that is not a finite number `>= 0`.
pub fn parse_weights<P: CompiledPipeline>(
    text: &str,
) -> Result<Vec<(Cow<'static, str>, f64)>, String> {
    parse_overrides(text, &P::ir().weight_keys).map_err(|e| e.to_string())
}

impl<P: RoiPipeline> ElementCore<P> {
    /// The element's properties: `mode`, `weights`, `emit-messages`.
    pub fn param_specs() -> Vec<glib::ParamSpec> {
        let default_mode = P::Mode::ALL.first().map_or("", |m| m.name());
        let mode_blurb = format!(
            "Pipeline mode, one of: {} (`weights` overrides keys of its table)",
            mode_names::<P::Mode>()
        );
        let keys = P::ir()
            .weight_keys
            .iter()
            .map(|k| k.as_ref())
            .collect::<Vec<_>>()
            .join(", ");
        let weights_blurb = format!(
            "Run-time weights `key=value,…` over the mode's table (keys: {keys}); \
             empty: the mode's own plan. A bad string is refused and the old value kept"
        );
        vec![
            glib::ParamSpecString::builder("mode")
                .nick("Mode")
                .blurb(&mode_blurb)
                .default_value(Some(default_mode))
                .mutable_playing()
                .build(),
            glib::ParamSpecString::builder("weights")
                .nick("Weights")
                .blurb(&weights_blurb)
                .default_value(Some(""))
                .mutable_playing()
                .build(),
            glib::ParamSpecDouble::builder("roi-strength")
                .nick("ROI strength")
                .blurb(
                    "Quantiser offset of the strongest region, as a fraction of the QP range \
                     (0.2: 10 of H.264's 51 steps finer); each region's `roi/vaapi` and \
                     `roi/msdk` `delta-qp` scales with its score",
                )
                .minimum(0.0)
                .maximum(1.0)
                .default_value(f64::from(DEFAULT_QP_STRENGTH))
                .mutable_playing()
                .build(),
            glib::ParamSpecBoolean::builder("emit-messages")
                .nick("Emit messages")
                .blurb("Post a `cortex-roi` element message per frame with the outputs")
                .default_value(false)
                .mutable_playing()
                .build(),
        ]
    }

    /// `GObject::set_property`. A refused value keeps the old one, is
    /// logged as an error, posted as an element warning (when the element
    /// is in a bin with a bus) and makes the next `start` fail.
    pub fn set_property(
        &self,
        element: &gst::Element,
        value: &glib::Value,
        pspec: &glib::ParamSpec,
    ) {
        let mut s = lock(&self.settings);
        let refusal = match pspec.name() {
            "mode" => {
                let name = value
                    .get::<Option<String>>()
                    .ok()
                    .flatten()
                    .unwrap_or_default();
                match P::Mode::from_name(name.trim()) {
                    Some(m) => {
                        s.mode = Some(m);
                        None
                    }
                    None => Some(format!(
                        "mode `{name}` refused: the modes are {}",
                        mode_names::<P::Mode>()
                    )),
                }
            }
            "weights" => {
                let text = value
                    .get::<Option<String>>()
                    .ok()
                    .flatten()
                    .unwrap_or_default();
                match parse_weights::<P>(&text) {
                    Ok(o) => {
                        s.overrides = o;
                        s.weights_text = text;
                        None
                    }
                    Err(e) => Some(format!("weights `{text}` refused: {e}")),
                }
            }
            "emit-messages" => {
                s.emit_messages = value.get().unwrap_or(false);
                None
            }
            "roi-strength" => {
                s.roi_strength = value.get().unwrap_or(f64::from(DEFAULT_QP_STRENGTH));
                None
            }
            _ => None,
        };
        match &refusal {
            Some(why) => {
                gst::error!(super::CAT, obj = element, "{why}");
                s.refused = Some(why.clone());
                drop(s);
                gst::element_warning!(element, gst::LibraryError::Settings, ("{}", why));
            }
            None if matches!(pspec.name(), "mode" | "weights") => s.refused = None,
            None => {}
        }
    }

    /// `GObject::property`.
    pub fn property(&self, pspec: &glib::ParamSpec) -> glib::Value {
        let s = lock(&self.settings);
        match pspec.name() {
            "mode" => s.mode.map(|m| m.name()).unwrap_or("").to_value(),
            "weights" => s.weights_text.to_value(),
            "emit-messages" => s.emit_messages.to_value(),
            "roi-strength" => s.roi_strength.to_value(),
            // GObject only asks for properties we declared.
            _ => pspec.default_value().clone(),
        }
    }

    /// `BaseTransform::start`: a fresh pipeline instance for this stream.
    ///
    /// # Errors
    /// When the last `mode`/`weights` value was refused, or the pipeline
    /// declares no mode.
    pub fn start(&self) -> Result<(), gst::ErrorMessage> {
        let s = lock(&self.settings);
        if let Some(why) = &s.refused {
            return Err(gst::error_msg!(gst::LibraryError::Settings, ("{}", why)));
        }
        if s.mode.is_none() {
            return Err(gst::error_msg!(
                gst::LibraryError::Settings,
                ("pipeline {} declares no mode", P::ir().name)
            ));
        }
        drop(s);
        *lock(&self.stream) = Some(Stream {
            pipeline: P::default(),
            frame: RgbFrame::zeros((0, 0, 3)),
            info: None,
            frames: 0,
            failures_in_a_row: 0,
        });
        Ok(())
    }

    /// `BaseTransform::stop`: drops the pipeline instance.
    pub fn stop(&self) -> Result<(), gst::ErrorMessage> {
        *lock(&self.stream) = None;
        Ok(())
    }

    /// `VideoFilter::set_info`: a new format or size resets the pipeline's
    /// state (last frame's gray image is meaningless at another size).
    ///
    /// # Errors
    /// When the format is not one of [`meta::FORMATS`] (caps negotiation
    /// should have prevented it).
    pub fn set_info(
        &self,
        element: &gst::Element,
        info: &VideoInfo,
    ) -> Result<(), gst::LoggableError> {
        if !meta::FORMATS.contains(&info.format()) {
            return Err(gst::loggable_error!(
                super::CAT,
                "unsupported format {:?}",
                info.format()
            ));
        }
        let mut guard = lock(&self.stream);
        let stream = guard.get_or_insert_with(|| Stream {
            pipeline: P::default(),
            frame: RgbFrame::zeros((0, 0, 3)),
            info: None,
            frames: 0,
            failures_in_a_row: 0,
        });
        let changed = stream.info.as_ref().is_some_and(|old| {
            (old.width(), old.height(), old.format())
                != (info.width(), info.height(), info.format())
        });
        if changed {
            gst::info!(
                super::CAT,
                obj = element,
                "caps changed to {}x{} {:?}: pipeline state reset",
                info.width(),
                info.height(),
                info.format()
            );
            stream.pipeline.reset();
        }
        stream.info = Some(info.clone());
        Ok(())
    }

    /// `BaseTransform::transform_ip`: copies the frame in, runs the
    /// pipeline, attaches the ROI meta and posts the message.
    ///
    /// Failure policy: a frame the pipeline refuses (`PipelineError`)
    /// passes through unchanged and without meta; the first failure of a
    /// run of failures, and every [`WARN_EVERY`]-th after it, posts an
    /// element warning. The pipeline leaves its state as it was on error,
    /// so the next good frame continues normally. A panic inside the
    /// pipeline is caught: the state is reset and the element posts an
    /// error and returns `FlowError::Error` (a bug, not bad input).
    pub fn transform_ip(
        &self,
        element: &gst::Element,
        buf: &mut gst::BufferRef,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        let (mode, weights, emit, strength) = {
            let s = lock(&self.settings);
            let Some(mode) = s.mode else {
                return Err(gst::FlowError::NotNegotiated);
            };
            let weights =
                (!s.overrides.is_empty()).then(|| mode.weights().with_overrides(&s.overrides));
            (mode, weights, s.emit_messages, s.roi_strength as f32)
        };
        let mut guard = lock(&self.stream);
        let Some(stream) = guard.as_mut() else {
            return Err(gst::FlowError::Flushing);
        };
        let Some(info) = stream.info.clone() else {
            return Err(gst::FlowError::NotNegotiated);
        };

        let t0 = Instant::now();
        let copied = {
            let frame =
                gst_video::VideoFrameRef::from_buffer_ref_readable(buf, &info).map_err(|_| {
                    gst::element_error!(
                        element,
                        gst::StreamError::Format,
                        ("buffer does not match its caps")
                    );
                    gst::FlowError::Error
                })?;
            let stride = usize::try_from(frame.plane_stride()[0]).unwrap_or(0);
            match frame.plane_data(0) {
                Ok(data) => meta::copy_frame(
                    data,
                    info.format(),
                    info.width() as usize,
                    info.height() as usize,
                    stride,
                    &mut stream.frame,
                ),
                Err(e) => Err(e.to_string()),
            }
        };
        if let Err(why) = copied {
            gst::element_error!(element, gst::StreamError::Format, ("{}", why));
            return Err(gst::FlowError::Error);
        }
        let convert = t0.elapsed();

        let index = stream.frames;
        stream.frames += 1;
        let mut timer = NodeTimer::default();
        let t1 = Instant::now();
        let result = if emit {
            run_frame(stream, mode, weights.as_ref(), &mut timer)
        } else {
            // No per-node clock reads when nobody reads the times.
            run_frame(stream, mode, weights.as_ref(), &mut NoopObserver)
        };
        let run = t1.elapsed();

        let outputs = match result {
            Ok(Ok(out)) => out,
            Ok(Err(e)) => {
                stream.failures_in_a_row += 1;
                let n = stream.failures_in_a_row;
                gst::debug!(super::CAT, obj = element, "frame {index} failed: {e}");
                if n == 1 || (n - 1) % WARN_EVERY == 0 {
                    gst::element_warning!(
                        element,
                        gst::StreamError::Decode,
                        (
                            "cortex pipeline refused frame {} ({} in a row): {}",
                            index,
                            n,
                            e
                        )
                    );
                }
                return Ok(gst::FlowSuccess::Ok);
            }
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "panic".into());
                stream.pipeline.reset();
                gst::element_error!(
                    element,
                    gst::StreamError::Failed,
                    ("cortex pipeline panicked on frame {}: {}", index, what)
                );
                return Err(gst::FlowError::Error);
            }
        };
        stream.failures_in_a_row = 0;
        drop(guard);

        let report = P::report(&outputs);
        let roi = report
            .roi
            .and_then(|b| meta::clamp_box(b, info.width(), info.height()));
        if let Some(b) = roi {
            meta::attach_roi(buf, b, report.score);
        }
        meta::attach_regions(buf, &report.regions, strength, info.width(), info.height());
        if emit {
            let mode_name = if weights.is_some() {
                "weights"
            } else {
                mode.name()
            };
            let info = FrameInfo {
                frame: index,
                pts: buf.pts(),
                mode: mode_name,
                roi,
                convert,
                run,
            };
            let s = meta::message_structure(P::ir(), &info, &report, &timer);
            let msg = gst::message::Element::builder(s).src(element).build();
            // No bus (element outside a bin): nobody to tell.
            let _ = element.post_message(msg);
        }
        Ok(gst::FlowSuccess::Ok)
    }
}

type RunResult<P> = std::thread::Result<Result<<P as Pipeline>::Outputs, PipelineError>>;

fn run_frame<P: RoiPipeline, O: Observer + Send>(
    stream: &mut Stream<P>,
    mode: P::Mode,
    weights: Option<&Weights>,
    observer: &mut O,
) -> RunResult<P> {
    let frame = &stream.frame;
    let pipeline = &mut stream.pipeline;
    // The pipeline is reset after a caught panic, so no broken state is
    // observed afterwards.
    catch_unwind(AssertUnwindSafe(|| {
        let run = match weights {
            Some(w) => Run::weights(w),
            None => Run::mode(mode),
        };
        pipeline.run_with_fresh(&mut run.observed(observer), (frame,))
    }))
}
