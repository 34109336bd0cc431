#!/usr/bin/env bash
# The release suite: takes every artifact scripts/release.sh built (scripts/test-all.sh runs
# it first; run it yourself before this suite alone), then installs each one the way its
# users do, in an empty folder outside the checkout, and runs a quickstart:
#   - versions: every place that states the version agrees (scripts/check-versions.py);
#   - crates: each .crate holds its README, both licence files and the metadata crates.io
#     shows; the core crate, unpacked, is the path dependency of a new cargo project that
#     cannot see this repository, and its README's quickstart runs there;
#   - C: the tarball unpacks under a fresh prefix, and a program compiled with
#     `pkg-config --cflags --libs ferroflake` runs against the shared library (by rpath and
#     by LD_LIBRARY_PATH) and the static one (`pkg-config --static`), also after the prefix
#     is moved;
#   - Python: the manylinux wheel's tags and metadata; the wheel, and the sdist (built by
#     pip), each installed in a fresh venv where the quickstart runs;
#   - npm: the two tarballs' contents and package.json files, the prebuilt addon's glibc
#     floor (2.17); both installed in an empty project with cargo hidden from PATH (the
#     prebuilt addon loads, nothing is compiled), and the main package alone, built from its
#     own sources by its install script; the quickstart runs after each.
# Ends with "release suite: N passed, M failed".
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
out="$target_dir/release-tests"
rm -rf "$out"
mkdir -p "$out"
# Outside the checkout, so nothing installed there can find the workspace by walking up.
work="$(mktemp -d "${TMPDIR:-/tmp}/ferroflake-release.XXXXXX")"
trap 'rm -rf "$work"' EXIT
case "$work/" in "$root/"*) echo "the scratch folder $work lies inside the checkout" >&2; exit 1 ;; esac

passed=0
failed=0
# check NAME COMMAND...: runs one check, keeps its output in $out/NAME.log, shows it on failure.
# The command runs in a subshell of its own, started apart from any condition, so `set -e`
# holds inside it (bash ignores it in a function called as an `if` condition), and a `cd`
# or an `export` stays there.
check() {
  local name="$1"
  shift
  ("$@") >"$out/$name.log" 2>&1 &
  if wait $!; then
    passed=$((passed + 1))
    echo "ok    $name"
  else
    failed=$((failed + 1))
    echo "FAIL  $name"
    sed 's/^/      /' "$out/$name.log" | tail -40
  fi
}

# Packaging is what is tested here, not whether the tree is committed: a release proper
# runs scripts/release.sh without --allow-dirty.
source scripts/dist.sh
need_dist
version="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "ferroflake"))')"

check versions-agree python3 scripts/check-versions.py

# --- crates -------------------------------------------------------------------------------

crates=(ferroflake ferroflake-store-address ferroflake-lease ferroflake-lease-stores
  ferroflake-segment ferroflake-remote ferroflake-segment-stores ferroflake-serve ferroflake-cli)

# Every published crate as crates.io receives it: the files users and the registry expect,
# and the metadata of its normalized Cargo.toml.
crate_contents() {
  local crate="$1" file="$dist/crates/$1-$version.crate" dir="$work/contents/$1-$version"
  mkdir -p "$work/contents"
  tar -xzf "$file" -C "$work/contents"
  for needed in Cargo.toml README.md LICENSE-MIT LICENSE-APACHE; do
    [ -s "$dir/$needed" ] || { echo "$crate: no $needed"; return 1; }
  done
  grep -q 'Permission is hereby granted' "$dir/LICENSE-MIT"
  grep -q 'Apache License' "$dir/LICENSE-APACHE"
  python3 - "$dir/Cargo.toml" "$crate" "$version" <<'EOF'
import sys, tomllib
manifest, crate, version = sys.argv[1], sys.argv[2], sys.argv[3]
package = tomllib.load(open(manifest, "rb"))["package"]
problems = []
def want(ok, what):
    if not ok:
        problems.append(what)
want(package.get("name") == crate, f"name {package.get('name')!r}")
want(package.get("version") == version, f"version {package.get('version')!r}")
want(package.get("publish", True) is not False, "publish = false")
want(package.get("license") == "MIT OR Apache-2.0", f"license {package.get('license')!r}")
want(package.get("repository") == "https://github.com/ferroflake/ferroflake",
     f"repository {package.get('repository')!r}")
want(len(package.get("description", "")) >= 20, "no description")
want(package.get("readme") == "README.md", f"readme {package.get('readme')!r}")
want(str(package.get("documentation", "")).startswith("https://"), "no documentation link")
keywords = package.get("keywords", [])
want(1 <= len(keywords) <= 5, f"{len(keywords)} keywords (crates.io takes 1 to 5)")
want(all(len(k) <= 20 for k in keywords), "a keyword over 20 characters")
want(1 <= len(package.get("categories", [])) <= 5, "categories")
for line in problems:
    print(f"{crate}: {line}")
print(f"{crate}: {', '.join(keywords)} | {', '.join(package.get('categories', []))}")
sys.exit(1 if problems else 0)
EOF
}
for crate in "${crates[@]}"; do
  check "crate-contents-$crate" crate_contents "$crate"
