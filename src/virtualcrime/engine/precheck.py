"""The deterministic structural pre-check: actions that cannot happen at all never reach the Judge."""

from __future__ import annotations

from ..roles import Action, Feasibility, Outcome, OutcomeCategory, Rating, Verdict
from ..roles.verbs import canonical_verb
from ..world import WorldState
from .records import VerdictOverride

# A rating of 1 on either of these dimensions means the action is physically impossible (DESIGN step 5).
INFEASIBLE_DIMENSIONS = ("existence", "physical")
IMPOSSIBLE_OUTCOME = "It cannot be done: nothing happens."


def structural_problem(state: WorldState, action: Action) -> str:
    """Why ``action`` is physically impossible by structure alone, or "" if it may go to the Judge.

    Checks: the actor exists, is a team member and can act; the target and item exist; a move goes
    along exactly one edge from where the actor stands.
    """
    actor = state.members.get(action.actor)
    if actor is None:
        kind = "an NPC" if action.actor in state.npcs else "unknown"
        return f"actor {action.actor!r} is not a team member ({kind})"
    if not actor.can_act:
        return f"{actor.name} is {actor.status.value} and cannot act"
    if action.target and state.obj(action.target) is None and state.edge(action.target) is None:
        return f"target {action.target!r} does not exist"
    if action.item and action.item not in state.entities:
        return f"item {action.item!r} does not exist"
    if canonical_verb(action.verb) == "move":
        if action.target not in state.locations:
            return f"a move needs a location as target, got {action.target!r}"
        if action.target == actor.current_location:
            return f"{actor.name} is already in {action.target}"
        if state.edge_between(actor.current_location, action.target) is None:
            return f"{action.target} is not adjacent to {actor.current_location}; a move goes along one edge"
    return ""


def impossible_verdict(reason: str) -> Verdict:
    """The verdict recorded for a structurally impossible action: ``impossible`` with p = 1.0."""
    low = Rating(score=1, reason=reason)
    ok = Rating(score=5, reason="not assessed: structurally impossible")
    return Verdict(
        feasibility=Feasibility(
            existence=low if "does not exist" in reason or "not a team member" in reason else ok,
            physical=low,
            method=ok,
            logical_consistency=ok,
            safety=ok,
            skill=ok,
            relationship=ok,
            objectivity=Rating(score=5, reason="deterministic structural check"),
        ),
        risky=False,
        outcomes=[Outcome(category=OutcomeCategory.IMPOSSIBLE, description=reason, probability=1.0)],
        rationale=f"Structural pre-check: {reason}",
    )


def infeasibility_override(verdict: Verdict) -> VerdictOverride | None:
    """The override a verdict needs when it rates existence or physical 1 but still gives the action a chance
    (any outcome other than ``impossible``); None when the verdict is consistent."""
    low = [name for name in INFEASIBLE_DIMENSIONS if getattr(verdict.feasibility, name).score == 1]
    if not low or all(o.category == OutcomeCategory.IMPOSSIBLE for o in verdict.outcomes):
        return None
    dims = " and ".join(low)
    return VerdictOverride(
        reason=f"the Judge rated {dims} 1 (clearly infeasible) but gave the action other outcomes; the distribution "
        "is replaced by impossible p = 1.0",
        judge_verdict=verdict,
    )


def overridden(verdict: Verdict) -> Verdict:
    """``verdict`` with its distribution replaced by ``impossible`` p = 1.0 (its ratings kept, not risky)."""
    outcome = Outcome(category=OutcomeCategory.IMPOSSIBLE, description=IMPOSSIBLE_OUTCOME, probability=1.0)
    return verdict.model_copy(update={"outcomes": [outcome], "risky": False})
