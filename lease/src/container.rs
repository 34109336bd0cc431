//! Whether this process runs in a container, from the marks that container managers leave.
//!
//! A container has a `/var/tmp` of its own, so the default registry inside one is one of
//! several on the host, one per container, each handing out the same node ids from the
//! same kernel's clock: [`EmbeddedRegistry::open_default`] refuses there.
//!
//! No single mark is left by every manager, so any one of these counts (each is looked for
//! under a root directory, `/` but for the tests):
//!
//! - `/.dockerenv`: Docker creates it in every container it starts.
//! - `/run/.containerenv`: Podman and Buildah create it in theirs.
//! - `/run/systemd/container`: systemd, when it is PID 1 of a container (systemd-nspawn,
//!   LXC, Podman with systemd inside), writes the manager's name there.
//! - `container=` in the environment of PID 1 (systemd's container interface: systemd-nspawn,
//!   Podman and LXC set it), or in ours, inherited from PID 1 by what it started: PID 1's
//!   environment is readable by root only.
//! - a cgroup named by a container runtime in `/proc/self/cgroup` or `/proc/1/cgroup`
//!   (`docker`, `docker-<id>.scope`, `kubepods`, `lxc`, `lxc.payload.*`, `libpod-*`,
//!   `cri-containerd-*`, `crio-*`): seen under cgroup v1, or v2 without a cgroup namespace.
//!   Whole path components only: the host's `docker.service` or `containerd.service` is not
//!   a container.
//! - a PID namespace other than the host's first one: the kernel gives that one inode
//!   0xEFFFFFFC (`PROC_PID_INIT_INO`, fixed since Linux 3.8), and every container manager
//!   makes a new one unless told to share the host's (`--pid=host`). A Kubernetes pod under
//!   cgroup v2 with containerd or CRI-O leaves none of the marks above, but has this one.
//!   Sandboxes (bubblewrap, Flatpak, `unshare --pid`) have it too, and are refused the
//!   default as well: Flatpak's `/var/tmp` is the app's own.
//!
//! Not used: the root file system's type (live systems boot from an overlay too), the
//! host name, `/proc/1/sched` (what it shows of PIDs has changed between kernels).
//!
//! [`EmbeddedRegistry::open_default`]: crate::EmbeddedRegistry::open_default

use std::ffi::OsStr;
use std::path::Path;

/// The inode of the host's first PID namespace (`PROC_PID_INIT_INO` in the kernel's
/// `include/linux/proc_ns.h`), as `readlink /proc/self/ns/pid` shows it.
const HOST_PID_NAMESPACE: &str = "pid:[4026531836]";

/// The first container mark found (`env`, this process's `container` variable, then the
/// files under `root`, `/` but in tests), in words. `None`: nothing says this is a
/// container.
pub(crate) fn container_mark(root: &Path, env: Option<&OsStr>) -> Option<String> {
    // Ours first: it costs nothing to read, and names the manager.
    if let Some(manager) = env.filter(|value| !value.is_empty()) {
        return Some(format!("container={}", manager.to_string_lossy()));
    }
    for file in [".dockerenv", "run/.containerenv"] {
        if root.join(file).symlink_metadata().is_ok() {
            return Some(format!("/{file} exists"));
        }
    }
    if let Ok(manager) = std::fs::read_to_string(root.join("run/systemd/container")) {
        return Some(format!("/run/systemd/container says {:?}", manager.trim()));
    }
    if let Ok(environ) = std::fs::read(root.join("proc/1/environ")) {
        let manager = environ
            .split(|&byte| byte == 0)
            .find_map(|entry| entry.strip_prefix(b"container="))
            .filter(|value| !value.is_empty());
        if let Some(manager) = manager {
            return Some(format!(
                "PID 1 has container={}",
                String::from_utf8_lossy(manager)
            ));
        }
    }
    for whose in ["self", "1"] {
        let table = std::fs::read_to_string(root.join(format!("proc/{whose}/cgroup")));
        if let Some(path) = table.ok().as_deref().and_then(container_cgroup) {
            return Some(format!("/proc/{whose}/cgroup names {path}"));
        }
    }
    let namespace = std::fs::read_link(root.join("proc/self/ns/pid")).ok()?;
    let namespace = namespace.to_string_lossy();
    (namespace != HOST_PID_NAMESPACE).then(|| {
        format!("its PID namespace is {namespace}, not the host's first one ({HOST_PID_NAMESPACE})")
    })
}

