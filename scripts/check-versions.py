#!/usr/bin/env python3
"""One version everywhere: every place that states ferroflake's version must agree with
the workspace version in Cargo.toml.

Checked: every workspace crate (cargo metadata), the versions [workspace.dependencies]
asks of the workspace's own crates, bindings-python/pyproject.toml (its version, or a
version taken from Cargo.toml through `dynamic`), bindings-node/package.json (and its
package-lock.json, the per-platform packages it depends on, and npm/*/package.json), the
version macros of include/ferroflake.h, ffi-c/ferroflake.pc.in (which must take its
version from cargo) and the newest release in CHANGELOG.md. Prints each place and exits 1
on the first disagreement list.
"""

import json
import pathlib
import re
import subprocess
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main() -> int:
    workspace = tomllib.loads((ROOT / "Cargo.toml").read_text())
    version = workspace["workspace"]["package"]["version"]
    found: list[tuple[str, str]] = []  # (where, version)

    metadata = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps"],
            cwd=ROOT, check=True, capture_output=True, text=True,
        ).stdout
    )
    # An unpublished crate (publish = false: the test helpers) is asked for by path alone,
    # so that `cargo package` drops it from the published crates' dev-dependencies.
    members = {p["name"] for p in metadata["packages"] if p.get("publish") != []}
    for package in sorted(metadata["packages"], key=lambda p: p["name"]):
        found.append((f"crate {package['name']}", package["version"]))

    for name, spec in workspace["workspace"].get("dependencies", {}).items():
        if name in members and isinstance(spec, dict):
            found.append((f"[workspace.dependencies] {name}", spec.get("version", "(none)")))

    pyproject = tomllib.loads((ROOT / "bindings-python" / "pyproject.toml").read_text())
    project = pyproject["project"]
    if "version" in project:
        found.append(("bindings-python/pyproject.toml", project["version"]))
    elif "version" in project.get("dynamic", []):
        # maturin takes the version from bindings-python/Cargo.toml, a workspace crate
        # (checked above).
        print("bindings-python/pyproject.toml: version from Cargo.toml (dynamic)")
    else:
        found.append(("bindings-python/pyproject.toml", "(none)"))

    package_json = json.loads((ROOT / "bindings-node" / "package.json").read_text())
    found.append(("bindings-node/package.json", package_json.get("version", "(none)")))
    for name, wanted in sorted(package_json.get("optionalDependencies", {}).items()):
        if name.startswith(("ferroflake-", "@ferroflake/")):
            found.append((f"bindings-node/package.json optionalDependencies {name}", wanted))
    # The per-platform packages of prebuilt addons (npm/<platform>/package.json), whose
    # versions the main package's loader checks against its own.
    for platform in sorted((ROOT / "bindings-node" / "npm").glob("*/package.json")):
        found.append((str(platform.relative_to(ROOT)), json.loads(platform.read_text()).get("version", "(none)")))
    lock_path = ROOT / "bindings-node" / "package-lock.json"
    if lock_path.exists():
        lock = json.loads(lock_path.read_text())
        found.append(("bindings-node/package-lock.json", lock.get("version", "(none)")))
        root_entry = lock.get("packages", {}).get("")
        if root_entry is not None:
            found.append(('bindings-node/package-lock.json packages[""]',
                          root_entry.get("version", "(none)")))

    header = (ROOT / "include" / "ferroflake.h").read_text()
    macro = re.search(r'^#define FERROFLAKE_VERSION "([^"]*)"$', header, re.M)
    found.append(("include/ferroflake.h FERROFLAKE_VERSION", macro.group(1) if macro else "(none)"))
    parts = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        number = re.search(rf"^#define FERROFLAKE_VERSION_{part} (\d+)$", header, re.M)
        parts.append(number.group(1) if number else "?")
    found.append(("include/ferroflake.h FERROFLAKE_VERSION_MAJOR/MINOR/PATCH", ".".join(parts)))

    # ffi-c/build-c.sh writes the crate's version (checked above) into the .pc file; the
    # template must leave it to the build rather than state one of its own.
    template = (ROOT / "ffi-c" / "ferroflake.pc.in").read_text()
    pc_version = re.search(r"^Version: (.*)$", template, re.M)
    pc_value = pc_version.group(1) if pc_version else "(none)"
    found.append(("ffi-c/ferroflake.pc.in Version", version if pc_value == "@VERSION@" else pc_value))

    changelog = (ROOT / "CHANGELOG.md").read_text()
    newest = re.search(r"^## \[(\d+\.\d+\.\d+[^\]]*)\]", changelog, re.M)
    found.append(("CHANGELOG.md newest release", newest.group(1) if newest else "(none)"))

    wrong = [(where, seen) for where, seen in found if seen != version]
    for where, seen in found:
        print(f"{'ok  ' if seen == version else 'FAIL'}  {where}: {seen}")
    if wrong:
        print(f"{len(wrong)} place(s) disagree with the workspace version {version}")
        return 1
    print(f"every place states {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
