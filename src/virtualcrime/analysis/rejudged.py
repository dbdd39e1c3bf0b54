"""Judges compared on the same fixed turns (``virtualcrime rejudge``): per-judge rates, per-dimension agreement
and how far apart their outcome distributions are.

Every judge here rated the very same states and actions, so differences are the judges' alone. The original
Judge's rates are computed on the same turns as the second Judges' (the turns any of them re-judged).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..roles.llm.parsing import DIMENSIONS
from .bootstrap import Bootstrap, Estimate, spearman
from .facts import RunFacts, TurnFacts
from .judges import nanmedian

ORIGINAL = " (original)"


class _R(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RejudgeRate(_R):
    """One attacker under one judge over the re-judged turns (the original judge's name ends in ORIGINAL)."""

    attacker: str
    judge: str
    turns: int
    non_failure: Estimate
    catastrophic: Estimate


class DimensionAgreement(_R):
    judge_a: str
    judge_b: str
    dimension: str
    turns: int
    mean_abs_diff: float
    exact: float
    within_one: float
    spearman: float | None


class DistributionSpread(_R):
    """How differently two judges spread probability over the outcome categories on the same turns."""

    judge_a: str
    judge_b: str
    turns: int
    mean_abs_non_failure_diff: float
    mean_total_variation: float


class RejudgeSummary(_R):
    judges: list[str]
    rates: list[RejudgeRate]
    median: list[RejudgeRate]
    agreement: list[DimensionAgreement]
    spread: list[DistributionSpread]
    failures: dict[str, int]


TurnKey = tuple[str, str, int]  # (run log + sample + epoch, task, turn)


def _turn_tables(runs: Sequence[RunFacts]) -> dict[str, dict[TurnKey, tuple[str, TurnFacts]]]:
    """judge → turn → (attacker, facts), with the original judge's facts restricted to re-judged turns."""
    tables: dict[str, dict[TurnKey, tuple[str, TurnFacts]]] = defaultdict(dict)
    for run in runs:
        if not run.rejudged:
            continue
        run_id = f"{run.log}#{run.sample_id}#{run.epoch}"
        asked = {t.turn for turns in run.rejudged.values() for t in turns}
        for judge, turns in run.rejudged.items():
            for facts in turns:
                tables[judge][(run_id, run.task_id, facts.turn)] = (run.attacker, facts)
        for facts in run.turn_facts:
            if facts.turn in asked and facts.non_failure is not None:
                tables[run.judge + ORIGINAL][(run_id, run.task_id, facts.turn)] = (run.attacker, facts)
    return tables


def build_rejudge(runs: Sequence[RunFacts], tasks: Sequence[str], boot: Bootstrap) -> RejudgeSummary | None:
    """The comparison of judges on re-judged turns, or None when no run has any."""
    tables = _turn_tables(runs)
    if not tables:
        return None
    judges = sorted(tables)
    attackers = sorted({a for table in tables.values() for a, _ in table.values()})
    task_index = {t: i for i, t in enumerate(tasks)}
    pairs = [(a, j) for a in attackers for j in judges]
    estimates: dict[str, list[Estimate]] = {}
    point_grid: dict[str, np.ndarray] = {}
    sample_grid: dict[str, np.ndarray] = {}
    for metric in ("non_failure", "catastrophic"):
        num = np.zeros((len(tasks), len(pairs)))
        den = np.zeros((len(tasks), len(pairs)))
        for p, (attacker, judge) in enumerate(pairs):
            for (_, task, _), (who, facts) in tables[judge].items():
                if who != attacker or (metric == "catastrophic" and not facts.risky):
                    continue
                value = facts.non_failure if metric == "non_failure" else facts.catastrophic
                num[task_index[task], p] += value or 0.0
                den[task_index[task], p] += 1.0
        point, samples = boot.resample(num, den)
        estimates[metric] = [
            Estimate.of(iv, float(n), float(d))
            for iv, n, d in zip(boot.intervals(point, samples), num.sum(0), den.sum(0), strict=True)
        ]
        shape = (len(attackers), len(judges))
        point_grid[metric] = nanmedian(point.reshape(shape), axis=1)
        sample_grid[metric] = nanmedian(samples.reshape((samples.shape[0], *shape)), axis=2)
    rates = [
        RejudgeRate(
            attacker=a,
            judge=j,
            turns=sum(1 for who, _ in tables[j].values() if who == a),
            non_failure=estimates["non_failure"][p],
            catastrophic=estimates["catastrophic"][p],
        )
        for p, (a, j) in enumerate(pairs)
        if any(who == a for who, _ in tables[j].values())
    ]
    median_intervals = {m: boot.intervals(point_grid[m], sample_grid[m]) for m in point_grid}
    medians = [
        RejudgeRate(
            attacker=a,
            judge="median",
            turns=0,
            **{m: Estimate.of(ivs[i], None, None) for m, ivs in median_intervals.items()},
        )
        for i, a in enumerate(attackers)
    ]
    failures: dict[str, int] = defaultdict(int)
    for run in runs:
        for judge, n in run.rejudge_failures.items():
            failures[judge] += n
    return RejudgeSummary(
        judges=judges,
        rates=rates,
        median=medians,
        agreement=_agreement(tables),
        spread=_spread(tables),
        failures=dict(failures),
    )


def _common(tables: dict[str, dict[TurnKey, tuple[str, TurnFacts]]], a: str, b: str) -> list[TurnKey]:
    return sorted(set(tables[a]) & set(tables[b]))


def _agreement(tables: dict[str, dict[TurnKey, tuple[str, TurnFacts]]]) -> list[DimensionAgreement]:
    rows = []
    for a, b in combinations(sorted(tables), 2):
        keys = [k for k in _common(tables, a, b) if tables[a][k][1].feasibility and tables[b][k][1].feasibility]
        if not keys:
            continue
        for dimension in DIMENSIONS:
            x = np.array([tables[a][k][1].feasibility[dimension] for k in keys], dtype=float)
            y = np.array([tables[b][k][1].feasibility[dimension] for k in keys], dtype=float)
            diff = np.abs(x - y)
            rows.append(
                DimensionAgreement(
                    judge_a=a,
                    judge_b=b,
                    dimension=dimension,
                    turns=len(keys),
                    mean_abs_diff=float(diff.mean()),
                    exact=float((diff == 0).mean()),
                    within_one=float((diff <= 1).mean()),
                    spearman=spearman(x, y),
                )
            )
    return rows


def category_vector(facts: TurnFacts, categories: Sequence[str]) -> np.ndarray:
    """Probability per outcome category (several outcomes of one category add up)."""
    vector = np.zeros(len(categories))
    for outcome in facts.outcomes:
        vector[categories.index(outcome.category)] += outcome.probability
    return vector


def _spread(tables: dict[str, dict[TurnKey, tuple[str, TurnFacts]]]) -> list[DistributionSpread]:
    from ..roles.types import OutcomeCategory

    categories = [c.value for c in OutcomeCategory]
    rows = []
    for a, b in combinations(sorted(tables), 2):
        keys = _common(tables, a, b)
        if not keys:
            continue
        fa, fb = [tables[a][k][1] for k in keys], [tables[b][k][1] for k in keys]
        nf = np.array([abs((x.non_failure or 0.0) - (y.non_failure or 0.0)) for x, y in zip(fa, fb, strict=True)])
        tv = np.array(
            [
                0.5 * np.abs(category_vector(x, categories) - category_vector(y, categories)).sum()
                for x, y in zip(fa, fb, strict=True)
            ]
        )
        rows.append(
            DistributionSpread(
                judge_a=a,
                judge_b=b,
                turns=len(keys),
                mean_abs_non_failure_diff=float(nf.mean()),
                mean_total_variation=float(tv.mean()),
            )
        )
    return rows
