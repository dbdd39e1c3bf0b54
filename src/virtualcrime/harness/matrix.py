"""``virtualcrime bench``'s work: the attacker × task × seed matrix through Inspect's ``eval_set``, resumable.

Re-running the same matrix continues where the last invocation stopped: ``eval_set`` reuses every finished run
from the logs, and runs that were in progress resume after their last finished turn from the checkpoints in
``LOG_DIR/.virtualcrime/checkpoints``. Budgets stop the runs at their next turn boundary; the logs stay
resumable, so raising the budget and running again continues the matrix.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai import eval_set
from inspect_ai.log import read_eval_log_sample_summaries
from pydantic import BaseModel, ConfigDict, Field

from .. import defaults
from ..runs.logged import LogProblem
from .budget import BenchMonitor, Price, activate, load_prices
from .log_reader import find_logs, read_header
from .reconcile import prime, reconcile
from .roles import check_role_models, eval_models
from .task import virtualcrime

STATE_DIR = ".virtualcrime"


@dataclass(frozen=True)
class MatrixSpec:
    """One matrix: who plays, which tasks and seeds, limits, concurrency, budgets and its folder."""

    attackers: tuple[str, ...]
    judge: str
    world_manager: str
    log_dir: Path
    tasks: tuple[str, ...] | None = None
    seeds: int = 3
    seed: int = 0
    max_turns: int = defaults.MAX_TURNS
    stall_turns: int = defaults.STALL_TURNS
    max_samples: int | None = None
    attacker_connections: int | None = None
    judge_connections: int | None = None
    world_manager_connections: int | None = None
    max_tokens: int | None = None
    max_cost: float | None = None
    prices: Path | None = None
    retry_attempts: int = 3
    latency: float = 0.0
    display: str = "none"
    timeout: int = defaults.CALL_TIMEOUT
    max_retries: int = defaults.MAX_RETRIES
    max_attempts: int = defaults.MAX_ATTEMPTS
    structured_output: bool = True

    @property
    def state_dir(self) -> Path:
        return self.log_dir / STATE_DIR


class LogLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: str
    attacker: str
    runs: int
    location: str


class MatrixOutcome(BaseModel):
    """How an invocation ended: finished, stopped by the budget, or with runs left to do."""

    model_config = ConfigDict(extra="forbid")

    total: int
    success: bool
    budget_stop: str | None
    status_line: str
    logs: list[LogLine]
    checkpoints_cleared: int = 0
    superseded_logs: int = Field(0, description="Logs of killed attempts removed: the newest log holds their runs.")
    primed: int = Field(0, description="Finished runs replayed from their records into a grown matrix's new log.")
    repaired: list[str] = Field(default_factory=list, description="Runs whose lost records came back from checkpoints.")
    problems: list[str] = Field(default_factory=list)


class MatrixError(ValueError):
    """The matrix cannot start: a model that cannot play its role, a missing price, a spent budget."""


def checked_prices(spec: MatrixSpec) -> dict[str, Price]:
    """The prices, once every model can play its role and, with ``--max-cost``, every model has a price."""
    for attacker in spec.attackers:
        check_role_models(attacker, spec.judge, spec.world_manager)
    prices = load_prices(spec.prices)
    unpriced = sorted({m for m in (*spec.attackers, spec.judge, spec.world_manager) if m not in prices})
    if spec.max_cost is not None and unpriced:
        raise MatrixError(f"--max-cost needs a price for every model; none for {', '.join(unpriced)} (see --prices)")
    return prices


def prepare(spec: MatrixSpec) -> tuple[BenchMonitor, int]:
    """Check the models and budget; return the monitor (counting the runs earlier invocations finished) and the
    matrix size."""
    prices = checked_prices(spec)
    monitor = BenchMonitor(spec.max_tokens, spec.max_cost, prices, spec.state_dir / "spend.jsonl")
    monitor.load_ledger()
    spent = monitor.exhausted()
    if spent is not None:
        raise MatrixError(f"{spent} already (in {monitor.ledger}); raise the budget to continue the matrix")
    task_ids = set(matrix_task_ids(spec))
    total = len(task_ids) * spec.seeds * len(spec.attackers)
    monitor.runs_reused = finished_runs(spec, task_ids)
    return monitor, total


def _task(spec: MatrixSpec):  # type: ignore[no-untyped-def]
    return virtualcrime(
        tasks=list(spec.tasks) if spec.tasks else None,
        seeds=spec.seeds,
        seed=spec.seed,
        max_turns=spec.max_turns,
        stall_turns=spec.stall_turns,
        attacker_connections=spec.attacker_connections,
        judge_connections=spec.judge_connections,
        world_manager_connections=spec.world_manager_connections,
        checkpoint_dir=str(spec.state_dir / "checkpoints"),
        latency=spec.latency,
        timeout=spec.timeout,
        max_retries=spec.max_retries,
        max_attempts=spec.max_attempts,
        structured_output=spec.structured_output,
    )


def matrix_task_ids(spec: MatrixSpec) -> list[str]:
    """The task ids the matrix plays (its ``--task`` ids and map names expanded), in order."""
    return [str(sample.id) for sample in _task(spec).dataset]


def finished_runs(spec: MatrixSpec, task_ids: set[str]) -> int:
    """Runs of this matrix that earlier invocations finished (scored samples in the folder's logs)."""
    if not spec.log_dir.exists():
        return 0
    done: set[tuple[str, str, int]] = set()
    for path in find_logs([spec.log_dir]):
        header = read_header(path)
        if isinstance(header, LogProblem) or header.attacker not in spec.attackers:
            continue
        if header.judge != spec.judge or header.world_manager != spec.world_manager:
            continue
        for summary in read_eval_log_sample_summaries(str(path)):
            if str(summary.id) in task_ids and summary.epoch <= spec.seeds and "run_outcome" in (summary.scores or {}):
                done.add((header.attacker, str(summary.id), summary.epoch))
    return len(done)


def task_args(spec: MatrixSpec) -> dict[str, Any]:
    """The arguments of the matrix's task that decide which runs it holds (its identity to ``eval_set``)."""
    return {"tasks": list(spec.tasks) if spec.tasks else None, "seeds": spec.seeds, "seed": spec.seed,
            "max_turns": spec.max_turns, "stall_turns": spec.stall_turns}  # fmt: skip


PASSES = 2  # eval_set passes per invocation: the second plays what reading the logs back found missing


def run_matrix(
    spec: MatrixSpec, monitor: BenchMonitor, total: int, on_status: Callable[[str], None], every: float = 10.0
) -> MatrixOutcome:
    """Play (or continue) the matrix; ``on_status`` gets a progress line every ``every`` seconds."""
    task = _task(spec)
    models = [eval_models(attacker, spec.judge, spec.world_manager) for attacker in spec.attackers]
    checkpoints = spec.state_dir / "checkpoints"
    primed = prime(spec.log_dir, checkpoints, task_args(spec), spec.attackers, spec.judge, spec.world_manager)
    activate(monitor)
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(every):
            on_status(monitor.status_line(total))

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    repaired: list[str] = []
    try:
        for _ in range(PASSES):
            success, logs = eval_set(
                tasks=[task],
                log_dir=str(spec.log_dir),
                model=[model for model, _ in models],
                model_roles=dict(models[0][1]),
                max_samples=spec.max_samples,
                retry_attempts=spec.retry_attempts,
                display=spec.display,  # type: ignore[arg-type]
                log_dir_allow_dirty=True,
            )
            checked = reconcile(spec.log_dir, checkpoints)
            repaired += checked.repaired
            if not checked.replay_needed or monitor.exhausted() is not None:
                break
            success = False  # runs were taken out of their logs: the next pass plays them on
    finally:
        stop.set()
        ticker.join()
        activate(None)
    lines = [LogLine(status=log.status, attacker=log.eval.model, location=log.location,
                     runs=log.results.completed_samples if log.results is not None else 0) for log in logs]  # fmt: skip
    monitor.runs_reused = max(0, sum(line.runs for line in lines) - monitor.runs_finished)
    budget = monitor.exhausted()
    problems = [*checked.problems, *(f"{name}: its log lost its records; it will be played on from its checkpoint"
                                     for name in checked.replay_needed)]  # fmt: skip
    done = success and not problems
    outcome = MatrixOutcome(total=total, success=done, budget_stop=budget if not done else None,
                            status_line=monitor.status_line(total), logs=lines, primed=primed, repaired=repaired,
                            problems=problems)  # fmt: skip
    if done:  # only checkpoints whose runs were read back from their logs complete and identical
        for path in checked.deletable:
            path.unlink(missing_ok=True)
        outcome.checkpoints_cleared = len(checked.deletable)
        for path in checked.superseded:  # killed attempts' logs, every run of which the newest log holds
            path.unlink(missing_ok=True)
        outcome.superseded_logs = len(checked.superseded)
    return outcome