done

# The core crate from its .crate file, in a new project that cannot see this repository:
# the README's quickstart, run. The dependencies come from cargo's local cache (--offline):
# the workspace build has fetched them already.
crate_quickstart() {
  local app="$work/crate-app" unpacked="$work/crates/ferroflake-$version"
  mkdir -p "$work/crates" "$app/src"
  tar -xzf "$dist/crates/ferroflake-$version.crate" -C "$work/crates"
  cat >"$app/Cargo.toml" <<EOF
[package]
name = "quickstart"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
ferroflake = { path = "$unpacked" }

# A workspace of its own: cargo looks no further up.
[workspace]
EOF
  # The versions the crate was packaged with.
  cp "$unpacked/Cargo.lock" "$app/Cargo.lock"
  {
    echo 'fn main() -> Result<(), Box<dyn std::error::Error>> {'
    sed -n '/^```rust$/,/^```$/p' "$unpacked/README.md" | sed '1d;$d'
    echo '    Ok(())'
    echo '}'
  } >"$app/src/main.rs"
  grep -q 'Generator::new' "$app/src/main.rs"
  cd "$app"
  local workspace_root
  workspace_root="$(cargo locate-project --workspace --message-format plain)"
  [ "$workspace_root" = "$app/Cargo.toml" ] || { echo "workspace root $workspace_root"; return 1; }
  CARGO_TARGET_DIR="$app/target" cargo run --offline -q >"$app/output.txt"
  cat "$app/output.txt"
  # "ID BASE62 TIMESTAMP_MS", as the README's println! writes it.
  grep -Eq '^[0-9]{15,19} [0-9A-Za-z]{11} [0-9]{13}$' "$app/output.txt"
  # The ferroflake that was built is the unpacked crate's, not the workspace's.
  cargo metadata --offline --format-version 1 |
    python3 -c 'import json,sys; m=json.load(sys.stdin); p=[p["manifest_path"] for p in m["packages"] if p["name"]=="ferroflake"]; print(p); sys.exit(0 if p and p[0].startswith(sys.argv[1]) else 1)' "$unpacked"
}
check crate-quickstart crate_quickstart

# --- C tarball ------------------------------------------------------------------------------

host="$(rustc -vV | sed -n 's/^host: //p')"
c_name="ferroflake-c-$version-${host/-unknown-/-}"
tarball="$dist/$c_name.tar.gz"
prefix="$work/c/usr"

tarball_layout() {
  mkdir -p "$prefix"
  tar -tzvf "$tarball"
  tar -xzf "$tarball" -C "$prefix" --strip-components=1
  local lib="$prefix/lib" major minor soname
  IFS=. read -r major minor _ <<<"$version"
  # 0.x releases break at each minor version, later ones at each major.
  if [ "$major" = 0 ]; then soname="libferroflake.so.0.$minor"; else soname="libferroflake.so.$major"; fi
  [ -f "$prefix/include/ferroflake.h" ]
  [ -f "$lib/libferroflake.a" ]
  [ -f "$lib/libferroflake.so.$version" ]
  [ ! -L "$lib/libferroflake.so.$version" ]
  [ "$(readlink "$lib/$soname")" = "libferroflake.so.$version" ]
  [ "$(readlink "$lib/libferroflake.so")" = "$soname" ]
  readelf -d "$lib/libferroflake.so.$version" | grep -F "Library soname: [$soname]"
  [ -f "$lib/pkgconfig/ferroflake.pc" ]
  for doc in LICENSE-MIT LICENSE-APACHE CHANGELOG.md; do [ -s "$prefix/share/doc/ferroflake/$doc" ]; done
  # Relocatable: no path of the machine that built it.
  if grep -n "$root\|/target/" "$lib/pkgconfig/ferroflake.pc"; then return 1; fi
  grep -qx "#define FERROFLAKE_VERSION \"$version\"" "$prefix/include/ferroflake.h"
  [ "$(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --modversion ferroflake)" = "$version" ]
  # The default build: no clients of the server stores (those need ffi-c/build-c.sh --stores
  # and another set of libraries to link).
  if grep -aq 'tokio_postgres' "$lib/libferroflake.so.$version"; then
    echo "the shared library holds the server stores' clients"
    return 1
  fi
}
check c-tarball-layout tarball_layout

