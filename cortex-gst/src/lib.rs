//! The cortex GStreamer plugin (`gstcortex`): cortex pipelines as video
//! filter elements. `cortexroi` runs the L2 pipeline on every buffer and
//! attaches its region of interest as a `GstVideoRegionOfInterestMeta`;
//! [`gst_roi_element!`] makes an element of any one-frame pipeline.
//!
//! Built as a loadable plugin (`cdylib`, `libgstcortex.so`) and as a Rust
//! library (`rlib`, re-exported by the `cortex` facade as `cortex::gst`).
//! Everything needs the GStreamer 1.22+ development files, so it sits behind
//! this crate's `gstreamer` feature (off by default, so the workspace builds
//! without them):
//!
//! ```sh
//! cargo build --release -p cortex-gst --features gstreamer
//! GST_PLUGIN_PATH=target/release gst-inspect-1.0 cortexroi
//! ```

// The crate root's own items come from `plugin_define!`, which documents
// nothing; the element's API is checked for docs.
#[cfg(feature = "gstreamer")]
#[warn(missing_docs)]
pub mod roi;

#[cfg(feature = "gstreamer")]
pub use roi::*;

#[cfg(feature = "gstreamer")]
fn plugin_init(plugin: &gst::Plugin) -> Result<(), gst::glib::BoolError> {
    roi::register(Some(plugin))
}

// GStreamer derives the plugin name from the file name, libgstcortex.so
// minus `lib` and `gst`: it looks up `gst_plugin_cortex_get_desc`.
#[cfg(feature = "gstreamer")]
gst::plugin_define!(
    cortex,
    "cortex pipelines as video filters",
    plugin_init,
    env!("CARGO_PKG_VERSION"),
    // GStreamer accepts only its own list of license names; "MIT/X11" is
    // the one that fits MIT OR Apache-2.0.
    "MIT/X11",
    "cortex",
    "cortex",
    "https://example.invalid/cortex"
);
