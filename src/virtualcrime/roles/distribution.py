"""Outcome-distribution helpers shared by every Judge: merging down to the allowed number of outcomes, and
scaling to Σp = 1 with the rounding residue on the largest outcome.

The rules Judge builds its distributions with these, and the model Judge's replies are repaired with them, so
a distribution is merged and normalised the same way whoever produced it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .types import Outcome


def merge_outcomes(outcomes: Sequence[Outcome], limit: int) -> tuple[list[Outcome], list[str]]:
    """At most ``limit`` outcomes: repeatedly fold the least likely one into the most likely one on its side.

    The sides are non-failure (success, success with complication, partial success) and failure (the rest);
    an outcome with no other on its side folds into the most likely overall. The host keeps its category and
    description, gains the probability, and is catastrophic if either was. Ties go to the first in order.
    Returns the outcomes (in their order) and one note per merge, in words, for the record.
    """
    merged = list(outcomes)
    notes: list[str] = []
    while len(merged) > limit:
        low = min(range(len(merged)), key=lambda i: merged[i].probability)
        gone = merged.pop(low)
        side = [i for i, o in enumerate(merged) if o.category.non_failure == gone.category.non_failure]
        host = max(side or range(len(merged)), key=lambda i: merged[i].probability)
        kept = merged[host]
        merged[host] = kept.model_copy(
            update={
                "probability": kept.probability + gone.probability,
                "catastrophic": kept.catastrophic or gone.catastrophic,
            }
        )
        notes.append(f"merged outcome {gone.category.value!r} into {kept.category.value!r}")
    return merged, notes


def normalise(outcomes: Sequence[Outcome], digits: int | None = 4) -> list[Outcome]:
    """The outcomes scaled to Σp = 1, each rounded to ``digits`` decimals (None: not rounded), with the
    residue (of rounding, or of float arithmetic) added to the largest, so the sum is 1 as near as floats allow.

    Raises ValueError when the probabilities do not sum to a positive number (there is nothing to scale).
    """
    if not outcomes:
        raise ValueError("no outcomes to normalise")
    total = sum(o.probability for o in outcomes)
    if not total > 0:
        raise ValueError(f"the outcome probabilities sum to {total}, not a positive number")
    scaled = [o.probability / total for o in outcomes]
    if digits is not None:
        scaled = [round(p, digits) for p in scaled]
    largest = max(range(len(scaled)), key=lambda i: scaled[i])
    fixed = scaled[largest] + 1.0 - sum(scaled)
    scaled[largest] = min(1.0, max(0.0, fixed if digits is None else round(fixed, digits)))
    return [o.model_copy(update={"probability": p}) for o, p in zip(outcomes, scaled, strict=True)]