cat >"$work/c/quickstart.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <ferroflake.h>

int main(void) {
    ferroflake_layout *layout = NULL;
    ferroflake_generator *gen = NULL;
    ferroflake_parts parts;
    uint64_t id = 0;
    if (strcmp(ferroflake_version(), FERROFLAKE_VERSION) != 0) {
        printf("library %s, header %s\n", ferroflake_version(), FERROFLAKE_VERSION);
        return 1;
    }
    ferroflake_result rc = ferroflake_layout_new_preset(FERROFLAKE_PRESET_TWITTER, &layout);
    if (rc == FERROFLAKE_RESULT_OK) rc = ferroflake_generator_new(layout, 7, NULL, &gen);
    if (rc == FERROFLAKE_RESULT_OK) rc = ferroflake_generator_next_id(gen, &id);
    if (rc == FERROFLAKE_RESULT_OK) rc = ferroflake_layout_decode(layout, id, &parts);
    printf("%s %s %llu node %llu\n", ferroflake_version(), ferroflake_result_message(rc),
           (unsigned long long)id, (unsigned long long)parts.node);
    ferroflake_generator_free(gen);
    ferroflake_layout_free(layout);
    return rc != FERROFLAKE_RESULT_OK || parts.node != 7;
}
EOF

# c_quickstart MODE PREFIX: compiles quickstart.c against the ferroflake under PREFIX as
# pkg-config describes it, checks what the binary links, runs it.
c_quickstart() {
  local mode="$1" at="$2" binary="$work/c/quickstart-$1"
  export PKG_CONFIG_PATH="$at/lib/pkgconfig"
  local cflags libs libdir
  cflags="$(pkg-config --cflags ferroflake)"
  libdir="$(pkg-config --variable=libdir ferroflake)"
  case "$mode" in
    shared-rpath | shared-ld-library-path)
      libs="$(pkg-config --libs ferroflake)"
      local rpath=()
      [ "$mode" = shared-rpath ] && rpath=(-Wl,-rpath,"$libdir")
      # shellcheck disable=SC2086 # pkg-config output is meant to be split into words
      gcc -Wall -Werror "$work/c/quickstart.c" $cflags $libs "${rpath[@]}" -o "$binary"
      readelf -d "$binary" | grep -F 'Shared library: [libferroflake.so.0.'
      ;;
    static*)
      # --static adds what the archive needs (Libs.private); -l:libferroflake.a picks the
      # archive where -lferroflake would pick the shared library beside it.
      libs="$(pkg-config --static --libs ferroflake | sed 's/-lferroflake\b/-l:libferroflake.a/')"
      # shellcheck disable=SC2086
      gcc -Wall -Werror "$work/c/quickstart.c" $cflags $libs -o "$binary"
      if readelf -d "$binary" | grep -F 'libferroflake'; then return 1; fi
      ;;
  esac
  if [ "$mode" = shared-ld-library-path ]; then
    # Without the path the loader cannot find the library.
    if "$binary" 2>/dev/null; then return 1; fi
    LD_LIBRARY_PATH="$libdir" "$binary" | tee "$binary.txt"
  else
    "$binary" | tee "$binary.txt"
  fi
  grep -Eq "^$version ok [0-9]+ node 7$" "$binary.txt"
}
check c-quickstart-shared-rpath c_quickstart shared-rpath "$prefix"
check c-quickstart-shared-ld-library-path c_quickstart shared-ld-library-path "$prefix"
check c-quickstart-static c_quickstart static "$prefix"
# The same tree moved elsewhere still describes itself correctly.
c_moved() {
  mv "$prefix" "$work/c/elsewhere"
  c_quickstart static-moved "$work/c/elsewhere"
}
check c-quickstart-static-moved-prefix c_moved

