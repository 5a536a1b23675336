//! The readable text form of a [`Program`]: per mode and engine, one line
//! per step, then the buffers — what a reviewer reads and the snapshot
//! tests pin.

use std::fmt::{self, Write};

use crate::model::ir::{GraphIr, NodeId};
use crate::passes::memory::BufferPlan;

use super::{Frame, Program, Step, Unit, When};

impl Program {
    /// The program as text, with the names of `ir` (the graph it was
    /// lowered from).
    pub fn text(&self, ir: &GraphIr) -> String {
        let mut out = String::new();
        // Writing to a `String` cannot fail.
        let _ = self.write_text(ir, &mut out);
        out
    }

    fn write_text(&self, ir: &GraphIr, out: &mut String) -> fmt::Result {
        let name = |id: NodeId| ir.nodes.get(id as usize).map_or("?", |n| &*n.name);
        let engines = if self.parallel {
            "sequential, parallel, pipelined"
        } else {
            "sequential"
        };
        writeln!(out, "program {} ({engines})", self.name)?;
        if !self.hold_slots.is_empty() {
            let held: Vec<&str> = self.hold_slots.iter().map(|&n| name(n)).collect();
            writeln!(out, "held values: {}", held.join(", "))?;
        }
        for &(pattern, m) in &self.weight_modes {
            let mode = self.modes.get(m).map_or("?", |p| &*p.name);
            writeln!(out, "weights of zero pattern {pattern:#b} run mode {mode}")?;
        }
        for mode in &self.modes {
            writeln!(out, "\nmode {}", mode.name)?;
            let order: Vec<&str> = mode.plan.order.iter().map(|&n| name(n)).collect();
            writeln!(out, "  plan: {}", order.join(" "))?;
            if let Some(r) = &mode.rates {
                for (i, rate) in r.rates.iter().enumerate() {
                    writeln!(
                        out,
                        "  rate {i}: {} every {} (held value {})",
                        name(rate.node),
                        rate.every,
                        rate.slot
                    )?;
                }
                writeln!(out, "  phases: {}", r.phases.phases.len())?;
                for (mask, phase) in r.phases.phases.iter().enumerate().skip(1) {
                    let order: Vec<&str> = phase.order.iter().map(|&n| name(n)).collect();
                    writeln!(out, "    {mask:#b}: {}", order.join(" "))?;
                }
            }
            write_frame(ir, out, "sequential", &mode.sequential)?;
            if let Some(p) = &mode.parallel {
                write_frame(ir, out, "parallel", p)?;
            }
            if let Some(p) = &mode.parallel_unfused {
                write_frame(ir, out, "parallel, fusion off", p)?;
            }
            if let Some(p) = &mode.pipelined {
                write_frame(ir, out, "pipelined, first stage", &p.first)?;
                write_frame(ir, out, "pipelined, second stage", &p.second)?;
            }
        }
        writeln!(out, "\nrun time (weights or a plan chosen at run time)")?;
        write_frame(ir, out, "sequential", &self.run_time.sequential)?;
        if let Some(p) = &self.run_time.parallel {
            write_frame(ir, out, "parallel", p)?;
        }
        if let Some(p) = &self.run_time.parallel_unfused {
            write_frame(ir, out, "parallel, fusion off", p)?;
        }
        if let Some(p) = &self.run_time.pipelined {
            write_frame(ir, out, "pipelined, first stage", &p.first)?;
            write_frame(ir, out, "pipelined, second stage", &p.second)?;
        }
        Ok(())
    }
}

fn write_frame(ir: &GraphIr, out: &mut String, title: &str, frame: &Frame) -> fmt::Result {
    let name = |id: NodeId| ir.nodes.get(id as usize).map_or("?", |n| &*n.name);
    let group = |g: usize| {
        let members: Vec<&str> = frame
            .fusion
            .groups
            .get(g)
            .map(|g| g.nodes.iter().map(|&n| name(n)).collect())
            .unwrap_or_default();
        format!("group {g} [{}]", members.join(" "))
    };
    let when = |w: When| match w {
        When::Always => "",
        When::Phase => " if phase",
        When::Plan => " if plan",
    };
    writeln!(out, "  {title}:")?;
    // Consecutive outputs (and forgotten holds) on one line each.
    let mut lines: Vec<String> = Vec::new();
    for step in &frame.steps {
        let line = match step {
            Step::Call { node, when: w } => format!("call {}{}", name(*node), when(*w)),
            Step::Group { group: g, when: w } => format!("{}{}", group(*g), when(*w)),
            Step::Wave(units) => {
                let units: Vec<String> = units
                    .iter()
                    .map(|u| match u {
                        Unit::Call(n) => name(*n).to_string(),
                        Unit::Group(g) => group(*g),
                    })
                    .collect();
                format!("wave {}", units.join(" | "))
            }
            Step::DecidePhase => "decide phase".to_string(),
            Step::Output { index, node } => {
                let optional = ir.outputs.get(*index).is_some_and(|o| o.optional);
                let q = if optional { "?" } else { "" };
                format!("output {}{q}", name(*node))
            }
            Step::CommitState {
                state,
                node,
                when: w,
                swap,
            } => format!(
                "commit {} <- {}{}{}",
                ir.states.get(*state as usize).map_or("?", |s| &*s.name),
                name(*node),
                when(*w),
                // Double-buffered unless another sink takes the value.
                if *swap { "" } else { " (a copy)" }
            ),
            Step::ResetState { state } => format!(
                "reset {}",
                ir.states.get(*state as usize).map_or("?", |s| &*s.name)
            ),
            Step::KeepHold { rate } => format!("keep held value of rate {rate}"),
            Step::ForgetHold { slot } => format!("forget held value {slot}"),
            Step::NextFrame => "next frame".to_string(),
        };
        match (lines.last_mut(), line.split_once(' ')) {
            (Some(last), Some((head @ ("output" | "forget"), rest))) if last.starts_with(head) => {
                let rest = rest.trim_start_matches("held value ");
                last.push(' ');
                last.push_str(rest);
            }
            _ => lines.push(line),
        }
    }
    for line in lines {
        writeln!(out, "    {line}")?;
    }
    // Waves run out of the plan's order, which their buffers follow (a
    // stage calls only part of its plan: its order is the other stage's).
    let calls = frame.calls();
    if calls.len() == frame.plan.order.len() && calls != frame.plan.order.to_vec() {
        let order: Vec<&str> = frame.plan.order.iter().map(|&n| name(n)).collect();
        writeln!(out, "    in plan order: {}", order.join(" "))?;
    }
    write_buffers(ir, out, &frame.buffers)
}

fn write_buffers(ir: &GraphIr, out: &mut String, buffers: &BufferPlan) -> fmt::Result {
    if buffers.buffers.is_empty() {
        return Ok(());
    }
    let name = |id: NodeId| ir.nodes.get(id as usize).map_or("?", |n| &*n.name);
    let list: Vec<String> = buffers
        .buffers
        .iter()
        .map(|b| {
            let values: Vec<&str> = b.values.iter().map(|&n| name(n)).collect();
            format!("{}#{} = {}", b.ty, b.index_in_type, values.join(", "))
        })
        .collect();
    writeln!(out, "    buffers: {}", list.join("; "))
}
