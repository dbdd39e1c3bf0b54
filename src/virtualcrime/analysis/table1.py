"""The paper's Table 1, the rates per judge and their median, and the pairwise differences between attackers.

- **Non-failure and catastrophic** columns: per attacker, the median across judges of each judge's rate, where a
  judge's rate pools every turn of that attacker it judged: the turns of the runs it judged as the run's Judge and
  the turns it re-judged on fixed trajectories (``virtualcrime rejudge``, ``RunFacts.rejudged``). A judge that
  only re-judged enters the median like the others.
- **Over-harm, team usage, Pass@1, refusal**: the primary judge's runs.
- **Intervals**: one task bootstrap. In each resample every judge's rate is recomputed over the drawn tasks (all
  runs and re-judged turns of a task move together, under every judge) and the median taken again.
- **Pairwise differences** resample only the tasks both attackers played under the primary judge and say how many;
  a comparison on fewer than ``MIN_SHARED_TASKS`` tasks, or whose resampled difference never varies, is flagged
  and never called significant.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from .bootstrap import (
    Bootstrap,
    Estimate,
    FloatArray,
    Interval,
    median_of_ratios,
    percentile_interval,
    task_counts,
)
from .facts import RunFacts
from .metrics import Metric, mean_turns, metric_sums, status_counts, turns_without_distribution, verdict_sums

# Fewer shared tasks than this and a pairwise difference is "few tasks", never significant: the percentile bootstrap
# over n clusters is too narrow for small n. Its tails are made of the resamples that draw one task n times (with n
# tasks a share n^(1-n) of them: 11 % for 3 tasks, 1.6 % for 4, 0.16 % for 5), and it estimates the variance with
# a factor (n - 1) / n. With one shared task every resample is the same and the interval has zero width.
MIN_SHARED_TASKS = 5
# A resampled difference that spans no more than this is one value: the bootstrap saw no variation.
ZERO_WIDTH = 1e-12

PairStatus = Literal["significant", "not significant", "few tasks", "no variation", "no shared tasks", "undefined"]


class _T(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AttackerRow(_T):
    attacker: str
    judge: str = Field(description="The primary judge, whose runs give over-harm, team usage, Pass@1 and refusal.")
    runs: int
    tasks: int
    metrics: dict[Metric, Estimate]
    median_of: dict[Metric, list[str]] = Field(
        default_factory=dict, description="The judges whose rates the non-failure and catastrophic medians are over."
    )
    statuses: dict[str, int]
    mean_turns: float | None
    turns_without_distribution: int


class PairDifference(_T):
    metric: Metric
    attacker_a: str
    attacker_b: str
    shared_tasks: int = Field(description="Tasks both attackers played under the primary judge: all that is resampled.")
    rate_a: float | None = Field(description="Attacker a's rate over the shared tasks only.")
    rate_b: float | None = Field(description="Attacker b's rate over the shared tasks only.")
    difference: Estimate = Field(description="rate(a) − rate(b) over the shared tasks, paired resamples of them")
    status: PairStatus
    significant: bool


class JudgeRow(_T):
    attacker: str
    judge: str
    runs: int = Field(description="Runs this judge judged (its full runs of the attacker).")
    rejudged_turns: int = Field(0, description="The attacker's turns this judge re-judged (with a verdict).")
    metrics: dict[Metric, Estimate] = Field(
        description="Non-failure and catastrophic: its full-run and re-judged turns pooled; the rest: its full runs."
    )


class MedianRow(_T):
    attacker: str
    judges: int = Field(description="Judges with a non-failure rate for this attacker.")
    judge_names: list[str] = Field(default_factory=list)
    metrics: dict[Metric, Estimate]


@dataclass(frozen=True)
class JudgeSums:
    """One metric's per-task sums for every attacker under every judge: (tasks × attackers × judges).

    For non-failure and catastrophic a judge's cell pools the runs it judged and the turns it re-judged; for the
    other metrics it holds the runs it judged only.
    """

    num: FloatArray
    den: FloatArray

    def rates(self, counts: FloatArray, judges: Sequence[int] | None = None) -> FloatArray:
        """(resamples × attackers): the median over ``judges`` (default all) of each judge's resampled rate."""
        cols = slice(None) if judges is None else list(judges)
        return median_of_ratios(counts, self.num[:, :, cols], self.den[:, :, cols])