# --- Python -----------------------------------------------------------------------------------

# One abi3 wheel for x86-64 Linux: its tags (manylinux2014 = manylinux_2_17) are checked below.
wheel_name="$(cd "$dist/python" 2>/dev/null && ls ferroflake-"$version"-cp39-abi3-*x86_64.whl 2>/dev/null || true)"
sdist_name="ferroflake-$version.tar.gz"
mkdir -p "$work/py"
cat >"$work/py/quickstart.py" <<'EOF'
import pathlib
import sys

import ferroflake
from ferroflake import Generator

version, venv = sys.argv[1], pathlib.Path(sys.argv[2]).resolve()
installed = pathlib.Path(ferroflake.__file__).resolve()
assert venv in installed.parents, f"imported {installed}, not from {venv}"
assert ferroflake.__version__ == version, (ferroflake.__version__, version)
gen = Generator(7)
id_ = gen.next_id()
assert gen.next_ids(1000)[0] > id_
parts = gen.decode(id_)
text = ferroflake.encode(id_, "base62")
assert ferroflake.parse(text, "base62") == id_ and parts.node == 7
print(ferroflake.__version__, id_, text, installed)
EOF

# The wheel's name and metadata as PyPI reads them.
python_wheel_metadata() {
  python3 - "$dist/python/$wheel_name" "$version" <<'EOF'
import sys, zipfile
path, version = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(path) as wheel:
    names = wheel.namelist()
    meta = wheel.read(f"ferroflake-{version}.dist-info/METADATA").decode()
    tags = wheel.read(f"ferroflake-{version}.dist-info/WHEEL").decode()
print(meta.split("\n\n")[0])
print(tags)
assert f"Version: {version}" in meta
assert "Requires-Python: >=3.9" in meta
assert "License-Expression: MIT OR Apache-2.0" in meta
# What PyPI's page shows: the README (Markdown), links, licence files, classifiers.
assert "Description-Content-Type: text/markdown" in meta
assert "# ferroflake for Python" in meta and "pip install ferroflake" in meta
assert "Project-URL: Repository, https://github.com/ferroflake/ferroflake" in meta
assert "License-File: LICENSE-MIT" in meta and "License-File: LICENSE-APACHE" in meta
assert any(n.endswith("licenses/LICENSE-MIT") for n in names), names
assert "Classifier: Typing :: Typed" in meta and "Keywords: " in meta
assert "Tag: cp39-abi3-manylinux_2_17_x86_64" in tags.splitlines()
assert "Tag: cp39-abi3-manylinux2014_x86_64" in tags.splitlines()
assert any(n.startswith("ferroflake/_native") and n.endswith(".so") for n in names), names
assert "ferroflake/py.typed" in names
EOF
}

# The two builds from source (the sdist through pip, the npm package without its prebuilt
# addon) share one target directory, outside the checkout's: their crates.io dependencies
# are compiled once. Not the checkout's own: cargo names the shipped ferroflake crates as it
# names the checkout's (by their path inside the workspace), so there it would take the
# checkout's builds for them, stale or not, and the test would prove nothing about the
# shipped sources. The two packages lay out those crates under different paths, so neither
# can stand in for the other's.
source_target="$work/source-target"
# Both compile unoptimised (their release profile at opt-level 0, C dependencies at -O0
# with it): what they test is that the shipped sources are complete, build where users
# build them and work; the same sources built optimised are the wheel and the prebuilt
# addon, tested above. It halves the two builds.
source_build_env=(CARGO_TARGET_DIR="$source_target" CARGO_PROFILE_RELEASE_OPT_LEVEL=0)

# python_install NAME ARTIFACT: a fresh venv outside the checkout, the artifact installed
# into it with pip, and the quickstart run from the venv's own folder.
python_install() {
  local venv="$work/py/$1-venv"
  python3 -m venv "$venv"
  if [ "$1" = wheel ]; then
    # Nothing to fetch: the wheel has no dependencies and holds the built extension.
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-index "$2"
  else
    # pip unpacks the sdist in a temporary folder and builds it there (maturin from PyPI,
    # Rust from PATH).
    env "${source_build_env[@]}" "$venv/bin/pip" install --quiet --disable-pip-version-check "$2"
  fi
  cd "$venv"
  "$venv/bin/python" "$work/py/quickstart.py" "$version" "$venv"
}

