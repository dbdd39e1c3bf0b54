"""Pairwise differences are paired only over the tasks both attackers played: hand-made runs with known answers,
including the issue's numbers (scripted on 40 tasks against an attacker that played one)."""

from __future__ import annotations

import numpy as np
import pytest

from virtualcrime.analysis.bootstrap import Interval, task_counts
from virtualcrime.analysis.facts import RunFacts, TurnFacts
from virtualcrime.analysis.harm import run_harm
from virtualcrime.analysis.judge_rows import pairwise_rows
from virtualcrime.analysis.metrics import Metric
from virtualcrime.analysis.summary import PairDifference, Summary, build_summary
from virtualcrime.analysis.table1 import MIN_SHARED_TASKS, pair_status
from virtualcrime.analysis.tables import terminal_summary
from virtualcrime.scenarios.schema import HarmAllowance

SCRIPTED, RANDOM, ONE = "virtualcrime/scripted", "virtualcrime/random", "openai/one-task"
JUDGE = "virtualcrime/rules"
TASKS = [f"m{i:02d}/robbery" for i in range(40)]
RESAMPLES, SEED = 4_000, 2


def run(attacker: str, task: str, seed: int, won: bool, turns: list[float] | None = None,
        status: str | None = None) -> RunFacts:  # fmt: skip
    facts = [TurnFacts(turn=i + 1, has_action=True, by_leader=True, judge_called=True, non_failure=nf)
             for i, nf in enumerate(turns if turns is not None else [0.5])]  # fmt: skip
    return RunFacts(
        log=f"logs/{attacker.replace('/', '_')}.eval", eval_id=attacker, sample_id=task, epoch=seed + 1,
        attacker=attacker, judge=JUDGE, world_manager=JUDGE, task_id=task, map=task.split("/")[0],
        objective="robbery", category="property", seed=seed, status=status or ("won" if won else "lost"), won=won,
        turns=len(facts), turn_facts=facts,
        harm=run_harm([(1, "Walk to the kitchen.")], HarmAllowance(force=1, property=1)),
    )  # fmt: skip


def scripted_wins(i: int) -> int:
    """Scripted's wins of its 3 runs of task i: 1 on task 0, 2 on tasks 1–18, 1 on tasks 19–39 (58 of 120)."""
    return 1 if i == 0 else 2 if i <= 18 else 1


def scripted_runs() -> list[RunFacts]:
    """Scripted on 40 tasks × 3 seeds: 58 wins of 120 in all, Pass@1 0.483."""
    assert sum(scripted_wins(i) for i in range(40)) == 58
    return [run(SCRIPTED, t, s, s < scripted_wins(i)) for i, t in enumerate(TASKS) for s in range(3)]


def diff(summary: Summary, metric: Metric, a: str, b: str) -> PairDifference:
    return next(p for p in summary.pairwise if p.metric == metric and (p.attacker_a, p.attacker_b) == (a, b))


def test_the_issues_example_one_shared_task_gives_the_one_task_difference() -> None:
    # The other attacker played task 0 only, and lost its 3 runs. Over all tasks the old report said
    # 0 − 58/120 = −0.483 "significant"; on the one task both played it is 0 − 1/3 = −0.333, and one task is no
    # basis for a significance statement.
    runs = scripted_runs() + [run(ONE, TASKS[0], s, False) for s in range(3)]
    summary = build_summary(runs, resamples=RESAMPLES, seed=SEED)
    rows = {r.attacker: r for r in summary.table1}
    assert rows[SCRIPTED].metrics[Metric.PASS_AT_1].value == pytest.approx(58 / 120)  # Table 1 keeps all tasks
    d = diff(summary, Metric.PASS_AT_1, ONE, SCRIPTED)
    assert d.shared_tasks == 1
    assert (d.rate_a, d.rate_b) == (0.0, pytest.approx(1 / 3))
    assert d.difference.value == pytest.approx(-1 / 3)
    assert (d.difference.low, d.difference.high) == (pytest.approx(-1 / 3), pytest.approx(-1 / 3))  # zero width
    assert d.status == "few tasks" and not d.significant
    assert not any(p.significant for p in summary.pairwise)
    [header, *body] = pairwise_rows(summary)
    assert "Shared tasks" in header
    assert any(row[3] == "1" and row[-1] == "not tested: few tasks" for row in body)
    assert "not tested" in terminal_summary(summary)


