//! How Python's error messages list the valid names of a choice; the names come from core.

/// The names as Python spells string literals: `"a"`, `"b"`.
pub(crate) fn quoted<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    names.into_iter().map(|name| format!("{name:?}")).collect()
}

/// `a`, `a or b`, `a, b or c`: the choices an argument accepts, for an error message.
pub(crate) fn one_of(choices: &[String]) -> String {
    match choices {
        [] => String::new(),
        [only] => only.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_read_as_a_list() {
        assert_eq!(one_of(&quoted(["a"])), "\"a\"");
        assert_eq!(one_of(&quoted(["a", "b"])), "\"a\" or \"b\"");
        assert_eq!(one_of(&quoted(["a", "b", "c"])), "\"a\", \"b\" or \"c\"");
    }
}
