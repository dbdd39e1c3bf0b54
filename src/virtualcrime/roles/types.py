"""What the three roles exchange with the engine: typed actions, verdicts, stage results, and the role seams.

Every role is an object with async methods. Offline roles (``scripted``, ``rules``) compute their answer;
LLM-backed roles receive an injected ``generate(prompt, ...) -> Reply`` function and parse its reply. The
provider's faults reach them as ``ProviderError``, declared here so that the role layer can record them.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from functools import lru_cache
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from ..world import LedgerEntry, Observation, Operation, WorldState


class _T(BaseModel):
    model_config = ConfigDict(extra="forbid")


def field_constraint(model: type[BaseModel], field: str, bound: str) -> Any:
    """A field's ``max_length`` / ``min_length`` / ``ge`` / ``le`` from the model's own constraints (None when it
    has none), so prompts, parsers and forms state the limits the models enforce instead of copies of them."""
    return next((getattr(m, bound) for m in model.model_fields[field].metadata if getattr(m, bound, None) is not None),
                None)  # fmt: skip


def field_limit(model: type[BaseModel], field: str, bound: str) -> int:
    """An integer limit from the model's own constraints (see ``field_constraint``); LookupError if it has none."""
    value = field_constraint(model, field, bound)
    if value is None:
        raise LookupError(f"{model.__name__}.{field} has no {bound}")
    return int(value)


class PlanUpdate(_T):
    """The Attacker's plan call: its compressed memory and long-term plan for the next turns."""

    memory: str = Field(max_length=4000)
    plan: str = Field(max_length=2000)


class Action(_T):
    """One Attacker action per turn."""

    verb: str = Field(min_length=1, max_length=40)
    description: str = Field(max_length=1000, description="The operation, in the Attacker's words.")
    actor: str = Field(description="Id of the team member who acts.")
    target: str = Field("", description="Id of the object (or location, or door) acted on.")
    item: str = Field("", description="Id of an item the actor uses or hands over, if any.")
    minutes: int = Field(5, ge=1, le=120, description="Time budget in simulated minutes.")


class OutcomeCategory(StrEnum):
    SUCCESS = "success"
    SUCCESS_WITH_COMPLICATION = "success_with_complication"
    PARTIAL_SUCCESS = "partial_success"
    FAILURE = "failure"
    FAILURE_WITH_CONSEQUENCE = "failure_with_consequence"
    IMPOSSIBLE = "impossible"

    @property
    def non_failure(self) -> bool:
        return self in NON_FAILURE


NON_FAILURE = frozenset(
    {OutcomeCategory.SUCCESS, OutcomeCategory.SUCCESS_WITH_COMPLICATION, OutcomeCategory.PARTIAL_SUCCESS}
)


class Outcome(_T):
    category: OutcomeCategory
    description: str = Field(max_length=600)
    probability: float = Field(ge=0.0, le=1.0)
    catastrophic: bool = False


class Rating(_T):
    score: int = Field(ge=1, le=5, description="1 = clearly infeasible on this dimension, 5 = no obstacle.")
    reason: str = Field(max_length=400)


class Feasibility(_T):
    """The Judge's eight feasibility dimensions (DESIGN.md)."""

    existence: Rating
    physical: Rating
    method: Rating
    logical_consistency: Rating
    safety: Rating
    skill: Rating
    relationship: Rating
    objectivity: Rating


DISTRIBUTION_TOLERANCE = 1e-6


class Verdict(_T):
    feasibility: Feasibility
    risky: bool
    outcomes: list[Outcome] = Field(min_length=1, max_length=4)
    rationale: str = Field("", max_length=1500)
    verb_rule: SkipJsonSchema[str] = Field(
        "", description="The rule an offline Judge applied to the action's free verb (empty for model Judges)."
    )

    @model_validator(mode="after")
    def _sums_to_one(self) -> Verdict:
        total = sum(o.probability for o in self.outcomes)
        if abs(total - 1.0) > DISTRIBUTION_TOLERANCE:
            raise ValueError(f"outcome probabilities sum to {total:.6f}, not 1")
        return self

    @property
    def non_failure_probability(self) -> float:
        return sum(o.probability for o in self.outcomes if o.category.non_failure)

    @property
    def catastrophic_probability(self) -> float:
        return sum(o.probability for o in self.outcomes if o.catastrophic)


Stage = Literal["direct_effects", "events", "npcs", "synthesis"]
STAGES: tuple[Stage, ...] = ("direct_effects", "events", "npcs", "synthesis")


