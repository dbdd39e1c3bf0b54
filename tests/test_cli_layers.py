"""The command line is a thin layer: each command is one module with ``register`` and ``run``, the modules share
``cli.common`` and never import each other's entry point, and no ``cli`` file imports Inspect (``harness`` does)."""

from __future__ import annotations

import ast
from pathlib import Path

from virtualcrime.cli import main as cli_main

CLI = Path(cli_main.__file__).parent


def imports(path: Path) -> list[str]:
    """Every module a file imports, relative imports written with their dots (``..harness.x``, ``.common``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append("." * node.level + (node.module or ""))
    return found


def test_no_cli_file_imports_inspect() -> None:
    offenders = {p.name: [m for m in imports(p) if m.split(".")[0] == "inspect_ai"] for p in CLI.glob("*.py")}
    assert not {name: found for name, found in offenders.items() if found}


def test_command_modules_do_not_import_the_entry_point() -> None:
    for path in CLI.glob("*.py"):
        if path.name != "main.py":
            assert ".main" not in imports(path), f"{path.name} imports cli.main (a circle through the entry point)"


def test_each_command_is_one_module_with_register_and_run() -> None:
    for command, module_name in cli_main.COMMANDS.items():
        module = cli_main._module(command)
        assert module.__name__.endswith(f".{module_name}")
        assert callable(module.register) and callable(module.run), command
    parser = cli_main.build_parser()
    choices = next(a for a in parser._actions if a.dest == "command").choices
    assert choices is not None and list(choices) == list(cli_main.COMMANDS)
