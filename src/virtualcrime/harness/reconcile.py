"""Keeping a matrix's logs and its per-run checkpoints in agreement, so that no run's records are ever lost.

Inspect's ``eval_set`` can recover a killed eval from its sample buffer with the sample's score but an empty store:
the run looks finished while its turn records are gone. After every invocation ``reconcile`` reads each log of
the folder back, run by run, and compares it with the run's checkpoint: a run whose log lost records is repaired
from its checkpoint (the records replayed exactly to rebuild the result) or, if it cannot be, taken out of the log
(which is then marked unfinished) so that the next pass plays it on from its checkpoint. Only checkpoints whose
runs were read back complete and identical are deletable.

Before an invocation ``prime`` writes a checkpoint for every finished run of the matrix that ``eval_set`` will not
find under the new task (the matrix grew: more seeds, tasks or attackers), so such a run is replayed from its
records in the new log — no model call, no new draw — and only what is new is played.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, read_eval_log, write_eval_log

from ..engine import RunResult, TurnRecord
from ..engine.replay import replay
from ..runs.logged import LogProblem
from ..runs.spec import RunSpec
from ..runs.store import (
    FACTS_KEY,
    RECORD_SCHEMA_VERSION,
    RESULT_KEY,
    SCHEMA_KEY,
    TURNS_KEY,
    LogFormatError,
    facts_of,
    records_from_store,
)
from ..scenarios import ScenarioError, get_task
from .checkpoint import RunCheckpoint
from .log_reader import find_logs, read_header, sample_spec

SCORE = "run_outcome"


@dataclass
class Reconciled:
    """What reading a folder back found: complete runs, runs repaired from checkpoints, runs taken out to be played
    on, and the checkpoints that are now safe to delete."""

    complete: int = 0
    repaired: list[str] = field(default_factory=list)
    replay_needed: list[str] = field(default_factory=list)
    deletable: list[Path] = field(default_factory=list)
    superseded: list[Path] = field(default_factory=list)  # older attempts' logs whose every run the newest holds
    problems: list[str] = field(default_factory=list)


def _records_of(sample: Any) -> tuple[list[TurnRecord], RunResult | None]:
    try:
        return records_from_store(dict(sample.store or {}))
    except LogFormatError:
        return [], None


def _rebuilt(spec: RunSpec, records: list[TurnRecord]) -> RunResult | None:
    """The result of a run replayed exactly from its records (None if they do not end the run)."""
    try:
        initial = get_task(spec.task_id).initial_state()
    except (ValueError, ScenarioError):
        return None
    _, result = asyncio.run(replay(initial, spec.seed, records, spec.limits, spec.reseed))
    return result


def _by_task(log_dir: Path) -> dict[str, list[Path]]:
    """The matrix's benchmark logs per Inspect task id, newest first. ``eval_set`` starts a new log for its task at
    every attempt; a killed attempt leaves its log behind."""
    found: dict[str, list[tuple[str, Path]]] = {}
    for path in find_logs([log_dir]) if log_dir.exists() else []:
        header = read_header(path)
        if isinstance(header, LogProblem) or header.attacker.startswith("human/"):
            continue
        task_id = read_eval_log(str(path), header_only=True).eval.task_id
        found.setdefault(task_id, []).append((header.created, path))
    return {task: [p for _, p in sorted(logs, reverse=True)] for task, logs in found.items()}


def _complete_runs(log: EvalLog) -> dict[tuple[str, int], list[str]]:
    runs = {}
    for sample in log.samples or []:
        records, result = _records_of(sample)
        if result is not None and len(records) == result.turns:
            runs[(str(sample.id), sample.epoch)] = [r.model_dump_json() for r in records]
    return runs


def reconcile(log_dir: Path, checkpoint_dir: Path) -> Reconciled:
    """Read every benchmark log under ``log_dir`` back and make it agree with the checkpoints (see the module)."""
    found = Reconciled()
    for newest, *older in _by_task(log_dir).values():
        _reconcile_log(newest, checkpoint_dir, found)
        kept = _complete_runs(read_eval_log(str(newest)))
        for path in older:  # an earlier attempt: superseded when the newest log holds each of its complete runs
            differing = [key for key, records in _complete_runs(read_eval_log(str(path))).items()
                         if kept.get(key) != records]  # fmt: skip
            if differing:
                found.problems.append(f"{path.name}: an earlier attempt's log holds runs the newest does not "
                                      f"({len(differing)}); it is kept")  # fmt: skip
            else:
                found.superseded.append(path)
    return found


def _reconcile_log(path: Path, checkpoint_dir: Path, found: Reconciled) -> None:
    """Check one log's runs against their checkpoints: repair lost records, or take the run out to be played on."""
    log = read_eval_log(str(path))
    changed = False
    kept = []
    for sample in log.samples or []:
        records, result = _records_of(sample)
        spec = sample_spec(log, sample, result)
        checkpoint = RunCheckpoint(checkpoint_dir, spec)
        saved, _ = checkpoint.load()
        name = f"{log.eval.model} {spec.task_id} seed {spec.seed}"
        if result is not None and len(records) == result.turns:
            if saved and [r.model_dump() for r in saved] != [r.model_dump() for r in records[: len(saved)]]:
                found.problems.append(f"{name}: its checkpoint and its log disagree; the checkpoint is kept")
            else:
                found.complete += 1
                if checkpoint.path.exists():
                    found.deletable.append(checkpoint.path)
            kept.append(sample)
            continue
        score = (sample.scores or {}).get(SCORE)
        if score is None or sample.error is not None:  # an unfinished run: eval_set plays it on from its checkpoint
            kept.append(sample)
            continue
        rebuilt = _rebuilt(spec, saved) if saved else None
        if rebuilt is not None and rebuilt.status.value == score.answer:
            lines = [r.model_dump_json() for r in saved]
            sample.store = {**dict(sample.store or {}), SCHEMA_KEY: RECORD_SCHEMA_VERSION, TURNS_KEY: lines,
                            FACTS_KEY: facts_of(lines).model_dump_json(),
                            RESULT_KEY: rebuilt.model_dump_json()}  # fmt: skip
            found.repaired.append(name)
            found.deletable.append(checkpoint.path)
            kept.append(sample)
        else:
            found.replay_needed.append(name)  # taken out: the next pass plays it on from its checkpoint
        changed = True
    if changed:
        if len(kept) != len(log.samples or []):
            log.samples = kept
            log.status = "error"  # so eval_set counts the task unfinished and plays what was taken out
        write_eval_log(log, str(path))


