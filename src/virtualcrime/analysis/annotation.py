"""Behaviour annotations in the report: annotator agreement, per-attacker levels and Level-5 rates, self-bias.

Agreement is measured on the independent first pass (before either annotator saw the other): quadratic weighted
Cohen's κ, exact and within-one agreement. Levels and Level-5 rates use the reconciled scores only (dropped
dimensions are left out and counted), with task-clustered bootstrap intervals like every other rate.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..harness.log_reader import RunAnnotation
from ..roles.annotation.scores import BEHAVIOURS, MAX_LEVEL, MIN_LEVEL
from .bootstrap import Bootstrap, Estimate
from .facts import RunFacts
from .judges import vendor

Annotated = list[tuple[RunFacts, RunAnnotation]]


class _A(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DimensionAgreementRow(_A):
    annotators: str
    dimension: str
    runs: int
    kappa: float | None
    exact: float
    within_one: float
    dropped: float


class BehaviourRow(_A):
    attacker: str
    dimension: str
    runs: int
    mean_level: Estimate
    level5_rate: Estimate


class SelfBiasRow(_A):
    """How much higher an annotator rates its own model's (or vendor's) runs than its partner does, beyond how
    much higher it rates everyone else's."""

    annotator: str
    own_runs: int
    other_runs: int
    own_minus_partner: float | None
    others_minus_partner: float | None
    bias: float | None


class AnnotationSummary(_A):
    pairs: list[str]
    agreement: list[DimensionAgreementRow]
    behaviour: list[BehaviourRow]
    self_bias: list[SelfBiasRow]


def quadratic_weighted_kappa(
    a: Sequence[int], b: Sequence[int], low: int = MIN_LEVEL, high: int = MAX_LEVEL
) -> float | None:
    """Cohen's κ with quadratic weights over the levels low..high; None when undefined (no data, or no spread)."""
    x, y = np.asarray(a, dtype=int) - low, np.asarray(b, dtype=int) - low
    k = high - low + 1
    if x.size == 0:
        return None
    observed = np.zeros((k, k))
    np.add.at(observed, (x, y), 1.0)
    observed /= x.size
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    i, j = np.indices((k, k))
    weights = (i - j) ** 2 / (k - 1) ** 2
    disagreement_expected = float((weights * expected).sum())
    if disagreement_expected == 0.0:
        return None
    return 1.0 - float((weights * observed).sum()) / disagreement_expected


def build_annotation(runs: Sequence[RunFacts], tasks: Sequence[str], boot: Bootstrap) -> AnnotationSummary | None:
    """The annotation tables, or None when no run is annotated."""
    annotated: Annotated = [(run, note) for run in runs for note in run.annotations if not note.skipped]
    if not annotated:
        return None
    pairs = sorted({f"{n.annotator_a} | {n.annotator_b}" for _, n in annotated})
    return AnnotationSummary(
        pairs=pairs,
        agreement=_agreement(annotated),
        behaviour=_behaviour(annotated, tasks, boot),
        self_bias=_self_bias(annotated),
    )


def _agreement(annotated: Annotated) -> list[DimensionAgreementRow]:
    by_pair: dict[str, list[RunAnnotation]] = defaultdict(list)
    for _, note in annotated:
        by_pair[f"{note.annotator_a} | {note.annotator_b}"].append(note)
    rows = []
    for pair, notes in sorted(by_pair.items()):
        for dimension in BEHAVIOURS:
            both = [(n.first_a[dimension], n.first_b[dimension]) for n in notes
                    if n.first_a and n.first_b and dimension in n.first_a and dimension in n.first_b]  # fmt: skip
            a = np.array([p[0] for p in both], dtype=int)
            b = np.array([p[1] for p in both], dtype=int)
            diff = np.abs(a - b)
            rows.append(
                DimensionAgreementRow(
                    annotators=pair,
                    dimension=dimension,
                    runs=len(both),
                    kappa=quadratic_weighted_kappa(a.tolist(), b.tolist()),
                    exact=float((diff == 0).mean()) if both else 0.0,
                    within_one=float((diff <= 1).mean()) if both else 0.0,
                    dropped=sum(n.final.get(dimension) is None for n in notes) / len(notes),
                )
            )
    return rows


def _behaviour(annotated: Annotated, tasks: Sequence[str], boot: Bootstrap) -> list[BehaviourRow]:
    attackers = sorted({run.attacker for run, _ in annotated})
    task_index = {t: i for i, t in enumerate(tasks)}
    rows = []
    for dimension in BEHAVIOURS:
        level = np.zeros((len(tasks), len(attackers)))
        top = np.zeros_like(level)
        count = np.zeros_like(level)
        runs = np.zeros(len(attackers), dtype=int)
        for run, note in annotated:
            value = note.final.get(dimension)
            if value is None:
                continue
            t, a = task_index[run.task_id], attackers.index(run.attacker)
            level[t, a] += value
            top[t, a] += value == MAX_LEVEL
            count[t, a] += 1
            runs[a] += 1
        means, fives = boot.ratio_intervals(level, count), boot.ratio_intervals(top, count)
        for a, attacker in enumerate(attackers):
            rows.append(
                BehaviourRow(
                    attacker=attacker,
                    dimension=dimension,
                    runs=int(runs[a]),
                    mean_level=Estimate.of(means[a], float(level[:, a].sum()), float(count[:, a].sum())),
                    level5_rate=Estimate.of(fives[a], float(top[:, a].sum()), float(count[:, a].sum())),
                )
            )
    return rows


def _self_bias(annotated: Annotated) -> list[SelfBiasRow]:
    """Per annotator: mean (its score − its partner's) on its own vendor's runs, minus the same on other runs."""
    diffs: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"own": [], "other": []})
    for run, note in annotated:
        if not note.first_a or not note.first_b:
            continue
        for me, mine, theirs in ((note.annotator_a, note.first_a, note.first_b),
                                 (note.annotator_b, note.first_b, note.first_a)):  # fmt: skip
            delta = float(np.mean([mine[d] - theirs[d] for d in BEHAVIOURS if d in mine and d in theirs]))
            group = "own" if run.attacker == me or vendor(run.attacker) == vendor(me) else "other"
            diffs[me][group].append(delta)
    rows = []
    for annotator, groups in sorted(diffs.items()):
        own = float(np.mean(groups["own"])) if groups["own"] else None
        other = float(np.mean(groups["other"])) if groups["other"] else None
        rows.append(
            SelfBiasRow(
                annotator=annotator,
                own_runs=len(groups["own"]),
                other_runs=len(groups["other"]),
                own_minus_partner=own,
                others_minus_partner=other,
                bias=None if own is None or other is None else own - other,
            )
        )
    return rows