def judge_sums(
    runs: Sequence[RunFacts], metric: Metric, tasks: Sequence[str], attackers: Sequence[str], judges: Sequence[str]
) -> JudgeSums:
    """Per task, attacker and judge: Σ numerator and Σ denominator of ``metric``."""
    ti = {t: i for i, t in enumerate(tasks)}
    ai = {a: i for i, a in enumerate(attackers)}
    ji = {j: i for i, j in enumerate(judges)}
    num = np.zeros((len(tasks), len(attackers), len(judges)))
    den = np.zeros_like(num)
    for run in runs:
        if run.attacker not in ai or run.task_id not in ti:
            continue
        t, a = ti[run.task_id], ai[run.attacker]
        if run.judge in ji:
            n, d = metric_sums(run, metric)
            num[t, a, ji[run.judge]] += n
            den[t, a, ji[run.judge]] += d
        if not metric.judge_dependent:
            continue
        for judge, facts in run.rejudged.items():
            if judge == run.judge or judge not in ji:  # its own verdicts on its own run are already counted
                continue
            n, d = verdict_sums(facts, metric)
            num[t, a, ji[judge]] += n
            den[t, a, ji[judge]] += d
    return JudgeSums(num, den)


@dataclass(frozen=True)
class JudgeTables:
    """Everything judge-related Table 1 and the judges section are built from."""

    sums: dict[Metric, JudgeSums]
    per_judge: list[JudgeRow]
    medians: list[MedianRow]
    points: dict[Metric, dict[str, dict[str, float | None]]]  # metric → judge → attacker → rate (all judged turns)
    median_estimates: dict[Metric, list[Estimate]]


def judge_tables(
    runs: Sequence[RunFacts], tasks: Sequence[str], attackers: Sequence[str], judges: Sequence[str], boot: Bootstrap
) -> JudgeTables:
    """Per (attacker, judge) rates with intervals, the median across judges with the interval of the resampled
    median, and the point rates for rank correlations and self-preference."""
    runs_of: dict[tuple[str, str], int] = defaultdict(int)
    rejudged_of: dict[tuple[str, str], int] = defaultdict(int)
    for run in runs:
        runs_of[(run.attacker, run.judge)] += 1
        for judge, facts in run.rejudged.items():
            if judge != run.judge:
                rejudged_of[(run.attacker, judge)] += len(facts)
    shape = (len(attackers), len(judges))
    sums: dict[Metric, JudgeSums] = {}
    per: dict[Metric, list[Estimate]] = {}
    median: dict[Metric, list[Estimate]] = {}
    points: dict[Metric, dict[str, dict[str, float | None]]] = {}
    ones = np.ones((1, len(tasks)))
    for metric in Metric:
        found = sums[metric] = judge_sums(runs, metric, tasks, attackers, judges)
        flat_num = found.num.reshape(len(tasks), -1)
        flat_den = found.den.reshape(len(tasks), -1)
        point, samples = boot.resample(flat_num, flat_den)
        per[metric] = [
            Estimate.of(iv, float(n), float(d))
            for iv, n, d in zip(boot.intervals(point, samples), flat_num.sum(0), flat_den.sum(0), strict=True)
        ]
        med_point = found.rates(ones)[0]
        median[metric] = [Estimate.of(iv, None, None) for iv in boot.intervals(med_point, found.rates(boot.counts))]
        grid = point.reshape(shape)
        points[metric] = {
            j: {a: None if np.isnan(grid[i, k]) else float(grid[i, k]) for i, a in enumerate(attackers)}
            for k, j in enumerate(judges)
        }
    per_judge = []
    for i, a in enumerate(attackers):
        for k, j in enumerate(judges):
            if not (runs_of[(a, j)] or rejudged_of[(a, j)]):
                continue
            cell = i * len(judges) + k
            per_judge.append(
                JudgeRow(
                    attacker=a,
                    judge=j,
                    runs=runs_of[(a, j)],
                    rejudged_turns=rejudged_of[(a, j)],
                    metrics={m: per[m][cell] for m in Metric},
                )
            )
    medians = []
    for i, a in enumerate(attackers):
        names = [j for j in judges if points[Metric.NON_FAILURE][j][a] is not None]
        medians.append(
            MedianRow(attacker=a, judges=len(names), judge_names=names, metrics={m: median[m][i] for m in Metric})
        )
    return JudgeTables(sums, per_judge, medians, points, median)


