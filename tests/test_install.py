"""An install that cannot rot: constraints.txt pins every package at the version the tests run on, the README and
CI install through it, and the environment these tests run in is exactly that one."""

from __future__ import annotations

import importlib.metadata
import re
import sysconfig
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from virtualcrime.harness.doctor import constraints_file, pinned_versions

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "constraints.txt"
# Packaging tools pip's build environments use; the venv may hold its bundled copies of others.
BUILD_ONLY = {"scikit-build-core"}


def pins() -> dict[str, str]:
    return {canonicalize_name(name): version for name, version in pinned_versions(CONSTRAINTS).items()}


def installed() -> dict[str, str]:
    """The distributions installed in the environment's site-packages (not those a package vendors in its own
    folder and puts on sys.path when imported, as Ray does with ray/thirdparty_files)."""
    sites = {Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")}
    found = {}
    for dist in importlib.metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"])
        if name != "virtualcrime" and Path(str(dist.locate_file(""))).resolve() in sites:
            found[name] = dist.version
    return found


def test_every_installed_package_is_pinned_at_the_installed_version() -> None:
    locked, present = pins(), installed()
    unpinned = sorted(set(present) - set(locked) - {"wheel"})
    assert not unpinned, f"installed but not in constraints.txt (run scripts/update-constraints.sh): {unpinned}"
    drift = {
        name: (present[name], locked[name]) for name in present if name in locked and present[name] != locked[name]
    }
    assert not drift, f"installed ≠ tested (installed, constraints.txt); reinstall with bash install.sh: {drift}"


def test_every_pin_is_installed_or_a_build_tool() -> None:
    missing = sorted(set(pins()) - set(installed()) - BUILD_ONLY)
    assert not missing, f"constraints.txt pins packages the test environment lacks: {missing}"


def test_the_package_requirements_admit_the_pinned_versions_and_pin_the_fragile_ones() -> None:
    locked = pins()
    requirements = [Requirement(r) for r in importlib.metadata.requires("virtualcrime") or []]
    for requirement in requirements:
        version = locked.get(canonicalize_name(requirement.name))
        assert version is not None, f"{requirement.name} is required but not pinned in constraints.txt"
        assert requirement.specifier.contains(version, prereleases=True), (requirement, version)
    exact = {canonicalize_name(r.name): str(r.specifier) for r in requirements}
    # Releases of these have broken us (llama-cpp-python 0.3.36 segfaults in chat completion): exact pins.
    assert exact["llama-cpp-python"] == f"=={locked['llama-cpp-python']}"
    assert exact["inspect-ai"] == f"=={locked['inspect-ai']}"
    # Every other requirement is bounded above too, so an install without constraints.txt (pip install of the
    # package) cannot pick up a release nobody tested.
    unbounded = [str(r) for r in requirements if not any(s.operator in ("<", "<=", "==", "~=") for s in r.specifier)]
    assert unbounded == []


def test_doctor_finds_this_checkouts_constraints() -> None:
    assert constraints_file() == CONSTRAINTS


def test_readme_and_ci_install_through_the_constraints() -> None:
    readme_setup = (ROOT / "README.md").read_text().split("```bash\n", 1)[1].splitlines()[0]
    assert readme_setup.startswith("bash install.sh && ")
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^bash install\.sh$", ci, flags=re.MULTILINE)
    script = (ROOT / "install.sh").read_text()
    assert 'export PIP_CONSTRAINT="$PWD/constraints.txt"' in script  # reaches the isolated build environments too
    assert "pip install" in script and "-c constraints" not in script  # one way in: the environment variable
    assert "extras=${EXTRAS-dev,local,ray}" in script  # README users and CI get the Ray engine too
    assert re.search(r"^export VIRTUALCRIME_REQUIRE_RAY=1$", ci, flags=re.MULTILINE)  # its tests run, not skip