def test_seven_shared_tasks_are_resampled_alone() -> None:
    # Random played tasks 0–6 (3 seeds, wins on the tasks with an even index). Its difference is resampled over
    # those 7 tasks only: recomputed here with a plain loop over the same draws.
    shared = TASKS[:7]
    random_wins = {t: (2 if i % 2 == 0 else 0) for i, t in enumerate(shared)}
    runs = scripted_runs() + [run(RANDOM, t, s, s < random_wins[t]) for t in shared for s in range(3)]
    summary = build_summary(runs, resamples=RESAMPLES, seed=SEED)
    d = diff(summary, Metric.PASS_AT_1, RANDOM, SCRIPTED)
    assert d.shared_tasks == 7
    theirs = {t: scripted_wins(i) for i, t in enumerate(shared)}  # 1, 2, 2, 2, 2, 2, 2 = 13 of 21
    assert d.rate_b == pytest.approx(13 / 21) and d.rate_a == pytest.approx(8 / 21)  # random: 2, 0, 2, 0, 2, 0, 2
    assert d.difference.value == pytest.approx(-5 / 21)
    samples = []
    for counts in task_counts(7, RESAMPLES, SEED):
        a = sum(c * random_wins[t] for c, t in zip(counts, shared, strict=True)) / (3 * counts.sum())
        b = sum(c * theirs[t] for c, t in zip(counts, shared, strict=True)) / (3 * counts.sum())
        samples.append(a - b)
    low, high = np.percentile(samples, [2.5, 97.5])
    assert (d.difference.low, d.difference.high) == (pytest.approx(low), pytest.approx(high))
    assert d.status == ("significant" if low > 0 or high < 0 else "not significant")
    # Table 1 still gives each attacker's rate over all the tasks it played: 8/21 and 58/120.
    rows = {r.attacker: r.metrics[Metric.PASS_AT_1].value for r in summary.table1}
    assert rows == {RANDOM: pytest.approx(8 / 21), SCRIPTED: pytest.approx(58 / 120)}


def test_an_abandoned_one_turn_human_game_is_never_significant() -> None:
    runs = [*scripted_runs(), run("human/alice", TASKS[5], 0, False, turns=[0.0], status="abandoned")]
    summary = build_summary(runs, resamples=RESAMPLES, seed=SEED)
    found = [p for p in summary.pairwise if p.attacker_a == "human/alice"]
    assert found and all(p.shared_tasks == 1 and not p.significant for p in found)
    assert {p.status for p in found} <= {"few tasks", "undefined"}


def test_the_same_difference_on_every_task_is_no_variation_not_significance() -> None:
    # On 6 shared tasks A always wins and B never: every resample gives 1.0, a zero-width interval that measures no
    # uncertainty at all. It is flagged, not called significant.
    tasks = TASKS[:6]
    runs = [run("a/always", t, s, True) for t in tasks for s in range(2)]
    runs += [run("b/never", t, s, False) for t in tasks for s in range(2)]
    summary = build_summary(runs, resamples=1_000, seed=SEED)
    d = diff(summary, Metric.PASS_AT_1, "a/always", "b/never")
    assert (d.shared_tasks, d.difference.value, d.difference.low, d.difference.high) == (6, 1.0, 1.0, 1.0)
    assert d.status == "no variation" and not d.significant


def test_a_difference_that_varies_over_enough_tasks_is_significant() -> None:
    tasks = TASKS[:8]
    # Strong wins 2 or 3 of 3 (20 of 24), weak wins 1 of 3 on tasks 0, 3, 6 (3 of 24): the gap varies by task.
    runs = [run("a/strong", t, s, s < 2 + (i % 2)) for i, t in enumerate(tasks) for s in range(3)]
    runs += [run("b/weak", t, s, s < int(i % 3 == 0)) for i, t in enumerate(tasks) for s in range(3)]
    summary = build_summary(runs, resamples=1_000, seed=SEED)
    d = diff(summary, Metric.PASS_AT_1, "a/strong", "b/weak")
    assert d.shared_tasks == 8 and d.difference.value == pytest.approx(17 / 24)
    assert d.status == "significant" and d.significant


def test_no_shared_task_gives_no_difference() -> None:
    runs = [run("a/x", TASKS[0], 0, True), run("b/y", TASKS[1], 0, False)]
    summary = build_summary(runs, resamples=200, seed=SEED)
    d = diff(summary, Metric.PASS_AT_1, "a/x", "b/y")
    assert (d.shared_tasks, d.difference.value, d.status, d.significant) == (0, None, "no shared tasks", False)


def test_the_significance_rule() -> None:
    wide = Interval(0.2, 0.1, 0.3)
    assert pair_status(MIN_SHARED_TASKS, wide, 0.5, 0.3) == "significant"
    assert pair_status(MIN_SHARED_TASKS - 1, wide, 0.5, 0.3) == "few tasks"
    assert pair_status(MIN_SHARED_TASKS, Interval(0.2, -0.1, 0.3), 0.5, 0.3) == "not significant"
    assert pair_status(MIN_SHARED_TASKS, Interval(0.2, 0.2, 0.2), 0.5, 0.3) == "no variation"
    assert pair_status(MIN_SHARED_TASKS, Interval(None, None, None), None, 0.3) == "undefined"
    assert pair_status(0, Interval(None, None, None), None, None) == "no shared tasks"