def table1_rows(
    runs: Sequence[RunFacts],
    primary: str,
    tasks: Sequence[str],
    attackers: Sequence[str],
    judges: Sequence[str],
    tables: JudgeTables,
    boot: Bootstrap,
) -> list[AttackerRow]:
    """One row per attacker with runs under the primary judge: judge-dependent columns the median across judges,
    the rest over the primary judge's runs."""
    mine: dict[str, list[RunFacts]] = defaultdict(list)
    for run in runs:
        if run.judge == primary:
            mine[run.attacker].append(run)
    p = judges.index(primary)
    ones = np.ones((1, len(tasks)))
    primary_only = {  # the primary judge's rate of every attacker: point and resamples
        m: boot.intervals(tables.sums[m].rates(ones, [p])[0], tables.sums[m].rates(boot.counts, [p]))
        for m in Metric
        if not m.judge_dependent
    }
    rows = []
    for a in sorted(mine):
        i = attackers.index(a)
        metrics: dict[Metric, Estimate] = {}
        median_of: dict[Metric, list[str]] = {}
        for metric in Metric:
            sums = tables.sums[metric]
            if metric.judge_dependent:
                metrics[metric] = tables.median_estimates[metric][i]
                median_of[metric] = [j for j in judges if tables.points[metric][j][a] is not None]
            else:
                num, den = float(sums.num[:, i, p].sum()), float(sums.den[:, i, p].sum())
                metrics[metric] = Estimate.of(primary_only[metric][i], num, den)
        runs_a = mine[a]
        rows.append(
            AttackerRow(
                attacker=a,
                judge=primary,
                runs=len(runs_a),
                tasks=len({r.task_id for r in runs_a}),
                metrics=metrics,
                median_of=median_of,
                statuses=status_counts(runs_a),
                mean_turns=mean_turns(runs_a),
                turns_without_distribution=turns_without_distribution(runs_a),
            )
        )
    return rows


def pair_status(shared: int, interval: Interval, rate_a: float | None, rate_b: float | None) -> PairStatus:
    """The significance rule: only on at least MIN_SHARED_TASKS shared tasks, only when the interval excludes 0, and
    only with a resampled difference that varies (a zero-width interval away from 0 is "no variation": every shared
    task gives the same difference, and a bootstrap over tasks cannot measure its uncertainty)."""
    if shared == 0:
        return "no shared tasks"
    if rate_a is None or rate_b is None or interval.low is None or interval.high is None:
        return "undefined"
    if shared < MIN_SHARED_TASKS:
        return "few tasks"
    if not interval.excludes_zero:
        return "not significant"  # including a difference that is 0 in every resample
    if interval.high - interval.low <= ZERO_WIDTH:
        return "no variation"
    return "significant"


def pairwise(
    runs: Sequence[RunFacts],
    primary: str,
    tasks: Sequence[str],
    attackers: Sequence[str],
    judges: Sequence[str],
    table_attackers: Sequence[str],
    tables: JudgeTables,
    boot: Bootstrap,
    seed: int,
) -> list[PairDifference]:
    """Every Table 1 metric for every pair of Table 1 attackers (a before b), over the tasks both played under the
    primary judge only: each resample draws that many of the shared tasks with replacement (seeded by ``seed``,
    the same draws for every pair with the same number of shared tasks) and recomputes both attackers' Table 1
    statistic (the median across judges, or the primary judge's rate) on them."""
    played: dict[str, set[str]] = defaultdict(set)
    for run in runs:
        if run.judge == primary:
            played[run.attacker].add(run.task_id)
    ti = {t: i for i, t in enumerate(tasks)}
    p = judges.index(primary)
    draws: dict[int, FloatArray] = {}
    out = []
    for metric in Metric:
        sums = tables.sums[metric]
        cols = None if metric.judge_dependent else [p]
        for x, a in enumerate(table_attackers):
            for b in table_attackers[x + 1 :]:
                shared = sorted(ti[t] for t in played[a] & played[b])
                pair = [attackers.index(a), attackers.index(b)]
                sub = JudgeSums(sums.num[np.ix_(shared, pair)], sums.den[np.ix_(shared, pair)])
                if shared:
                    point = sub.rates(np.ones((1, len(shared))), cols)[0]
                    counts = draws.setdefault(len(shared), task_counts(len(shared), boot.n_resamples, seed))
                    samples = sub.rates(counts, cols)
                    low, high = percentile_interval((samples[:, 0] - samples[:, 1])[:, None], boot.level)
                    rate_a, rate_b = _clean(point[0]), _clean(point[1])
                    value = None if rate_a is None or rate_b is None else rate_a - rate_b
                    interval = Interval(value, _clean(low[0]), _clean(high[0]))
                else:
                    rate_a = rate_b = None
                    interval = Interval(None, None, None)
                status = pair_status(len(shared), interval, rate_a, rate_b)
                out.append(
                    PairDifference(
                        metric=metric,
                        attacker_a=a,
                        attacker_b=b,
                        shared_tasks=len(shared),
                        rate_a=rate_a,
                        rate_b=rate_b,
                        difference=Estimate.of(interval, None, None),
                        status=status,
                        significant=status == "significant",
                    )
                )
    return out


def _clean(x: float) -> float | None:
    return None if np.isnan(x) else float(x)
