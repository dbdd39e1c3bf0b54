"""Re-executing recorded turns: exact replay (verification), resuming an interrupted run, forking a run.

``RecordedRoles`` answer every role call with what the records say the role answered (plan, action, verdict,
stage results, or the failure it raised), so the engine re-applies the same operations and draws the same
random numbers. Replaying a whole run and comparing the new records with the old ones checks that the log is a
faithful, reproducible account of the run; replaying a prefix rebuilds the exact state (and RNG) before a turn,
from which a run can resume with its own roles or fork with different ones.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..roles import Action, PlanUpdate, RoleError, Stage, StageContext, StageResult, Verdict
from ..roles.types import ModelCall, Resumable, RoleRefused
from ..world import Observation, WorldState
from .loop import EngineConfig, Game, Roles
from .records import RoleFailure, RunResult, RunStatus, TurnRecord

T = TypeVar("T")


@dataclass(frozen=True)
class Reseed:
    """A fork's switch of random stream: from ``turn`` on, draws come from ``random.Random(seed)``."""

    turn: int
    seed: int

    def apply(self, game: Game) -> None:
        game.rng = random.Random(self.seed)
        game.seed = self.seed


class ReplayMismatch(ValueError):
    """A replayed turn asked for something the records do not hold (the log and the engine disagree)."""


def _failure(record: TurnRecord, role: str, stage: str | None = None) -> RoleFailure | None:
    return next((e for e in record.errors if e.role == role and e.stage == stage), None)


def _answer(
    value: T | None, record: TurnRecord, role: str, missing: str, stage: str | None = None, call: str = ""
) -> T:
    """The recorded answer; else the refusal or failure the role recorded instead, raised again; else a mismatch."""
    if value is not None:
        return value
    refusal = record.refusal
    if refusal is not None and role == "attacker" and refusal.call == call:
        raise RoleRefused(role, refusal.call, refusal.evidence, refusal.text)
    failure = _failure(record, role, stage)
    if failure is None:
        raise ReplayMismatch(f"turn {record.turn}: {missing}")
    raise RoleError(failure.role, failure.message, failure.raw)


class _Recorded:
    """Shared cursor: which recorded turn the engine is playing."""

    def __init__(self, records: Sequence[TurnRecord]) -> None:
        self.by_turn = {r.turn: r for r in records}

    def record(self, turn: int) -> TurnRecord:
        try:
            return self.by_turn[turn]
        except KeyError:
            raise ReplayMismatch(f"turn {turn} is not in the records") from None


class RecordedAttacker:
    name = "recorded"

    def __init__(self, recorded: _Recorded) -> None:
        self._recorded = recorded
        self._pending_calls: list[ModelCall] = []

    async def plan(self, observation: Observation) -> PlanUpdate:
        record = self._recorded.record(observation.turn)
        self._pending_calls = list(record.model_calls)  # the turn's calls, re-emitted once per turn
        return _answer(
            record.plan, record, "attacker", "no plan and no attacker failure recorded", call="attacker_plan"
        )

    async def act(self, observation: Observation) -> Action:
        record = self._recorded.record(observation.turn)
        return _answer(record.action, record, "attacker", "no action and no attacker failure recorded",
                       call="attacker_act")  # fmt: skip

    def drain_calls(self) -> list[ModelCall]:
        calls, self._pending_calls = self._pending_calls, []
        return calls


class RecordedJudge:
    name = "recorded"

    def __init__(self, recorded: _Recorded) -> None:
        self._recorded = recorded

    async def judge(self, state: WorldState, action: Action) -> Verdict:
        record = self._recorded.record(state.turn)
        # the Judge's own verdict: the engine applies any override again
        verdict = (
            (record.override.judge_verdict if record.override else record.verdict) if record.judge_called else None
        )
        return _answer(verdict, record, "judge", "the Judge was asked but no verdict was recorded")


class RecordedWorldManager:
    name = "recorded"

    def __init__(self, recorded: _Recorded) -> None:
        self._recorded = recorded

    async def run_stage(self, stage: Stage, context: StageContext) -> StageResult:
        record = self._recorded.record(context.state.turn)
        result = next((s for s in record.stages if s.stage == stage), None)
        return _answer(result, record, "world_manager", f"no result recorded for stage {stage}", stage)


def recorded_roles(records: Sequence[TurnRecord]) -> Roles:
    """Roles that answer from ``records`` (one record per turn number)."""
    recorded = _Recorded(records)
    return Roles(RecordedAttacker(recorded), RecordedJudge(recorded), RecordedWorldManager(recorded))


async def _steps(game: Game, records: Sequence[TurnRecord], reseed: Reseed | None) -> AsyncIterator[TurnRecord]:
    """The one replay loop: play one turn per record on ``game``, switching to a fork's random stream at its
    turn; yields each new record. Everything that re-executes recorded turns goes through here."""
    for _ in records:
        if reseed is not None and game.state.turn + 1 == reseed.turn:
            reseed.apply(game)
        yield await game.step()


