"""The model layer alone, for ``scale.py``: an eval whose runs make the same seven calls a turn as a VirtualCrime run
(plan, act, judge, four World Manager stages), with the same prompts, JSON schemas, roles and ``generate`` (retries,
timeouts, structured output), but no engine, no roles' parsing and no records. Its CPU per call is what Inspect's
model layer, the provider SDK and HTTP cost by themselves; a VirtualCrime run's CPU per call less this is the
harness's own share."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from virtualcrime.engine import EngineConfig, Game, Roles
from virtualcrime.harness.generate import inspect_generate
from virtualcrime.roles import STAGES
from virtualcrime.roles.llm import prompts
from virtualcrime.roles.llm.schemas import PLAN_SCHEMA, STAGE_SCHEMA, VERDICT_SCHEMA, action_schema
from virtualcrime.roles.rules import RulesJudge, RulesWorldManager
from virtualcrime.roles.scripted import RandomAttacker
from virtualcrime.roles.types import Prompt
from virtualcrime.scenarios import get_task


@dataclass(frozen=True)
class Call:
    role: str
    name: str
    prompt: Prompt
    schema: dict[str, Any]


def turn_calls(task_id: str, turns_played: int = 3) -> list[Call]:
    """One turn's seven calls as a run of ``task_id`` makes them after a few offline turns (real prompt sizes)."""
    game = Game(get_task(task_id).initial_state(), Roles(RandomAttacker(1), RulesJudge(), RulesWorldManager()), 1,
                EngineConfig(max_turns=turns_played, stall_turns=turns_played + 1))  # fmt: skip
    asyncio.run(game.run())
    record = next(r for r in reversed(game.records) if r.action is not None and r.outcome is not None)
    assert record.action is not None and record.outcome is not None
    state, action, outcome, observation = game.state, record.action, record.outcome, record.observation
    members, ids, _ = prompts.action_ids(observation)
    calls = [
        Call("attacker", "attacker_plan", prompts.plan_prompt(observation), PLAN_SCHEMA),
        Call("attacker", "attacker_act", prompts.act_prompt(observation), action_schema(members, ids)),
        Call("judge", "judge", prompts.judge_prompt(state, action), VERDICT_SCHEMA),
    ]
    calls += [Call("world_manager", f"world_manager_{stage}",
                   prompts.stage_prompt(stage, state, action, outcome, [], state), STAGE_SCHEMA)
              for stage in STAGES]  # fmt: skip
    return calls


@solver
def calls_only(calls: list[Call], turns: int, timeout: int, max_retries: int) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        roles = {role: get_model() if role == "attacker" else get_model(role=role) for role in {c.role for c in calls}}
        generates = {role: inspect_generate(model, role, run_scope=str(state.sample_id), max_retries=max_retries,
                                            timeout=timeout) for role, model in roles.items()}  # fmt: skip
        for turn in range(1, turns + 1):
            for call in calls:
                await generates[call.role](call.prompt, call=call.name, turn=turn, schema=call.schema)
        state.completed = True
        return state

    return solve


def calls_only_task(calls: list[Call], runs: int, turns: int, timeout: int, max_retries: int) -> Task:
    """``runs`` samples, each making ``turns`` x the seven calls."""
    return Task(dataset=[Sample(input="calls", id=i) for i in range(1, runs + 1)],
                solver=calls_only(calls, turns, timeout, max_retries), name="model_layer")  # fmt: skip
