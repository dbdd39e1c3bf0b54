"""What every command module shares: the user-error type, argument types with one-line errors, defaults, output.

Command modules import only this module at their top (and the standard library), so building the parser for
``--help`` loads nothing heavy; each command's ``run`` imports the layers it calls.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from .. import defaults

OFFLINE_ATTACKER = defaults.ATTACKER
OFFLINE_ROLE = defaults.REFEREE
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


def add_call_options(parser: argparse.ArgumentParser, attempts: bool = True) -> None:
    """The bounds on every model call, for each command that calls models: the timeout per attempt, the provider
    retries, the attempts per unusable reply, and whether the call's JSON schema is sent as a response format."""
    group = parser.add_argument_group("model calls")
    group.add_argument("--timeout", type=positive_int, default=defaults.CALL_TIMEOUT, metavar="SECONDS",
                       help=f"seconds per call attempt (default {defaults.CALL_TIMEOUT})")  # fmt: skip
    group.add_argument("--max-retries", type=non_negative_int, default=defaults.MAX_RETRIES, metavar="N",
                       help=f"provider retries per call: rate limits, server errors, timeouts (default "
                       f"{defaults.MAX_RETRIES})")  # fmt: skip
    if attempts:
        group.add_argument("--max-attempts", type=positive_int, default=defaults.MAX_ATTEMPTS, metavar="N",
                           help=f"attempts per call when the reply cannot be used, the error shown to the model "
                           f"(default {defaults.MAX_ATTEMPTS})")  # fmt: skip
    group.add_argument("--structured-output", action=argparse.BooleanOptionalAction, default=True,
                       help="send each call's JSON schema as a response format (turn off for servers that "
                       "reject OpenAI's json_schema format, e.g. llama-cpp-python's); replies are parsed either "
                       "way")  # fmt: skip


def call_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The model-call bounds the arguments set (see ``add_call_options``), as keyword arguments."""
    names = ("timeout", "max_retries", "max_attempts", "structured_output")
    return {name: getattr(args, name) for name in names if hasattr(args, name)}


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    """``--max-turns`` and ``--stall-turns``, the engine's limits, with the defaults the engine uses."""
    parser.add_argument("--max-turns", type=positive_int, default=defaults.MAX_TURNS, metavar="N",
                        help=f"turn limit (default {defaults.MAX_TURNS})")  # fmt: skip
    parser.add_argument("--stall-turns", type=positive_int, default=defaults.STALL_TURNS, metavar="N",
                        help="stop after N turns without a new checkpoint "
                        f"(default {defaults.STALL_TURNS})")  # fmt: skip


def add_referee_options(parser: argparse.ArgumentParser, what: str = "") -> None:
    """``--judge`` and ``--world-manager``: the World Manager is the Judge's model unless named (the paper uses one
    model for both), so a mixed setup is always asked for explicitly."""
    parser.add_argument("--judge", metavar="MODEL", help=f"Judge model{what} (default {OFFLINE_ROLE})")
    parser.add_argument("--world-manager", metavar="MODEL",
                        help=f"World Manager model{what} (default: the Judge's model)")  # fmt: skip


def referees(args: argparse.Namespace) -> tuple[str, str]:
    """The Judge and World Manager the arguments name (the World Manager defaulting to the Judge), and a line on
    stderr when they differ, so a mixed setup is never a surprise."""
    from ..harness.roles import referee_models

    judge, world_manager = referee_models(args.judge, args.world_manager)
    if world_manager != judge:
        print(f"note: mixed referees: Judge {judge}, World Manager {world_manager}", file=sys.stderr)
    return judge, world_manager


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


NEEDS_RAY = "--engine ray needs Ray: pip install 'virtualcrime[ray]' (or bash install.sh)"


def add_engine_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup, local: str, ray: str) -> None:
    """``--engine local|ray`` and ``--ray-address`` (docs/distributed.md), with what each engine does here."""
    parser.add_argument("--engine", default="local", choices=["local", "ray"],
                        help=f"local: {local} (default); ray: {ray}")  # fmt: skip
    parser.add_argument("--ray-address", metavar="ADDR",
                        help="with --engine ray: the cluster to join (default: $RAY_ADDRESS, else a new one on this "
                        "machine)")  # fmt: skip


def require_ray() -> None:
    """CliError, saying how to install it, when Ray is not installed."""
    if importlib.util.find_spec("ray") is None:
        raise CliError(NEEDS_RAY)


def engine_mapper(args: argparse.Namespace, workers: int | None = None) -> Any:
    """The mapper ``--engine`` asks for: None for this machine; for ``ray``, one Ray task per log
    (``harness.distributed.mapper``), at most ``workers`` at once."""
    if args.engine != "ray":
        return None
    require_ray()
    from ..harness.distributed.mapper import ray_mapper

    return ray_mapper(workers, args.ray_address)
