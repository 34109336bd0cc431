//! The embedded registry refuses directories it cannot trust and never writes through a
//! link, as root too. The cases another user prepares need root (to act as that user with
//! `runuser`); CI runs as root.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use ferroflake_lease::{EmbeddedRegistry, LeaseError, LeaseRequest, Registry, Renewal};

fn request() -> LeaseRequest {
    LeaseRequest {
        node_count: 4,
        ttl: Duration::from_millis(200),
        quarantine: Duration::from_millis(50),
        holder: "hostile-dirs test".into(),
        max_ttl: Duration::from_millis(200),
        prefer_node: None,
    }
}

fn refusal(dir: &Path) -> String {
    match EmbeddedRegistry::open(dir) {
        Err(LeaseError::Unavailable { detail, .. }) => detail,
        other => panic!("{} must be refused, got {other:?}", dir.display()),
    }
}

fn is_root() -> bool {
    rustix::process::getuid().is_root()
}

/// Runs `sh -c script` as the unprivileged user `nobody`.
fn as_nobody(script: &str) {
    let status = Command::new("runuser")
        .args(["-u", "nobody", "--", "sh", "-c", script])
        .status()
        .expect("runuser");
    assert!(status.success(), "as nobody: {script}");
}

/// A world-writable, sticky directory like /tmp, where another user can prepare things.
fn shared_tmp() -> tempfile::TempDir {
    let shared = tempfile::tempdir().unwrap();
    fs::set_permissions(shared.path(), fs::Permissions::from_mode(0o1777)).unwrap();
    shared
}

#[test]
fn a_directory_prepared_by_another_user_is_refused_even_by_root() {
    if !is_root() {
        eprintln!("skipped: needs root to act as another user");
        return;
    }
    let shared = shared_tmp();
    let dir = shared.path().join("ferroflake-leases-0");
    // The other user prepares the directory, private to themselves, before root runs.
    as_nobody(&format!("mkdir -m 700 {}", dir.display()));
    let why = refusal(&dir);
    assert!(why.contains("belongs to uid"), "{why}");
    // And a link planted where the registry would be, pointing at a directory of root's.
    let target = tempfile::tempdir().unwrap();
    let link = shared.path().join("ferroflake-leases-planted");
    as_nobody(&format!(
        "ln -s {} {}",
        target.path().display(),
        link.display()
    ));
    let why = refusal(&link);
    assert!(why.contains("symbolic link owned by uid"), "{why}");
    assert_eq!(
        fs::read_dir(target.path()).unwrap().count(),
        0,
        "nothing may be written through the planted link"
    );
}

#[test]
fn a_directory_others_can_write_is_refused() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("leases");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
    let why = refusal(&dir);
    assert!(why.contains("writable by other users"), "{why}");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o770)).unwrap();
    assert!(refusal(&dir).contains("writable by other users"));
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    EmbeddedRegistry::open(&dir).expect("a private directory is fine");
}

#[test]
fn the_filesystem_root_is_refused() {
    assert!(refusal(Path::new("/")).contains("filesystem root"));
}

#[test]
fn links_planted_in_the_directory_are_never_followed() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("leases");
    let registry = EmbeddedRegistry::open(&dir).unwrap();
    let victim = parent.path().join("victim");
    fs::write(&victim, "precious").unwrap();
    // Where older versions wrote their temporary copy, and a few guesses besides.
    for name in ["leases.json.tmp", ".leases-.tmp", "leases.json~"] {
        std::os::unix::fs::symlink(&victim, dir.join(name)).unwrap();
    }
    let grant = registry.acquire(&request()).expect("claim");
    registry
        .renew(&grant, &Renewal::new(request().ttl, 1))
        .expect("renew");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
    // The records file itself replaced by a link: refused, and the victim untouched.
    fs::remove_file(dir.join("leases.json")).unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("leases.json")).unwrap();
    match registry.renew(&grant, &Renewal::new(request().ttl, 2)) {
        Err(LeaseError::Unavailable { .. }) => {}
        other => panic!("records behind a link must not be used, got {other:?}"),
    }
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
}

#[test]
fn the_default_directory_ignores_the_environment() {
    // The same user from a login shell, cron or sudo: one registry.
    let exe = std::env::current_exe().unwrap();
    let print = |vars: &[(&str, &str)]| {
        let mut command = Command::new(&exe);
        command.args([
            "--exact",
            "print_default_dir",
            "--nocapture",
            "--include-ignored",
        ]);
        command.env_remove("XDG_RUNTIME_DIR").env_remove("TMPDIR");
        for (k, v) in vars {
            command.env(k, v);
        }
        let out = command.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        text.lines()
            .find_map(|l| l.strip_prefix("default dir: ").map(str::to_owned))
            .unwrap_or_else(|| panic!("no dir printed: {text}"))
    };
    let plain = print(&[]);
    assert_eq!(plain, EmbeddedRegistry::default_dir().display().to_string());
    assert_eq!(print(&[("XDG_RUNTIME_DIR", "/run/user/1000")]), plain);
    assert_eq!(print(&[("TMPDIR", "/somewhere/else")]), plain);
    assert_eq!(print(&[("FERROFLAKE_LEASE_DIR", "/elsewhere")]), plain);
    assert_eq!(print(&[("HOME", "/nonexistent")]), plain);
}

#[test]
#[ignore = "run by the_default_directory_ignores_the_environment in a child process"]
fn print_default_dir() {
    println!("default dir: {}", EmbeddedRegistry::default_dir().display());
}
