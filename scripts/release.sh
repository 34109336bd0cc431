#!/usr/bin/env bash
# Builds every release artifact into dist/ (emptied first):
#   dist/crates/NAME-VERSION.crate    the crates published to crates.io (cargo package), in
#                                     the order they must be published
#   dist/ferroflake-c-VERSION-TRIPLE.tar.gz   the C library as an install prefix: include/,
#                                     lib/ (static, shared with its soname links, a relocatable
#                                     pkg-config file), share/doc/ferroflake/
#   dist/python/ferroflake-VERSION.tar.gz    the Python sdist
#   dist/python/ferroflake-VERSION-cp39-abi3-manylinux*_x86_64.whl   one wheel for CPython 3.9+
#   dist/SHA256SUMS
#   dist/.sources   what the sources hashed to (scripts/dist.sh): the suites that test these
#                   artifacts refuse them once the sources have changed
#   dist/npm/ferroflake-VERSION.tgz, dist/npm/ferroflake-linux-x64-gnu-VERSION.tgz   the npm
#                                     package and its prebuilt x86-64 Linux addon
# scripts/test-release.sh installs each artifact away from the checkout.
#
# Usage: scripts/release.sh [--allow-dirty] [--offline] [--verify-all]
#   --allow-dirty  package crates whose files have uncommitted changes (for tests; a real
#                  release is made from a clean tree)
#   --offline      skip `cargo publish --dry-run`, which asks crates.io (the Python tools
#                  still come from PyPI unless target/release-tools/venv has them)
#   --verify-all   build every crate from its package, not only the core, in a target
#                  directory of its own (a cold build of the store clients and the service)
#
# scripts/test-all.sh runs this first; the C, Python, Node and release suites then test
# these artifacts, not builds of their own.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source scripts/dist.sh
target_dir="${CARGO_TARGET_DIR:-$root/target}"

allow_dirty=()
offline=0
verify_all=0
for arg in "$@"; do
  case "$arg" in
    --allow-dirty) allow_dirty=(--allow-dirty) ;;
    --offline) offline=1 ;;
    --verify-all) verify_all=1 ;;
    *) echo "usage: scripts/release.sh [--allow-dirty] [--offline] [--verify-all]" >&2; exit 2 ;;
  esac
done

# The crates users install from crates.io, dependencies before their dependents (the order
# `cargo publish` must follow). ferroflake-ffi, the bindings, benches and lease/model are
# not published: C users take the tarball, Python and Node users their registries' packages.
crates=(
  ferroflake
  ferroflake-store-address
  ferroflake-lease
  ferroflake-lease-stores
  ferroflake-segment
  ferroflake-remote
  ferroflake-segment-stores
  ferroflake-serve
  ferroflake-cli
)

version="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "ferroflake"))')"
# The source date of the release: archives carry it instead of the build's clock, so the
# same commit gives the same tarball.
source_date="$(git log -1 --format=%ct)"

check_versions() {
  echo "--- one version everywhere ($version)"
  python3 scripts/check-versions.py
}

# Each crate as crates.io will receive it. The core, which depends on nothing unpublished,
# is verified (its unpacked package built on its own) and, unless --offline, goes through
# `cargo publish --dry-run`: every step of a publish short of the upload. The others are
# packaged with --no-verify unless --verify-all. Their verification cannot share a target
# directory with earlier runs: cargo takes the local registry it packages them through for
# an unchanging one, so it would reuse the builds of an earlier run's ferroflake 0.1.0 after
# the sources changed. In a directory of its own it is a cold build (the store clients, the
# service) of sources the test suites already build and test; scripts/test-release.sh
# checks every package's files and metadata.
build_crates() {
  echo "--- crates: ${crates[*]}"
  if [ "$offline" = 0 ]; then
    cargo publish --dry-run "${allow_dirty[@]}" -p ferroflake
  else
    cargo package "${allow_dirty[@]}" -p ferroflake
  fi
  local packages=()
  for crate in "${crates[@]}"; do packages+=(-p "$crate"); done
  # The Node addon's crate is not published, but the npm package takes its normalized
  # Cargo.toml and lock file from its .crate (see build_npm).
  packages+=(-p ferroflake-node)
  # One call packages them all: cargo resolves each against the others through a local
  # registry, since none of them is on crates.io yet.
  if [ "$verify_all" = 1 ]; then
    rm -rf "$target_dir/release-verify"
    CARGO_TARGET_DIR="$target_dir/release-verify" cargo package "${allow_dirty[@]}" "${packages[@]}"
    cp "$target_dir/release-verify/package/"*.crate "$target_dir/package/"
  else
    cargo package --no-verify "${allow_dirty[@]}" "${packages[@]}"
  fi
  mkdir -p "$dist/crates"
  for crate in "${crates[@]}"; do
    cp "$target_dir/package/$crate-$version.crate" "$dist/crates/"
  done
}

