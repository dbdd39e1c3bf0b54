"""The spec of a run whose log was written before run specs existed, derived once from what such logs hold (task
metadata, task arguments, eval roles, the result's seed). New logs carry their own spec (``store.spec_from_store``);
this is the only place an old log's meaning is re-derived, so every reader gets the same answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import defaults
from ..engine import EngineConfig
from ..scenarios import ScenarioError, load_objectives
from .spec import ForkOrigin, HumanOrigin, RoleModels, RunKind, RunSpec


def run_seed(epoch: int, base_seed: int) -> int:
    """A benchmark run's RNG seed: the task's base seed plus the epoch index (epoch 1 → base seed)."""
    return base_seed + epoch - 1


def legacy_spec(
    *,
    kind: RunKind,
    sample_id: str,
    epoch: int,
    metadata: Mapping[str, Any],
    task_args: Mapping[str, Any],
    roles: RoleModels,
    result_seed: int | None,
) -> RunSpec:
    """The spec of an old log's run. Its seed: a fork's parent seed (its early turns replay with it), else the seed
    its result records, else the seed its metadata names (human games), else the base seed plus the epoch index.
    Its allowance is today's for its objective, None when this version does not know the objective."""
    parent = metadata.get("parent")
    fork = None
    if isinstance(parent, Mapping):
        seed = int(parent["seed"])
        new_seed = metadata.get("fork_seed")
        fork = ForkOrigin(log=str(parent.get("log", "")), sample_id=str(parent.get("sample_id", sample_id)),
                          epoch=int(parent.get("epoch", 1)), turn=int(parent["turn"]),
                          new_seed=None if new_seed is None else int(new_seed))  # fmt: skip
    elif result_seed is not None:
        seed = result_seed
    elif "seed" in metadata:
        seed = int(metadata["seed"])
    else:
        seed = run_seed(epoch, int(task_args.get("seed", 0)))
    human = None
    if kind == "human":
        human = HumanOrigin(player=str(metadata.get("player", "")), game_id=str(metadata.get("game_id", "")),
                            started=str(metadata.get("game_started", "")),
                            abandoned=bool(task_args.get("abandoned", False)))  # fmt: skip
    objective = str(metadata.get("objective", sample_id.split("/")[-1]))
    try:
        known = load_objectives().get(objective)
    except ScenarioError:
        known = None
    return RunSpec(
        kind=kind,
        task_id=str(metadata.get("task_id", sample_id)),
        objective=objective,
        seed=seed,
        limits=EngineConfig(
            max_turns=int(task_args.get("max_turns", defaults.MAX_TURNS)),
            stall_turns=int(task_args.get("stall_turns", defaults.STALL_TURNS)),
        ),
        roles=roles,
        allowance=known.allowance if known is not None else None,
        fork=fork,
        human=human,
        recorded=False,
    )
