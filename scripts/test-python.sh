#!/usr/bin/env bash
# Python suite: installs the package the way a user does (`pip install ./bindings-python`
# in a fresh venv; pip fetches maturin and builds the abi3 wheel), then runs pytest and
# mypy.stubtest against the INSTALLED package, from outside the source tree.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/target/python-suite/venv"

rm -rf "$venv"
python3 -m venv "$venv"
py="$venv/bin/python"
# The package plus its `test` extra (pytest, mypy), as declared in pyproject.toml.
"$py" -m pip install --quiet --disable-pip-version-check "$root/bindings-python[test]"

cd "$venv" # so `import ferroflake` cannot find bindings-python/python
status=0
"$py" -m pytest -p no:cacheprovider "$root/bindings-python/tests" || status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
elif [ "$status" -ne 0 ]; then
  exit "$status"
fi

# The shipped stubs must describe the built module exactly.
"$py" -m mypy.stubtest ferroflake
