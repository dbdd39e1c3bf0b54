"""Solvability without a model: the scripted Attacker against the rules Judge and World Manager."""

from __future__ import annotations

import asyncio
from collections import Counter

from pydantic import BaseModel

from ..roles.rules import RulesJudge, RulesWorldManager
from ..roles.scripted import ScriptedAttacker
from ..scenarios.schema import Task
from .loop import EngineConfig, Game, Roles
from .records import RunStatus


class SeedRun(BaseModel):
    seed: int
    status: RunStatus
    turns: int
    reason: str


class SolveReport(BaseModel):
    task_id: str
    runs: list[SeedRun]

    @property
    def wins(self) -> int:
        return sum(r.status == RunStatus.WON for r in self.runs)

    @property
    def win_turns(self) -> list[int]:
        return sorted(r.turns for r in self.runs if r.status == RunStatus.WON)

    @property
    def losses(self) -> dict[str, int]:
        """How the other runs ended: reason -> count."""
        return dict(Counter(f"{r.status.value}: {r.reason}" for r in self.runs if r.status != RunStatus.WON))


def offline_roles() -> Roles:
    return Roles(ScriptedAttacker(), RulesJudge(), RulesWorldManager())


def solve(task: Task, seeds: range, config: EngineConfig | None = None) -> SolveReport:
    """Play ``task`` once per seed with the offline roles and report the outcomes."""
    runs: list[SeedRun] = []
    for seed in seeds:
        game = Game(task.initial_state(), offline_roles(), seed, config)
        result = asyncio.run(game.run())
        runs.append(SeedRun(seed=seed, status=result.status, turns=result.turns, reason=result.reason))
    return SolveReport(task_id=task.id, runs=runs)
