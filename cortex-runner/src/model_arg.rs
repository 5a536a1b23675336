//! The `--model NAME=PATH` option of programs whose pipeline takes a
//! trained model: taken out of the command line before the rest is parsed,
//! so that the program can pick the graph that declares the model.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::error::RunnerError;

/// The option's spelling.
pub const MODEL_FLAG: &str = "--model";

/// One `--model NAME=PATH`: which of the pipeline's models, and its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelArg {
    /// The model's name in the pipeline (`text` for L2's text detector).
    pub name: String,
    /// The ONNX file.
    pub path: PathBuf,
}

/// Splits `--model NAME=PATH` (or `--model=NAME=PATH`) out of `args` (the
/// program name first): the other arguments in order, and the models
/// given.
///
/// # Errors
/// [`RunnerError::Usage`] for `--model` without a value or a value without
/// `NAME=` or without a path (the value must be UTF-8).
pub fn take_models<I, T>(args: I) -> Result<(Vec<OsString>, Vec<ModelArg>), RunnerError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let mut rest = Vec::new();
    let mut models = Vec::new();
    let mut args = args.into_iter().map(Into::into);
    while let Some(arg) = args.next() {
        // A `--` ends the options: what follows is not ours.
        if arg == "--" {
            rest.push(arg);
            rest.extend(args.by_ref());
            break;
        }
        let value = if arg == MODEL_FLAG {
            args.next().ok_or_else(|| {
                RunnerError::Usage(format!("{MODEL_FLAG} needs a value: NAME=PATH"))
            })?
        } else if let Some(v) = arg
            .to_str()
            .and_then(|a| a.strip_prefix(MODEL_FLAG)?.strip_prefix('='))
        {
            OsString::from(v)
        } else {
            rest.push(arg);
            continue;
        };
        models.push(parse(&value)?);
    }
    Ok((rest, models))
}

fn parse(value: &std::ffi::OsStr) -> Result<ModelArg, RunnerError> {
    let bad = || {
        RunnerError::Usage(format!(
            "{MODEL_FLAG} {}: expected NAME=PATH, e.g. text=models/det.onnx",
            value.to_string_lossy()
        ))
    };
    let (name, path) = value
        .to_str()
        .and_then(|v| v.split_once('='))
        .ok_or_else(bad)?;
    if name.is_empty() || path.is_empty() {
        return Err(bad());
    }
    Ok(ModelArg {
        name: name.to_string(),
        path: PathBuf::from(path),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(args: &[&str]) -> Result<(Vec<OsString>, Vec<ModelArg>), RunnerError> {
        take_models(args.iter().copied())
    }

    #[test]
    fn both_spellings_are_taken_out_and_the_rest_kept_in_order() {
        let (rest, models) = split(&[
            "p",
            "run",
            "--model",
            "text=a.onnx",
            "--json",
            "--model=text=b=c.onnx",
        ])
        .unwrap();
        assert_eq!(rest, ["p", "run", "--json"]);
        assert_eq!(
            models,
            [
                ModelArg {
                    name: "text".into(),
                    path: "a.onnx".into()
                },
                ModelArg {
                    name: "text".into(),
                    path: "b=c.onnx".into()
                },
            ]
        );
    }

    #[test]
    fn after_a_double_dash_nothing_is_taken() {
        let (rest, models) = split(&["p", "--", "--model", "text=a"]).unwrap();
        assert_eq!(rest, ["p", "--", "--model", "text=a"]);
        assert!(models.is_empty());
    }

    #[test]
    fn malformed_values_are_usage_errors() {
        for args in [
            &["p", "--model"][..],
            &["p", "--model", "a.onnx"],
            &["p", "--model", "=a.onnx"],
            &["p", "--model", "text="],
        ] {
            let e = split(args).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{args:?}: {e}");
            assert!(e.to_string().starts_with("--model"), "{e}");
        }
    }
}
