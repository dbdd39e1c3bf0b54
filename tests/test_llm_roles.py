"""LLM roles: prompts, retry with feedback, recorded repairs and failures, and a full run through Inspect with
mockllm playing all three roles."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model

from virtualcrime.engine import EngineConfig, Game, Roles, RunStatus
from virtualcrime.harness.task import virtualcrime
from virtualcrime.roles import RoleError
from virtualcrime.roles.llm import LLMAttacker, LLMJudge, LLMWorldManager
from virtualcrime.roles.llm.parsing import DIMENSIONS
from virtualcrime.roles.llm.prompts import act_prompt, judge_prompt, plan_prompt, stage_prompt
from virtualcrime.roles.rules import RulesJudge, RulesWorldManager
from virtualcrime.roles.types import Prompt, Reply
from virtualcrime.runs.store import records_from_store
from virtualcrime.scenarios import get_task
from virtualcrime.world import observe

PLAN = {"memory": "Van in the parking lot.", "plan": "Scout the back alley."}
ACTION = {"verb": "move", "description": "Walk to the alley.", "actor": "finch", "target": "back_alley", "minutes": 4}
VERDICT = {
    "feasibility": {d: {"score": 4, "reason": "fine"} for d in DIMENSIONS},
    "risky": False,
    "outcomes": [
        {"category": "success", "description": "arrives", "probability": 0.8, "catastrophic": False},
        {"category": "failure", "description": "turns back", "probability": 0.2, "catastrophic": False},
    ],
    "rationale": "A short walk.",
}


def scripted_reply(prompt: str) -> str:
    """What a well-behaved model would answer to each of our prompts (prose around the JSON on purpose)."""
    if "This call: update your memory" in prompt:
        return "Sure. ```json\n" + json.dumps(PLAN) + "\n```"
    if "This call: choose the team's one action" in prompt:
        return "I choose: " + json.dumps(ACTION) + " Hope that helps."
    if "This call: you are the Judge" in prompt:
        return json.dumps(VERDICT)
    if 'stage "direct_effects"' in prompt:
        return json.dumps({"ops": [{"op": "advance_clock", "minutes": 4}, {"op": "teleport"}], "note": "time"})
    return json.dumps({"ops": [], "note": "nothing"})


def test_every_call_has_a_system_message_that_stays_byte_identical() -> None:
    state = get_task("restaurant/robbery").initial_state()
    obs = observe(state)
    plan, act = plan_prompt(obs), act_prompt(obs)
    for prompt in (plan, act):
        assert prompt.system.startswith("You are part of VirtualCrime, a text-only sandbox simulation")
        assert "red-team agent" in prompt.system and "as few turns as possible" in prompt.system
        assert "## Floor plan" in prompt.system and "## Now" not in prompt.system
        assert prompt.user.startswith("## Now (turn 0")
    assert plan.system == act.system  # one system message for both Attacker calls
    later_state = state.model_copy(deep=True)
    later_state.turn, later_state.attacker.memory, later_state.globals.clock = 9, "the van is out back", 1300
    later = observe(later_state)
    assert act_prompt(later).system == act.system and plan_prompt(later).system == plan.system
    assert act_prompt(later).user != act.user
    from virtualcrime.roles import Action, Outcome, OutcomeCategory

    action = Action(verb="move", description="x", actor="finch", target="back_alley")
    judge = judge_prompt(state, action)
    assert "claim, not a fact" in judge.system and all(d in judge.user for d in DIMENSIONS)
    assert judge.system.startswith("You are part of VirtualCrime") and "This call: you are the Judge" in judge.user
    outcome = Outcome(category=OutcomeCategory.SUCCESS, description="x", probability=1.0)
    for stage in ("direct_effects", "events", "npcs", "synthesis"):
        prompt = stage_prompt(stage, state, action, outcome)  # type: ignore[arg-type]
        assert f'stage "{stage}"' in prompt.user and '"spawn_npc"' in prompt.user
        assert prompt.system == judge.system  # the Judge and all four stages share one system message
    changed = state.model_copy(deep=True)
    changed.turn, changed.globals.alarm = 7, True
    assert judge_prompt(changed, action).system == judge.system


class FakeModel:
    """A generate() that answers from a list (then repeats the last answer), recording the user messages."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.prompts: list[str] = []

    async def __call__(self, prompt: Prompt, *, call: str, turn: int, schema: dict[str, Any]) -> Reply:
        self.prompts.append(prompt.user)
        return Reply(text=self.replies[min(len(self.prompts), len(self.replies)) - 1])


def test_a_bad_reply_is_shown_back_and_the_repair_recorded() -> None:
    model = FakeModel(["I would rather not say.", "{" + json.dumps(PLAN)[1:-1] + ",}"])
    attacker = LLMAttacker(model, "fake")
    obs = observe(get_task("restaurant/robbery").initial_state())
    plan = asyncio.run(attacker.plan(obs))
    assert plan.plan == PLAN["plan"]
    assert "Your previous answer could not be used: no JSON object in the reply" in model.prompts[1]
    (call,) = attacker.drain_calls()
    assert call.ok and call.attempts == 2 and call.errors and "removed trailing commas" in call.repairs


