"""What every command module shares: the user-error type, argument types with one-line errors, defaults, output.

Command modules import only this module at their top (and the standard library), so building the parser for
``--help`` loads nothing heavy; each command's ``run`` imports the layers it calls.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from typing import NoReturn

OFFLINE_ATTACKER = "virtualcrime/scripted"
OFFLINE_ROLE = "virtualcrime/rules"
DISPLAYS = ["full", "conversation", "rich", "plain", "log", "none"]


class CliError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line naming the command, with a pointer to its help."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def at_least(least: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``least``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, not {value}")
        return value

    parse.__name__ = f"integer ≥ {least}"
    return parse


positive_int = at_least(1)
non_negative_int = at_least(0)


def positive_float(text: str) -> float:
    """An argparse type: a finite number above zero (refuses nan, inf, 0 and negatives)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, not {text}")
    return value


def share(text: str) -> float:
    """An argparse type: a number from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, not {text}")
    return value


def print_markdown(text: str) -> None:
    """Markdown for a person: rendered by rich in a terminal, as plain text (no markup) into a pipe or file."""
    from rich.console import Console
    from rich.markdown import Markdown

    console = Console(soft_wrap=False, highlight=False)
    if console.is_terminal:
        console.print(Markdown(text))
    else:
        print(markdown_to_text(text))


def markdown_to_text(text: str) -> str:
    """The same text without Markdown markup: headings, emphasis and code marks removed, bullets kept."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"^#{1,6}\s+", "", line)
        line = re.sub(r"\*\*(.+?)\*\*", r"\1", line)
        line = re.sub(r"`([^`]*)`", r"\1", line)
        out.append(line)
    return "\n".join(out)


def warn(message: str) -> None:
    """A warning line on stderr."""
    print(f"virtualcrime: warning: {message}", file=sys.stderr)
