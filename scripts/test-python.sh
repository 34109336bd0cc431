#!/usr/bin/env bash
# Python suite, on the wheel that ships: the manylinux abi3 wheel scripts/release.sh built
# into dist/python/, installed the way a user does (`pip install` into a fresh venv, with
# the `test` extra: pytest, mypy), then pytest and mypy.stubtest against the INSTALLED
# package, from outside the source tree; then the same wheel on the oldest and newest other
# CPython this machine has. The sdist's build through pip is tested in test-release.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/dist.sh"
need_dist
suite="$root/target/python-suite"
wheels=("$dist"/python/ferroflake-*-cp39-abi3-*.whl)
[ ${#wheels[@]} -eq 1 ] && [ -f "${wheels[0]}" ] || { echo "not one abi3 wheel in $dist/python" >&2; exit 1; }
wheel="${wheels[0]}"
echo "--- ${wheel#"$root/"}"

rm -rf "$suite"
venv="$suite/venv"
python3 -m venv "$venv"
py="$venv/bin/python"
# The wheel plus its `test` extra, as declared in pyproject.toml.
"$py" -m pip install --quiet --disable-pip-version-check "$wheel[test]"

cd "$venv" # so `import ferroflake` cannot find bindings-python/python
status=0
# -rs: a skipped test says why (the server tests run only with the servers up:
# `bash scripts/servers/with-servers.sh bash scripts/test-python.sh`).
"$py" -m pytest -rs -p no:cacheprovider "$root/bindings-python/tests" || status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
elif [ "$status" -ne 0 ]; then
  exit "$status"
fi

# The shipped stubs must describe the built module exactly.
"$py" -m mypy.stubtest ferroflake

# The same abi3 wheel on the oldest and newest other CPython this machine has (pyenv's),
# if any: the wheel claims CPython 3.9 and later.
pyenv_versions="${PYENV_ROOT:-$HOME/.pyenv}/versions"
others=()
for pattern in "3.9.*" "3.13.*" "3.12.*"; do
  found=$(ls -d "$pyenv_versions"/$pattern 2>/dev/null | sort -V | tail -1 || true)
  [ -n "$found" ] && [ -x "$found/bin/python" ] && others+=("$found/bin/python")
  [ ${#others[@]} -ge 2 ] && break
done
if [ ${#others[@]} -eq 0 ]; then
  echo "no other CPython found: the wheel was tested on $("$py" -V) only"
  exit 0
fi
for other in "${others[@]}"; do
  other_venv="$suite/venv-$("$other" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  "$other" -m venv "$other_venv"
  "$other_venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel" "pytest>=7"
  echo "=== the same wheel on $("$other_venv/bin/python" -V)"
  (cd "$other_venv" && "$other_venv/bin/python" -m pytest -q -p no:cacheprovider "$root/bindings-python/tests")
done
