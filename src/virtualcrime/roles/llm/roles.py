"""LLM-backed roles. Each receives an injected ``generate`` (as Inspect solvers receive ``generate``) and never
imports a provider. Every call is independent (no chat history) and has a system message and a user message; a
reply that cannot be used is shown back to the model with the error, a bounded number of times, before the role
gives up with a RoleError. A provider failure (``ProviderError``) is recorded as a failed call at once; an
Attacker's refusal is recorded as a refusal and not pressed on."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from ...world import Observation, WorldState
from ..types import (
    Action,
    Attempt,
    ModelCall,
    PlanUpdate,
    Prompt,
    ProviderError,
    Reply,
    RoleError,
    RoleProviderError,
    RoleRefused,
    Stage,
    StageContext,
    StageResult,
    Verdict,
)
from . import prompts
from .parsing import ModelOutputError, parse_action, parse_plan, parse_stage, parse_verdict
from .refusal import refusal_evidence
from .schemas import PLAN_SCHEMA, STAGE_SCHEMA, VERDICT_SCHEMA, action_schema

T = TypeVar("T")
DEFAULT_ATTEMPTS = 3
RETRY_NOTE = (
    "\n\nYour previous answer could not be used: {error}\nAnswer again with only the JSON object described above."
)
RAW_LIMIT = 4000


class Generate(Protocol):
    """``await generate(prompt, call=..., turn=..., schema=...) -> Reply``; raises ProviderError when the provider
    gives no completion."""

    def __call__(self, prompt: Prompt, *, call: str, turn: int, schema: dict[str, Any]) -> Awaitable[Reply]: ...


class _ModelRole:
    role = "role"
    # Whether a declining reply ends the call as a refusal (the Attacker's choice, recorded) instead of being
    # shown back as an unusable answer.
    refusal_is_an_answer = False

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
        self, call: str, turn: int, prompt: Prompt, schema: dict[str, Any], parse: Callable[[str], tuple[T, list[str]]]
    ) -> T:
        errors: list[str] = []
        replies: list[Attempt] = []
        text = ""
        for attempt in range(1, self.max_attempts + 1):
            asked = prompt if not errors else prompt.model_copy(
                update={"user": prompt.user + RETRY_NOTE.format(error=errors[-1])})  # fmt: skip
            try:
                reply = await self.generate(asked, call=call, turn=turn, schema=schema)
            except ProviderError as err:
                errors.append(f"provider error: {err}")
                replies.append(Attempt(provider_error=str(err)))
                self._record(call, attempt, ok=False, errors=errors, replies=replies)
                raise RoleProviderError(self.role, f"{call}: provider error: {err}") from err
            replies.append(Attempt.of(reply))
            text = reply.text
            evidence = refusal_evidence(reply) if self.refusal_is_an_answer else None
            if evidence is not None:
                self._record(call, attempt, ok=False, errors=errors, raw=text, refused=True, replies=replies)
                raise RoleRefused(self.role, call, evidence, text[:RAW_LIMIT])
            try:
                value, repairs = parse(text)
            except ModelOutputError as err:
                errors.append(str(err))
                continue
            self._record(call, attempt, ok=True, errors=errors, repairs=repairs, replies=replies)
            return value
        self._record(call, self.max_attempts, ok=False, errors=errors, raw=text, replies=replies)
        raise RoleError(self.role, f"{call}: no usable reply after {self.max_attempts} attempts: {errors[-1]}", text)

    def _record(self, call: str, attempts: int, *, ok: bool, errors: list[str], replies: list[Attempt],
                repairs: list[str] | None = None, raw: str = "", refused: bool = False) -> None:  # fmt: skip
        self._calls.append(ModelCall(role=self.role, call=call, attempts=attempts, ok=ok, repairs=repairs or [],
                                     errors=list(errors), raw=raw[:RAW_LIMIT], refused=refused,
                                     replies=list(replies)))  # fmt: skip


class LLMAttacker(_ModelRole):
    """Plans (memory + plan) and acts (one action) in two independent calls."""

    role = "attacker"
    refusal_is_an_answer = True

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
    """The four stages as model calls. Each prompt shows the world as the turn began (the Judge's, so the prompts
    share one prefix) and the operations the earlier stages applied since; the engine passes that start."""

    role = "world_manager"
    renders_turn_start = True

    def __init__(self, generate: Generate, name: str, max_attempts: int = DEFAULT_ATTEMPTS) -> None:
        super().__init__(generate, name, max_attempts)
        # The text the four stages of a turn share, rendered by the first: (turn start, action, text). Held by
        # identity, so a stage of another turn (or another run's) never sees it: the engine passes every stage of a
        # turn the same turn-start snapshot and action, and never changes either.
        self._shared: tuple[WorldState, Action, Prompt] | None = None

    def _shared_text(self, start: WorldState, action: Action) -> Prompt:
        held = self._shared
        if held is None or held[0] is not start or held[1] is not action:
            held = (start, action, prompts.referee_shared(start, action))
            self._shared = held
        return held[2]

    async def run_stage(self, stage: Stage, context: StageContext) -> StageResult:
        start = context.turn_start
        shared = self._shared_text(start, context.action) if start is not None else None
        prompt = prompts.stage_prompt(stage, context.state, context.action, context.outcome, context.earlier,
                                      start, shared)  # fmt: skip

        def parse(text: str) -> tuple[StageResult, list[str]]:
            return parse_stage(text, stage)

        return await self._ask(f"world_manager_{stage}", context.state.turn, prompt, STAGE_SCHEMA, parse)
