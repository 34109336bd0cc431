//! `ferroflake mask` and `unmask` as a user runs them: keys from a file or the environment,
//! rotation, every format, and the refusals.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_ferroflake");
const KEY_V1: &str = "1:000102030405060708090a0b0c0d0e0f";
const KEY_V2: &str = "2:f0e1d2c3b4a5968778695a4b3c2d1e0f";

fn run(args: &[&str], env_key: Option<&str>, stdin: Option<&str>) -> Output {
    let mut command = Command::new(BIN);
    command.args(args).env_remove("FERROFLAKE_MASK_KEY");
    if let Some(key) = env_key {
        command.env("FERROFLAKE_MASK_KEY", key);
    }
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn lines(output: &Output) -> Vec<String> {
    assert!(
        output.status.success(),
        "ferroflake failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn refusal(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// A key file with mode 600 holding `text`.
fn key_file(name: &str, text: &str) -> PathBuf {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mask-{name}-{}.key", std::process::id()));
    std::fs::write(&path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    path
}

#[test]
fn masks_and_unmasks_with_a_key_file_in_every_format() {
    let file = key_file("every-format", &format!("{KEY_V1}\n"));
    let file = file.to_str().unwrap();
    let ids = ["0", "1", "2", "1541815603606036480", "9223372036854775807"];
    for (format, len) in [("base62", 12), ("base32", 14), ("dec", 21), ("number", 0)] {
        let mut args = vec!["mask", "--key-file", file, "--format", format];
        args.extend(ids);
        let masked = lines(&run(&args, None, None));
        assert_eq!(masked.len(), ids.len());
        for text in &masked {
            if len > 0 {
                assert_eq!(text.len(), len, "{format}: {text}");
                assert!(text.starts_with('1') || format == "dec", "{text}");
            }
        }
        // Back through standard input.
        let unmasked = run(
            &["unmask", "--key-file", file, "--format", format],
            None,
            Some(&(masked.join("\n") + "\n")),
        );
        assert_eq!(lines(&unmasked), ids, "{format}");
    }
    // The core's known answer for id 0 (testdata/vectors.json).
    assert_eq!(
        lines(&run(&["mask", "--key-file", file, "0"], None, None)),
        ["12qcoxPjS172"]
    );
}

#[test]
fn the_environment_variable_holds_the_key_when_there_is_no_file() {
    let masked = lines(&run(
        &["mask", "--js", "42", "9007199254740991"],
        Some(KEY_V1),
        None,
    ));
    assert!(masked.iter().all(|t| t.len() == 10), "{masked:?}");
    let back = run(
        &["unmask", "--js", &masked[0], &masked[1]],
        Some(KEY_V1),
        None,
    );
    assert_eq!(lines(&back), ["42", "9007199254740991"]);
    // A file beats the variable.
    let file = key_file("beats-env", KEY_V2);
    let from_file = run(
        &["mask", "--js", "42", "--key-file", file.to_str().unwrap()],
        Some(KEY_V1),
        None,
    );
    assert!(lines(&from_file)[0].starts_with('2'));
}

#[test]
fn a_rotated_key_file_masks_with_the_first_key_and_unmasks_with_any() {
    let old = key_file("rotation-old", KEY_V1);
    let old_masked = lines(&run(
        &["mask", "--key-file", old.to_str().unwrap(), "77"],
        None,
        None,
    ));
    let ring = key_file(
        "rotation-new",
        &format!("# current\n{KEY_V2}\n# retired\n{KEY_V1}\n"),
    );
    let ring = ring.to_str().unwrap();
    let new_masked = lines(&run(&["mask", "--key-file", ring, "77"], None, None));
    assert!(old_masked[0].starts_with('1') && new_masked[0].starts_with('2'));
    assert_ne!(old_masked[0][1..], new_masked[0][1..]);
    let both = run(
        &["unmask", "--key-file", ring, &old_masked[0], &new_masked[0]],
        None,
        None,
    );
    assert_eq!(lines(&both), ["77", "77"]);
    // The old file alone does not know version 2.
    let refused = run(
        &[
            "unmask",
            "--key-file",
            old.to_str().unwrap(),
            &new_masked[0],
        ],
        None,
        None,
    );
    let message = refusal(&refused);
    assert!(
        message.contains("names key version 2") && message.contains("version 1"),
        "{message}"
    );
}

#[test]
fn keys_never_come_from_the_command_line_or_show_in_messages() {
    // There is no option that takes a key.
    let output = run(&["mask", "--key", KEY_V1, "1"], None, None);
    assert_eq!(output.status.code(), Some(2));
    let message = refusal(&run(&["mask", "1"], None, None));
    assert!(
        message.contains("--key-file") && message.contains("FERROFLAKE_MASK_KEY"),
        "{message}"
    );
    // A bad key is reported by where it is, never by what it holds.
    let secret = "1:00010203040506070809ZZ0b0c0d0e0f";
    let message = refusal(&run(&["mask", "1"], Some(secret), None));
    assert!(
        message.contains("FERROFLAKE_MASK_KEY") && message.contains("line 1"),
        "{message}"
    );
    assert!(!message.contains("0102030405"), "{message}");
    let file = key_file(
        "duplicate",
        &format!("{KEY_V1}\n1:ffffffffffffffffffffffffffffffff\n"),
    );
    let message = refusal(&run(
        &["mask", "--key-file", file.to_str().unwrap(), "1"],
        None,
        None,
    ));
    assert!(
        message.contains("two different mask keys have version 1"),
        "{message}"
    );
    assert!(!message.contains("ffff"), "{message}");
}

#[test]
fn a_key_file_others_can_read_is_used_with_a_warning() {
    let file = key_file("readable", KEY_V1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let output = run(
        &["mask", "--key-file", file.to_str().unwrap(), "1"],
        None,
        None,
    );
    assert_eq!(lines(&output).len(), 1);
    if cfg!(unix) {
        let warning = String::from_utf8(output.stderr).unwrap();
        assert!(warning.contains("can be read by other users"), "{warning}");
    }
}

#[test]
fn bad_ids_and_texts_are_refused_with_exit_status_2() {
    let file = key_file("refusals", KEY_V1);
    let file = file.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["mask", "x1"], "not a decimal ID"),
        (
            &["mask", "--js", "9007199254740992"],
            "does not fit the mask's 53 bits",
        ),
        (
            &["mask", "9223372036854775808"],
            "does not fit the mask's 63 bits",
        ),
        (
            &["unmask", "12qcoxPjS17"],
            "11 characters, but a masked 63-bit ID",
        ),
        (
            &["unmask", "--js", "12qcoxPjS172"],
            "masked 53-bit ID in this format has 10",
        ),
        (&["unmask", "52qcoxPjS172"], "names key version 5"),
    ];
    for (args, expected) in cases {
        let mut full = args.to_vec();
        full.extend(["--key-file", file]);
        let message = refusal(&run(&full, None, None));
        assert!(message.contains(expected), "{args:?}: {message}");
    }
}

#[test]
fn new_keys_are_random_and_readable() {
    let a = lines(&run(&["mask", "--new-key", "4"], None, None));
    let b = lines(&run(&["mask", "--new-key", "4"], None, None));
    assert_ne!(a, b);
    assert!(a[0].starts_with("4:") && a[0].len() == 34, "{a:?}");
    let file = key_file("generated", &a[0]);
    let masked = lines(&run(
        &["mask", "--key-file", file.to_str().unwrap(), "5"],
        None,
        None,
    ));
    assert!(masked[0].starts_with('4'));
    assert_eq!(
        run(&["mask", "--new-key", "32"], None, None).status.code(),
        Some(2)
    );
}
