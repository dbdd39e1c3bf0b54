"""Agreement between the classifier, a person's labels and a second-opinion model on an audit file.

For each pair (the second rater taken as the truth): per-scale confusion matrices and exact accuracy where both
gave levels, the exceeds-allowance decision's counts, precision and recall — as counted on the file and weighted
by each line's sampling weight (an estimate for all the actions the file was drawn from) — and Cohen's κ
(unweighted on the decision, quadratic-weighted on each scale).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from .audit import AuditHeader, AuditItem
from .validate import LEVELS, DecisionReport, ScaleReport, decision_report, scale_report

Rating = tuple[int | None, int | None, bool | None]  # force, property, exceeds the allowance
Rater = Callable[[AuditItem], Rating]


class _G(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PairAgreement(_G):
    """Rater ``a`` against rater ``b`` (``b`` as the truth) over the lines both rated."""

    a: str
    b: str
    n: int
    exceeds: DecisionReport | None
    weighted_precision: float | None
    weighted_recall: float | None
    kappa: float | None
    force: ScaleReport | None
    property: ScaleReport | None
    kappa_force: float | None
    kappa_property: float | None


class AuditValidation(_G):
    """Everything ``harm validate`` reports on one audit file."""

    file: str
    lexicon_version: str
    lines: int
    reviewer_labelled: int
    model_labelled: int
    model_errors: int
    drawn: dict[str, int]
    population: dict[str, int]
    pairs: list[PairAgreement]
    disagreements: list[str]


def classifier_rater(item: AuditItem) -> tuple[int | None, int | None, bool | None]:
    """The classifier's levels and verdict as recorded in the file."""
    return item.classifier_force, item.classifier_property, item.classifier_exceeds


def reviewer_rater(item: AuditItem) -> tuple[int | None, int | None, bool | None]:
    """The person's levels (if given) and verdict."""
    return item.label_force, item.label_property, item.reviewer_exceeds


def model_rater(item: AuditItem) -> tuple[int | None, int | None, bool | None]:
    """The second-opinion model's levels and verdict."""
    if item.model is None:
        return None, None, None
    return item.model.force, item.model.property, item.model_exceeds


def cohen_kappa(a: Sequence[int], b: Sequence[int], size: int, quadratic: bool = False) -> float | None:
    """Cohen's κ of two ratings on categories 0..size-1 (quadratic-weighted if asked); None when undefined."""
    n = len(a)
    if n == 0 or n != len(b):
        return None
    observed = [[0.0] * size for _ in range(size)]
    for x, y in zip(a, b, strict=True):
        observed[x][y] += 1 / n
    row = [sum(r) for r in observed]
    col = [sum(observed[i][j] for i in range(size)) for j in range(size)]

    def weight(i: int, j: int) -> float:
        return ((i - j) / (size - 1)) ** 2 if quadratic else float(i != j)

    disagree = sum(weight(i, j) * observed[i][j] for i in range(size) for j in range(size))
    chance = sum(weight(i, j) * row[i] * col[j] for i in range(size) for j in range(size))
    return None if chance == 0 else 1 - disagree / chance


def pair_agreement(items: Sequence[AuditItem], a: tuple[str, Rater], b: tuple[str, Rater]) -> PairAgreement:
    """``a`` against ``b`` over the lines both gave a verdict on."""
    (name_a, rate_a), (name_b, rate_b) = a, b
    return rating_agreement(
        name_a, name_b, [rate_a(i) for i in items], [rate_b(i) for i in items], [i.weight for i in items]
    )


def rating_agreement(
    name_a: str,
    name_b: str,
    ratings_a: Sequence[Rating],
    ratings_b: Sequence[Rating],
    weights: Sequence[float] | None = None,
) -> PairAgreement:
    """Rater ``a``'s (force, property, exceeds) ratings against ``b``'s, line by line (``b`` as the truth); a None
    is a rating not given. ``weights`` (each line's sampling weight) give the weighted precision and recall; without
    them those are None."""
    if len(ratings_a) != len(ratings_b) or (weights is not None and len(weights) != len(ratings_a)):
        raise ValueError("ratings and weights differ in length")
    both = list(zip(ratings_a, ratings_b, weights if weights is not None else [1.0] * len(ratings_a), strict=True))
    decided = [(ra, rb, w) for ra, rb, w in both if ra[2] is not None and rb[2] is not None]
    truth = [bool(rb[2]) for _, rb, _ in decided]
    guess = [bool(ra[2]) for ra, _, _ in decided]
    tp = sum(w for ra, rb, w in decided if ra[2] and rb[2])
    fp = sum(w for ra, rb, w in decided if ra[2] and not rb[2])
    fn = sum(w for ra, rb, w in decided if not ra[2] and rb[2])
    scales: dict[str, ScaleReport | None] = {}
    kappas: dict[str, float | None] = {}
    for index, scale in ((0, "force"), (1, "property")):
        rated = [(ra[index], rb[index]) for ra, rb, _ in both if ra[index] is not None and rb[index] is not None]
        ya = [int(x) for x, _ in rated if x is not None]
        yb = [int(y) for _, y in rated if y is not None]
        scales[scale] = scale_report(scale, yb, ya) if rated else None
        kappas[scale] = cohen_kappa(ya, yb, LEVELS, quadratic=True) if rated else None
    weighted = weights is not None
    return PairAgreement(
        a=name_a,
        b=name_b,
        n=len(decided),
        exceeds=decision_report(truth, guess) if decided else None,
        weighted_precision=tp / (tp + fp) if weighted and tp + fp else None,
        weighted_recall=tp / (tp + fn) if weighted and tp + fn else None,
        kappa=cohen_kappa([int(g) for g in guess], [int(t) for t in truth], 2) if decided else None,
        force=scales["force"],
        property=scales["property"],
        kappa_force=kappas["force"],
        kappa_property=kappas["property"],
    )


def validate_audit(file: str, header: AuditHeader, items: Sequence[AuditItem]) -> AuditValidation:
    """Classifier vs reviewer, classifier vs model and model vs reviewer on one audit file."""
    raters = {"classifier": classifier_rater, "reviewer": reviewer_rater, "model": model_rater}
    pairs = [
        pair_agreement(items, (a, raters[a]), (b, raters[b]))
        for a, b in (("classifier", "reviewer"), ("classifier", "model"), ("model", "reviewer"))
    ]
    disagreements = [
        f"{item.audit_id}: classifier {'exceeds' if item.classifier_exceeds else 'within'} "
        f"({item.classifier_force}/{item.classifier_property}), reviewer "
        f"{'exceeds' if item.reviewer_exceeds else 'within'}"
        f"{f' ({item.label_force}/{item.label_property})' if item.label_force is not None else ''}: {item.text[:120]}"
        for item in items
        if item.reviewer_exceeds is not None and item.reviewer_exceeds != item.classifier_exceeds
    ]
    return AuditValidation(
        file=file,
        lexicon_version=header.lexicon_version,
        lines=len(items),
        reviewer_labelled=sum(i.reviewer_exceeds is not None for i in items),
        model_labelled=sum(i.model is not None and i.model_exceeds is not None for i in items),
        model_errors=sum(i.model is not None and bool(i.model.error) for i in items),
        drawn=header.drawn,
        population=header.population,
        pairs=pairs,
        disagreements=disagreements,
    )
