#!/usr/bin/env bash
# Re-resolve every dependency at today's newest allowed versions into a scratch virtualenv and write the result
# to constraints.txt. Run it deliberately (to take up new releases), then run the whole test suite on an install
# from the new file (bash install.sh in a fresh clone) before committing it.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
python3 -m venv "$scratch/venv"
# No constraints here: this is the step that asks the registry what is new.
unset PIP_CONSTRAINT
CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF}" "$scratch/venv/bin/pip" install --quiet --upgrade pip setuptools
CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF}" "$scratch/venv/bin/pip" install --quiet -e '.[dev,local]'
# The build tool llama-cpp-python's source build uses, at the version pip would take today.
"$scratch/venv/bin/pip" download --quiet --no-deps --dest "$scratch/dl" scikit-build-core
skbuild=$(basename "$scratch"/dl/scikit_build_core-*.whl | cut -d- -f2)
{
    sed -n '1,/^# Build and packaging tools$/p' constraints.txt
    "$scratch/venv/bin/pip" freeze --all --exclude-editable | grep -iE '^(pip|setuptools)=='
    echo "scikit-build-core==$skbuild"
    echo "#"
    echo "# Runtime and development dependencies (pip freeze of '.[dev,local]')"
    "$scratch/venv/bin/pip" freeze --exclude-editable | grep -viE '^(pip|setuptools|wheel)=='
} > constraints.txt.new
mv constraints.txt.new constraints.txt
git --no-pager diff --stat -- constraints.txt || true
echo "constraints.txt rewritten; now: bash install.sh && .venv/bin/pytest, and commit only if everything passes"
