//! The `gstcortex` GStreamer plugin: `cortexroi` (the L2 pipeline) as a
//! loadable .so. Build with
//! `cargo build --release --example gstcortex --features gstreamer` and load
//! with `GST_PLUGIN_PATH=target/release/examples`.

use gst::glib;

fn plugin_init(plugin: &gst::Plugin) -> Result<(), glib::BoolError> {
    cortex::gst::register(Some(plugin))
}

// GStreamer derives the plugin name from the file name, libgstcortex.so
// minus `lib` and `gst`: it looks up `gst_plugin_cortex_get_desc`.
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
