//! Which outputs a `run` reads: what its record function (or `--outputs`),
//! `--dump` pictures and `--encode` regions or map declare they read
//! (`App::reads`); only those outputs' producers run on each frame.

use cortex_core::ir::GraphIr;
use cortex_core::outputs::OutputSet;

use crate::cli::{RoiSwitch, RunArgs};
use crate::error::RunnerError;

/// One of a program's consumers of a frame's outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// The record function: the table's columns and a JSON line's `outputs`.
    Record,
    /// `run --dump DIR`'s pictures.
    Dump,
    /// `run --encode`'s regions of interest (`--roi regions`).
    Regions,
    /// `run --encode --roi map`'s quantiser-offset map.
    QpMap,
}

/// The outputs each consumer declared it reads; `None`: every output.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reads {
    record: Option<Vec<String>>,
    dump: Option<Vec<String>>,
    regions: Option<Vec<String>>,
    qp_map: Option<Vec<String>>,
}

impl Reads {
    /// Declares that `reader` reads only the outputs named in `outputs`.
    pub(crate) fn declare(&mut self, reader: Reader, outputs: &[&str]) {
        *self.slot(reader) = Some(outputs.iter().map(|s| s.to_string()).collect());
    }

    /// The outputs of graph `ir` a `run` with `args` reads; `dump` says whether
    /// the program can draw `--dump` pictures at all.
    pub(crate) fn outputs_read(
        &self,
        ir: &GraphIr,
        args: &RunArgs,
        dump: bool,
    ) -> Result<OutputSet, RunnerError> {
        let encoding = args.encode.is_some();
        // `--outputs` stands for what the record function reads.
        let mut set = chosen(ir, args)?.unwrap_or(OutputSet::NONE);
        let used = [
            (args.outputs.is_none(), &self.record),
            (args.dump.is_some() && dump, &self.dump),
            (
                encoding && args.roi_mode() == RoiSwitch::Regions,
                &self.regions,
            ),
            (encoding && args.roi_mode() == RoiSwitch::Map, &self.qp_map),
        ];
        for (in_use, names) in used {
            match (in_use, names) {
                (false, _) => {}
                (true, None) => return Ok(OutputSet::ALL),
                (true, Some(names)) => {
                    set |= OutputSet::named(ir, names)?;
                }
            }
        }
        Ok(set)
    }

    fn slot(&mut self, reader: Reader) -> &mut Option<Vec<String>> {
        match reader {
            Reader::Record => &mut self.record,
            Reader::Dump => &mut self.dump,
            Reader::Regions => &mut self.regions,
            Reader::QpMap => &mut self.qp_map,
        }
    }
}

/// The outputs `run --outputs NAMES` asks for, if it does: a name the
/// graph `ir` does not declare is a usage error naming the ones it does.
pub(crate) fn chosen(ir: &GraphIr, args: &RunArgs) -> Result<Option<OutputSet>, RunnerError> {
    args.outputs
        .as_deref()
        .map(|names| {
            OutputSet::named(ir, names).map_err(|e| RunnerError::Usage(format!("--outputs: {e}")))
        })
        .transpose()
}
