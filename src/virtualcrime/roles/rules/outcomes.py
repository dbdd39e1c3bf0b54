"""Building a valid 1–4 outcome distribution from a success chance and a detection risk."""

from __future__ import annotations

from ...world import WorldState
from ..distribution import merge_outcomes
from ..distribution import normalise as normalise_distribution
from ..types import Action, Outcome, OutcomeCategory, Verdict, field_limit
from ..verbs import rule_for
from .common import display, phrase

MIN_PROBABILITY = 1e-3
MAX_OUTCOMES = field_limit(Verdict, "outcomes", "max_length")
PARTIAL_SHARE = 0.25


def distribution(
    state: WorldState, action: Action, verb: str, chance: float, risk: float, catastrophic: bool
) -> list[Outcome]:
    """Outcomes with Σp = 1 (rounded to 4 decimals), at most four, near-zero ones dropped.

    success = chance·(1-risk), complication = chance·risk, failure = (1-chance)·(1-risk),
    failure with consequence = (1-chance)·risk; verbs whose rule is ``partial`` (the effect can land halfway)
    move a share of success to partial.
    """
    who = display(state, action.actor)
    doing = phrase(verb, display(state, action.target) if action.target else "it")
    success = chance * (1 - risk)
    raw: list[tuple[OutcomeCategory, float, bool, str]] = []
    if rule_for(verb).partial:
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
    kept = [
        Outcome(category=c, probability=p, catastrophic=cat, description=text)
        for c, p, cat, text in raw
        if p >= MIN_PROBABILITY
    ]
    merged, _notes = merge_outcomes(kept, MAX_OUTCOMES)
    return normalise(merged)


def normalise(outcomes: list[Outcome]) -> list[Outcome]:
    """Scale to Σp = 1 and round to 4 decimals, putting the rounding residue on the largest outcome."""
    return normalise_distribution(outcomes, digits=4)
