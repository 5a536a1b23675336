//! Diagnostics of graph validation: what is wrong, and where in the
//! declaration, so the macro can point at the offending token.

use std::fmt;

/// A place in a [`crate::model::spec::GraphSpec`], by index into its lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Loc {
    /// The pipeline as a whole (its name).
    Pipeline,
    /// `inputs[i]`, at its name.
    Input(usize),
    /// `states[i]`, at its name.
    State(usize),
    /// `nodes[i]`, at its name.
    Node(usize),
    /// Argument `arg` of `nodes[node]`.
    NodeArg {
        /// Node index.
        node: usize,
        /// Argument index.
        arg: usize,
    },
    /// The `#[weight_key]` annotation of `nodes[i]`.
    NodeWeightKey(usize),
    /// The producer side of `writes[i]`.
    WriteFrom(usize),
    /// The state side of `writes[i]`.
    WriteTo(usize),
    /// `modes[i]`, at its name.
    Mode(usize),
    /// Entry `entry` of `modes[mode]`, at its key.
    ModeKey {
        /// Mode index.
        mode: usize,
        /// Entry index.
        entry: usize,
    },
    /// The value of entry `entry` of `modes[mode]`.
    ModeValue {
        /// Mode index.
        mode: usize,
        /// Entry index.
        entry: usize,
    },
    /// `outputs[i]`, at its name.
    Output(usize),
    /// Rate `rate` of `modes[mode]`, at its node's name.
    ModeRate {
        /// Mode index.
        mode: usize,
        /// Rate index.
        rate: usize,
    },
    /// The `every k` count of rate `rate` of `modes[mode]`.
    ModeRateEvery {
        /// Mode index.
        mode: usize,
        /// Rate index.
        rate: usize,
    },
    /// The trigger of rate `rate` of `modes[mode]`.
    ModeRateTrigger {
        /// Mode index.
        mode: usize,
        /// Rate index.
        rate: usize,
    },
}

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The graph is rejected.
    Error,
    /// The graph is accepted, but something in it is almost certainly not
    /// what its author meant (e.g. a node no mode runs).
    Warning,
}

/// One finding of validation.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// How serious.
    pub severity: Severity,
    /// Where.
    pub loc: Loc,
    /// What is wrong, one sentence.
    pub message: String,
    /// Further lines: why, and how to fix it (`help: …`, `note: …`).
    pub notes: Vec<String>,
    /// Other places the finding involves, each with what it is there: the
    /// first declaration of a duplicate, the other edges of a cycle.
    pub labels: Vec<(Loc, String)>,
}

impl Diagnostic {
    /// An error at `loc`.
    pub fn error(loc: Loc, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            loc,
            message: message.into(),
            notes: Vec::new(),
            labels: Vec::new(),
        }
    }

    /// A warning at `loc`.
    pub fn warning(loc: Loc, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(loc, message)
        }
    }

    /// Adds a secondary location with what it is there.
    #[must_use]
    pub fn label(mut self, loc: Loc, what: impl Into<String>) -> Self {
        self.labels.push((loc, what.into()));
        self
    }

    /// Adds a `help:`/`note:` line.
    #[must_use]
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// The message with its notes, one per line, as a compiler would print.
    pub fn render(&self) -> String {
        let mut s = self.message.clone();
        for n in &self.notes {
            s.push_str("\n  = ");
            s.push_str(n);
        }
        s
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

/// The diagnostics of one validation, collected so that every problem is
/// reported at once rather than the first one only.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Records a diagnostic.
    pub fn push(&mut self, d: Diagnostic) {
        self.items.push(d);
    }

    /// Whether any error was recorded.
    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }

    /// The number of diagnostics so far.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether none were recorded.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The diagnostics, in the order found.
    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.items
    }

    /// The diagnostics, in the order found.
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }
}

/// The closest of `candidates` to `name`, if close enough to be a likely typo.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(name, c), c))
        .filter(|&(d, _)| d <= limit)
        // Ties go to the alphabetically first name, so output is deterministic.
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, c)| c)
}
