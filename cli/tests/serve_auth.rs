//! `ferroflake serve` as a process, with its real flags and variables: SIGHUP rotating the
//! tokens, a start beyond loopback refused without tokens (exit 2) and allowed with them or
//! `--allow-unauthenticated`.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use ferroflake_test_support::http::{agent, answer, tokens_toml, write_whole, Answer};
use ferroflake_test_support::serve_child::{exit_of, serve_command, ServeChild};
use ferroflake_test_support::wait_for;

const BIN: &str = env!("CARGO_BIN_EXE_ferroflake");

/// `ferroflake serve ARGS` with `env` and no other `FERROFLAKE_*` variable.
fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    serve_command(BIN, args, env)
}

/// Segment mode only (no lease to wait for), on a store in `dir`.
fn base_args(dir: &Path) -> Vec<String> {
    let store = dir.join("segments.db");
    ["--modes", "segment", "--store", store.to_str().unwrap()]
        .map(str::to_owned)
        .to_vec()
}

/// GET `path` from `service`, with `token` as its bearer token if given.
fn get(service: &ServeChild, path: &str, token: Option<&str>) -> Answer {
    let mut request = agent().get(&format!("{}{path}", service.base("http")));
    if let Some(token) = token {
        request = request.header("Authorization", &format!("Bearer {token}"));
    }
    answer(request.call())
}

#[test]
fn beyond_loopback_without_tokens_it_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let base = base_args(dir.path());
    for listen in ["0.0.0.0:0", "[::]:0", "192.0.2.7:8080", "[2001:db8::1]:80"] {
        let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
        args.extend(["--listen", listen]);
        let (code, stderr) = exit_of(command(&args, &[]));
        assert_eq!(code, Some(2), "{listen}: {stderr}");
        for says in [
            "refusing to listen on",
            "without authentication",
            "--tokens-file",
            "--allow-unauthenticated",
        ] {
            assert!(
                stderr.contains(says),
                "{listen}: {says:?} missing in {stderr}"
            );
        }
        // Refused before anything opened.
        assert!(!dir.path().join("segments.db").exists());
    }
    // From the variable too.
    let args: Vec<&str> = base.iter().map(String::as_str).collect();
    let (code, stderr) = exit_of(command(&args, &[("FERROFLAKE_LISTEN", "0.0.0.0:0")]));
    assert_eq!(code, Some(2), "{stderr}");
}

#[test]
fn allow_unauthenticated_lets_it_start_beyond_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let base = base_args(dir.path());
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.extend(["--listen", "0.0.0.0:0"]);
    let env_allowed = [("FERROFLAKE_ALLOW_UNAUTHENTICATED", "true")];
    let flag_args = [&args[..], &["--allow-unauthenticated"]].concat();
    for (args, env) in [(&flag_args[..], &[][..]), (&args[..], &env_allowed[..])] {
        let service = ServeChild::spawn(command(args, env));
        assert_eq!(
            service.events("unauthenticated").len(),
            1,
            "a warning is logged"
        );
        assert_eq!(get(&service, "/v1/status", None).status, 200);
        let (status, _, log) = service.stop(Duration::from_secs(20));
        assert_eq!(status.code(), Some(0), "{log}");
    }
    // Tokens and the waiver at once contradict each other.
    let tokens = dir.path().join("tokens.toml");
    write_whole(&tokens, &tokens_toml(&[("a", "t-a", &["read"])]));
    let both = [&flag_args[..], &["--tokens-file", tokens.to_str().unwrap()]].concat();
    let (code, stderr) = exit_of(command(&both, &[]));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("allow_unauthenticated"), "{stderr}");
}

#[test]
fn sighup_rotates_the_tokens_without_a_restart() {
    const SECRET: &str = "sekrit-xyz";
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    write_whole(
        &tokens,
        &tokens_toml(&[("before", "t-old-1111", &["read"])]),
    );
    let base = base_args(dir.path());
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    // Tokens allow any address.
    args.extend(["--listen", "0.0.0.0:0"]);
    let service = ServeChild::spawn(command(
        &args,
        &[("FERROFLAKE_TOKENS_FILE", tokens.to_str().unwrap())],
    ));
    let mut seen = String::new();
    assert_eq!(get(&service, "/v1/status", Some("t-old-1111")).status, 200);
    assert_eq!(get(&service, "/v1/status", None).status, 401);
    seen.push_str(&format!("{:?}", get(&service, "/v1/status", Some(SECRET))));

    write_whole(&tokens, &tokens_toml(&[("after", "t-new-2222", &["read"])]));
    service.signal("HUP");
    wait_for("the old token refused", Duration::from_secs(10), || {
        get(&service, "/v1/status", Some("t-old-1111")).status == 401
    });
    assert_eq!(get(&service, "/v1/status", Some("t-new-2222")).status, 200);
    assert_eq!(service.events("tokens_reloaded").len(), 1);

    // A bad file: logged, and the tokens in force stay.
    write_whole(
        &tokens,
        &format!("[[token]]\nname = \"x\"\nsha256 = \"{SECRET}\"\n"),
    );
    service.signal("HUP");
    service.wait_logged("tokens_reload_failed", 1, Duration::from_secs(10));
    assert_eq!(get(&service, "/v1/status", Some("t-new-2222")).status, 200);

    let (status, _, log) = service.stop(Duration::from_secs(20));
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("tokens.toml"), "the path may be shown: {log}");
    seen.push_str(&log);
    for secret in [SECRET, "t-old-1111", "t-new-2222"] {
        assert!(!seen.contains(secret), "{secret} shown in: {seen}");
    }
}
