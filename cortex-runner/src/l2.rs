//! The L2 region-of-interest pipeline ([`cortex_vision::l2`]) as a program:
//! its record function (the columns of the table and the `outputs` of a
//! JSON line), its pictures for `run --dump`, its regions for `run
//! --encode`, which outputs each of those reads, and both parallel
//! engines (the pipelined one computing only what is read). The
//! `cortex-l2` command runs it; `examples/l2.rs` of the facade too.

use cortex_vision::l2::{L2Outputs, L2};

use std::process::ExitCode;

use crate::l2_view::{dump_maps, fields};

use crate::model_arg::take_models;
use crate::sources::Frame;
use crate::RunnerError;
use crate::{App, DumpError, DumpSink, Reader, Record};

pub use crate::l2_view::NAME;

/// The outputs [`record`] reads: every one, as a graph file of L2 shows
/// every output it declares.
pub const RECORD_READS: &[&str] = &["blur", "scene", "fused", "roi", "regions", "qp_map"];

/// The `outputs` of a JSON line (each output under its name, through its
/// type's view) and the columns of the results table.
pub fn record(out: &L2Outputs) -> Record {
    fields(out)
}

/// `run --dump DIR`: the fused score map as a heat map, and the frame with
/// the ROI box drawn on it.
///
/// # Errors
/// A picture that cannot be written.
pub fn dump(sink: &DumpSink<'_>, frame: &Frame, out: &L2Outputs) -> Result<(), DumpError> {
    dump_maps(sink, frame, &out.fused, &out.roi)
}

/// The `cortex` command (also installed as `cortex-l2`): graph files over
/// the op library (`--graph FILE`, `ops`), and the compiled L2 on the
/// process's arguments, or with `--model text=PATH` (feature `models`) L2
/// with the DNN text map from that file. A mistake on the command line or
/// in the model is one line on stderr and exit code 2; messages carry the
/// name the program was started under.
pub fn main() -> ExitCode {
    let name = program_name();
    let fail = |e: RunnerError| {
        eprintln!("{name}: {e}");
        ExitCode::from(e.exit_code())
    };
    let (args, models) = match take_models(std::env::args_os()) {
        Ok(split) => split,
        Err(e) => return fail(e),
    };
    if models.is_empty() {
        return app().named(name.clone()).main_with(args);
    }
    #[cfg(feature = "models")]
    match crate::l2_dnn::app(&models, crate::l2_dnn::size_arg(&args)) {
        Ok(app) => app.named(name.clone()).main_with(args),
        Err(e) => fail(e),
    }
    #[cfg(not(feature = "models"))]
    fail(RunnerError::Usage(format!(
        "--model: this {name} was built without trained models (cargo feature `models`)"
    )))
}

/// The name the program was started under (`cortex` or `cortex-l2`), or
/// [`NAME`].
fn program_name() -> String {
    std::env::args_os()
        .next()
        .and_then(|a| {
            let stem = std::path::Path::new(&a).file_stem()?.to_str()?.to_string();
            Some(stem)
        })
        .filter(|s| s == "cortex" || s == NAME)
        .unwrap_or_else(|| NAME.to_string())
}

/// The program: `app().main()` is the whole command.
pub fn app() -> App<L2> {
    let app = App::<L2>::new(NAME, record)
        .about("The L2 region-of-interest pipeline: blur, scene cuts, ROI score and crop");
    #[cfg(feature = "models")]
    let app = app.model_help(
        "L2 with the DNN text map of this trained text detector (`--model text=PATH.onnx`)",
    );
    app.dump(dump)
        .encode_regions(|out: &L2Outputs| out.regions.regions.clone())
        .encode_qp_map(|out: &L2Outputs| &out.qp_map)
        .reads(Reader::Record, RECORD_READS)
        .reads(Reader::Dump, &["fused", "roi"])
        .reads(Reader::Regions, &["regions"])
        .reads(Reader::QpMap, &["qp_map"])
        .parallel()
}
