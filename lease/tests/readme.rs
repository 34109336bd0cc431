//! The README's lease quickstart is `examples/quickstart.rs`, which the suite runs: the two
//! must not drift apart.

#[test]
fn readme_lease_quickstart_matches_the_example() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let section = readme
        .split("<!-- section:quickstart-lease -->")
        .nth(1)
        .and_then(|rest| rest.split("<!-- /section:quickstart-lease -->").next())
        .expect("README has the quickstart-lease section");
    let shown = section
        .split("```rust\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the section has a rust block");

    let example = std::fs::read_to_string(format!("{root}/lease/examples/quickstart.rs")).unwrap();
    let body = example
        .split("// README begin\n")
        .nth(1)
        .and_then(|rest| rest.split("    // README end").next())
        .expect("the example has README markers");
    let dedented: String = body
        .lines()
        .map(|line| line.strip_prefix("    ").unwrap_or(line))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(
        shown, dedented,
        "README.md's lease quickstart and lease/examples/quickstart.rs differ"
    );
}
