"""What the three roles exchange with the engine: typed actions, verdicts, stage results, and the role seams.

Every role is an object with async methods. Offline roles (``scripted``, ``rules``) compute their answer;
LLM-backed roles receive an injected ``generate(prompt, schema) -> text`` function and parse its reply.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..world import Observation, Operation, WorldState


class _T(BaseModel):
    model_config = ConfigDict(extra="forbid")


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
    """What one World Manager stage sees: the state after the previous stages, the action and its outcome."""

    state: WorldState
    action: Action
    outcome: Outcome
    verdict: Verdict | None


class StageResult(_T):
    stage: Stage
    ops: list[Operation] = Field(default_factory=list)
    note: str = Field("", max_length=1500, description="Narration of what happened, for the record.")


class ModelCall(_T):
    """One role call to a model: how many attempts it took, what was repaired, what failed (raw text kept)."""

    role: str
    call: str
    attempts: int
    ok: bool
    repairs: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    raw: str = Field("", description="The last reply when the call failed; empty when it succeeded.")


class RoleError(Exception):
    """A role could not produce a valid answer (after its own retries). ``raw`` keeps what it got."""

    def __init__(self, role: str, message: str, raw: str = "") -> None:
        super().__init__(f"{role}: {message}")
        self.role = role
        self.raw = raw


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