async def replay(
    state: WorldState,
    seed: int,
    records: Sequence[TurnRecord],
    config: EngineConfig | None = None,
    reseed: Reseed | None = None,
    roles: Roles | None = None,
) -> tuple[list[TurnRecord], RunResult | None]:
    """Re-execute recorded turns from the initial ``state``; the new records and, if the run ended, its result.

    ``reseed`` replays a forked run: from its turn on, draws come from the fork's own seed. ``roles`` re-execute
    the roles themselves (e.g. offline roles live, language-model roles fed their recorded replies) instead of
    answering from the records.
    """
    game = Game(state, roles or recorded_roles(records), seed, config)
    async for _ in _steps(game, records, reseed):
        ended = game.termination()
        if ended is not None:
            return game.records, game.result(*ended)
    return game.records, None


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where two JSON-like values first differ (``turn 3: verdict.outcomes[1].probability``), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                return f"{path}.{key}".lstrip(".") + (" missing in replay" if key not in b else " missing in log")
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path.lstrip('.')}: {len(a)} items in the log, {len(b)} in the replay"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else f"{path.lstrip('.')}: log {a!r} != replay {b!r}"


async def verify(
    state: WorldState,
    seed: int,
    records: Sequence[TurnRecord],
    result: RunResult | None,
    config: EngineConfig | None = None,
    reseed: Reseed | None = None,
    roles: Roles | None = None,
) -> list[str]:
    """Replay a logged run and list every way it fails to reproduce (empty: identical records and result)."""
    try:
        replayed, replayed_result = await replay(state, seed, records, config, reseed, roles)
    except ReplayMismatch as err:
        return [str(err)]
    problems = []
    for old, new in zip(records, replayed, strict=False):
        where = first_difference(old.model_dump(mode="json"), new.model_dump(mode="json"))
        if where:
            problems.append(f"turn {old.turn}: {where}")
    if len(replayed) != len(records):
        problems.append(f"the replay ended after {len(replayed)} turns; the log has {len(records)}")
    if result is not None:
        if replayed_result is None:
            # a human player may give up before the run ends: then the records alone must reproduce
            if result.status != RunStatus.ABANDONED:
                problems.append("the replay did not end the run")
        else:
            where = first_difference(result.model_dump(mode="json"), replayed_result.model_dump(mode="json"))
            if where:
                problems.append(f"result: {where}")
    return problems


async def restore(
    state: WorldState,
    roles: Roles,
    seed: int,
    records: Sequence[TurnRecord],
    config: EngineConfig | None = None,
    reseed: Reseed | None = None,
) -> Game:
    """A game positioned after ``records`` (replayed exactly), ready to play on with ``roles``.

    Roles that keep state between turns (``Resumable``) rebuild it from the ``(observation, action)`` of every
    replayed turn.
    """
    game = Game(state, recorded_roles(records), seed, config)
    await _drain(_steps(game, records, reseed))
    history = [(r.observation, r.action) for r in game.records]
    for role in (roles.attacker, roles.judge, roles.world_manager):
        if isinstance(role, Resumable):
            role.resume(history)
    game.roles = roles
    return game


async def judge_inputs(
    state: WorldState,
    seed: int,
    records: Sequence[TurnRecord],
    turns: set[int],
    config: EngineConfig | None = None,
    reseed: Reseed | None = None,
) -> dict[int, tuple[WorldState, Action]]:
    """The exact (state, action) the Judge was given on each of ``turns``, rebuilt by replaying the records.

    Only turns where the Judge was actually asked (``judge_called``) can be captured; others are absent.
    """
    recorded = recorded_roles(records)
    captured: dict[int, tuple[WorldState, Action]] = {}
    original = recorded.judge

    class CapturingJudge:
        name = "recorded"

        async def judge(self, judged: WorldState, action: Action) -> Verdict:
            if judged.turn in turns:
                captured[judged.turn] = (judged.model_copy(deep=True), action.model_copy(deep=True))
            return await original.judge(judged, action)

    game = Game(state, Roles(recorded.attacker, CapturingJudge(), recorded.world_manager), seed, config)
    last = max(turns, default=0)
    await _drain(_steps(game, [r for r in records if r.turn <= last], reseed))
    return captured


async def _drain(steps: AsyncIterator[TurnRecord]) -> None:
    async for _ in steps:
        pass


async def replay_states(
    state: WorldState,
    seed: int,
    records: Sequence[TurnRecord],
    config: EngineConfig | None = None,
    reseed: Reseed | None = None,
) -> list[WorldState]:
    """The world state before the first turn and after each recorded turn (``[initial, after 1, after 2, …]``),
    rebuilt by replaying the records; stops early (shorter list) if a record does not replay."""
    game = Game(state, recorded_roles(records), seed, config)
    states = [game.state.model_copy(deep=True)]
    try:
        async for _ in _steps(game, records, reseed):
            states.append(game.state.model_copy(deep=True))
    except ReplayMismatch:
        pass
    return states
