#!/usr/bin/env bash
# Python suite, on the wheel that ships: the manylinux abi3 wheel scripts/release.sh built
# into dist/python/, installed the way a user does (`pip install` into a fresh venv, with
# the `test` extra: pytest, mypy), and into venvs of the oldest and newest other CPython
# this machine has; pytest against the INSTALLED package, from outside the source tree, on
# every interpreter at once; then mypy.stubtest. The sdist's build through pip is tested in
# test-release.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/dist.sh"
need_dist
# A service for the tests that take segments through one (FERROFLAKE_TEST_SERVICE).
source "$root/scripts/servers/service.sh"
trap stop_test_service EXIT
start_test_service
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

pyenv_versions="${PYENV_ROOT:-$HOME/.pyenv}/versions"
others=()
for pattern in "3.9.*" "3.13.*" "3.12.*"; do
  found=$(ls -d "$pyenv_versions"/$pattern 2>/dev/null | sort -V | tail -1 || true)
  [ -n "$found" ] && [ -x "$found/bin/python" ] && others+=("$found/bin/python")
  [ ${#others[@]} -ge 2 ] && break
done
venvs=("$venv")
for other in "${others[@]}"; do
  other_venv="$suite/venv-$("$other" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  "$other" -m venv "$other_venv"
  "$other_venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel" "pytest>=7"
  venvs+=("$other_venv")
done

# pytest on every interpreter at once: the tests mostly wait out short leases, so on two
# cores the runs overlap. Each runs from its venv's folder, where `import ferroflake`
# cannot find bindings-python/python.
runs=()
for v in "${venvs[@]}"; do
  (cd "$v" && exec "$v/bin/python" -m pytest -rs -p no:cacheprovider "$root/bindings-python/tests") \
    >"$v/pytest.log" 2>&1 &
  runs+=($!)
done
failed=0
for i in "${!venvs[@]}"; do
  status=0
  wait "${runs[$i]}" || status=$?
  echo "=== $("${venvs[$i]}/bin/python" -V): pytest exited $status"
  cat "${venvs[$i]}/pytest.log"
  # 5: pytest collected no tests, which must fail too.
  [ "$status" -eq 0 ] || failed=1
done
[ "$failed" -eq 0 ]

cd "$venv"
"$py" -m mypy.stubtest ferroflake
if [ ${#others[@]} -eq 0 ]; then
  echo "no other CPython found: the wheel was tested on $("$py" -V) only"
fi
