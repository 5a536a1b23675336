//! Which outputs a `run` reads: what its record function, `--dump`
//! pictures and `--encode` regions or map declare they read
//! ([`App::reads`]); only those outputs' producers run on each frame.

use cortex_core::outputs::OutputSet;
use cortex_core::pipeline::Pipeline;

use crate::app::App;
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
    fn slot(&mut self, reader: Reader) -> &mut Option<Vec<String>> {
        match reader {
            Reader::Record => &mut self.record,
            Reader::Dump => &mut self.dump,
            Reader::Regions => &mut self.regions,
            Reader::QpMap => &mut self.qp_map,
        }
    }
}

impl<P: Pipeline + 'static> App<P> {
    /// Declares that `reader` reads only the outputs named in `outputs`
    /// (each an output of the pipeline; an unknown name is an error when a
    /// run starts). A `run` then computes only what its consumers read —
    /// the record function always, `--dump`'s and `--encode`'s when given —
    /// so outputs nothing shows are not computed. A consumer that declares
    /// nothing reads every output.
    pub fn reads(mut self, reader: Reader, outputs: &[&str]) -> Self {
        *self.reads.slot(reader) = Some(outputs.iter().map(|s| s.to_string()).collect());
        self
    }

    /// The outputs a `run` with `args` reads.
    pub(crate) fn outputs_read(&self, args: &RunArgs) -> Result<OutputSet, RunnerError> {
        let encoding = args.encode.is_some();
        let used = [
            (true, &self.reads.record),
            (args.dump.is_some() && self.dump.is_some(), &self.reads.dump),
            (
                encoding && args.roi_mode() == RoiSwitch::Regions,
                &self.reads.regions,
            ),
            (
                encoding && args.roi_mode() == RoiSwitch::Map,
                &self.reads.qp_map,
            ),
        ];
        let mut set = OutputSet::NONE;
        for (in_use, names) in used {
            match (in_use, names) {
                (false, _) => {}
                (true, None) => return Ok(OutputSet::ALL),
                (true, Some(names)) => {
                    set |= OutputSet::named(P::ir(), names)?;
                }
            }
        }
        Ok(set)
    }
}
