"""Browsing a log folder for the web UI: which logs there are, which runs a log holds, one run's records.

Unlike ``log_reader`` (the analysis's reader, which keeps only finished benchmark runs), this lists every
VirtualCrime log, forks and human games included, and reads one run at a time on request.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..engine import RunResult, TurnRecord
from ..engine.replay import Reseed
from .fork import FORK_TASK, fork_reseed
from .human import HUMAN_TASK
from .log_reader import find_logs, role_model
from .solver import run_seed
from .store import LogFormatError, records_from_store

LogKind = Literal["benchmark", "human", "fork"]


class _B(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LogEntry(_B):
    path: str = Field(description="Relative to the browsed folder, with '/' separators.")
    kind: LogKind
    status: str
    attacker: str
    judge: str
    world_manager: str
    created: str
    eval_id: str
    task_args: dict[str, Any] = Field(default_factory=dict)


class RunEntry(_B):
    sample_id: str
    epoch: int
    seed: int = Field(description="The RNG seed the run was played with: what `virtualcrime run` shows.")
    status: str
    turns: int
    reason: str = ""
    player: str = ""


class LoggedRunRecords(_B):
    """One run's records, with what a replay of it needs (seed, fork reseed, engine limits)."""

    log: LogEntry
    sample_id: str
    epoch: int
    task_id: str
    seed: int
    turns: list[TurnRecord]
    result: RunResult | None
    reseed_turn: int | None = None
    reseed_seed: int | None = None
    max_turns: int = 60
    stall_turns: int = 30
    error: str = ""

    @property
    def reseed(self) -> Reseed | None:
        if self.reseed_turn is None or self.reseed_seed is None:
            return None
        return Reseed(self.reseed_turn, self.reseed_seed)


def _kind(task: str) -> LogKind | None:
    name = task.split("/")[-1]
    return {"virtualcrime": "benchmark", HUMAN_TASK: "human", FORK_TASK: "fork"}.get(name)  # type: ignore[return-value]


def list_logs(root: Path) -> list[LogEntry]:
    """Every VirtualCrime log under ``root`` (recursively), newest first; other and unreadable files are left out."""
    entries = []
    for path in find_logs([root]) if root.exists() else []:
        entry = _entry(str(path), path.stat().st_mtime_ns, str(root))
        if entry is not None:
            entries.append(entry)
    return sorted(entries, key=lambda e: e.created, reverse=True)


@lru_cache(maxsize=4096)
def _entry(path: str, mtime_ns: int, root: str) -> LogEntry | None:
    from inspect_ai.log import read_eval_log

    try:
        header = read_eval_log(path, header_only=True)
    except Exception:
        return None
    kind = _kind(header.eval.task)
    if kind is None:
        return None
    return LogEntry(
        path=Path(path).relative_to(root).as_posix(),
        kind=kind,
        status=header.status,
        attacker=header.eval.model,
        judge=role_model(header.eval.model_roles, "judge"),
        world_manager=role_model(header.eval.model_roles, "world_manager"),
        created=header.eval.created,
        eval_id=header.eval.eval_id,
        task_args=dict(header.eval.task_args or {}),
    )


def log_entry(root: Path, relative: str) -> LogEntry | None:
    path = root / relative
    return _entry(str(path), path.stat().st_mtime_ns, str(root)) if path.is_file() else None


def logged_seed(metadata: dict[str, Any], result_seed: int | None, epoch: int, task_args: dict[str, Any]) -> int:
    """A logged run's seed: a fork's parent seed (its early turns replay with it), else the seed its result
    records, else the seed its metadata names (human games), else the task's base seed plus the epoch index."""
    parent = metadata.get("parent")
    if isinstance(parent, dict):
        return int(parent["seed"])
    if result_seed is not None:
        return result_seed
    if "seed" in metadata:
        return int(metadata["seed"])
    return run_seed(epoch, int(task_args.get("seed", 0)))


