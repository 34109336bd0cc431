//! `ferroflake serve --help` names every route the service answers.

use std::process::Command;

#[test]
fn serve_help_lists_every_route() {
    let output = Command::new(env!("CARGO_BIN_EXE_ferroflake"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(output.status.success());
    // Unwrapped: clap breaks long lines where it likes.
    let help = String::from_utf8(output.stdout)
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for route in ferroflake_serve::routes::ROUTES {
        assert!(help.contains(route), "{route} missing from: {help}");
    }
}
