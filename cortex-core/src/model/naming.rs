//! How the DSL's names become the Rust names of generated items, so the
//! macro (which generates them) and the checks (which refuse names that
//! would clash or be invalid) apply one rule.

/// The variant of `<Name>Mode` for a mode declared as `mode`:
/// `POWER_SAVE` → `PowerSave`; names with lowercase letters keep their case
/// and only get an uppercase first letter (`fast` → `Fast`). A raw
/// identifier's `r#` is dropped first.
pub fn mode_variant(mode: &str) -> String {
    let mode = mode.strip_prefix("r#").unwrap_or(mode);
    let camel: String = if mode.chars().any(char::is_lowercase) {
        mode.to_string()
    } else {
        mode.split('_')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let mut cs = p.chars();
                cs.next()
                    .map(|f| {
                        f.to_uppercase()
                            .chain(cs.flat_map(char::to_lowercase))
                            .collect::<String>()
                    })
                    .unwrap_or_default()
            })
            .collect()
    };
    let mut cs = camel.chars();
    match cs.next() {
        Some(f) => f.to_uppercase().chain(cs).collect(),
        None => "Mode".to_string(),
    }
}

/// Whether `name` can be an enum variant as written: an identifier that is
/// not a keyword. CamelCased names can only collide with `Self` among
/// Rust's keywords, but every keyword is listed so the rule stays right for
/// any input.
pub fn is_valid_variant(name: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "Self", "self", "super", "crate", "as", "break", "const", "continue", "else", "enum",
        "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move",
        "mut", "pub", "ref", "return", "static", "struct", "trait", "true", "type", "unsafe",
        "use", "where", "while", "async", "await", "dyn", "abstract", "become", "box", "do",
        "final", "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try",
        "gen", "_",
    ];
    let mut cs = name.chars();
    let first_ok = cs.next().is_some_and(|c| c.is_alphabetic() || c == '_');
    first_ok && cs.all(|c| c.is_alphanumeric() || c == '_') && !KEYWORDS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_follow_the_case_rule() {
        assert_eq!(mode_variant("POWER_SAVE"), "PowerSave");
        assert_eq!(mode_variant("BALANCED"), "Balanced");
        assert_eq!(mode_variant("FAST_2X"), "Fast2x");
        assert_eq!(mode_variant("Fast2x"), "Fast2x");
        assert_eq!(mode_variant("fast"), "Fast");
        assert_eq!(mode_variant("r#type"), "Type");
        assert_eq!(mode_variant("SELF"), "Self");
        assert_eq!(mode_variant("__"), "Mode");
    }

    #[test]
    fn keywords_are_not_variants() {
        assert!(!is_valid_variant("Self"));
        assert!(!is_valid_variant(""));
        assert!(!is_valid_variant("2x"));
        assert!(is_valid_variant("PowerSave"));
        assert!(is_valid_variant("Fast2x"));
    }
}
