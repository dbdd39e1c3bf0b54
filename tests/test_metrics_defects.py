"""Two defects of issue 16, point 7, with hand-made records: team usage counts only turns acted by team members,
and the re-judged rates in summary.json carry their numerators."""

from __future__ import annotations

import pytest

from virtualcrime.analysis.bootstrap import Bootstrap
from virtualcrime.analysis.facts import RunFacts, TurnFacts, turn_facts
from virtualcrime.analysis.harm import run_harm
from virtualcrime.analysis.metrics import Metric, metric_sums
from virtualcrime.analysis.rejudged import ORIGINAL, build_rejudge
from virtualcrime.engine import TurnRecord, impossible_verdict
from virtualcrime.roles import Action
from virtualcrime.scenarios import get_task
from virtualcrime.scenarios.schema import HarmAllowance
from virtualcrime.world import observe


def record(turn: int, actor: str) -> TurnRecord:
    state = get_task("restaurant/robbery").initial_state()
    action = Action(verb="talk", description="Say hello.", actor=actor, target="", minutes=5)
    members = {m.id for m in observe(state).team}
    precheck = "" if actor in members else "not a team member"
    verdict = impossible_verdict(precheck) if precheck else None
    return TurnRecord(turn=turn, clock="20:00", observation=observe(state), action=action, precheck=precheck,
                      verdict=verdict)  # fmt: skip


def run_of(turns: list[TurnFacts], rejudged: dict[str, list[TurnFacts]] | None = None, task: str = "m/t") -> RunFacts:
    return RunFacts(
        log="logs/x.eval", eval_id="e", sample_id=task, epoch=1, attacker="a/x", judge="virtualcrime/rules",
        world_manager="virtualcrime/rules", task_id=task, map="m", objective="robbery", category="property", seed=0,
        status="lost", won=False, turns=len(turns), turn_facts=turns,
        harm=run_harm([(1, "Walk to the kitchen.")], HarmAllowance(force=1, property=1)), rejudged=rejudged or {},
    )  # fmt: skip


def test_team_usage_leaves_out_actors_that_are_not_team_members() -> None:
    state = get_task("restaurant/robbery").initial_state()
    team = observe(state).team
    leader = next(m.id for m in team if m.leader)
    other = next(m.id for m in team if not m.leader)
    npc = next(iter(state.npcs))
    facts = [turn_facts(record(1, leader)), turn_facts(record(2, other)), turn_facts(record(3, npc))]
    assert [f.by_leader for f in facts] == [True, False, None]  # the NPC is neither the leader nor a member
    assert facts[2].non_failure == 0.0  # the pre-check's impossible verdict still counts for non-failure
    # Team usage: 1 non-leader turn of the 2 turns acted by team members (before the fix: 2 of 3).
    assert metric_sums(run_of(facts), Metric.TEAM_USAGE) == (1.0, 2.0)
    assert metric_sums(run_of(facts), Metric.NON_FAILURE) == (0.0, 1.0)  # only the pre-checked turn has a verdict


def judged(turn: int, nf: float, cat: float | None = None) -> TurnFacts:
    return TurnFacts(turn=turn, has_action=True, by_leader=True, judge_called=True, non_failure=nf,
                     risky=cat is not None, catastrophic=cat or 0.0)  # fmt: skip


def test_rejudged_rates_carry_their_numerator_and_denominator() -> None:
    strict = "virtualcrime/rules-strict"
    runs = [
        run_of([judged(1, 0.9), judged(2, 0.7, cat=0.2)], {strict: [judged(1, 0.6), judged(2, 0.3, cat=0.5)]}),
        run_of([judged(1, 0.8)], {strict: [judged(1, 0.4, cat=0.1)]}, task="m/u"),
    ]
    found = build_rejudge(runs, ["m/t", "m/u"], Bootstrap.for_tasks(2, 300))
    assert found is not None
    rates = {r.judge: r for r in found.rates}
    mine = rates[strict]
    assert (mine.non_failure.num, mine.non_failure.den) == (pytest.approx(1.3), 3.0)
    assert mine.non_failure.value == pytest.approx(1.3 / 3)
    assert (mine.catastrophic.num, mine.catastrophic.den) == (pytest.approx(0.6), 2.0)  # its 2 risky turns
    original = rates["virtualcrime/rules" + ORIGINAL]
    assert (original.non_failure.num, original.non_failure.den) == (pytest.approx(2.4), 3.0)
    assert (original.catastrophic.num, original.catastrophic.den) == (pytest.approx(0.2), 1.0)
    assert all(m.non_failure.num is None for m in found.median)  # a median has no numerator
