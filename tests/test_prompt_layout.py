"""The prompts are laid out for providers' prefix caches, and the compact world drops no field.

* Every system message stays byte-identical for the whole run, also when reinforcements arrive; the Judge and all
  four World Manager stages share one.
* The Judge's and every stage's user message start with one shared prefix (the world as the turn began, then the
  action); the four stages then share the outcome, the World Manager's instructions and the operations, and only
  then come the earlier stages' operations and the stage's own instructions.
* Through the engine, a language-model World Manager is given the turn's start and the earlier stages' ledger.
* The operation reference states every operation, field, choice, limit and default of the operations' schema, and
  every field of the world's models is written by the compact rendering (static or changing).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from test_llm_roles import VERDICT
from virtualcrime.engine import EngineConfig, Game, Roles
from virtualcrime.roles import STAGES, Action, Outcome, OutcomeCategory
from virtualcrime.roles.llm import LLMJudge, LLMWorldManager, render
from virtualcrime.roles.llm.prompts import judge_prompt, referee_prefix, stage_prompt
from virtualcrime.roles.rules import RulesJudge, RulesWorldManager
from virtualcrime.roles.scripted import RandomAttacker
from virtualcrime.roles.types import Prompt, Reply
from virtualcrime.scenarios import get_task
from virtualcrime.world import LedgerEntry
from virtualcrime.world.models import (
    Briefing,
    Edge,
    Entity,
    Event,
    Globals,
    IntelItem,
    Location,
    Member,
    Npc,
    WorldState,
)
from virtualcrime.world.ops import OPERATION_ADAPTER, AdvanceClock, AppendHistory, Move

RUNS = [("shopping_mall/armored_truck_heist", 4), ("hospital/kidnapping", 3), ("vault/theft", 1)]


class Recording:
    """Rules referees whose every turn is also rendered as the language-model referees' prompts."""

    name = "recording"
    renders_turn_start = True

    def __init__(self) -> None:
        self.judge, self.manager = RulesJudge(), RulesWorldManager()
        self.turns: dict[int, dict[str, Prompt]] = {}

    async def run_stage(self, stage: Any, context: Any) -> Any:
        start = context.turn_start
        calls = self.turns.setdefault(start.turn, {"judge": judge_prompt(start, context.action)})
        calls[stage] = stage_prompt(stage, context.state, context.action, context.outcome, context.earlier, start)
        return await self.manager.run_stage(stage, context)


@pytest.mark.parametrize(("task_id", "seed"), RUNS)
def test_one_referee_system_message_per_run_and_one_shared_user_prefix_per_turn(task_id: str, seed: int) -> None:
    recording = Recording()
    game = Game(
        get_task(task_id).initial_state(),
        Roles(RandomAttacker(seed), RulesJudge(), recording),
        seed,
        EngineConfig(max_turns=60, stall_turns=60),
    )
    asyncio.run(game.run())
    spawned = any(e.op.op == "spawn_npc" and e.applied for r in game.records for e in r.ledger)
    assert spawned or task_id == "vault/theft", "the run should bring reinforcements onto the map"
    systems = {p.system for calls in recording.turns.values() for p in calls.values()}
    assert len(systems) == 1, "the referees' system message changed during the run"
    # ... and is one object: every call's event keeps its messages until the run ends
    assert len({id(p.system) for calls in recording.turns.values() for p in calls.values()}) == 1
    for turn, calls in recording.turns.items():
        judge = calls["judge"].user
        shared = judge[: judge.index("## This call: you are the Judge")]
        stages = [calls[s].user for s in STAGES]
        assert all(user.startswith(shared) for user in stages), f"turn {turn}: a stage does not start as the Judge"
        common = stages[0][: stages[0].index("## Applied so far this turn")]
        assert all(user.startswith(common) for user in stages), f"turn {turn}: the stages part before their own part"
        assert common.startswith(shared) and "## This call: you are the World Manager" in common[len(shared) :]


def test_the_attackers_system_message_stays_identical_every_turn() -> None:
    from virtualcrime.roles.llm.prompts import act_prompt, plan_prompt

    game = Game(
        get_task("hospital/kidnapping").initial_state(),
        Roles(RandomAttacker(3), RulesJudge(), RulesWorldManager()),
        3,
        EngineConfig(max_turns=60, stall_turns=60),
    )
    asyncio.run(game.run())
    systems = {p.system for r in game.records for p in (plan_prompt(r.observation), act_prompt(r.observation))}
    assert len(systems) == 1


def test_a_language_model_world_manager_is_given_the_turns_start_and_the_earlier_stages() -> None:
    prompts: list[tuple[str, Prompt]] = []

    async def generate(prompt: Prompt, *, call: str, turn: int, schema: dict[str, Any]) -> Reply:
        prompts.append((call, prompt))
        if call == "judge":
            return Reply(text=json.dumps(VERDICT))
        if call == "world_manager_direct_effects":
            ops = [
                {"op": "advance_clock", "minutes": 4},
                {"op": "append_history", "subject": "back_alley", "text": "Footsteps."},
                {"op": "move", "subject": "finch", "to": "nowhere"},
            ]
            return Reply(text=json.dumps({"ops": ops, "note": "time"}))
        return Reply(text='{"ops": [], "note": "nothing"}')

    roles = Roles(RandomAttacker(0), LLMJudge(generate, "fake"), LLMWorldManager(generate, "fake"))
    game = Game(get_task("restaurant/robbery").initial_state(), roles, 0, EngineConfig(max_turns=3))
    asyncio.run(game.run())
    by_turn: dict[int, list[tuple[str, Prompt]]] = {}
    index = 0
    for record in game.records:
        count = int(record.judge_called) + len(record.stages)
        by_turn[record.turn] = prompts[index : index + count]
        index += count
    for turn, calls in by_turn.items():
        named = dict(calls)
        judged = "judge" in named
        first = named["world_manager_direct_effects"].user
        later = named["world_manager_synthesis"].user
        if judged:
            assert first.startswith(named["judge"].user[: named["judge"].user.index("## This call")])
        assert "- none yet" in first and '- direct_effects: {"op":"advance_clock","minutes":4}' in later
        assert "REJECTED (unknown location 'nowhere'), changed nothing" in later
        assert later.startswith(first[: first.index("## Applied so far this turn")])
        assert f"(turn {turn})" in later and "Now: clock" in later


