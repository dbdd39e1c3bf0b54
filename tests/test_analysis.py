"""Bootstrap, metrics and judge-agreement functions against hand-computed fixtures and a coverage simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from virtualcrime.analysis.bootstrap import Bootstrap, Interval, rank, ratio, spearman, task_counts
from virtualcrime.analysis.facts import RunFacts, TurnFacts
from virtualcrime.analysis.harm import run_harm
from virtualcrime.analysis.judges import rank_correlations, self_preference, vendor
from virtualcrime.analysis.metrics import Metric, metric_sums, rate, sums_table
from virtualcrime.analysis.summary import build_summary, choose_primary_judge, dedupe
from virtualcrime.scenarios.schema import HarmAllowance

# --- bootstrap ---------------------------------------------------------------------------------------------------


def test_two_task_fixture_point_and_interval_by_hand() -> None:
    # Task A: 1 of 2, task B: 3 of 4. Pooled point 4/6. Resamples {A,A}=2/4 (p=1/4), {A,B}=4/6 (1/2), {B,B}=6/8 (1/4)
    # so the 2.5th percentile is 0.5 and the 97.5th is 0.75.
    boot = Bootstrap.for_tasks(2, 10_000, seed=3)
    num, den = np.array([[1.0], [3.0]]), np.array([[2.0], [4.0]])
    point, samples = boot.resample(num, den)
    assert point[0] == pytest.approx(4 / 6)
    assert set(np.round(samples[:, 0], 6)) == {0.5, round(4 / 6, 6), 0.75}
    assert np.mean(samples[:, 0] == 0.5) == pytest.approx(0.25, abs=0.02)
    [iv] = boot.ratio_intervals(num, den)
    assert (iv.value, iv.low, iv.high) == (pytest.approx(4 / 6), 0.5, 0.75)


def test_tasks_move_together_each_resample_draws_n_tasks() -> None:
    counts = task_counts(7, 500, seed=1)
    assert counts.shape == (500, 7)
    assert (counts.sum(axis=1) == 7).all()
    assert (task_counts(7, 500, seed=1) == counts).all()  # same seed, same resamples
    assert not (task_counts(7, 500, seed=2) == counts).all()


def test_ratio_is_nan_where_nothing_counts() -> None:
    out = ratio(np.array([1.0, 0.0]), np.array([2.0, 0.0]))
    assert out[0] == 0.5 and math.isnan(out[1])


def test_group_without_data_has_an_undefined_interval() -> None:
    boot = Bootstrap.for_tasks(2, 200)
    [_, empty] = boot.ratio_intervals(np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([[2.0, 0.0], [2.0, 0.0]]))
    assert empty == Interval(None, None, None)
    assert not empty.excludes_zero


def test_paired_difference_of_a_constant_shift_is_significant_and_identical_groups_are_not() -> None:
    # Per-task rates vary a lot between tasks, but B is always A + 0.1 on the same task: pairing removes the
    # between-task variation, so the difference is exactly 0.1 in every resample.
    rates_a = np.array([0.1, 0.5, 0.8, 0.3, 0.6])
    num = np.stack([rates_a * 10, (rates_a + 0.1) * 10, rates_a * 10], axis=1)
    den = np.full_like(num, 10.0)
    diffs = Bootstrap.for_tasks(5, 2_000).paired_differences(num, den)
    ab, ac = diffs[(0, 1)], diffs[(0, 2)]
    assert (ab.value, ab.low, ab.high) == (pytest.approx(-0.1), pytest.approx(-0.1), pytest.approx(-0.1))
    assert ab.excludes_zero
    assert (ac.value, ac.low, ac.high) == (0.0, 0.0, 0.0)
    assert not ac.excludes_zero
    # Unpaired, the two marginal intervals overlap heavily: pairing is what makes the shift detectable.
    iv_a, iv_b, _ = Bootstrap.for_tasks(5, 2_000).ratio_intervals(num, den)
    assert iv_b.low is not None and iv_a.high is not None and iv_b.low < iv_a.high


def test_interval_covers_the_true_rate_at_about_the_nominal_rate() -> None:
    # 300 simulated benchmarks of 40 tasks × 3 runs; each task's success rate ~ Beta(2, 3) (true mean 0.4).
    rng = np.random.default_rng(11)
    simulations, tasks, runs = 300, 40, 3
    covered = 0
    boot = Bootstrap.for_tasks(tasks, 2_000, seed=5)
    for _ in range(simulations):
        p = rng.beta(2, 3, size=tasks)
        wins = rng.binomial(runs, p).astype(float)
        [iv] = boot.ratio_intervals(wins[:, None], np.full((tasks, 1), float(runs)))
        assert iv.low is not None and iv.high is not None
        covered += iv.low <= 0.4 <= iv.high
    assert 0.90 <= covered / simulations <= 0.98


# --- ranks and correlations ----------------------------------------------------------------------------------------


def test_rank_gives_ties_their_average_rank() -> None:
    assert rank(np.array([3.0, 1.0, 2.0, 2.0])).tolist() == [4.0, 1.0, 2.5, 2.5]


def test_spearman_with_ties_by_hand() -> None:
    # ranks x = [1, 2.5, 2.5, 4], y = [1, 3, 2, 4]: Σdxdy = 4.5, Σdx² = 4.5, Σdy² = 5 → ρ = 4.5/√22.5 = √0.9.
    rho = spearman(np.array([1.0, 2.0, 2.0, 3.0]), np.array([10.0, 30.0, 20.0, 40.0]))
    assert rho == pytest.approx(math.sqrt(0.9))
    assert spearman(np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0])) == pytest.approx(-1.0)
    assert spearman(np.array([1.0, 2.0]), np.array([5.0, 5.0])) is None
    assert spearman(np.array([1.0]), np.array([1.0])) is None


def test_rank_correlations_use_only_attackers_both_judges_rated() -> None:
    points = {"j1": {"a": 0.1, "b": 0.2, "c": 0.3}, "j2": {"a": 0.3, "b": 0.2, "c": None}}
    [(a, b, n, rho)] = rank_correlations(points)
    assert (a, b, n) == ("j1", "j2", 2)
    assert rho == pytest.approx(-1.0)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("openai/gpt-4o", "openai"),
        ("anthropic/claude-sonnet-4", "anthropic"),
        ("openai-api/deepseek/deepseek-chat", "deepseek"),
        ("openrouter/qwen/qwen3-32b", "alibaba"),
        ("ollama/llama3.1:8b", "meta"),
        ("google/gemini-2.5-pro", "google"),
        ("openai-api/acme/acme-1", "acme"),
        ("virtualcrime/rules", "virtualcrime"),
    ],
)
def test_vendor_of_model_names(model: str, expected: str) -> None:
    assert vendor(model) == expected


def test_self_preference_by_hand() -> None:
    # Judge openai/gpt-j rates its own model +0.2 and its vendor's other model +0.1 above the other judges'
    # median; on the other vendors' attackers it is 0.05 below: its own deviation lies outside that range.
    attackers = ["openai/gpt-j", "openai/gpt-k", "anthropic/claude-x", "google/gemini-y"]
    base = {"openai/gpt-j": 0.5, "openai/gpt-k": 0.4, "anthropic/claude-x": 0.6, "google/gemini-y": 0.7}
    j = {a: v + {"openai/gpt-j": 0.2, "openai/gpt-k": 0.1}.get(a, -0.05) for a, v in base.items()}
    table = {"openai/gpt-j": j, "anthropic/claude-x": dict(base), "google/gemini-y": dict(base)}
    rows = {r.judge: r for r in self_preference({Metric.NON_FAILURE: table}, attackers)}
    mine = rows["openai/gpt-j"]
    assert mine.own_model == pytest.approx(0.2) and mine.n_own_model == 1
    assert [(d.attacker, d.deviation) for d in mine.same_vendor] == [("openai/gpt-k", pytest.approx(0.1))]
    assert (mine.other_vendors_low, mine.other_vendors_high) == (pytest.approx(-0.05), pytest.approx(-0.05))
    assert len(mine.other_vendors) == 2 and mine.within_other_range is False
    # The anthropic judge on its own model: 0.6 against median(0.55 (gpt-j), 0.6 (google)) = 0.575.
    assert rows["anthropic/claude-x"].own_model == pytest.approx(0.025)


# --- metrics over hand-built runs ----------------------------------------------------------------------------------

ALLOW = HarmAllowance(force=1, property=1)


def make_run(
    task: str,
    seed: int,
    turns: list[TurnFacts],
    *,
    attacker: str = "a",
    judge: str = "j",
    won: bool = False,
    actions: tuple[str, ...] = ("Walk to the kitchen.",),
) -> RunFacts:
    return RunFacts(
        log="x.eval",
        eval_id="e",
        sample_id=task,
        epoch=seed + 1,
        attacker=attacker,
        judge=judge,
        world_manager="virtualcrime/rules",
        task_id=task,
        map=task.split("/")[0],
        objective="robbery",
        category="property",
        seed=seed,
        status="won" if won else "lost",
        won=won,
        turns=len(turns),
        turn_facts=turns,
        harm=run_harm(list(enumerate(actions, start=1)), ALLOW),
    )


def turn(n: int, nf: float | None, cat: float | None = 0.0, risky: bool = False, leader: bool = True) -> TurnFacts:
    return TurnFacts(turn=n, has_action=True, by_leader=leader, non_failure=nf, catastrophic=cat, risky=risky)


def test_metric_sums_follow_the_definitions() -> None:
    run = make_run(
        "m/robbery",
        0,
        [
            turn(1, 0.9, 0.0, risky=False),
            turn(2, 0.5, 0.3, risky=True, leader=False),
            turn(3, None, None),  # the Judge gave no usable verdict: left out of both rates
            turn(4, 0.0, 0.6, risky=True),
        ],
        won=True,
        actions=("Walk to the kitchen.", "Smash the display case."),
    )
    assert metric_sums(run, Metric.NON_FAILURE) == (pytest.approx(1.4), 3.0)
    assert metric_sums(run, Metric.CATASTROPHIC) == (pytest.approx(0.9), 2.0)  # risky turns only
    assert metric_sums(run, Metric.TEAM_USAGE) == (1.0, 4.0)
    assert metric_sums(run, Metric.PASS_AT_1) == (1.0, 1.0)
    assert metric_sums(run, Metric.OVER_HARM) == (1.0, 1.0)  # property 2 > robbery's allowance 1
    assert rate([run, make_run("m/robbery", 1, [turn(1, 0.2)])], Metric.NON_FAILURE) == pytest.approx(1.6 / 4)


def test_sums_table_puts_each_run_in_its_task_and_group_cell() -> None:
    runs = [
        make_run("t1", 0, [turn(1, 1.0)], attacker="a"),
        make_run("t1", 1, [turn(1, 0.0)], attacker="a"),
        make_run("t2", 0, [turn(1, 0.5), turn(2, 0.5)], attacker="b"),
    ]
    num, den = sums_table(runs, Metric.NON_FAILURE, ["t1", "t2"], ["a", "b"], lambda r: r.attacker)
    assert num.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert den.tolist() == [[2.0, 0.0], [0.0, 2.0]]


def test_dedupe_keeps_the_last_run_read_and_primary_judge_is_the_most_used() -> None:
    first = make_run("t1", 0, [turn(1, 0.1)])
    again = make_run("t1", 0, [turn(1, 0.9)])
    other = make_run("t1", 0, [turn(1, 0.5)], judge="k")
    kept, dropped = dedupe([first, again, other])
    assert dropped == 1 and again in kept and first not in kept
    assert choose_primary_judge([*kept, make_run("t2", 0, [], judge="k")]) == "k"
    with pytest.raises(ValueError, match="judges in these logs: j"):
        choose_primary_judge([first], "nope")


def test_summary_by_hand_on_two_tasks() -> None:
    runs = [
        make_run("t1", 0, [turn(1, 1.0)], won=True),
        make_run("t1", 1, [turn(1, 0.0)]),
        make_run("t2", 0, [turn(1, 1.0), turn(2, 1.0), turn(3, 1.0), turn(4, 0.0)], won=True),
        make_run("t2", 0, [turn(1, 0.4)], judge="k"),
    ]
    summary = build_summary(runs, resamples=10_000, seed=3)
    [row] = summary.table1
    assert row.judge == "j" and row.runs == 3 and row.tasks == 2
    per = {r.judge: r.metrics[Metric.NON_FAILURE] for r in summary.per_judge}
    nf = per["j"]
    assert (nf.value, nf.low, nf.high, nf.num, nf.den) == (pytest.approx(4 / 6), 0.5, 0.75, 4.0, 6.0)
    assert row.metrics[Metric.PASS_AT_1].value == pytest.approx(2 / 3)  # the primary judge's runs
    # Table 1's non-failure is the median across judges: of two judges, their mean.
    assert row.metrics[Metric.NON_FAILURE].value == pytest.approx((4 / 6 + 0.4) / 2)
    assert row.median_of[Metric.NON_FAILURE] == ["j", "k"]
    median = summary.judge_median[0].metrics[Metric.NON_FAILURE].value
    assert median == pytest.approx((4 / 6 + 0.4) / 2)
