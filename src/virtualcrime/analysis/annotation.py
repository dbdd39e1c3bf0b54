"""Behaviour annotations in the report: annotator agreement, per-attacker levels and Level-5 rates, self-bias.

Agreement is measured on the independent first pass (before either annotator saw the other): quadratic weighted
Cohen's κ, exact and within-one agreement. Levels and Level-5 rates use the reconciled scores only (dropped
dimensions are left out and counted), with task-clustered bootstrap intervals like every other rate; besides the
four dimensions, an ``overall`` row pools every reconciled level of the four. A stored level outside 1–5 (a log
written by other tools, or edited) is never counted: it is left out and listed in ``invalid_scores``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..roles.annotation.scores import BEHAVIOURS, MAX_LEVEL, MIN_LEVEL
from ..runs.payloads import RunAnnotation
from .annotator_bias import SelfBiasRow, self_bias, valid_level
from .bootstrap import Bootstrap, Estimate
from .facts import RunFacts

Annotated = list[tuple[RunFacts, RunAnnotation]]
OVERALL = "overall"  # the behaviour row pooling all four dimensions


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
    out_of_range: int = Field(0, description="Runs left out because a first-pass level was outside 1-5.")


class BehaviourRow(_A):
    """One attacker on one dimension (or ``overall``: every reconciled level of the four dimensions pooled)."""

    attacker: str
    dimension: str
    runs: int = Field(description="Runs with a reconciled level on this dimension (overall: on any dimension).")
    mean_level: Estimate
    level5_rate: Estimate


Source = Literal["first_a", "first_b", "final"]


class InvalidScore(_A):
    """A stored level outside 1–5, left out of every figure."""

    log: str
    sample_id: str
    epoch: int
    annotators: str
    source: Source
    dimension: str
    score: int

    @property
    def message(self) -> str:
        return (f"{self.log} {self.sample_id} epoch {self.epoch} ({self.annotators}): {self.source} {self.dimension} "
                f"= {self.score!r} is not a level {MIN_LEVEL}-{MAX_LEVEL}; left out")  # fmt: skip


class AnnotationSummary(_A):
    pairs: list[str]
    agreement: list[DimensionAgreementRow]
    behaviour: list[BehaviourRow]
    self_bias: list[SelfBiasRow]
    invalid_scores: list[InvalidScore] = Field(default_factory=list)


def quadratic_weighted_kappa(
    a: Sequence[int], b: Sequence[int], low: int = MIN_LEVEL, high: int = MAX_LEVEL
) -> float | None:
    """Cohen's κ with quadratic weights over the levels low..high; None when undefined (no data, or no spread).

    Raises ValueError when the two lists differ in length or hold anything but whole numbers in low..high (a 0 or a 6
    would otherwise wrap around or fall off the table)."""
    if len(a) != len(b):
        raise ValueError(f"weighted κ needs paired scores: {len(a)} and {len(b)} given")
    bad = sorted({repr(v) for v in (*a, *b) if not _in_range(v, low, high)})
    if bad:
        raise ValueError(f"weighted κ: score(s) {', '.join(bad)} outside the levels {low}-{high}")
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


def _in_range(value: object, low: int, high: int) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool) and low <= int(value) <= high


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
        self_bias=self_bias(annotated, tasks, boot),
        invalid_scores=invalid_scores(annotated),
    )


def invalid_scores(annotated: Annotated) -> list[InvalidScore]:
    """Every stored level outside 1–5 (first passes and reconciled levels), in run order."""
    found = []
    for run, note in annotated:
        sources: tuple[tuple[Source, Mapping[str, int | None] | None], ...] = (
            ("first_a", note.first_a), ("first_b", note.first_b), ("final", note.final)
        )  # fmt: skip
        for source, levels in sources:
            for dimension, score in (levels or {}).items():
                if score is not None and not valid_level(score):
                    found.append(InvalidScore(log=run.log, sample_id=run.sample_id, epoch=run.epoch,
                                              annotators=f"{note.annotator_a} | {note.annotator_b}",
                                              source=source, dimension=dimension, score=score))  # fmt: skip
    return found


def _agreement(annotated: Annotated) -> list[DimensionAgreementRow]:
    by_pair: dict[str, list[RunAnnotation]] = defaultdict(list)
    for _, note in annotated:
        by_pair[f"{note.annotator_a} | {note.annotator_b}"].append(note)
    rows = []
    for pair, notes in sorted(by_pair.items()):
        for dimension in BEHAVIOURS:
            rated = [(n.first_a[dimension], n.first_b[dimension]) for n in notes
                     if n.first_a and n.first_b and dimension in n.first_a and dimension in n.first_b]  # fmt: skip
            both = [p for p in rated if valid_level(p[0]) and valid_level(p[1])]
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
                    dropped=sum(not valid_level(n.final.get(dimension)) for n in notes) / len(notes),
                    out_of_range=len(rated) - len(both),
                )
            )
    return rows


def _behaviour(annotated: Annotated, tasks: Sequence[str], boot: Bootstrap) -> list[BehaviourRow]:
    """Per dimension, then ``overall`` (all four pooled): mean reconciled level and Level-5 share per attacker."""
    attackers = sorted({run.attacker for run, _ in annotated})
    task_index = {t: i for i, t in enumerate(tasks)}
    rows = []
    for dimension in (*BEHAVIOURS, OVERALL):
        wanted = BEHAVIOURS if dimension == OVERALL else (dimension,)
        level = np.zeros((len(tasks), len(attackers)))
        top = np.zeros_like(level)
        count = np.zeros_like(level)
        runs = np.zeros(len(attackers), dtype=int)
        for run, note in annotated:
            values = [v for d in wanted if (v := note.final.get(d)) is not None and valid_level(v)]
            if not values:
                continue
            t, a = task_index[run.task_id], attackers.index(run.attacker)
            level[t, a] += sum(values)
            top[t, a] += sum(v == MAX_LEVEL for v in values)
            count[t, a] += len(values)
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
