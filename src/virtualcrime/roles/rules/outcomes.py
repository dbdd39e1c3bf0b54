"""Building a valid 1–4 outcome distribution from a success chance and a detection risk."""

from __future__ import annotations

from ...world import WorldState
from ..types import Action, Outcome, OutcomeCategory
from .common import display, phrase

MIN_PROBABILITY = 1e-3
MAX_OUTCOMES = 4
PARTIAL_SHARE = 0.25
# Verbs whose effect can land halfway (a blow that only injures, a fire that only smoulders).
PARTIAL_VERBS = ("attack", "kill", "restrain", "damage", "ignite", "disable", "incite")


def distribution(
    state: WorldState, action: Action, verb: str, chance: float, risk: float, catastrophic: bool
) -> list[Outcome]:
    """Outcomes with Σp = 1 (rounded to 4 decimals), at most four, near-zero ones dropped.

    success = chance·(1-risk), complication = chance·risk, failure = (1-chance)·(1-risk),
    failure with consequence = (1-chance)·risk; partial-effect verbs move a share of success to partial.
    """
    who = display(state, action.actor)
    doing = phrase(verb, display(state, action.target) if action.target else "it")
    success = chance * (1 - risk)
    raw: list[tuple[OutcomeCategory, float, bool, str]] = []
    if verb in PARTIAL_VERBS:
        raw.append(
            (
                OutcomeCategory.PARTIAL_SUCCESS,
                success * PARTIAL_SHARE,
                False,
                f"{who} only half manages to {doing}.",
            )
        )
        success *= 1 - PARTIAL_SHARE
    raw += [
        (OutcomeCategory.SUCCESS, success, False, f"{who} manages to {doing} unnoticed."),
        (
            OutcomeCategory.SUCCESS_WITH_COMPLICATION,
            chance * risk,
            False,
            f"{who} manages to {doing}, but is noticed.",
        ),
        (
            OutcomeCategory.FAILURE,
            (1 - chance) * (1 - risk),
            False,
            f"{who} fails to {doing}; no one notices.",
        ),
        (
            OutcomeCategory.FAILURE_WITH_CONSEQUENCE,
            (1 - chance) * risk,
            catastrophic,
            f"{who} fails to {doing} and is caught in the act."
            if catastrophic
            else f"{who} fails to {doing} and draws attention.",
        ),
    ]
    kept = [r for r in raw if r[1] >= MIN_PROBABILITY]
    while len(kept) > MAX_OUTCOMES:
        smallest = min(range(len(kept)), key=lambda i: kept[i][1])
        category, p, cat, _text = kept.pop(smallest)
        same_side = [i for i, r in enumerate(kept) if r[0].non_failure == category.non_failure] or list(
            range(len(kept))
        )
        host = max(same_side, key=lambda i: kept[i][1])
        h = kept[host]
        kept[host] = (h[0], h[1] + p, h[2] or cat, h[3])
    return normalise(
        [Outcome(category=c, probability=p, catastrophic=cat, description=text) for c, p, cat, text in kept]
    )


def normalise(outcomes: list[Outcome]) -> list[Outcome]:
    """Scale to Σp = 1 and round to 4 decimals, putting the rounding residue on the largest outcome."""
    total = sum(o.probability for o in outcomes)
    rounded = [round(o.probability / total, 4) for o in outcomes]
    largest = max(range(len(rounded)), key=lambda i: rounded[i])
    rounded[largest] = round(rounded[largest] + 1.0 - sum(rounded), 4)
    return [o.model_copy(update={"probability": p}) for o, p in zip(outcomes, rounded, strict=True)]
