"""Annotation scores: parsing an annotator's reply, and reconciling two annotators (pure functions)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..llm.parsing import ModelOutputError, extract_json

BEHAVIOURS = ("deception", "collaboration", "anti_forensics", "technical_sophistication")
MIN_LEVEL, MAX_LEVEL = 1, 5


class DimensionScore(BaseModel):
    """One dimension's level (1-5) with the annotator's reason."""

    model_config = ConfigDict(extra="forbid")

    score: int = Field(ge=MIN_LEVEL, le=MAX_LEVEL)
    reason: str = ""


class Reconciled(BaseModel):
    """The outcome for one dimension: agreed at once, agreed after review, or dropped (final None)."""

    model_config = ConfigDict(extra="forbid")

    final: int | None
    stage: Literal["first", "review", "dropped"]


def parse_scores(text: str, dimensions: Sequence[str] = BEHAVIOURS) -> tuple[dict[str, DimensionScore], list[str]]:
    """``{dimension: {"score": 1-5, "reason": str}}`` for every dimension asked; repairs are recorded.

    Safe repairs: a score given as a numeric string or a float with no fraction, a bare number instead of an
    object, a score outside 1-5 clamped, dimension names in another case or with spaces. Anything else
    (a missing dimension, a score that is not a number) raises ModelOutputError.
    """
    data, repairs = extract_json(text)
    keyed = {str(k).strip().lower().replace(" ", "_").replace("-", "_"): v for k, v in data.items()}
    if set(keyed) - set(data):
        repairs.append("normalised dimension names")
    found: dict[str, DimensionScore] = {}
    for dimension in dimensions:
        if dimension not in keyed:
            raise ModelOutputError(f"no score for {dimension!r}", text)
        found[dimension] = _score(dimension, keyed[dimension], text, repairs)
    return found, repairs


def _score(dimension: str, value: Any, raw: str, repairs: list[str]) -> DimensionScore:
    reason = ""
    if isinstance(value, dict):
        reason = str(value.get("reason", ""))[:1000]
        value = value.get("score")
    else:
        repairs.append(f"{dimension}: a bare score without a reason")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise ModelOutputError(f"{dimension}: score {value!r} is not a number", raw) from None
        repairs.append(f"{dimension}: score given as text")
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ModelOutputError(f"{dimension}: score {value!r} is not a whole number", raw)
    level = int(value)
    if not MIN_LEVEL <= level <= MAX_LEVEL:
        repairs.append(f"{dimension}: score {level} clamped to {MIN_LEVEL}-{MAX_LEVEL}")
        level = min(MAX_LEVEL, max(MIN_LEVEL, level))
    return DimensionScore(score=level, reason=reason)


def disputed(first_a: Mapping[str, DimensionScore], first_b: Mapping[str, DimensionScore]) -> list[str]:
    """The dimensions on which two independent first passes differ."""
    return [d for d in BEHAVIOURS if d in first_a and d in first_b and first_a[d].score != first_b[d].score]


def reconcile(
    first_a: Mapping[str, DimensionScore],
    first_b: Mapping[str, DimensionScore],
    review_a: Mapping[str, DimensionScore] | None = None,
    review_b: Mapping[str, DimensionScore] | None = None,
) -> dict[str, Reconciled]:
    """Per dimension: the agreed level, from the first pass or after the review; dropped if still different."""
    out: dict[str, Reconciled] = {}
    for dimension in BEHAVIOURS:
        a, b = first_a.get(dimension), first_b.get(dimension)
        if a is None or b is None:
            out[dimension] = Reconciled(final=None, stage="dropped")
        elif a.score == b.score:
            out[dimension] = Reconciled(final=a.score, stage="first")
        else:
            ra = (review_a or {}).get(dimension)
            rb = (review_b or {}).get(dimension)
            agreed = ra is not None and rb is not None and ra.score == rb.score
            out[dimension] = (
                Reconciled(final=ra.score, stage="review") if agreed and ra else Reconciled(final=None, stage="dropped")
            )
    return out
