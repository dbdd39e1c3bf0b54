#!/usr/bin/env bash
# Set up VirtualCrime in ./.venv with exactly the tested versions (constraints.txt), then check the install.
#
#   bash install.sh              # the package with the dev, local and ray extras (what the README and CI use)
#   EXTRAS=local bash install.sh # fewer extras; EXTRAS= for the package alone
#   PYTHON=python3.12 bash install.sh
#
# llama-cpp-python (the local extra) has no binary wheel: pip compiles it once, several minutes on two cores.
set -euo pipefail
cd "$(dirname "$0")"
python=${PYTHON:-python3}
extras=${EXTRAS-dev,local,ray}

if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "install.sh: VirtualCrime needs Python 3.11 or newer; $python is $("$python" --version 2>&1 || echo missing)." >&2
    echo "install.sh: set PYTHON=/path/to/python3.11 and run it again." >&2
    exit 2
fi
if [ ! -x .venv/bin/python ]; then
    echo "Creating .venv with $("$python" --version)"
    "$python" -m venv .venv
fi
# PIP_CONSTRAINT (unlike -c) also reaches the isolated environments pip builds source packages in.
export PIP_CONSTRAINT="$PWD/constraints.txt"
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF}"
echo "Installing the tested versions from constraints.txt (extras: ${extras:-none})"
.venv/bin/python -m pip install --quiet pip setuptools
target="."
[ -n "$extras" ] && target=".[$extras]"
.venv/bin/python -m pip install --quiet -e "$target"
.venv/bin/virtualcrime doctor
