#!/usr/bin/env bash
# The C ABI suite (ffi-c, include/ferroflake.h), on the libraries that ship: the tarball
# scripts/release.sh built (which regenerated the header: this suite fails on drift).
# Checks the header's version macros and ferroflake.pc against Cargo.toml, runs the ffi
# crate's Rust unit tests, then builds real C and C++ programs against the tarball's static
# and shared library and runs them plainly, under AddressSanitizer (+UBSan) and, on the
# shared library, under valgrind (ASan has the static one); the threaded one under
# ThreadSanitizer too, plus the C snippets of README.md and docs/c.md through pkg-config.
# Then the library is built again with the `stores` feature, and lease.c and segment.c run
# against it, where unreachable servers are tried for real (without it, such addresses give
# NOT_BUILT), and both take a lease and a key through a ferroflake service
# (scripts/servers/service.sh). Ends with "C suite: N passed, M failed". No benchmark runs
# here.
# mask.c checks every case of testdata/vectors.json's mask section; segment.c includes the
# order numbers on a segment allocator.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source scripts/dist.sh
need_dist
target_dir="${CARGO_TARGET_DIR:-$root/target}"
out="$target_dir/c-tests"
rm -rf "$out"
mkdir -p "$out"

# Each check's outcome is a line in $out/results ("ok NAME" or "FAIL NAME"), so that checks
# run side by side (check_together) count as the others do.
results="$out/results"
: >"$results"
# check NAME COMMAND...: runs one check, keeps its output in $out/NAME.log, shows it on failure.
# The command runs in a subshell of its own, started apart from any condition, so `set -e`
# holds inside a function it calls (bash ignores it in a function called as an `if`
# condition, and such a check passed whenever its last line did). It keeps the caller's
# standard input, which a command started with & would otherwise read from /dev/null.
check() {
  local name="$1"
  shift
  ("$@") <&0 >"$out/$name.log" 2>&1 &
  if wait $!; then
    echo "ok    $name" | tee -a "$results"
  else
    { echo "FAIL  $name"; sed 's/^/      /' "$out/$name.log" | tail -40; } | tee -a "$results"
  fi
}
# check_together "NAME COMMAND..."...: the checks at once, each as `check` runs it (each
# argument is one check, its words split); returns when all are done. For runs that mostly
# wait (lease.c sleeps through its TTLs) or take one core each (valgrind).
check_together() {
  local one
  for one in "$@"; do
    # shellcheck disable=SC2086 # each argument is a check's words
    check $one &
  done
  wait
}

