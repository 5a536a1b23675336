//! The pure-Rust backend: tract loads the checked model, fixes its input
//! shape, optimises it once, and keeps one run state that every frame
//! reuses.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use ndarray::{ArrayD, ArrayView4, IxDyn};
use tract_linalg::multithread::{multithread_tract_scope, Executor};
use tract_onnx::pb;
use tract_onnx::prelude::*;
use tract_onnx::tract_core::ops::unimpl::UnimplementedOp;

use crate::check::check_size;
use crate::error::{brief, Problem};

/// The backend's name in errors and reports.
pub const NAME: &str = "tract";

type Plan = TypedRunnableModel;
type State = TypedSimpleState;

/// A model optimised by tract for one input shape, with its run state.
pub(crate) struct TractEngine {
    state: Mutex<State>,
    /// Reused between frames: the input tensor, taken back from the state
    /// after each run when nothing else holds it.
    input: Mutex<Option<Arc<Tensor>>>,
    shape: [usize; 4],
    /// Where tract's kernels run: without a pool of its own tract runs
    /// every operator on the calling thread, whatever the machine has.
    pool: Mutex<Pool>,
}

/// A thread count and the executor made for it, on the first frame that
/// needs it (so a model set to one thread before its first frame never
/// starts a pool).
struct Pool {
    threads: usize,
    executor: Option<Executor>,
}

impl Pool {
    fn new(threads: usize) -> Pool {
        Pool {
            threads: threads.max(1),
            executor: None,
        }
    }

    fn executor(&mut self) -> Executor {
        let threads = self.threads;
        self.executor
            .get_or_insert_with(|| {
                if threads == 1 {
                    return Executor::SingleThread;
                }
                // rayon fails to build a pool only when the OS refuses
                // threads; the model still runs, on the caller's thread.
                guarded(|| Ok(Executor::multithread_with_name(threads, "cortex-tract")))
                    .unwrap_or(Executor::SingleThread)
            })
            .clone()
    }
}

/// The thread count a model runs on unless told otherwise: the cores the
/// process may use, as ONNX Runtime's default does.
pub(crate) fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

/// Runs `f`, turning a panic inside the engine into a message: a model file
/// must never take the process down, whatever the engine does with it.
pub(crate) fn guarded<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|p| Err(format!("panicked: {}", panic_text(&*p))))
}

fn prepare(message: String) -> Problem {
    Problem::Prepare {
        backend: NAME,
        message,
    }
}

impl TractEngine {
    /// Builds the engine from a checked model at the fixed `shape`.
    ///
    /// # Errors
    /// [`Problem::UnsupportedOp`] for an operator tract lacks,
    /// [`Problem::TooLarge`] when a tensor the model computes at this shape
    /// is over the limit, [`Problem::Prepare`] for anything else tract
    /// refuses.
    pub(crate) fn new(proto: &pb::ModelProto, shape: [usize; 4]) -> Result<TractEngine, Problem> {
        let onnx = tract_onnx::onnx();
        let model = guarded(|| {
            onnx.model_for_proto_model(proto)
                .map_err(|e| format!("{e:#}"))
        })
        .map_err(|m| Problem::Parse(brief(&m)))?;
        if let Some(node) = model.nodes().iter().find(|n| n.op_is::<UnimplementedOp>()) {
            // tract names the op `Unimplemented(TYPE)`; the file says in
            // which domain TYPE is.
            let name = node.op.name();
            let op_type = name
                .strip_prefix("Unimplemented(")
                .and_then(|n| n.strip_suffix(')'))
                .unwrap_or(&name);
            let domain = proto
                .graph
                .as_ref()
                .and_then(|g| g.node.iter().find(|p| p.op_type == op_type))
                .map_or("", |p| p.domain.as_str());
            let op = if domain.is_empty() || domain == "ai.onnx" {
                op_type.to_string()
            } else {
                format!("{domain}::{op_type}")
            };
            return Err(Problem::UnsupportedOp { op, backend: NAME });
        }
        let plan: Arc<Plan> = guarded(|| {
            let typed = model
                .with_input_fact(0, f32::fact(shape).into())
                .and_then(|m| m.into_optimized())
                .map_err(|e| format!("{e:#}"))?;
            Ok(typed)
        })
        .map_err(|m| prepare(brief(&m)))
        .and_then(|typed| {
            // Every tensor the plan computes, at its now concrete shape,
            // within the limit: the engine allocates them per frame.
            for node in typed.nodes() {
                for (slot, out) in node.outputs.iter().enumerate() {
                    let Some(dims) = out.fact.shape.as_concrete() else {
                        continue;
                    };
                    check_size(
                        &format!("value {}:{slot} ({})", node.name, node.op.name()),
                        dims,
                    )?;
                }
            }
            guarded(|| typed.into_runnable().map_err(|e| format!("{e:#}")))
                .map_err(|m| prepare(brief(&m)))
        })?;
        let state = guarded(|| State::new(&plan).map_err(|e| format!("{e:#}")))
            .map_err(|m| prepare(brief(&m)))?;
        Ok(TractEngine {
            state: Mutex::new(state),
            input: Mutex::new(None),
            shape,
            pool: Mutex::new(Pool::new(default_threads())),
        })
    }

    /// The threads tract's kernels use.
    pub(crate) fn threads(&self) -> usize {
        self.pool.lock().unwrap_or_else(|p| p.into_inner()).threads
    }

