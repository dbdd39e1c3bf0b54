"""The README's first two command lines stay true: CI runs the second one verbatim."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def test_readme_starts_with_setup_and_test_commands() -> None:
    setup, test = readme_commands()[:2]
    assert setup.startswith("bash install.sh && ") and "virtualcrime run" in setup
    assert "pytest" in test and "mypy" in test and "ruff" in test


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    test_command = readme_commands()[1]
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_command in ci_lines
