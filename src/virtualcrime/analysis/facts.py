"""The per-turn and per-run facts every metric is computed from, extracted once from a logged run.

A ``RunFacts`` keeps what the metrics need and nothing else (no observations, no world state), so a report
over a thousand 60-turn runs fits comfortably in memory. Extraction is pure: records in, facts out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from pydantic import BaseModel, ConfigDict, Field

from ..engine import RunStatus, TurnRecord
from ..roles import Verdict
from ..roles.interrogation import Answers
from ..roles.llm.parsing import DIMENSIONS
from ..runs.digests import Digests
from ..runs.logged import FactsRun, LoggedRun, RunIdentity
from ..runs.payloads import RunAnnotation
from ..runs.store import FactRecord
from ..scenarios.schema import HarmAllowance
from .harm import RunHarm, records_harm

HUMAN_PREFIX = "human/"  # the attacker model of a game a person played in the web UI: human/<player>


class _F(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OutcomeFacts(_F):
    category: str
    probability: float
    catastrophic: bool


class TurnFacts(_F):
    """One turn as the metrics see it. ``non_failure`` / ``catastrophic`` are None when no distribution exists."""

    turn: int
    has_action: bool
    verb: str = ""
    by_leader: bool | None = Field(
        None, description="Whether the acting member is the team's leader; None when no team member acted."
    )
    judge_called: bool = False
    impossible_precheck: bool = False
    risky: bool = False
    non_failure: float | None = None
    catastrophic: float | None = None
    outcomes: list[OutcomeFacts] = Field(default_factory=list)
    feasibility: dict[str, int] = Field(default_factory=dict)
    sampled: str = ""
    refused: bool = Field(False, description="The Attacker declined to act this turn.")


class CallFacts(_F):
    """Model calls of one role over a run: how many, how many needed a repair, how many failed."""

    calls: int = 0
    repaired: int = Field(0, description="Calls whose reply was repaired before it parsed (recorded repairs).")
    retried: int = Field(0, description="Calls that succeeded only after asking the model again.")
    failed: int = 0
    attempts: int = 0


class RunFacts(RunIdentity):
    """A run's identity and the facts its metrics need."""

    seed: int
    status: str
    won: bool
    turns: int
    turn_facts: list[TurnFacts]
    harm: RunHarm
    calls: dict[str, CallFacts] = Field(default_factory=dict)
    role_failures: dict[str, int] = Field(default_factory=dict)
    tokens: dict[str, dict[str, int]] = Field(default_factory=dict)
    rejudged: dict[str, list[TurnFacts]] = Field(default_factory=dict, description="Second Judges' turn facts.")
    rejudge_failures: dict[str, int] = Field(default_factory=dict)
    annotations: list[RunAnnotation] = Field(default_factory=list)
    interrogation: list[Answers] = Field(default_factory=list)
    digests: Digests | None = Field(None, description="What the run was played under (None for older logs).")

    @property
    def run_key(self) -> tuple[str | int, ...]:
        """Identifies a run across logs: the same key twice means a duplicate (e.g. an eval run again).

        A person's games (attacker ``human/<player>``) are never re-runs of each other, even on the same task and
        seed: each is its own eval, so only a copy of the same log is a duplicate.
        """
        key: tuple[str | int, ...] = (self.attacker, self.judge, self.world_manager, self.task_id, self.seed)
        if self.attacker.startswith(HUMAN_PREFIX):
            key += (self.eval_id, self.sample_id, self.epoch)
        return key


def turn_facts(record: TurnRecord | FactRecord) -> TurnFacts:
    """The facts of one turn record (in full, or as the report reads it)."""
    action = record.action
    team = record.observation.team
    leader = next((m.id for m in team if m.leader), None)
    # Team usage counts only turns acted by a team member: an actor that is not one (the pre-check rules the turn
    # impossible) is neither the leader nor another member, so it counts in neither numerator nor denominator.
    member = action is not None and any(m.id == action.actor for m in team)
    facts = TurnFacts(
        turn=record.turn,
        has_action=action is not None,
        verb=action.verb if action else "",
        by_leader=(action.actor == leader) if action is not None and member and leader is not None else None,
        judge_called=record.judge_called,
        impossible_precheck=bool(record.precheck),
        sampled=record.outcome.category.value if record.outcome else "",
        refused=record.refusal is not None,
    )
    if record.verdict is not None:
        add_verdict(facts, record.verdict, with_feasibility=record.judge_called)
    return facts


