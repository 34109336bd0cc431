#!/usr/bin/env bash
# Builds the C library in release and lays it out as an install prefix:
#   PREFIX/include/ferroflake.h
#   PREFIX/lib/libferroflake.a, PREFIX/lib/libferroflake.so (-> .so.0.1 -> .so.0.1.0)
#   PREFIX/lib/pkgconfig/ferroflake.pc (relocatable: the tree works wherever it is moved)
# Usage: ffi-c/build-c.sh [--stores] [PREFIX]   (default: <target dir>/ferroflake-c)
#   --stores  with the lease registries and segment stores on servers (etcd, Redis,
#             ZooKeeper, PostgreSQL, MySQL): a larger library, and etcd's client needs protoc
#             (scripts/install-deps.sh installs it). Without it, leases use the embedded
#             registry and segments SQLite; other addresses give FERROFLAKE_RESULT_NOT_BUILT.
# Set FERROFLAKE_WRITE_HEADER=1 to regenerate include/ferroflake.h on the way (the header is
# the same either way).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
features=()
if [ "${1:-}" = --stores ]; then
  features=(--features stores)
  shift
fi
prefix="${1:-$target_dir/ferroflake-c}"

cargo build --manifest-path "$root/Cargo.toml" -p ferroflake-ffi --release --lib "${features[@]}"

# The package version as cargo sees it ("path+file:///...#ferroflake-ffi@0.1.0").
version="$(cargo pkgid --manifest-path "$root/Cargo.toml" -p ferroflake-ffi | sed 's/.*[#@]//')"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "odd version '$version'" >&2; exit 1; }
IFS=. read -r major minor _ <<<"$version"
# The soname build.rs gives the shared library: 0.x releases break at each minor version.
if [ "$major" = 0 ]; then soname="libferroflake.so.0.$minor"; else soname="libferroflake.so.$major"; fi

mkdir -p "$prefix/include" "$prefix/lib/pkgconfig"
cp "$root/include/ferroflake.h" "$prefix/include/"
# The Rust lib name is ferroflake_ffi (the core crate owns `ferroflake`); C users link
# -lferroflake, so the outputs are installed under that name.
cp "$target_dir/release/libferroflake_ffi.a" "$prefix/lib/libferroflake.a"
cp "$target_dir/release/libferroflake_ffi.so" "$prefix/lib/libferroflake.so.$version"
ln -sf "libferroflake.so.$version" "$prefix/lib/$soname"
ln -sf "$soname" "$prefix/lib/libferroflake.so"
# What the Rust standard library in the static archive needs (rustc --print native-static-libs).
native_libs="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
# The stores add zlib (MySQL's client compresses).
if [ ${#features[@]} -gt 0 ]; then native_libs="$native_libs -lz"; fi
# The .pc file names no path: it finds PREFIX from its own location, so the tree can move.
sed -e "s|@VERSION@|$version|" -e "s|@NATIVE_LIBS@|$native_libs|" \
  "$root/ffi-c/ferroflake.pc.in" >"$prefix/lib/pkgconfig/ferroflake.pc"
echo "ferroflake C library $version installed in $prefix"
