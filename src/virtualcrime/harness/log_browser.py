"""Browsing a log folder for the web UI: which logs there are, which runs a log holds, one run's records.

Unlike ``log_reader`` (the analysis's reader, which keeps only finished benchmark runs), this lists every
VirtualCrime log, forks and human games included, and reads one run at a time on request.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..engine import RunResult, TurnRecord
from ..engine.replay import Reseed
from ..runs.legacy import legacy_spec
from ..runs.spec import RoleModels, RunKind, RunSpec
from ..runs.store import LogFormatError, records_from_store
from .log_reader import find_logs, kind_of_task, role_model, run_spec


class _B(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LogEntry(_B):
    path: str = Field(description="Relative to the browsed folder, with '/' separators.")
    kind: RunKind
    status: str
    attacker: str
    judge: str
    world_manager: str
    created: str
    eval_id: str
    task_args: dict[str, Any] = Field(default_factory=dict)

    @property
    def roles(self) -> RoleModels:
        return RoleModels(attacker=self.attacker, judge=self.judge, world_manager=self.world_manager)


class RunEntry(_B):
    sample_id: str
    epoch: int
    seed: int = Field(description="The RNG seed the run was played with: what `virtualcrime run` shows.")
    status: str
    turns: int
    reason: str = ""
    player: str = ""


class LoggedRunRecords(_B):
    """One run's records and its spec (which says what a replay needs: seed, fork reseed, engine limits)."""

    log: LogEntry
    sample_id: str
    epoch: int
    spec: RunSpec
    turns: list[TurnRecord]
    result: RunResult | None
    error: str = ""

    @property
    def task_id(self) -> str:
        return self.spec.task_id

    @property
    def seed(self) -> int:
        return self.spec.seed

    @property
    def reseed(self) -> Reseed | None:
        return self.spec.reseed


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
    kind = kind_of_task(header.eval.task)
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


def list_runs(root: Path, entry: LogEntry) -> list[RunEntry]:
    """The runs of a log with their seeds and how each ended (from its scores; no records are read)."""
    from inspect_ai.log import read_eval_log_sample_summaries

    runs = []
    for summary in read_eval_log_sample_summaries(str(root / entry.path)):
        score = (summary.scores or {}).get("run_outcome")
        value = score.value if score is not None and isinstance(score.value, dict) else {}
        status = str(score.answer) if score is not None and score.answer else ("error" if summary.error else "running")
        recorded = (score.metadata or {}).get("seed") if score is not None else None
        # Summaries hold no store: the seed comes from the score (the result's) or, for forks, the parent's.
        seed = legacy_spec(kind=entry.kind, sample_id=str(summary.id), epoch=summary.epoch,
                           metadata=dict(summary.metadata or {}), task_args=entry.task_args, roles=entry.roles,
                           result_seed=None if recorded is None else int(recorded)).seed  # fmt: skip
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
    try:
        turns, result = records_from_store(dict(sample.store))
        error = str(sample.error.message) if sample.error else ""
    except LogFormatError as err:
        turns, result, error = [], None, str(err)
    spec = run_spec(sample, entry.kind, entry.task_args, entry.roles, result.seed if result is not None else None)
    return LoggedRunRecords(log=entry, sample_id=sample_id, epoch=epoch, spec=spec, turns=turns, result=result,
                            error=error)  # fmt: skip


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
