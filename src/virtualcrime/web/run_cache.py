"""Logged runs opened in Replay and Review: records plus the world state after every turn, kept for reuse.

Paths come from the browser, so each is checked to name a log file inside the served log folder.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from ..engine.replay import replay_states
from ..harness.log_browser import LogEntry, LoggedRunRecords, log_entry, read_run
from ..harness.log_reader import LOG_SUFFIXES
from ..scenarios import ScenarioError, get_task
from ..world import WorldState

CACHED_RUNS = 32
MAX_PATH = 1024


class NotFound(LookupError):
    """A path or run the browser asked for is not there (or not allowed); the message says which."""


@dataclass
class OpenRun:
    run: LoggedRunRecords
    states: list[WorldState]  # [initial, after turn 1, …]; shorter if the records stop replaying
    problem: str = ""

    def state_before(self, turn: int) -> WorldState | None:
        return self.states[turn - 1] if 1 <= turn <= len(self.states) else None

    def state_after(self, turn: int) -> WorldState | None:
        return self.states[turn] if 0 <= turn < len(self.states) else None


def checked_log(root: Path, relative: str) -> LogEntry:
    """The log ``relative`` names under ``root``; NotFound for anything outside it or not a VirtualCrime log."""
    if (not relative or len(relative) > MAX_PATH or relative.startswith(("/", "\\")) or ".." in Path(relative).parts
            or "\x00" in relative):  # fmt: skip
        raise NotFound(f"not a log path: {relative[:80]!r}")
    try:
        path = (root / relative).resolve()
        found = path.is_relative_to(root.resolve()) and path.suffix in LOG_SUFFIXES and path.is_file()
    except OSError:  # a name too long for the file system, say
        found = False
    if not found:
        raise NotFound(f"no log {relative!r} in {root}")
    entry = log_entry(root, relative)
    if entry is None:
        raise NotFound(f"{relative} is not a VirtualCrime log")
    return entry


class RunCache:
    """The last few opened runs, keyed by log, modification time and run."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._runs: OrderedDict[tuple[str, int, str, int], OpenRun] = OrderedDict()
        self._lock = asyncio.Lock()

    async def open(self, relative: str, sample_id: str, epoch: int) -> OpenRun:
        entry = await asyncio.to_thread(checked_log, self.root, relative)
        key = (entry.path, (self.root / entry.path).stat().st_mtime_ns, sample_id, epoch)
        async with self._lock:
            if key in self._runs:
                self._runs.move_to_end(key)
                return self._runs[key]
        try:
            run = await asyncio.to_thread(read_run, self.root, entry, sample_id, epoch)
        except KeyError as err:
            raise NotFound(str(err.args[0])) from err
        opened = await self._replayed(run)
        async with self._lock:
            self._runs[key] = opened
            while len(self._runs) > CACHED_RUNS:
                self._runs.popitem(last=False)
        return opened

    async def _replayed(self, run: LoggedRunRecords) -> OpenRun:
        try:
            initial = get_task(run.task_id).initial_state()
        except (ValueError, ScenarioError) as err:
            return OpenRun(run, [], f"the task {run.task_id} cannot be loaded here: {err}")
        states = await replay_states(initial, run.seed, run.turns, run.spec.limits, run.reseed)
        problem = ""
        if len(states) < len(run.turns) + 1:
            problem = f"the records stop replaying after turn {len(states) - 1}; later states are not shown"
        return OpenRun(run, states, problem)