    /// Runs the kernels on `threads` threads from the next frame on (1: on
    /// the caller's thread).
    pub(crate) fn set_threads(&self, threads: usize) {
        let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        if pool.threads != threads.max(1) {
            *pool = Pool::new(threads);
        }
    }

    /// Runs `input` `rounds` times (after one unmeasured run), timing each
    /// operator: per operator name, the mean milliseconds a run spends in
    /// it and how many nodes it is, the costliest first.
    ///
    /// # Errors
    /// [`Problem::Run`] with tract's message.
    pub(crate) fn profile(
        &self,
        input: ArrayView4<'_, f32>,
        rounds: usize,
    ) -> Result<Vec<crate::model::OpTime>, Problem> {
        use std::collections::HashMap;
        use std::time::Instant;
        let run_err = |message: String| Problem::Run {
            backend: NAME,
            message: brief(&message),
        };
        let tensor: Tensor =
            tract_ndarray::Array4::from_shape_vec(input.dim(), input.iter().copied().collect())
                .map_err(|e| run_err(e.to_string()))?
                .into();
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let executor = self
            .pool
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .executor();
        let mut times: HashMap<String, (f64, std::collections::HashSet<usize>)> = HashMap::new();
        for round in 0..=rounds {
            let value = TValue::from_const(Arc::new(tensor.clone()));
            let outputs = multithread_tract_scope(executor.clone(), || {
                state.run_plan_with_eval(tvec!(value), |ctx, op_state, node, inputs| {
                    let t = Instant::now();
                    let r = tract_onnx::tract_core::plan::eval(ctx, op_state, node, inputs);
                    if round > 0 {
                        let e = times.entry(node.op().name().to_string()).or_default();
                        e.0 += t.elapsed().as_secs_f64() * 1e3;
                        e.1.insert(node.id);
                    }
                    r
                })
            })
            .map_err(|e| run_err(format!("{e:#}")))?;
            drop(outputs);
            state.reset_turn().map_err(|e| run_err(format!("{e:#}")))?;
        }
        let mut out: Vec<crate::model::OpTime> = times
            .into_iter()
            .map(|(op, (ms, nodes))| crate::model::OpTime {
                op,
                ms: ms / rounds.max(1) as f64,
                nodes: nodes.len(),
            })
            .collect();
        out.sort_by(|a, b| b.ms.total_cmp(&a.ms));
        Ok(out)
    }

    /// Runs one frame: `input` (of the fixed shape, checked by the caller)
    /// in, the first output written into `out` (reusing its buffer when the
    /// shape is unchanged).
    ///
    /// # Errors
    /// [`Problem::Run`] with tract's message.
    pub(crate) fn run(
        &self,
        input: ArrayView4<'_, f32>,
        out: &mut ArrayD<f32>,
    ) -> Result<(), Problem> {
        debug_assert_eq!(input.shape(), &self.shape[..]);
        let run_err = |message: String| Problem::Run {
            backend: NAME,
            message: brief(&message),
        };
        // A poisoned lock means a run panicked half-way; the state is reset
        // by the next run's inputs, so it can go on.
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut held = self.input.lock().unwrap_or_else(|p| p.into_inner());
        // The input tensor of the last frame, unless something still holds
        // it: then a new one.
        let mut tensor = match held.take() {
            Some(t) if Arc::strong_count(&t) == 1 => t,
            _ => Arc::new(Tensor::zero::<f32>(&self.shape).map_err(|e| run_err(format!("{e:#}")))?),
        };
        {
            let mut plain = Arc::get_mut(&mut tensor)
                .ok_or_else(|| run_err("the input tensor is shared".into()))?
                .try_as_plain_ram_mut()
                .map_err(|e| run_err(format!("{e:#}")))?;
            let dst = plain
                .as_slice_mut::<f32>()
                .map_err(|e| run_err(format!("{e:#}")))?;
            match input.as_slice() {
                Some(src) => dst.copy_from_slice(src),
                None => dst.iter_mut().zip(input.iter()).for_each(|(d, s)| *d = *s),
            }
        }
        let value = TValue::from_const(Arc::clone(&tensor));
        *held = Some(tensor);
        let executor = self
            .pool
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .executor();
        let outputs = guarded(|| {
            multithread_tract_scope(executor, || state.run(tvec!(value)))
                .map_err(|e| format!("{e:#}"))
        })
        .map_err(run_err)?;
        let first = outputs
            .first()
            .ok_or_else(|| run_err("the model gave no output".into()))?;
        let plain = first
            .try_as_plain_ram()
            .map_err(|e| run_err(format!("{e:#}")))?;
        let src = plain
            .as_slice::<f32>()
            .map_err(|e| run_err(format!("{e:#}")))?;
        if out.shape() != first.shape() {
            *out = ArrayD::zeros(IxDyn(first.shape()));
        }
        match out.as_slice_mut() {
            Some(d) => d.copy_from_slice(src),
            None => out.iter_mut().zip(src).for_each(|(d, s)| *d = *s),
        }
        drop(outputs);
        // Drop the frame's values (the input's clone among them), so that
        // the input tensor is the engine's alone again for the next frame.
        state.reset_turn().map_err(|e| run_err(format!("{e:#}")))?;
        Ok(())
    }
}