def test_the_world_manager_renders_the_turns_shared_text_once_and_sends_what_stage_prompt_renders(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import virtualcrime.roles.llm.prompts as prompt_module

    sent: list[tuple[str, Prompt]] = []
    renders: list[int] = []
    real = prompt_module.referee_shared

    def counting(state: Any, action: Any) -> Prompt:
        renders.append(state.turn)
        return real(state, action)

    monkeypatch.setattr(prompt_module, "referee_shared", counting)

    async def generate(prompt: Prompt, *, call: str, turn: int, schema: dict[str, Any]) -> Reply:
        sent.append((call, prompt))
        ops = [{"op": "advance_clock", "minutes": 3}] if call == "world_manager_direct_effects" else []
        return Reply(text=json.dumps({"ops": ops, "note": "n"}))

    class Checked(LLMWorldManager):
        async def run_stage(self, stage: Any, context: Any) -> Any:
            expected = stage_prompt(stage, context.state, context.action, context.outcome, context.earlier,
                                    context.turn_start)  # fmt: skip
            result = await super().run_stage(stage, context)
            assert sent[-1][1] == expected  # byte for byte what the unshared rendering gives
            return result

    roles = Roles(RandomAttacker(2), RulesJudge(), Checked(generate, "fake"))
    game = Game(get_task("restaurant/robbery").initial_state(), roles, 2, EngineConfig(max_turns=4))
    asyncio.run(game.run())
    staged = [r.turn for r in game.records if r.stages]
    assert len(sent) == 4 * len(staged) and staged
    # the counting wrapper sees the shared renders of both: stage_prompt's own (the check) and the role's, once a turn
    assert sorted(renders) == sorted([t for t in staged for _ in range(4)] + staged)


def test_a_stage_after_applied_operations_needs_the_turns_start() -> None:
    state = get_task("restaurant/robbery").initial_state()
    action = Action(verb="wait", description="Wait.", actor="finch")
    outcome = Outcome(category=OutcomeCategory.SUCCESS, description="x", probability=1.0)
    applied = [LedgerEntry(stage="direct_effects", op=AdvanceClock(minutes=5), applied=True)]
    with pytest.raises(ValueError, match="turn-start state"):
        stage_prompt("events", state, action, outcome, applied)
    rejected = [LedgerEntry(stage="direct_effects", op=Move(subject="finch", to="x"), applied=False, reason="no")]
    assert "REJECTED (no)" in stage_prompt("events", state, action, outcome, rejected).user
    entry = LedgerEntry(stage="direct_effects", op=AppendHistory(subject="back_alley", text="A cat."), applied=True)
    prompt = stage_prompt("npcs", state, action, outcome, [entry], state)
    assert prompt.user.startswith(referee_prefix(state, action))


def test_the_operation_reference_states_the_whole_schema() -> None:
    reference = render.operation_reference()
    schema = OPERATION_ADAPTER.json_schema()
    defs = schema["$defs"]
    for name, model in defs.items():
        if "properties" not in model:
            continue
        op = model["properties"]["op"]["const"]
        [line] = [line for line in reference.splitlines() if line.startswith(f'- {{"op":"{op}"')]
        for field, prop in model["properties"].items():
            assert f'"{field}":' in line, (op, field)
            target = defs[prop["$ref"].split("/")[-1]] if "$ref" in prop else prop
            for choice in target.get("enum", []):
                assert f'"{choice}"' in line, (op, choice)
            for bound in ("minimum", "maximum", "maxLength"):
                if bound in target:
                    assert str(target[bound]) in line, (op, field, bound)
            if "default" in prop and field != "op":
                assert f"={json.dumps(prop['default'])}" in line, (op, field)
        if model.get("description"):
            assert model["description"].split()[0] in line, name


def test_every_field_of_the_world_is_written() -> None:
    spec = {
        model: set(render.STATIC.get(model, ())) | set(render.DYNAMIC.get(model, ()))
        for model in (Location, Edge, Member, Npc, Entity, Event, Globals, IntelItem)
    }
    has_id = {Location, Edge, Member, Npc, Entity, Event}
    model: type[BaseModel]
    for model, written in spec.items():
        expected = set(model.model_fields) - ({"id"} if model in has_id else set())
        assert written == expected, f"{model.__name__}: {expected ^ written}"
    assert set(Briefing.model_fields) == set(render.STATIC[Briefing]) | {"intel"}
    # the rest of the state: the turn, the briefing, the lists and tables above, flags, events, world flags and the
    # last result; the Attacker's memory and plan are the only fields the referees never see
    assert set(WorldState.model_fields) == {
        "turn",
        "briefing",
        "locations",
        "edges",
        "members",
        "npcs",
        "reserve_npcs",
        "entities",
        "globals",
        "attacker",
        "checkpoints",
        "critical_failures",
        "events",
        "world_flags",
    }