def list_runs(root: Path, entry: LogEntry) -> list[RunEntry]:
    """The runs of a log with their seeds and how each ended (from its scores; no records are read)."""
    from inspect_ai.log import read_eval_log_sample_summaries

    runs = []
    for summary in read_eval_log_sample_summaries(str(root / entry.path)):
        score = (summary.scores or {}).get("run_outcome")
        value = score.value if score is not None and isinstance(score.value, dict) else {}
        status = str(score.answer) if score is not None and score.answer else ("error" if summary.error else "running")
        recorded = (score.metadata or {}).get("seed") if score is not None else None
        seed = logged_seed(dict(summary.metadata or {}), None if recorded is None else int(recorded), summary.epoch,
                           entry.task_args)  # fmt: skip
        runs.append(
            RunEntry(
                sample_id=str(summary.id),
                epoch=summary.epoch,
                seed=seed,
                status=status,
                turns=int(value.get("turns", 0)),
                reason=str(score.explanation or "") if score is not None else "",
                player=str((summary.metadata or {}).get("player", "")),
            )
        )
    return runs


def read_run(root: Path, entry: LogEntry, sample_id: str, epoch: int) -> LoggedRunRecords:
    """One run's records and replay parameters; KeyError when the log has no such run."""
    from inspect_ai.log import read_eval_log_sample

    try:
        sample = read_eval_log_sample(
            str(root / entry.path), id=sample_id, epoch=epoch, exclude_fields={"events", "messages", "attachments"}
        )
    except (IndexError, KeyError, ValueError) as err:
        raise KeyError(f"{entry.path} has no run {sample_id!r} epoch {epoch}") from err
    metadata = dict(sample.metadata or {})
    args = entry.task_args
    try:
        turns, result = records_from_store(dict(sample.store))
        error = str(sample.error.message) if sample.error else ""
    except LogFormatError as err:
        turns, result, error = [], None, str(err)
    seed = logged_seed(metadata, result.seed if result is not None else None, epoch, args)
    reseed = fork_reseed(metadata)
    return LoggedRunRecords(
        log=entry,
        sample_id=sample_id,
        epoch=epoch,
        task_id=str(metadata.get("task_id", sample_id)),
        seed=seed,
        turns=turns,
        result=result,
        reseed_turn=reseed.turn if reseed else None,
        reseed_seed=reseed.seed if reseed else None,
        max_turns=int(args.get("max_turns", 60)),
        stall_turns=int(args.get("stall_turns", 30)),
        error=error,
    )


class RunNotFound(LookupError):
    """No run of a log matches the task and seed asked for; the message names what the log holds."""


def entry_for_file(path: Path) -> LogEntry:
    """The entry of one log file named on the command line; RunNotFound when it is no VirtualCrime log."""
    entry = log_entry(path.parent, path.name) if path.exists() else None
    if entry is None:
        raise RunNotFound(f"{path} is not a readable VirtualCrime log" if path.exists() else f"no such log: {path}")
    return entry


def _span(values: list[int]) -> str:
    values = sorted(set(values))
    if values == list(range(values[0], values[-1] + 1)) and len(values) > 2:
        return f"{values[0]}–{values[-1]}"
    return ", ".join(map(str, values))


def select_runs(path: Path, task: str | None, seed: int | None) -> tuple[LogEntry, list[RunEntry]]:
    """The runs of the log at ``path`` of ``task`` (every task if None) with ``seed`` (every seed if None).

    RunNotFound, in one line naming the tasks or the seeds the log holds, when nothing matches."""
    entry = entry_for_file(path)
    runs = list_runs(path.parent, entry)
    if not runs:
        raise RunNotFound(f"{path.name} holds no runs")
    tasks = sorted({r.sample_id for r in runs})
    if task is not None and task not in tasks:
        shown = ", ".join(tasks[:8]) + (f" and {len(tasks) - 8} more" if len(tasks) > 8 else "")
        raise RunNotFound(f"{path.name} has no run of task {task!r}; its {len(tasks)} task(s): {shown}")
    chosen = [r for r in runs if task is None or r.sample_id == task]
    if seed is not None:
        matching = [r for r in chosen if r.seed == seed]
        if not matching:
            which = f"of {task} " if task else ""
            raise RunNotFound(
                f"{path.name} has no run {which}with seed {seed}; seeds: {_span([r.seed for r in chosen])}"
            )
        chosen = matching
    return entry, sorted(chosen, key=lambda r: (r.sample_id, r.seed))


def read_selected(path: Path, entry: LogEntry, run: RunEntry) -> LoggedRunRecords:
    """The records of one run picked with ``select_runs``."""
    return read_run(path.parent, entry, run.sample_id, run.epoch)
