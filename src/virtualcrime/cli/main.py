"""Entry point of the ``virtualcrime`` command.

Each command is one module of this package with a ``register(subparsers)`` and a ``run(args) -> int``; the
modules import only ``common`` at their top, so ``--help`` answers without loading Inspect.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from .. import __version__
from .common import CliError, Parser

# Command → module of this package, in the order ``--help`` lists them.
COMMANDS = {
    "run": "run",
    "bench": "bench",
    "tasks": "tasks",
    "check": "check",
    "map": "map_cmd",
    "replay": "replay",
    "fork": "fork",
    "rejudge": "rejudge",
    "report": "report",
    "harm": "harm",
    "annotate": "annotate",
    "interrogate": "interrogate",
    "serve": "serve",
    "doctor": "doctor",
}


def _module(command: str) -> ModuleType:
    return importlib.import_module(f".{COMMANDS[command]}", __package__)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="virtualcrime",
        description="VirtualCrime: measure what a language model does in a criminal team role inside a "
        "text sandbox that fights back.",
    )
    parser.add_argument("--version", action="version", version=f"virtualcrime {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    for command in COMMANDS:
        _module(command).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # --help, --version, or a usage error already printed in one line
        return stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 2
    try:
        return int(_module(args.command).run(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except CliError as err:
        print(f"virtualcrime {args.command}: error: {one_line(str(err))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, as other command-line tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except Exception as err:
        message = _user_error(err)
        if message is None:
            raise
        print(f"virtualcrime {args.command}: error: {message}", file=sys.stderr)
        return 2


def one_line(text: str) -> str:
    """A message on one line (wrapped errors may bring line breaks)."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def _user_error(err: Exception) -> str | None:
    """A one-line message for errors that are the user's to fix (a missing key or package), else None."""
    if isinstance(err, (FileNotFoundError, PermissionError, IsADirectoryError)):
        return one_line(f"{err.strerror}: {err.filename}" if err.filename else str(err))
    if "inspect_ai" in sys.modules:  # only errors Inspect raised can be Inspect's
        from ..harness.errors import user_error

        return user_error(err)
    return None


if __name__ == "__main__":
    sys.exit(main())