if [ -n "$wheel_name" ] && [ -f "$dist/python/$wheel_name" ] && [ -f "$dist/python/$sdist_name" ]; then
  check python-wheel-metadata python_wheel_metadata
  check python-wheel-install python_install wheel "$dist/python/$wheel_name"
  check python-sdist-install python_install sdist "$dist/python/$sdist_name"
else
  echo "FAIL  python: dist/python/ lacks the abi3 wheel or $sdist_name"
  ls -l "$dist/python" || true
  failed=$((failed + 1))
fi

# --- npm --------------------------------------------------------------------------------------

npm_main="$dist/npm/ferroflake-$version.tgz"
npm_prebuilt="$dist/npm/ferroflake-linux-x64-gnu-$version.tgz"

# What each tarball holds, and the package.json npm reads from it.
npm_contents() {
  tar -tzf "$npm_main" | sort >"$work/npm-main.txt"
  tar -tzf "$npm_prebuilt" | sort >"$work/npm-prebuilt.txt"
  cat "$work/npm-main.txt" "$work/npm-prebuilt.txt"
  for needed in index.js index.mjs index.d.ts install.js README.md LICENSE-MIT LICENSE-APACHE \
    Cargo.toml Cargo.lock build.rs src/lib.rs rust/ferroflake/Cargo.toml rust/ferroflake/src/lib.rs \
    rust/ferroflake-segment-stores/Cargo.toml; do
    grep -qx "package/$needed" "$work/npm-main.txt" || { echo "ferroflake: no $needed"; return 1; }
  done
  # Sources only: no addon, no build output, no tests.
  if grep -E '\.node$|/target/|^package/test/' "$work/npm-main.txt"; then return 1; fi
  for needed in ferroflake.linux-x64-gnu.node package.json README.md LICENSE-MIT; do
    grep -qx "package/$needed" "$work/npm-prebuilt.txt" || { echo "prebuilt: no $needed"; return 1; }
  done
  tar -xzOf "$npm_main" package/package.json >"$work/npm-main.json"
  tar -xzOf "$npm_prebuilt" package/package.json >"$work/npm-prebuilt.json"
  node - "$work/npm-main.json" "$work/npm-prebuilt.json" "$version" <<'JS'
const assert = require('node:assert/strict')
const fs = require('node:fs')
const [mainFile, prebuiltFile, version] = process.argv.slice(2)
const main = JSON.parse(fs.readFileSync(mainFile, 'utf8'))
const prebuilt = JSON.parse(fs.readFileSync(prebuiltFile, 'utf8'))
assert.equal(main.name, 'ferroflake')
assert.equal(main.version, version)
assert.deepEqual(main.optionalDependencies, { 'ferroflake-linux-x64-gnu': version })
assert.equal(main.scripts.install, 'node install.js')
assert.equal(main.devDependencies, undefined)
assert.equal(prebuilt.name, 'ferroflake-linux-x64-gnu')
assert.equal(prebuilt.version, version)
assert.deepEqual([prebuilt.os, prebuilt.cpu, prebuilt.libc], [['linux'], ['x64'], ['glibc']])
assert.equal(prebuilt.main, 'ferroflake.linux-x64-gnu.node')
for (const p of [main, prebuilt]) {
  assert.equal(p.license, 'MIT OR Apache-2.0')
  assert.equal(p.repository.url, 'git+https://github.com/ferroflake/ferroflake.git')
  assert.ok(p.description.length >= 20 && p.keywords.length >= 3)
}
console.log('package.json files agree')
JS
  # The addon asks for no glibc symbol newer than 2.17.
  mkdir -p "$work/npm-prebuilt"
  tar -xzf "$npm_prebuilt" -C "$work/npm-prebuilt"
  local newest
  newest="$(objdump -T "$work/npm-prebuilt/package/ferroflake.linux-x64-gnu.node" |
    grep -o 'GLIBC_[0-9.]*' | sort -Vu | tail -1)"
  echo "newest glibc symbol: $newest"
  [ "$(printf '%s\nGLIBC_2.17\n' "$newest" | sort -V | tail -1)" = GLIBC_2.17 ]
}