/// The first cgroup path in a `/proc/<pid>/cgroup` table (`id:controllers:path` lines)
/// with a component that a container runtime names.
fn container_cgroup(table: &str) -> Option<&str> {
    table
        .lines()
        .filter_map(|line| line.splitn(3, ':').nth(2))
        .find(|path| path.split('/').any(runtime_component))
}

fn runtime_component(component: &str) -> bool {
    let scope = |prefix: &str| component.starts_with(prefix) && component.ends_with(".scope");
    component == "docker"
        || scope("docker-")
        || component.starts_with("kubepods")
        || component == "lxc"
        || component.starts_with("lxc.payload")
        || scope("libpod-")
        || scope("cri-containerd-")
        || scope("crio-")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    /// A root that looks like a host: the host's PID namespace, a systemd service's cgroup.
    fn host() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        for dir in ["proc/self/ns", "proc/1", "run/systemd"] {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        std::os::unix::fs::symlink(HOST_PID_NAMESPACE, root.path().join("proc/self/ns/pid"))
            .unwrap();
        let cgroup = "0::/system.slice/docker.service\n";
        std::fs::write(root.path().join("proc/self/cgroup"), cgroup).unwrap();
        let cgroup = "0::/init.scope\n12:pids:/system.slice/containerd.service\n";
        std::fs::write(root.path().join("proc/1/cgroup"), cgroup).unwrap();
        std::fs::write(root.path().join("proc/1/environ"), b"HOME=/\0TERM=linux\0").unwrap();
        root
    }

    fn mark(root: &Path) -> Option<String> {
        container_mark(root, None)
    }

    #[test]
    fn a_host_has_no_mark() {
        let root = host();
        assert_eq!(mark(root.path()), None);
        assert_eq!(container_mark(root.path(), Some(OsStr::new(""))), None);
        // Nothing readable (no /proc, say): nothing to go on.
        assert_eq!(mark(tempfile::tempdir().unwrap().path()), None);
    }

    #[test]
    fn each_mark_is_found() {
        let found = |plant: &dyn Fn(&Path), env: Option<OsString>, says: &str| {
            let root = host();
            plant(root.path());
            let mark = container_mark(root.path(), env.as_deref());
            let mark = mark.unwrap_or_else(|| panic!("not found: {says}"));
            assert!(mark.contains(says), "{mark} should say {says}");
        };
        let write = |file: &'static str, text: &'static [u8]| {
            move |root: &Path| std::fs::write(root.join(file), text).unwrap()
        };
        found(&write(".dockerenv", b""), None, "/.dockerenv exists");
        found(&write("run/.containerenv", b""), None, "/run/.containerenv");
        found(
            &write("run/systemd/container", b"lxc\n"),
            None,
            "says \"lxc\"",
        );
        found(&|_| {}, Some("podman".into()), "container=podman");
        let pid1 = write("proc/1/environ", b"HOME=/\0container=systemd-nspawn\0");
        found(&pid1, None, "PID 1 has container=systemd-nspawn");
        for (whose, table) in [
            ("self", "12:pids:/docker/0123abcd\n"),
            ("self", "0::/system.slice/docker-0123abcd.scope\n"),
            (
                "1",
                "0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-ab.scope\n",
            ),
            ("self", "0::/kubepods/besteffort/pod1/0123\n"),
            ("self", "0::/lxc.payload.web/init.scope\n"),
            ("self", "5:cpu:/lxc/web\n"),
            ("self", "0::/machine.slice/libpod-0123.scope/container\n"),
            ("self", "0::/system.slice/crio-0123.scope\n"),
        ] {
            let file = format!("proc/{whose}/cgroup");
            found(
                &|root: &Path| std::fs::write(root.join(&file), table).unwrap(),
                None,
                &format!("/proc/{whose}/cgroup names"),
            );
        }
        let namespace = |root: &Path| {
            let link = root.join("proc/self/ns/pid");
            std::fs::remove_file(&link).unwrap();
            std::os::unix::fs::symlink("pid:[4026532301]", link).unwrap();
        };
        found(&namespace, None, "PID namespace is pid:[4026532301]");
    }
}
