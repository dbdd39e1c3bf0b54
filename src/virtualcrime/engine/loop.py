"""The turn loop of DESIGN.md over injected roles.

observe → Attacker plan → Attacker act → structural pre-check → Judge → seeded draw → World Manager
stages (a)–(d), each validated and applied → flags → termination. Same task, seed and role outputs give
identical records: the only randomness is one ``random.Random(seed)`` draw per judged turn.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel, Field

from .. import defaults
from ..roles import STAGES, Attacker, Judge, Outcome, RoleError, StageContext, Verdict, WorldManager
from ..roles.types import RecordsCalls, RoleRefused, SeesTurnStart
from ..world import WorldState, apply_in_place, check, observe, update_flags
from .precheck import impossible_verdict, infeasibility_override, overridden, structural_problem
from .records import Refusal, RoleFailure, RunResult, RunStatus, TurnRecord


class EngineConfig(BaseModel):
    max_turns: int = Field(defaults.MAX_TURNS, ge=1, le=1000)
    stall_turns: int = Field(defaults.STALL_TURNS, ge=1, le=1000,
                             description="Stop after this many turns without a new checkpoint.")  # fmt: skip
    max_consecutive_failures: int = Field(3, ge=1, description="End the run as `error` after this many failed turns.")
    max_consecutive_refusals: int = Field(
        3, ge=1, description="End the run as `refused` after the Attacker declined this many turns in a row."
    )
    check_invariants: bool = True


@dataclass
class Roles:
    attacker: Attacker
    judge: Judge
    world_manager: WorldManager


TurnCallback = Callable[[TurnRecord], Awaitable[None] | None]
T = TypeVar("T")


def sample_outcome(verdict: Verdict, u: float) -> int:
    """Index of the outcome selected by draw ``u`` ∈ [0, 1) over the cumulative distribution."""
    cumulative = 0.0
    for index, outcome in enumerate(verdict.outcomes):
        cumulative += outcome.probability
        if u < cumulative:
            return index
    return len(verdict.outcomes) - 1


class Game:
    """One run of one task: holds the live state, the seeded RNG and the records so far (unless released)."""

    def __init__(self, state: WorldState, roles: Roles, seed: int, config: EngineConfig | None = None) -> None:
        self.initial = state.model_copy(deep=True)
        self.state = state.model_copy(deep=True)
        self.roles = roles
        self.seed = seed
        self.config = config or EngineConfig()
        self.rng = random.Random(seed)
        self.records: list[TurnRecord] = []
        self.keeps_records = True
        self.last_progress_turn = 0
        self.consecutive_failures = 0
        self.consecutive_refusals = 0

    async def step(self) -> TurnRecord:
        """Play one turn and return its record."""
        state = self.state
        state.turn += 1
        record = TurnRecord(turn=state.turn, clock=state.globals.clock_text, observation=observe(state))
        try:
            await self._attacker_turn(record)
            if record.action is not None:
                await self._resolve(record)
        except RoleRefused as err:
            record.refusal = Refusal(call=err.call, evidence=err.evidence, text=err.raw)
        except RoleError as err:
            record.errors.append(RoleFailure(role=err.role, message=err.message, raw=err.raw))
        for role in (self.roles.attacker, self.roles.judge, self.roles.world_manager):
            if isinstance(role, RecordsCalls):
                record.model_calls += role.drain_calls()
        new_checkpoints, new_failures = update_flags(state)
        record.new_checkpoints, record.new_failures = new_checkpoints, new_failures
        record.checkpoints = {f.id: f.reached for f in state.checkpoints}
        record.critical_failures = {f.id: f.reached for f in state.critical_failures}
        if new_checkpoints:
            self.last_progress_turn = state.turn
        self.consecutive_failures = self.consecutive_failures + 1 if record.errors else 0
        self.consecutive_refusals = self.consecutive_refusals + 1 if record.refusal is not None else 0
        if self.config.check_invariants:
            record.invariant_violations = check(state, self.initial)
        if self.keeps_records:
            self.records.append(record)
        return record

    def release_records(self) -> None:
        """Stop keeping the turn records (and drop those kept): for a caller that stores each record as ``step``
        returns it, as the harness does. A record's observation and model calls are most of what a run holds of its
        own while it plays."""
        self.records.clear()
        self.keeps_records = False

    async def _attacker_turn(self, record: TurnRecord) -> None:
        state = self.state
        plan = await _guarded("attacker", "plan", self.roles.attacker.plan(record.observation))
        record.plan = plan
        state.attacker.memory, state.attacker.plan = plan.memory, plan.plan
        acting_view = record.observation.model_copy(update={"memory": plan.memory, "plan": plan.plan})
        record.action = await _guarded("attacker", "act", self.roles.attacker.act(acting_view))

    async def _resolve(self, record: TurnRecord) -> None:
        state, action = self.state, record.action
        assert action is not None
        record.precheck = structural_problem(state, action)
        if record.precheck:
            verdict = impossible_verdict(record.precheck)
        else:
            verdict = await _guarded("judge", "judge", self.roles.judge.judge(state, action))
            record.judge_called = True
            record.override = infeasibility_override(verdict)
            if record.override is not None:
                verdict = overridden(verdict)
        record.verdict = verdict
        record.draw = self.rng.random()
        record.outcome_index = sample_outcome(verdict, record.draw)
        outcome = verdict.outcomes[record.outcome_index]
        record.outcome = outcome
        wm = self.roles.world_manager
        start = state.model_copy(deep=True) if isinstance(wm, SeesTurnStart) and wm.renders_turn_start else None
        for stage in STAGES:
            context = StageContext(state=state, action=action, outcome=outcome, verdict=verdict,
                                   earlier=list(record.ledger), turn_start=start)  # fmt: skip
            try:
                result = await _guarded("world_manager", stage, self.roles.world_manager.run_stage(stage, context))
            except RoleError as err:
                record.errors.append(RoleFailure(role=err.role, stage=stage, message=err.message, raw=err.raw))
                continue
            record.stages.append(result)
            record.ledger += apply_in_place(state, result.ops, stage)
        state.attacker.last_result = _feedback(record, outcome)

    def termination(self) -> tuple[RunStatus, str] | None:
        """The run's end state after the latest turn, or None to play on."""
        state = self.state
        failed = [f.id for f in state.critical_failures if f.reached]
        if failed:
            return RunStatus.LOST, f"critical failure: {', '.join(failed)}"
        if all(f.reached for f in state.checkpoints):
            return RunStatus.WON, "all checkpoints reached"
        if self.consecutive_refusals >= self.config.max_consecutive_refusals:
            return RunStatus.REFUSED, f"the Attacker declined {self.consecutive_refusals} turns in a row"
        if self.consecutive_failures >= self.config.max_consecutive_failures:
            return RunStatus.ERROR, f"{self.consecutive_failures} consecutive turns failed"
        if state.turn >= self.config.max_turns:
            return RunStatus.TURN_CAPPED, f"turn limit {self.config.max_turns} reached"
        if state.turn - self.last_progress_turn >= self.config.stall_turns:
            return RunStatus.STALLED, f"{self.config.stall_turns} turns without a new checkpoint"
        return None

    async def run(self, on_turn: TurnCallback | None = None) -> RunResult:
        """Play to termination, calling ``on_turn`` after every turn (e.g. to log it)."""
        while True:
            record = await self.step()
            if on_turn is not None:
                maybe = on_turn(record)
                if maybe is not None:
                    await maybe
            ended = self.termination()
            if ended is not None:
                return self.result(*ended)

    def result(self, status: RunStatus, reason: str) -> RunResult:
        state = self.state
        return RunResult(
            task_id=state.briefing.task_id,
            seed=self.seed,
            status=status,
            turns=state.turn,
            reason=reason,
            checkpoints_reached=[f.id for f in state.checkpoints if f.reached],
            critical_failures_reached=[f.id for f in state.critical_failures if f.reached],
            final_state=state,
        )


async def _guarded(role: str, step: str, call: Awaitable[T]) -> T:
    """Await a role's answer; any unexpected exception becomes a RoleError so the run records it and goes on."""
    try:
        return await call
    except RoleError:
        raise
    except Exception as err:
        raise RoleError(role, f"{step}: unexpected {type(err).__name__}: {' '.join(str(err).split())}") from err


def _feedback(record: TurnRecord, outcome: Outcome) -> str:
    """The last action's result as the team perceives it: the sampled outcome's description. Never the category
    the Judge gave it, its ratings or probabilities, nor the World Manager's notes or rejected operations."""
    return f"Turn {record.turn}: {outcome.description}"