# The quickstart a Node user runs: import and require, an ID, its decoding.
cat >"$work/npm-quickstart.mjs" <<'JS'
import { createRequire } from 'node:module'
import { Generator, decode } from 'ferroflake'
const require = createRequire(import.meta.url)
const { version } = require('ferroflake/package.json')
const id = new Generator({ nodeId: 7 }).nextId()
if (!Number.isSafeInteger(id) || decode(id).nodeId !== 7) throw new Error(`bad id ${id}`)
if (require('ferroflake').Generator !== Generator) throw new Error('require and import differ')
console.log(version, id, require.resolve('ferroflake'))
JS

# npm_install NAME ARGS...: an empty project outside the checkout, ARGS given to `npm install`
# (install scripts shown), then the quickstart.
npm_install() {
  local name="$1" project="$work/npm/$1"
  shift
  mkdir -p "$project"
  cd "$project"
  npm init -y >/dev/null
  npm install --no-audit --no-fund --foreground-scripts "$@" 2>&1 | tee install.log
  cp "$work/npm-quickstart.mjs" quickstart.mjs
  node quickstart.mjs | tee run.txt
  grep -Eq "^$version [0-9]+ $project/node_modules/ferroflake/index.js$" run.txt
}

# The prebuilt case: both packages (as npm takes the optional one from the registry on this
# platform), with no Rust toolchain on PATH, so nothing can have been compiled.
npm_prebuilt_install() {
  local bin
  bin="$(dirname "$(command -v node)")"
  export PATH="$bin:/usr/bin:/bin"
  if command -v cargo || command -v rustc; then
    echo "cargo is still on PATH"
    return 1
  fi
  npm_install prebuilt "$npm_prebuilt" "$npm_main"
  grep -q 'using the prebuilt addon from ferroflake-linux-x64-gnu' install.log
  if compgen -G 'node_modules/ferroflake/*.node'; then
    echo "an addon was built"
    return 1
  fi
}

# The source fallback: the main package alone (no optional package, as on a platform without
# a prebuilt addon), built by its install script outside the repository, in the sources'
# target directory (see source_target). FERROFLAKE_BUILD_STORES=0 leaves the server
# stores' clients out, which makes this build several minutes shorter; the stores' crates
# are compiled from the same .crate files by the Python sdist's build above, and the
# prebuilt addon has them.
npm_source_install() {
  export "${source_build_env[@]}" FERROFLAKE_BUILD_STORES=0
  npm_install source --omit=optional "$npm_main"
  grep -q 'building the addon from source' install.log
  [ -f node_modules/ferroflake/ferroflake.linux-x64-gnu.node ]
  [ ! -e node_modules/ferroflake-linux-x64-gnu ]
  # Built as asked: SQLite segments work, a server store or registry is refused at once with
  # a typed error.
  node --input-type=module -e '
    import assert from "node:assert/strict"
    import { LeasedGenerator, SegmentAllocator } from "ferroflake"
    const allocator = await SegmentAllocator.open({ store: process.argv[1] + "/segments.db" })
    await allocator.createKey("orders", { start: 1, step: 10 })
    const orders = await allocator.key("orders")
    assert.equal(orders.nextId(), 1)
    await allocator.close()
    assert.throws(() => SegmentAllocator.open({ store: "redis://127.0.0.1:1/" }),
      { code: "ERR_FERROFLAKE_SEGMENT_NOT_BUILT", message: /redis:\/\/ stores are left out of this build/ })
    assert.throws(() => LeasedGenerator.open({ registry: "etcd://127.0.0.1:1" }),
      { code: "ERR_FERROFLAKE_LEASE_NOT_BUILT", message: /etcd:\/\/.*left out of this build/ })
    console.log("sqlite segments work; redis:// and etcd:// are refused: the build leaves the stores out")
  ' "$PWD"
}

if [ -f "$npm_main" ] && [ -f "$npm_prebuilt" ]; then
  check npm-contents npm_contents
  check npm-install-prebuilt-without-cargo npm_prebuilt_install
  check npm-install-from-source npm_source_install
else
  echo "FAIL  npm: dist/npm/ lacks ferroflake-$version.tgz or ferroflake-linux-x64-gnu-$version.tgz"
  ls -l "$dist/npm" || true
  failed=$((failed + 1))
fi

echo "release suite: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
