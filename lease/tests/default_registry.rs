//! `EmbeddedRegistry::open_default` inside a container: refused, saying that IDs can collide
//! with other containers' and what to use instead. The container is made known by its
//! `container` variable (as systemd-nspawn, Podman and LXC set it), in a child process of
//! this test binary, so that the test says the same in CI's container and on a host. The
//! other marks are unit-tested in `src/container.rs`.

use std::process::Command;

use ferroflake_lease::EmbeddedRegistry;

const CHILD: &str = "FERROFLAKE_LEASE_TEST_CHILD";

/// Does nothing unless started by the test below: then says what `open_default` did.
#[test]
fn child_opens_the_default_registry() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    match EmbeddedRegistry::open_default() {
        Ok(registry) => println!("OPENED {}", registry.dir().display()),
        Err(e) => println!("REFUSED {} {e}", e.name()),
    }
}

#[test]
fn the_default_registry_is_refused_in_a_container() {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_opens_the_default_registry", "--nocapture"])
        .env(CHILD, "1")
        .env("container", "ferroflake-test")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{said}");
    assert!(
        said.contains("REFUSED UNAVAILABLE")
            && said.contains("runs in a container (container=ferroflake-test)")
            && said.contains("IDs can collide with other containers'")
            && said.contains("--lease DIR")
            && said.contains("a mounted volume")
            && said.contains("etcd://, redis://, zk://, postgres://"),
        "{said}"
    );
}