# The host as `ARCH-OS-ABI`, e.g. x86_64-linux-gnu (rustc's host triple without the vendor).
host_triple() {
  local host
  host="$(rustc -vV | sed -n 's/^host: //p')"
  echo "${host/-unknown-/-}"
}

build_c() {
  local name stage
  name="ferroflake-c-$version-$(host_triple)"
  stage="$target_dir/release-stage/$name"
  echo "--- C library: $name.tar.gz"
  rm -rf "$stage"
  # The header is written from the sources on the way; scripts/test-c.sh fails if that
  # changed the committed one, and so does a release from a clean tree.
  FERROFLAKE_WRITE_HEADER=1 bash ffi-c/build-c.sh "$stage"
  if [ ${#allow_dirty[@]} -eq 0 ] && ! git diff --quiet -- include/; then
    echo "include/ferroflake.h differs from what ffi-c's sources generate: commit it" >&2
    exit 1
  fi
  # The standard library's objects come with debug info; the shipped libraries do not
  # carry it. Symbols stay.
  strip --strip-debug "$stage/lib/libferroflake.a" "$stage/lib/libferroflake.so.$version"
  mkdir -p "$stage/share/doc/ferroflake"
  cp LICENSE-MIT LICENSE-APACHE CHANGELOG.md "$stage/share/doc/ferroflake/"
  # The pkg-config file must not name this machine's paths: it finds its prefix itself.
  if grep -q "$root\|$target_dir" "$stage/lib/pkgconfig/ferroflake.pc"; then
    echo "ferroflake.pc names a build path:" >&2
    cat "$stage/lib/pkgconfig/ferroflake.pc" >&2
    exit 1
  fi
  tar --create --gzip --file "$dist/$name.tar.gz" --directory "$(dirname "$stage")" \
    --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$source_date" "$name"
}

# The wheel and the npm addon are both linked by zig against glibc 2.17, since this
# machine's glibc is newer: one manylinux2014 abi3 wheel that PyPI accepts, one addon that
# loads on any glibc Linux of the last decade. maturin and zig come from PyPI into a venv
# under the target directory.
release_tools() {
  local venv="$target_dir/release-tools/venv"
  if [ ! -x "$venv/bin/maturin" ] || [ ! -x "$venv/bin/python-zig" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.9.4,<2" ziglang
  fi
}

# The environment `maturin --zig` gives cargo (zig wrappers as linker and C compiler, the
# glibc version), recorded by a cargo on PATH ahead of the real one. The npm addon's build
# runs in it too: cargo rebuilds every unit whose linker differs, so with a linker of its
# own the addon would compile the whole store stack a second time. Only the variables
# that steer the build are kept.
zig_env_file="$target_dir/release-tools/zig.env"
zig_env_vars='^((AR|CC|CXX|RANLIB|CMAKE_TOOLCHAIN_FILE|BINDGEN_EXTRA_CLANG_ARGS)_x86_64_unknown_linux_gnu|CARGO_TARGET_[A-Z0-9_]+|CARGO_UNSTABLE_[A-Z_]+|CARGO_ZIGBUILD_[A-Za-z0-9_]+|ZIG_COMMAND|__CARGO_TEST_CHANNEL_OVERRIDE_DO_NOT_USE_THIS)='

build_python() {
  local tools="$target_dir/release-tools"
  echo "--- Python sdist and manylinux2014 abi3 wheel"
  release_tools
  mkdir -p "$tools/recording-cargo"
  cat >"$tools/recording-cargo/cargo" <<SHIM
#!/bin/sh
[ "\$1" = rustc ] && env -0 | grep -zE '$zig_env_vars' >"$zig_env_file"
exec "$(command -v cargo)" "\$@"
SHIM
  chmod +x "$tools/recording-cargo/cargo"
  rm -f "$zig_env_file"
  (
    export PATH="$tools/recording-cargo:$tools/venv/bin:$PATH"
    cd bindings-python
    maturin sdist --out "$dist/python"
    maturin build --release --zig --compatibility manylinux2014 --out "$dist/python"
  )
  grep -qzE '^CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER=.*zig' "$zig_env_file" || {
    echo "maturin --zig ran cargo without a zig linker: $zig_env_file" >&2
    exit 1
  }
}

# Node: two npm packages in the layout napi-rs uses.
#   ferroflake-linux-x64-gnu: the addon for x86-64 Linux, linked as the wheel is (glibc
#     2.17); `os`, `cpu` and `libc` in its package.json let npm install it only there.
#   ferroflake: the loader (index.js, generated by napi), the types, and the Rust sources:
#     the addon's crate, normalized by `cargo package`, and the ferroflake crates it uses,
#     unpacked from dist/crates/ under rust/ and patched in, so a source build needs
#     nothing from this repository nor ferroflake's crates on crates.io. It names the
#     prebuilt package in `optionalDependencies`; its install script (install.js) uses that
#     package where it loads and builds from the sources elsewhere.
node_crates=(ferroflake ferroflake-store-address ferroflake-lease ferroflake-lease-stores
  ferroflake-segment ferroflake-remote ferroflake-segment-stores)
build_npm() {
  local stage="$target_dir/release-stage/npm"
  local platform=linux-x64-gnu triple=x86_64-unknown-linux-gnu
  echo "--- npm packages: ferroflake-$platform (prebuilt, glibc 2.17+) and ferroflake (loader + sources)"
  rm -rf "$stage"
  mkdir -p "$stage" "$dist/npm"
  local zig_env
  mapfile -d '' zig_env <"$zig_env_file"
  # Built by napi's CLI (the package's devDependency), which also writes the loader and the
  # types from this very build into $stage/napi: the Node suite compares them with the
  # committed index.js and index.d.ts. napi adds nothing for this target that would make
  # cargo rebuild the wheel's dependencies, only the addon's crate.
  (cd bindings-node && npm ci --no-audit --no-fund --ignore-scripts >/dev/null)
  (cd bindings-node && env "${zig_env[@]}" node_modules/.bin/napi build --platform --release \
    --target "$triple" --output-dir "$stage/napi")

  # The prebuilt package.
  local pre="$stage/$platform"
  cp -r "bindings-node/npm/$platform" "$pre"
  cp "$stage/napi/ferroflake.$platform.node" "$pre/ferroflake.$platform.node"
  strip --strip-debug "$pre/ferroflake.$platform.node"
  cp LICENSE-MIT LICENSE-APACHE "$pre/"
  (cd "$pre" && npm pack --silent --pack-destination "$dist/npm" >/dev/null)

  # The main package: what package.json's `files` names, from the checkout...
  local main="$stage/ferroflake" crate="$stage/ferroflake-node-$version"
  mkdir -p "$main/rust"
  cp bindings-node/{package.json,index.js,index.mjs,index.d.ts,install.js,README.md} "$main/"
  cp LICENSE-MIT LICENSE-APACHE "$main/"
  # ... the addon's crate as cargo packages it (its Cargo.toml without the workspace) ...
  tar -xzf "$target_dir/package/ferroflake-node-$version.crate" -C "$stage"
  cp -r "$crate"/{Cargo.toml,Cargo.lock,build.rs,src} "$main/"
  # ... and the crates it uses, patched in by path.
  {
    echo
    echo "# The ferroflake crates this addon uses, shipped under rust/ (unpacked .crate files)."
    echo "[patch.crates-io]"
    for dep in "${node_crates[@]}"; do
      tar -xzf "$dist/crates/$dep-$version.crate" -C "$main/rust"
      mv "$main/rust/$dep-$version" "$main/rust/$dep"
      rm -f "$main/rust/$dep/Cargo.lock" "$main/rust/$dep/Cargo.toml.orig" "$main/rust/$dep/.cargo_vcs_info.json"
      echo "$dep = { path = \"rust/$dep\" }"
    done
    echo
    echo "# A workspace of its own: a Cargo.toml in a folder above node_modules is not its workspace."
    echo "[workspace]"
  } >>"$main/Cargo.toml"
  # The lock file now names the patched crates by path; cargo rewrites it, keeping every
  # other version as the workspace locked it, and --locked then proves it complete.
  (cd "$main" && cargo metadata --offline --format-version 1 >/dev/null &&
    cargo tree --locked --offline -e normal >/dev/null)
  node -e '
    const fs = require("fs")
    const [file, prebuilt, version] = process.argv.slice(1)
    const manifest = JSON.parse(fs.readFileSync(file, "utf8"))
    manifest.files.push("rust")
    manifest.optionalDependencies = { [prebuilt]: version }
    delete manifest.devDependencies // the napi CLI: install.js fetches it when it builds
    fs.writeFileSync(file, JSON.stringify(manifest, null, 2) + "\n")
  ' "$main/package.json" "ferroflake-$platform" "$version"
  (cd "$main" && npm pack --silent --pack-destination "$dist/npm" >/dev/null)
}

if [ -n "${FERROFLAKE_CFG-}" ]; then
  echo "FERROFLAKE_CFG is set ($FERROFLAKE_CFG): a test-only build, never a release" >&2
  exit 1
fi
# The sources as this build starts: what the artifacts are stamped with, so that a file
# changed while they build leaves them stale, not fresh.
sources="$(dist_sources_hash)"
rm -rf "$dist"
mkdir -p "$dist"
check_versions
build_crates
build_c
build_python
build_npm
(cd "$dist" && find . -type f ! -name SHA256SUMS ! -name .sources | sed 's|^\./||' | sort | xargs sha256sum >SHA256SUMS)
dist_stamp "$sources"
if [ "$(dist_sources_hash)" != "$sources" ]; then
  echo "the sources changed during the build (include/ferroflake.h regenerated, or an edit):" \
    "the suites will refuse dist/ until this script runs again" >&2
fi
echo "--- dist/ ($version):"
(cd "$dist" && find . -type f | sed 's|^\./||' | sort | xargs ls -l | awk '{print $5, $9}')