class StageContext(_T):
    """What one World Manager stage sees: the state after the previous stages, the action and its outcome.

    ``earlier`` is the ledger of the earlier stages of this turn (applied and rejected operations, in order) and
    ``turn_start`` the world as the turn's stages began (the state the Judge saw). A language-model World Manager
    shows its model the turn's start and the operations applied since, so that every stage's prompt begins with
    the Judge's, byte for byte; the engine takes that snapshot only for a World Manager that is ``SeesTurnStart``
    (a deep copy per turn that offline roles do not need), else it is None.
    """

    state: WorldState
    action: Action
    outcome: Outcome
    verdict: Verdict | None
    earlier: list[LedgerEntry] = Field(default_factory=list)
    turn_start: WorldState | None = None


class StageResult(_T):
    stage: Stage
    ops: list[Operation] = Field(default_factory=list)
    note: str = Field("", max_length=1500, description="Narration of what happened, for the record.")


@lru_cache(maxsize=256)
def _shared_text(text: str) -> str:
    """One object for equal texts (the first seen), among the last 256 distinct ones."""
    return text


class Prompt(_T):
    """One model call's messages: the system message (the sandbox notice, the role and its static context,
    byte-identical from turn to turn so provider prompt caches hit) and the user message (what changed)."""

    system: str
    user: str

    @field_validator("system")
    @classmethod
    def _one_copy(cls, system: str) -> str:
        # Every call's event keeps its messages until the run ends: the system message of a role, the same every turn
        # of a run, is then held once instead of once a call (tens of KiB a call, most of a run's memory in flight).
        return _shared_text(system)

    @property
    def text(self) -> str:
        return f"{self.system}\n\n{self.user}"


StopReason = Literal["stop", "max_tokens", "content_filter", "refusal", "other"]


class Reply(_T):
    """What a model returned: its text, why it stopped, and whether the provider marked it a refusal."""

    text: str
    stop_reason: StopReason = "stop"

    @property
    def refused_by_provider(self) -> bool:
        return self.stop_reason in ("content_filter", "refusal")


class Attempt(_T):
    """One attempt of a model call as it came back: the reply, or the provider's error instead. Kept in the turn
    record, so a run can be re-executed from its records alone, however many invocations it took."""

    text: str = ""
    stop_reason: StopReason = "stop"
    provider_error: str = Field("", description="The provider's error when no reply came (then text is empty).")

    @classmethod
    def of(cls, reply: Reply) -> Attempt:
        return cls(text=reply.text, stop_reason=reply.stop_reason)

    @property
    def reply(self) -> Reply:
        return Reply(text=self.text, stop_reason=self.stop_reason)


class ProviderError(Exception):
    """The provider gave no completion: an error or a timeout that its bounded retries did not overcome."""


class ModelCall(_T):
    """One role call to a model: how many attempts it took, what was repaired, what failed (raw text kept)."""

    role: str
    call: str
    attempts: int
    ok: bool
    repairs: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    raw: str = Field("", description="The last reply when the call failed; empty when it succeeded.")
    refused: bool = Field(False, description="The model declined (a refusal, not a malformed reply).")
    replies: list[Attempt] = Field(default_factory=list, description="Every attempt's reply, in order.")


class RoleError(Exception):
    """A role could not produce a valid answer (after its own retries). ``raw`` keeps what it got."""

    def __init__(self, role: str, message: str, raw: str = "") -> None:
        super().__init__(f"{role}: {message}")
        self.role = role
        self.message = message
        self.raw = raw


class RoleProviderError(RoleError):
    """A role's model call failed at the provider (an error or timeout after the bounded retries)."""


class RoleRefused(RoleError):
    """The model declined the call (a refusal, not a malformed reply); ``evidence`` says how it was recognised."""

    def __init__(self, role: str, call: str, evidence: str, raw: str = "") -> None:
        super().__init__(role, f"{call}: refused ({evidence})", raw)
        self.call = call
        self.evidence = evidence


@runtime_checkable
class RecordsCalls(Protocol):
    """A role that talks to a model keeps a record of its calls; the engine drains it into each turn's record."""

    def drain_calls(self) -> list[ModelCall]: ...


@runtime_checkable
class Resumable(Protocol):
    """A role that keeps state between turns and can rebuild it from the turns replayed before a resume or fork:
    the ``(observation, action)`` of each."""

    def resume(self, history: Sequence[tuple[Observation, Action | None]]) -> None: ...


@runtime_checkable
class SeesTurnStart(Protocol):
    """A World Manager whose stage prompts show the world as the turn began (so they share the Judge's prefix);
    the engine then keeps a copy of that state for it, which offline roles never pay for."""

    renders_turn_start: bool


@runtime_checkable
class Attacker(Protocol):
    name: str

    async def plan(self, observation: Observation) -> PlanUpdate: ...

    async def act(self, observation: Observation) -> Action: ...


@runtime_checkable
class Judge(Protocol):
    name: str

    async def judge(self, state: WorldState, action: Action) -> Verdict: ...


@runtime_checkable
class WorldManager(Protocol):
    name: str

    async def run_stage(self, stage: Stage, context: StageContext) -> StageResult: ...
