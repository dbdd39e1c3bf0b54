"""``virtualcrime doctor``: all green on an install made by install.sh, and one line with the fix for each part
that is missing, mismatched or crashing."""

from __future__ import annotations

import sys

import pytest

from virtualcrime.cli.main import main
from virtualcrime.harness import doctor


def by_name(checks: list[doctor.Check]) -> dict[str, doctor.Check]:
    return {c.name: c for c in checks}


@pytest.mark.usefixtures("local_model")
def test_this_install_is_all_green(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and "WARN" not in out
    assert "ok    local model (virtualcrime/local): llama-cpp-python" in out and "answered" in out
    assert "ok    tested versions: installed packages match constraints.txt" in out


def test_a_missing_or_wrong_dependency_fails_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    real = doctor._installed
    monkeypatch.setattr(doctor, "_installed", lambda name: None if name == "networkx" else
                        "9.9.9" if name == "inspect-ai" else real(name))  # fmt: skip
    core = by_name(list(doctor.dependency_checks()))["core dependencies"]
    assert core.status == "fail" and core.fix.startswith("bash install.sh")
    assert "networkx missing" in core.detail and "inspect-ai 9.9.9 (needs ==0.3.285)" in core.detail


def test_versions_other_than_the_tested_ones_warn(monkeypatch: pytest.MonkeyPatch) -> None:
    real = doctor._installed
    monkeypatch.setattr(doctor, "_installed", lambda name: "0.3.36" if name == "llama_cpp_python" else real(name))
    check = doctor.lock_check()
    assert check is not None and check.status == "warn"
    assert "llama_cpp_python 0.3.36 (tested 0.3.16)" in check.detail and check.fix.startswith("bash install.sh")


def test_a_crashing_local_model_is_a_failure_naming_the_library(monkeypatch: pytest.MonkeyPatch) -> None:
    if not doctor.importlib.util.find_spec("llama_cpp"):
        pytest.skip("the local extra is not installed")
    crash = [sys.executable, "-c", "import ctypes; ctypes.string_at(0)"]
    probe = doctor.LOCAL_PROBE.replace("seconds, text = probe()", f"seconds, text = probe({crash!r})")
    monkeypatch.setattr(doctor, "LOCAL_PROBE", probe)
    check = doctor.local_model_check()
    assert check.status == "fail" and "SIGSEGV" in check.detail and "llama-cpp-python" in check.detail
    assert check.fix.startswith("bash install.sh")


def test_optional_parts_that_are_absent_are_marked_with_how_to_get_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "CHROMIUM_PATHS", ("/nowhere/chromium",))
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None)
    chromium = doctor.chromium_check()
    assert chromium.status == "skip" and "apt-get install chromium" in chromium.fix
    from virtualcrime.harness import local_worker

    monkeypatch.setattr(local_worker, "llama_installed", lambda: False)
    local = doctor.local_model_check()
    assert local.status == "skip" and "bash install.sh" in local.fix


def test_doctor_exits_1_when_something_required_fails(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = doctor.Check("core dependencies", "fail", "networkx missing", "bash install.sh")
    monkeypatch.setattr(doctor, "run_checks", lambda: [broken])
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  core dependencies: networkx missing  → bash install.sh" in out and "1 problem(s)" in out
