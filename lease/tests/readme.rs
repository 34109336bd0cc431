//! The Rust quickstarts of README.md and the guides in docs/ are examples that the suites
//! run (`core/examples/quickstart.rs`, `lease/examples/quickstart.rs`,
//! `segment/examples/quickstart.rs`): each page's section must show exactly the lines
//! between its example's markers, so the two cannot drift apart.

/// The rust block inside `<!-- section:NAME -->` of the page `doc`, read from `text`.
fn doc_block(doc: &str, text: &str, name: &str) -> String {
    let section = text
        .split(&format!("<!-- section:{name} -->"))
        .nth(1)
        .and_then(|rest| rest.split(&format!("<!-- /section:{name} -->")).next())
        .unwrap_or_else(|| panic!("{doc} has no {name} section"));
    section
        .split("```rust\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap_or_else(|| panic!("the {name} section of {doc} has no rust block"))
        .to_owned()
}

/// The lines of `example` between `// README begin` and `// README end`, dedented.
fn example_body(example: &str) -> String {
    example
        .split("// README begin\n")
        .nth(1)
        .and_then(|rest| rest.split("    // README end").next())
        .expect("the example has README markers")
        .lines()
        .map(|line| line.strip_prefix("    ").unwrap_or(line))
        .map(|line| format!("{line}\n"))
        .collect()
}

#[test]
fn doc_quickstarts_match_their_examples() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    for (doc, section, example) in [
        (
            "README.md",
            "quickstart-rust",
            "core/examples/quickstart.rs",
        ),
        (
            "docs/leases.md",
            "quickstart-lease",
            "lease/examples/quickstart.rs",
        ),
        (
            "docs/segments.md",
            "quickstart-segment",
            "segment/examples/quickstart.rs",
        ),
    ] {
        let text = std::fs::read_to_string(format!("{root}/{doc}")).unwrap();
        let code = std::fs::read_to_string(format!("{root}/{example}")).unwrap();
        assert_eq!(
            doc_block(doc, &text, section),
            example_body(&code),
            "{doc}'s {section} and {example} differ"
        );
    }
}
