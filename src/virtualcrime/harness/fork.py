"""Forking a logged run: what would have happened from turn N with another seed, Attacker or Judge?

The fork replays the parent's turns before N exactly (recorded role outputs and draws, no model calls), so it
starts from the very state the parent was in, then plays on with the fork's own roles. Its records hold the
replayed turns too (a complete run), and its metadata names the parent. A fork without ``seed`` keeps the
parent's random stream: with the parent's roles it reproduces the parent, a quick check of the machinery.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import read_eval_log_sample
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import Generate, Solver, TaskState, solver

from .. import defaults
from ..engine import EngineConfig, RunResult, TurnRecord
from ..engine.replay import restore
from ..runs.spec import ForkOrigin, spec_for
from ..runs.store import records_from_store
from ..scenarios import get_task
from .roles import RoleOptions, resolve_roles
from .scorer import run_outcome
from .solver import played_roles, run_game

FORK_TASK = "virtualcrime_fork"


class ForkError(ValueError):
    """The parent run cannot be forked at the requested turn."""


def parent_run(log: str, sample_id: str, epoch: int) -> tuple[list[TurnRecord], RunResult | None, dict[str, Any]]:
    """The parent's records, result and metadata (ForkError when the sample is not in the log)."""
    try:
        sample = read_eval_log_sample(log, id=sample_id, epoch=epoch, exclude_fields={"events", "messages"})
    except (IndexError, KeyError, ValueError, FileNotFoundError) as err:
        raise ForkError(f"{log}: no run {sample_id!r} epoch {epoch}: {err}") from err
    turns, result = records_from_store(dict(sample.store))
    return turns, result, dict(sample.metadata or {})


@task(name=FORK_TASK)
def virtualcrime_fork(
    log: str,
    sample_id: str,
    epoch: int,
    turn: int,
    parent_seed: int,
    seed: int | None = None,
    max_turns: int = defaults.MAX_TURNS,
    stall_turns: int = defaults.STALL_TURNS,
    max_retries: int = defaults.MAX_RETRIES,
    timeout: int = defaults.CALL_TIMEOUT,
    max_attempts: int = defaults.MAX_ATTEMPTS,
    structured_output: bool = True,
) -> Task:
    """A new run from the state of ``log``'s run ``sample_id`` / ``epoch`` before ``turn``.

    Args:
        log: The parent run's log file.
        sample_id: The parent run's task id. epoch: its epoch (seed index).
        turn: The first turn the fork plays itself (1 … parent's turns + 1).
        parent_seed: The parent run's RNG seed (replays its turns before ``turn``).
        seed: The fork's own seed for draws from ``turn`` on (default: continue the parent's stream).
    """
    records, _, metadata = parent_run(log, sample_id, epoch)
    if not 1 <= turn <= len(records) + 1:
        raise ForkError(f"--turn must be between 1 and {len(records) + 1} (the parent played {len(records)} turns)")
    parent = {"log": log, "sample_id": sample_id, "epoch": epoch, "seed": parent_seed, "turn": turn}
    sample = Sample(
        id=sample_id,
        input=f"Fork of {sample_id} epoch {epoch} at turn {turn}",
        metadata={**metadata, "parent": parent, "fork_seed": seed},
    )
    options = RoleOptions(
        max_retries=max_retries, timeout=timeout, max_attempts=max_attempts, structured_output=structured_output
    )
    return Task(
        dataset=MemoryDataset([sample], name=FORK_TASK),
        solver=play_fork(records[: turn - 1], parent_seed, turn, seed, EngineConfig(max_turns=max_turns,
                                                                                     stall_turns=stall_turns), options),
        scorer=run_outcome(),
        config=GenerateConfig(max_retries=max_retries, timeout=timeout),
        model_roles={"judge": "virtualcrime/rules", "world_manager": "virtualcrime/rules"},
    )  # fmt: skip


@solver
def play_fork(
    prefix: list[TurnRecord],
    parent_seed: int,
    turn: int,
    seed: int | None,
    config: EngineConfig,
    options: RoleOptions,
) -> Solver:
    """Restore the parent's state before ``turn`` and play on with this eval's roles."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task_def = get_task(str(state.metadata["task_id"]))
        parent = state.metadata["parent"]
        origin = ForkOrigin(log=str(parent["log"]), sample_id=str(parent["sample_id"]), epoch=int(parent["epoch"]),
                            turn=turn, new_seed=seed)  # fmt: skip
        spec = spec_for(task_def, parent_seed, played_roles(), config, fork=origin)
        # Without a seed of its own the fork continues the parent's streams, its roles' included.
        scope = f"{task_def.id}/seed{parent_seed}" if seed is None else f"{task_def.id}/fork{turn}/seed{seed}"
        roles = resolve_roles(replace(options, run_scope=scope))
        game = await restore(task_def.initial_state(), roles, parent_seed, prefix, config)
        if spec.reseed is not None:
            spec.reseed.apply(game)
        return await run_game(state, game, spec)

    return solve


__all__ = ["FORK_TASK", "ForkError", "parent_run", "virtualcrime_fork"]
