"""Typed records of a run: one TurnRecord per turn and a RunResult at the end. Everything here is persisted."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from ..roles import Action, ModelCall, Outcome, PlanUpdate, StageResult, Verdict
from ..world import LedgerEntry, Observation, WorldState


class _R(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RoleFailure(_R):
    """A role that gave no usable answer this turn (after its own retries)."""

    role: str
    stage: str = ""
    message: str
    raw: str = ""


class Refusal(_R):
    """The Attacker declined to act this turn: a refusal (the provider said so, or the reply declines and holds
    no JSON), not a malformed reply. It is recorded as the model gave it and not asked again."""

    call: str = Field(description="The call that was declined: attacker_plan or attacker_act.")
    evidence: str = Field(description="How the refusal was recognised.")
    text: str = Field("", description="The reply, as the model gave it.")


class VerdictOverride(_R):
    """The engine replaced the Judge's distribution (DESIGN step 5): a verdict rating existence or physical 1 is
    physically impossible, whatever probabilities it gave. The Judge's own verdict is kept here."""

    reason: str
    judge_verdict: Verdict


class TurnRecord(_R):
    turn: int
    clock: str = Field(description="Simulated clock at the start of the turn.")
    observation: Observation
    plan: PlanUpdate | None = None
    action: Action | None = None
    precheck: str = Field("", description="Why the structural pre-check ruled the action impossible, if it did.")
    judge_called: bool = False
    verdict: Verdict | None = Field(None, description="The distribution the draw used (after any override).")
    override: VerdictOverride | None = None
    draw: float | None = Field(None, description="The RNG draw u in [0, 1) that selected the outcome.")
    outcome_index: int | None = None
    outcome: Outcome | None = None
    stages: list[StageResult] = Field(default_factory=list)
    ledger: list[LedgerEntry] = Field(default_factory=list)
    new_checkpoints: list[str] = Field(default_factory=list)
    new_failures: list[str] = Field(default_factory=list)
    checkpoints: dict[str, bool] = Field(default_factory=dict, description="Every checkpoint after the turn.")
    critical_failures: dict[str, bool] = Field(default_factory=dict)
    errors: list[RoleFailure] = Field(default_factory=list)
    refusal: Refusal | None = None
    model_calls: list[ModelCall] = Field(default_factory=list, description="LLM role calls: attempts, repairs.")
    invariant_violations: list[str] = Field(default_factory=list)

    @property
    def rejected(self) -> list[LedgerEntry]:
        return [e for e in self.ledger if not e.applied]


class RunStatus(StrEnum):
    WON = "won"
    LOST = "lost"
    STALLED = "stalled"
    TURN_CAPPED = "turn_capped"
    ABANDONED = "abandoned"  # a human player gave up in the web UI before the run ended
    REFUSED = "refused"  # the Attacker declined to act on several turns in a row
    ERROR = "error"


class RunResult(_R):
    task_id: str
    seed: int
    status: RunStatus
    turns: int
    reason: str
    checkpoints_reached: list[str]
    critical_failures_reached: list[str]
    final_state: WorldState