def add_verdict(facts: TurnFacts, verdict: Verdict, with_feasibility: bool = True) -> TurnFacts:
    """Fill in what a turn's metrics read from a verdict (the pre-check's has no real feasibility ratings)."""
    facts.risky = verdict.risky
    facts.non_failure = verdict.non_failure_probability
    facts.catastrophic = verdict.catastrophic_probability
    facts.outcomes = [
        OutcomeFacts(category=o.category.value, probability=o.probability, catastrophic=o.catastrophic)
        for o in verdict.outcomes
    ]
    if with_feasibility:
        facts.feasibility = {d: getattr(verdict.feasibility, d).score for d in DIMENSIONS}
    return facts


def rejudged_facts(run: LoggedRun | FactsRun) -> tuple[dict[str, list[TurnFacts]], dict[str, int]]:
    """Per second Judge: the facts of each turn it gave a verdict on, and how many turns it failed on."""
    facts: dict[str, list[TurnFacts]] = {}
    failures: dict[str, int] = {}
    for judge, turns in run.rejudged.items():
        facts[judge] = [
            add_verdict(TurnFacts(turn=t.turn, has_action=True, judge_called=True), t.verdict)
            for t in turns
            if t.verdict is not None
        ]
        failures[judge] = sum(t.verdict is None for t in turns)
    return facts, failures


def harm_of(records: Sequence[TurnRecord] | Sequence[FactRecord], allowance: HarmAllowance) -> RunHarm:
    """Over-harm of a run from the Attacker's own action fields (verb, description, target) only,
    each classified with its target's kind.

    ``records_harm`` reads a record's turn, action and the ids and names of its observation, which a ``FactRecord``
    keeps under the same names (tests/test_report_fast_path.py compares the report from both kinds of record). The
    classifier memoises each action, so a text the runs repeat is classified once."""
    return records_harm(cast(Sequence[TurnRecord], records), allowance)


def call_facts(records: Sequence[TurnRecord] | Sequence[FactRecord]) -> tuple[dict[str, CallFacts], dict[str, int]]:
    """Model calls per role (LLM roles only) and role failures per role over a run."""
    calls: dict[str, CallFacts] = {}
    failures: dict[str, int] = {}
    for record in records:
        for call in record.model_calls:
            c = calls.setdefault(call.role, CallFacts())
            c.calls += 1
            c.attempts += call.attempts
            c.repaired += bool(call.repairs)
            c.retried += call.ok and call.attempts > 1
            c.failed += not call.ok
        for error in record.errors:
            failures[error.role] = failures.get(error.role, 0) + 1
    return calls, failures


def run_facts(run: LoggedRun | FactsRun) -> RunFacts:
    """Everything the metrics need from one logged run (which must have a result and a known allowance: the one its
    spec recorded, or for an old log today's allowance of its objective)."""
    if run.result is None:
        raise ValueError(f"{run.log}: {run.sample_id} epoch {run.epoch} has no result")
    if run.spec.allowance is None:
        raise ValueError(f"{run.log}: {run.sample_id} epoch {run.epoch}: objective {run.objective!r} is unknown to "
                         "this version and the log records no harm allowance")  # fmt: skip
    calls, failures = call_facts(run.turns)
    rejudged, rejudge_failures = rejudged_facts(run)
    return RunFacts(
        **{name: getattr(run, name) for name in RunIdentity.model_fields},
        seed=run.result.seed,
        status=run.result.status.value,
        won=run.result.status == RunStatus.WON,  # an abandoned game is not won
        turns=run.result.turns,
        turn_facts=[turn_facts(r) for r in run.turns],
        harm=harm_of(run.turns, run.spec.allowance),
        calls=calls,
        role_failures=failures,
        tokens={role: t.model_dump() for role, t in run.tokens.items()},
        rejudged=rejudged,
        rejudge_failures=rejudge_failures,
        annotations=run.annotations,
        interrogation=run.interrogation,
        digests=run.spec.digests if run.spec.recorded else None,
    )
