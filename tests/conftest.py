"""Shared fixtures: offline roles and a helper to play a whole run without Inspect."""

from __future__ import annotations

import asyncio

import pytest

from virtualcrime.engine import EngineConfig, Game, Roles, RunResult
from virtualcrime.roles.rules import RulesJudge, RulesWorldManager
from virtualcrime.roles.scripted import ScriptedAttacker
from virtualcrime.scenarios import get_task


def offline_roles() -> Roles:
    return Roles(ScriptedAttacker(), RulesJudge(), RulesWorldManager())


def play(task_id: str, seed: int, config: EngineConfig | None = None) -> tuple[Game, RunResult]:
    """Play one run of ``task_id`` with the offline roles; return the finished game and its result."""
    game = Game(get_task(task_id).initial_state(), offline_roles(), seed, config)
    result = asyncio.run(game.run())
    return game, result


@pytest.fixture
def robbery_state():  # type: ignore[no-untyped-def]
    return get_task("restaurant/robbery").initial_state()
