//! The README's Rust quickstarts are examples that the suites run (`core/examples/
//! quickstart.rs`, `lease/examples/quickstart.rs`, `segment/examples/quickstart.rs`): each
//! README section must show exactly the lines between its example's markers, so the two
//! cannot drift apart.

/// The rust block inside `<!-- section:NAME -->` of README.md.
fn readme_block(readme: &str, name: &str) -> String {
    let section = readme
        .split(&format!("<!-- section:{name} -->"))
        .nth(1)
        .and_then(|rest| rest.split(&format!("<!-- /section:{name} -->")).next())
        .unwrap_or_else(|| panic!("README has no {name} section"));
    section
        .split("```rust\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap_or_else(|| panic!("the {name} section has no rust block"))
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
fn readme_quickstarts_match_their_examples() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    for (section, example) in [
        ("quickstart-rust", "core/examples/quickstart.rs"),
        ("quickstart-lease", "lease/examples/quickstart.rs"),
        ("quickstart-segment", "segment/examples/quickstart.rs"),
    ] {
        let code = std::fs::read_to_string(format!("{root}/{example}")).unwrap();
        assert_eq!(
            readme_block(&readme, section),
            example_body(&code),
            "README.md's {section} and {example} differ"
        );
    }
}