def prime(log_dir: Path, checkpoint_dir: Path, task_args: dict[str, Any], attackers: tuple[str, ...],
          judge: str, world_manager: str) -> int:  # fmt: skip
    """Write a checkpoint for every finished run of the folder whose log ``eval_set`` will not reuse for the task
    with ``task_args`` (another seeds, tasks or base seed), so the new task replays it instead of playing it;
    returns how many were written. Runs that already have a checkpoint are left as they are."""
    written = 0
    for path in find_logs([log_dir]) if log_dir.exists() else []:
        header = read_header(path)
        if isinstance(header, LogProblem) or header.attacker not in attackers:
            continue
        if (header.judge, header.world_manager) != (judge, world_manager):
            continue
        log = read_eval_log(str(path))
        if _same_task(log.eval.task_args or {}, task_args):
            continue  # eval_set finds these runs in this log itself
        for sample in log.samples or []:
            records, result = _records_of(sample)
            if result is None or len(records) != result.turns:
                continue
            checkpoint = RunCheckpoint(checkpoint_dir, sample_spec(log, sample, result))
            if not checkpoint.path.exists():
                checkpoint.start(records)
                written += 1
    return written


IDENTITY_ARGS = ("tasks", "seeds", "seed", "max_turns", "stall_turns")


def _same_task(logged: dict[str, Any], wanted: dict[str, Any]) -> bool:
    return all(logged.get(name) == wanted.get(name) for name in IDENTITY_ARGS)
