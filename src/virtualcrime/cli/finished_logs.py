"""The finished VirtualCrime logs under the paths a post-hoc command was given; the others are named and skipped."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .common import CliError

if TYPE_CHECKING:
    from ..runs.logged import LogSummary


def finished_logs(paths: Sequence[str]) -> list[tuple[Path, LogSummary]]:
    """Each finished benchmark log under ``paths`` with its header; prints why any other file is skipped."""
    from ..harness.log_reader import find_logs, read_header
    from ..runs.logged import LogProblem

    try:
        files = find_logs(paths)
    except FileNotFoundError as err:
        raise CliError(str(err)) from err
    found = []
    for path in files:
        header = read_header(path)
        if isinstance(header, LogProblem):
            print(f"skipped {path.name}: {header.message}")
        elif header.status != "success":
            print(f"skipped {path.name}: the eval did not finish ({header.status})")
        else:
            found.append((path, header))
    return found
