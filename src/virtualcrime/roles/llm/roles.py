"""LLM-backed roles. Each receives an injected ``generate`` (as Inspect solvers receive ``generate``) and never
imports a provider. Every call is independent (no chat history); a reply that cannot be used is shown back to
the model with the error, a bounded number of times, before the role gives up with a RoleError."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from ...world import Observation, WorldState
from ..types import (
    Action,
    ModelCall,
    PlanUpdate,
    RoleError,
    Stage,
    StageContext,
    StageResult,
    Verdict,
)
from . import prompts
from .parsing import ModelOutputError, parse_action, parse_plan, parse_stage, parse_verdict
from .schemas import PLAN_SCHEMA, STAGE_SCHEMA, VERDICT_SCHEMA, action_schema

T = TypeVar("T")
DEFAULT_ATTEMPTS = 3
RETRY_NOTE = (
    "\n\nYour previous answer could not be used: {error}\nAnswer again with only the JSON object described above."
)


class Generate(Protocol):
    """``await generate(prompt, call=..., turn=..., schema=...) -> reply text``."""

    def __call__(self, prompt: str, *, call: str, turn: int, schema: dict[str, Any]) -> Awaitable[str]: ...


class _ModelRole:
    role = "role"

    def __init__(self, generate: Generate, name: str, max_attempts: int = DEFAULT_ATTEMPTS) -> None:
        self.generate = generate
        self.name = name
        self.max_attempts = max_attempts
        self._calls: list[ModelCall] = []

    def drain_calls(self) -> list[ModelCall]:
        """The model calls made since the last drain (the engine puts them in the turn's record)."""
        calls, self._calls = self._calls, []
        return calls

    async def _ask(
        self, call: str, turn: int, prompt: str, schema: dict[str, Any], parse: Callable[[str], tuple[T, list[str]]]
    ) -> T:
        errors: list[str] = []
        reply = ""
        for attempt in range(1, self.max_attempts + 1):
            text = prompt if not errors else prompt + RETRY_NOTE.format(error=errors[-1])
            reply = await self.generate(text, call=call, turn=turn, schema=schema)
            try:
                value, repairs = parse(reply)
            except ModelOutputError as err:
                errors.append(str(err))
                continue
            self._calls.append(ModelCall(role=self.role, call=call, attempts=attempt, ok=True, repairs=repairs,
                                         errors=errors))  # fmt: skip
            return value
        self._calls.append(ModelCall(role=self.role, call=call, attempts=self.max_attempts, ok=False, errors=errors,
                                     raw=reply[:4000]))  # fmt: skip
        raise RoleError(self.role, f"{call}: no usable reply after {self.max_attempts} attempts: {errors[-1]}", reply)


class LLMAttacker(_ModelRole):
    """Plans (memory + plan) and acts (one action) in two independent calls."""

    role = "attacker"

    async def plan(self, observation: Observation) -> PlanUpdate:
        return await self._ask("attacker_plan", observation.turn, prompts.plan_prompt(observation), PLAN_SCHEMA,
                               parse_plan)  # fmt: skip

    async def act(self, observation: Observation) -> Action:
        members, ids, names = prompts.action_ids(observation)

        def parse(text: str) -> tuple[Action, list[str]]:
            return parse_action(text, members=members, known_ids=ids, names=names)

        schema = action_schema(members, ids)
        return await self._ask("attacker_act", observation.turn, prompts.act_prompt(observation), schema, parse)


class LLMJudge(_ModelRole):
    role = "judge"

    async def judge(self, state: WorldState, action: Action) -> Verdict:
        return await self._ask("judge", state.turn, prompts.judge_prompt(state, action), VERDICT_SCHEMA,
                               parse_verdict)  # fmt: skip


class LLMWorldManager(_ModelRole):
    role = "world_manager"

    async def run_stage(self, stage: Stage, context: StageContext) -> StageResult:
        prompt = prompts.stage_prompt(stage, context.state, context.action, context.outcome)

        def parse(text: str) -> tuple[StageResult, list[str]]:
            return parse_stage(text, stage)

        return await self._ask(f"world_manager_{stage}", context.state.turn, prompt, STAGE_SCHEMA, parse)
