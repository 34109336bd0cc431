//! The command lines in `docs/*.md` that show what they print: each `sh` block line that
//! runs `ferroflake`, followed by `# OUTPUT` lines, is run with this build first on PATH,
//! and must print exactly that.

use std::path::Path;
use std::process::Command;

mod common;
use common::BIN;

/// One documented command (continued lines joined) and the lines it must print.
struct Example {
    place: String,
    command: String,
    expected: String,
}

fn examples(doc: &Path) -> Vec<Example> {
    let text = std::fs::read_to_string(doc).unwrap();
    let mut found = Vec::new();
    let mut in_sh = false;
    let mut command: Option<(usize, String)> = None;
    let mut expected = Vec::new();
    let mut flush = |command: &mut Option<(usize, String)>, expected: &mut Vec<String>| {
        if let Some((line, text)) = command.take() {
            if !expected.is_empty() {
                found.push(Example {
                    place: format!("{}:{line}", doc.display()),
                    command: text,
                    expected: expected.join("\n"),
                });
            }
        }
        expected.clear();
    };
    for (index, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            flush(&mut command, &mut expected);
            in_sh = !in_sh && line.trim() == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        if let Some(output) = line.strip_prefix("# ") {
            if command.is_some() {
                expected.push(output.to_owned());
            }
            continue;
        }
        match &mut command {
            Some((_, text)) if expected.is_empty() && text.ends_with('\\') => {
                text.pop();
                text.push_str(line.trim_start());
            }
            _ => {
                flush(&mut command, &mut expected);
                if line.starts_with("ferroflake ") {
                    command = Some((index + 1, line.to_owned()));
                }
            }
        }
    }
    flush(&mut command, &mut expected);
    found
}

#[test]
fn documented_commands_print_what_the_docs_say() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut checked = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&docs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    entries.sort();
    for doc in entries {
        for example in examples(&doc) {
            let output = Command::new("bash")
                .args(["-c", &example.command])
                .env("PATH", &path)
                .output()
                .unwrap();
            let printed = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success(),
                "{}: {} failed: {}",
                example.place,
                example.command,
                String::from_utf8_lossy(&output.stderr)
            );
            assert_eq!(
                printed.trim_end(),
                example.expected,
                "{}: {}",
                example.place,
                example.command
            );
            checked += 1;
        }
    }
    // The layout page alone shows four; finding none means the reader broke.
    assert!(checked >= 4, "only {checked} documented commands found");
}