tarballs=("$dist"/ferroflake-c-*.tar.gz)
[ ${#tarballs[@]} -eq 1 ] && [ -f "${tarballs[0]}" ] || { echo "not one C tarball in $dist" >&2; exit 1; }
echo "--- the C library from ${tarballs[0]#"$root/"}"
tar -xzf "${tarballs[0]}" -C "$out"
prefix="$(echo "$out"/ferroflake-c-*/)"
prefix="${prefix%/}"
inc="$prefix/include"
lib="$prefix/lib"

header_is_committed_and_current() {
  git ls-files --error-unmatch include/ferroflake.h >/dev/null
  git diff --exit-code -- include/
}
check header-matches-sources header_is_committed_and_current

version_macros_match_cargo_toml() {
  local cargo_version header_version
  cargo_version="$(python3 -c 'import tomllib,sys; print(tomllib.load(open("Cargo.toml","rb"))["workspace"]["package"]["version"])')"
  header_version="$(sed -n 's/^#define FERROFLAKE_VERSION "\(.*\)"$/\1/p' include/ferroflake.h)"
  echo "Cargo.toml $cargo_version, header $header_version"
  [ "$cargo_version" = "$header_version" ]
  IFS=. read -r major minor patch <<<"$cargo_version"
  grep -qx "#define FERROFLAKE_VERSION_MAJOR $major" include/ferroflake.h
  grep -qx "#define FERROFLAKE_VERSION_MINOR $minor" include/ferroflake.h
  grep -qx "#define FERROFLAKE_VERSION_PATCH $patch" include/ferroflake.h
  [ "$(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --modversion ferroflake)" = "$cargo_version" ]
}
check versions-match-cargo-toml version_macros_match_cargo_toml

# Release, so the build dependencies and the core are shared with the library's build.
check rust-unit-tests cargo test -p ferroflake-ffi --release --lib
# And with the stores, in the Rust tests' build (scripts/rust-tests.sh).
source scripts/rust-tests.sh
check rust-unit-tests-with-stores rust_tests 'package(ferroflake-ffi)'

check header-alone-c99 gcc -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only -x c \
  -I"$inc" - <<<'#include "ferroflake.h"'
check header-alone-c11 gcc -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only -x c \
  -I"$inc" - <<<'#include "ferroflake.h"'
check header-alone-c++11 g++ -std=c++11 -Wall -Wextra -Werror -pedantic -fsyntax-only -x c++ \
  -I"$inc" - <<<'#include "ferroflake.h"'

python3 ffi-c/tests/vectors_to_c.py testdata/vectors.json "$out/vectors_cases.h" \
  "$out/vectors_mask_cases.h"

cflags=(-std=c99 -Wall -Wextra -Werror -pedantic -g -O1 -pthread -I"$inc" -I"$out" -Iffi-c/tests)
static_libs=("$lib/libferroflake.a" -lpthread -ldl -lm)
shared_libs=(-L"$lib" -lferroflake -Wl,-rpath,"$lib")
sanitize=(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
# --fair-sched: threads take turns, so a lease's renewal thread is not starved by busy ones.
valgrind=(valgrind -q --fair-sched=yes --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=all
  --suppressions=ffi-c/tests/valgrind.supp)

# lease.c and segment.c fork processes that share a registry or a SQLite file in /tmp.
for program in api vectors mask threads lease segment; do
  src="ffi-c/tests/$program.c"
  check "$program-build-static" gcc "${cflags[@]}" "$src" "${static_libs[@]}" -o "$out/$program-static"
  check "$program-build-shared" gcc "${cflags[@]}" "$src" "${shared_libs[@]}" -o "$out/$program-shared"
  check "$program-build-asan" gcc "${cflags[@]}" "${sanitize[@]}" "$src" "${static_libs[@]}" \
    -o "$out/$program-asan"
  check_together "$program-static $out/$program-static" \
    "$program-shared $out/$program-shared" \
    "$program-valgrind-shared ${valgrind[*]} $out/$program-shared" \
    "$program-asan env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 $out/$program-asan"
done

# ThreadSanitizer sees what the C side does across threads: the handle shared by the workers,
# their own buffers, pthread_create/join. The Rust library is not instrumented (that takes a
# nightly -Zsanitizer=thread build of the whole std), so races inside it, and the generator's
# atomics, are invisible here; the loom models and core/tests/concurrent.rs cover those.
# Nothing in threads.c hands data over through the library, so an uninstrumented
# synchronisation point cannot show up as a false report. ASLR off: TSan's fixed shadow
# layout refuses some kernels' randomised mappings.
tsan=(-fsanitize=thread -fno-omit-frame-pointer)
tsan_run=(env TSAN_OPTIONS=halt_on_error=1:exitcode=66 setarch "$(uname -m)" -R)
check threads-build-tsan gcc "${cflags[@]}" "${tsan[@]}" ffi-c/tests/threads.c "${static_libs[@]}" \
  -o "$out/threads-tsan"
check threads-tsan "${tsan_run[@]}" "$out/threads-tsan"
# The same program with a deliberate race: TSan must report it, or the run above proves nothing.
tsan_catches_a_race() {
  gcc "${cflags[@]}" "${tsan[@]}" -DFERROFLAKE_TEST_DATA_RACE ffi-c/tests/threads.c \
    "${static_libs[@]}" -o "$out/threads-tsan-race"
  local report="$out/threads-tsan-race.txt"
  if "${tsan_run[@]}" "$out/threads-tsan-race" >"$report" 2>&1; then
    cat "$report"
    echo "ThreadSanitizer passed a program with a data race"
    return 1
  fi
  cat "$report"
  grep -q "WARNING: ThreadSanitizer: data race" "$report"
}
check threads-tsan-catches-a-race tsan_catches_a_race

cxxflags=(-std=c++11 -Wall -Wextra -Werror -pedantic -g -O1 -pthread -I"$inc")
check cxx-build g++ "${cxxflags[@]}" ffi-c/tests/cxx.cpp "${static_libs[@]}" -o "$out/cxx"
check cxx-run "$out/cxx"
check cxx-valgrind "${valgrind[@]}" "$out/cxx"

# The C snippets of the docs, compiled the way docs/c.md says (pkg-config, shared and
# static): README.md's quickstart, and docs/c.md's mask example with a key in
# FERROFLAKE_MASK_KEY, as it has it.
for doc_section in README.md:quickstart-c docs/c.md:quickstart-c-mask; do
  doc="${doc_section%%:*}" section="${doc_section#*:}"
  sed -n "/<!-- section:$section -->/,/<!-- \/section:$section -->/p" "$doc" |
    sed -n '/^```c$/,/^```$/p' | sed '1d;$d' >"$out/readme_$section.c"
  [ -s "$out/readme_$section.c" ] || echo "$doc has no C block in a $section section" \
    >"$out/readme_$section.missing"
done
readme_snippet() {
  local section="$1" mode="$2" binary="$out/readme-$1-$2"
  export PKG_CONFIG_PATH="$lib/pkgconfig"
  if [ -e "$out/readme_$section.missing" ]; then
    cat "$out/readme_$section.missing"
    return 1
  fi
  if [ "$mode" = shared ]; then
    # shellcheck disable=SC2046 # pkg-config output is meant to be split into words
    gcc -Wall -Werror "$out/readme_$section.c" $(pkg-config --cflags --libs ferroflake) \
      -Wl,-rpath,"$(pkg-config --variable=libdir ferroflake)" -o "$binary"
  else
    # shellcheck disable=SC2046
    gcc -Wall -Werror "$out/readme_$section.c" $(pkg-config --cflags ferroflake) \
      "$lib/libferroflake.a" -lpthread -ldl -lm -o "$binary"
  fi
  FERROFLAKE_MASK_KEY=1:000102030405060708090a0b0c0d0e0f "$binary" | tee "$binary.txt"
  grep -Eq '^ok [0-9]+$' "$binary.txt"
}
check readme-quickstart-shared readme_snippet quickstart-c shared
check readme-quickstart-static readme_snippet quickstart-c static
check readme-mask-shared readme_snippet quickstart-c-mask shared
check readme-mask-static readme_snippet quickstart-c-mask static

# Leases and segments against a library with the stores: an unreachable Redis, PostgreSQL
# or MySQL server is refused with FERROFLAKE_RESULT_UNAVAILABLE within seconds. That library
# does not ship (the tarball's leaves the stores out): it is the static library of the Rust
# tests' build (scripts/rust-tests.sh, every feature), so no release build of the store
# clients is made for it. It links what the tarball's does, and zlib (MySQL's client
# compresses), as `ffi-c/build-c.sh --stores` says in its ferroflake.pc.
echo "--- libferroflake with the stores, from the Rust tests' build (dev profile)"
rust_build --lib
# shellcheck disable=SC2046 # pkg-config output is meant to be split into words
stores_static=("$rust_bin_dir/libferroflake_ffi.a"
  $(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --libs --static ferroflake |
    sed 's/-L[^ ]*//; s/-lferroflake//') -lz)
# lease.c and segment.c take a lease and a key through a ferroflake service too
# (FERROFLAKE_TEST_SERVICE).
source scripts/servers/service.sh
trap stop_test_service EXIT
start_test_service
for program in lease segment; do
  src="ffi-c/tests/$program.c"
  check "$program-stores-build" gcc "${cflags[@]}" -DFERROFLAKE_TEST_STORES=1 "$src" \
    "${stores_static[@]}" -o "$out/$program-stores"
  check "$program-stores" "$out/$program-stores"
done

passed="$(grep -c '^ok ' "$results" || true)"
failed="$(grep -c '^FAIL ' "$results" || true)"
echo "C suite: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