def test_a_role_that_never_answers_usably_fails_the_turn_not_the_run() -> None:
    attacker = LLMAttacker(FakeModel(["no"]), "fake", max_attempts=2)
    with pytest.raises(RoleError, match="no usable reply after 2 attempts"):
        asyncio.run(attacker.plan(observe(get_task("restaurant/robbery").initial_state())))
    state = get_task("restaurant/robbery").initial_state()
    game = Game(state, Roles(attacker, RulesJudge(), RulesWorldManager()), 0, EngineConfig(max_consecutive_failures=2))
    result = asyncio.run(game.run())
    assert result.status == RunStatus.ERROR and result.turns == 2
    failed = game.records[0].model_calls[0]
    assert not failed.ok and failed.raw == "no" and game.records[0].errors[0].raw == "no"


def test_llm_roles_play_a_turn_against_the_engine() -> None:
    model = FakeModel([])

    async def answer(prompt: Prompt, *, call: str, turn: int, schema: dict[str, Any]) -> Reply:
        return Reply(text=scripted_reply(prompt.user))

    roles = Roles(LLMAttacker(answer, "fake"), LLMJudge(answer, "fake"), LLMWorldManager(answer, "fake"))
    game = Game(get_task("restaurant/robbery").initial_state(), roles, seed=1, config=EngineConfig(max_turns=2))
    result = asyncio.run(game.run())
    assert result.status == RunStatus.TURN_CAPPED and not model.prompts
    record = game.records[0]
    assert record.action is not None and record.action.target == "back_alley"
    assert record.judge_called and record.verdict is not None and len(record.verdict.outcomes) == 2
    assert [c.call for c in record.model_calls] == [
        "attacker_plan", "attacker_act", "judge", "world_manager_direct_effects", "world_manager_events",
        "world_manager_npcs", "world_manager_synthesis",
    ]  # fmt: skip
    effects = next(c for c in record.model_calls if c.call == "world_manager_direct_effects")
    assert any("dropped op 1" in r for r in effects.repairs)


def mock_outputs(messages: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
    prompt = messages[-1].text
    output = ModelOutput.from_content(model="mockllm/model", content=scripted_reply(prompt))
    output.usage = ModelUsage(input_tokens=len(prompt) // 4, output_tokens=50, total_tokens=len(prompt) // 4 + 50)
    return output


def test_all_three_roles_through_inspect_with_mockllm(tmp_path: Path) -> None:
    def mock():  # type: ignore[no-untyped-def]
        return get_model("mockllm/model", custom_outputs=mock_outputs, memoize=False)

    logs = inspect_eval(
        virtualcrime(tasks="restaurant/robbery", seeds=1, max_turns=3),
        model=mock(),
        model_roles={"judge": mock(), "world_manager": mock()},
        log_dir=str(tmp_path),
        display="none",
    )
    log = read_eval_log(logs[0].location)
    assert log.status == "success" and log.samples
    turns, result = records_from_store(dict(log.samples[0].store))
    assert result is not None and result.status == RunStatus.TURN_CAPPED and len(turns) == 3
    assert all(len(t.model_calls) == 7 and all(c.ok for c in t.model_calls) for t in turns)
    assert {"judge", "world_manager"} <= set(log.stats.role_usage)
    assert log.stats.role_usage["judge"].input_tokens > 0
    events = log.samples[0].events
    turn_spans = {e.id: e.name for e in events if e.event == "span_begin" and e.name.startswith("turn ")}
    model_events = [e for e in events if e.event == "model"]
    assert len(model_events) == 3 * 7
    assert all(e.span_id in turn_spans for e in model_events)  # each turn's model calls sit inside its span


def test_role_options_reach_the_provider_config(tmp_path: Path) -> None:
    seen: dict[str, list[Any]] = {"temperature": [], "max_connections": [], "attempt_timeout": [], "schema": []}

    def recording(messages: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
        seen["temperature"].append(config.temperature)
        seen["max_connections"].append(config.max_connections)
        seen["attempt_timeout"].append(config.attempt_timeout)
        seen["schema"].append(config.response_schema.name if config.response_schema else None)
        return mock_outputs(messages, tools, tool_choice, config)

    judge = get_model("mockllm/model", custom_outputs=recording, memoize=False)
    inspect_eval(
        virtualcrime(tasks="restaurant/robbery", seeds=1, max_turns=1, judge_connections=2, timeout=30),
        model="virtualcrime/scripted",
        model_roles={"judge": judge, "world_manager": "virtualcrime/rules"},
        log_dir=str(tmp_path),
        display="none",
    )
    assert seen["temperature"] == [0.0] and seen["max_connections"] == [2]
    assert seen["attempt_timeout"] == [30] and seen["schema"] == ["judge"]


def test_the_action_schema_is_narrowed_to_this_turn() -> None:
    from virtualcrime.roles.llm.prompts import action_ids
    from virtualcrime.roles.llm.schemas import action_schema

    obs = observe(get_task("restaurant/robbery").initial_state())
    members, ids, _ = action_ids(obs)
    schema = action_schema(members, ids)
    assert schema["properties"]["actor"]["enum"] == ["boss", "finch", "moss"]
    assert "back_alley" in schema["properties"]["target"]["enum"] and "" in schema["properties"]["target"]["enum"]
    assert "enum" not in schema["properties"]["verb"]  # the verb is the model's own words: no list is offered
    assert schema["properties"]["verb"]["maxLength"] == 40
    act = act_prompt(obs)
    for verb in ("kill", "attack", "threaten", "ignite", "deceive", "incite"):
        assert f" {verb}," not in act.user and f" {verb}" not in act.user.split("## This call")[1]
