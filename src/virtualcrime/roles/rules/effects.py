"""Stage (a) of the rules World Manager: the direct effects of the sampled outcome, by verb and category."""

from __future__ import annotations

from ...world import WorldState, carried
from ...world.enums import MAX_ALERTNESS, MemberStatus, NpcStatus
from ...world.ops import (
    AdvanceClock,
    AppendHistory,
    Move,
    Operation,
    SetAlertness,
    SetFollowing,
    SetHidden,
    SetInvestigating,
    SetLock,
    SetMemberStatus,
    SetNpcStatus,
    SetTag,
    Transfer,
)
from ..types import Action, Outcome, OutcomeCategory
from ..verbs import canonical_verb, rule_for
from .common import (
    DISGUISED,
    actor_location,
    display,
    door_for,
    enforcer_present,
    phrase,
    resolve_target,
    witnesses,
)

NOTICED = (OutcomeCategory.SUCCESS_WITH_COMPLICATION, OutcomeCategory.FAILURE_WITH_CONSEQUENCE)
# Entities that, once used, disguise the wearer as staff.
DISGUISE_ITEMS_TAG = "disguise"


def direct_effects(state: WorldState, action: Action, outcome: Outcome) -> list[Operation]:
    """Operations for the action's own effect, the clock, history, and who noticed."""
    ops: list[Operation] = [AdvanceClock(minutes=action.minutes)]
    if outcome.category == OutcomeCategory.IMPOSSIBLE:
        return ops
    verb = canonical_verb(action.verb)
    here = actor_location(state, action)
    done = outcome.category in (OutcomeCategory.SUCCESS, OutcomeCategory.SUCCESS_WITH_COMPLICATION)
    partial = outcome.category == OutcomeCategory.PARTIAL_SUCCESS
    if done or partial:
        ops += _effect(state, action, verb, full=done)
    ops.append(
        AppendHistory(
            subject=here,
            text=f"[turn {state.turn}] {display(state, action.actor)} tried to "
            f"{phrase(verb, display(state, action.target))}: {outcome.category.value}.",
        )
    )
    if outcome.category in NOTICED:
        ops += _noticed(state, here, verb)
    if outcome.catastrophic:
        ops += _catastrophe(state, action, here)
    return ops


def _effect(state: WorldState, action: Action, verb: str, full: bool) -> list[Operation]:
    actor, target = action.actor, action.target
    kind = resolve_target(state, action).kind
    match verb:
        case "move":
            followers = [n.id for n in state.npcs.values() if n.following == actor]
            return [Move(subject=actor, to=target), *(Move(subject=n, to=target) for n in followers)]
        case "hide":
            return [SetHidden(member=actor, hidden=True)]
        case "take" if full:
            return [Transfer(item=target, to=actor)]
        case "drop":
            return [Transfer(item=target, to=actor_location(state, action))]
        case "give":
            return [Transfer(item=action.item, to=target)]
        case "unlock" if full:
            door = door_for(state, action, resolve_target(state, action))
            return [SetLock(subject=door.id if door else target, locked=False)]
        case "use" if full:
            return _use(state, action)
        case "disable" if full:
            return [SetTag(subject=target, tag="disabled")] if kind in ("entity", "location") else []
        case "damage":
            return _damage(state, action, full)
        case "ignite":
            place = target if kind == "location" else actor_location(state, action)
            return [SetTag(subject=place, tag="on_fire" if full else "smouldering")]
        case "incite":
            return [SetTag(subject=actor_location(state, action), tag="disorder" if full else "unrest")]
        case "occupy" if full:
            return [SetTag(subject=actor_location(state, action), tag="occupied")]
        case "talk" if kind == "npc" and full:
            npc = state.npcs[target]
            return [SetAlertness(npc=target, level=max(0, npc.alertness - 1))]
        case "deceive" | "bribe" if kind == "npc" and full:
            return _persuaded(state, action)
        case "threaten" if kind == "npc" and full:
            return [SetNpcStatus(npc=target, status=NpcStatus.COMPLIANT), SetInvestigating(npc=target)]
        case "restrain" if kind == "npc":
            status = NpcStatus.RESTRAINED if full else NpcStatus.COMPLIANT
            return [SetNpcStatus(npc=target, status=status), SetFollowing(npc=target, member=actor)]
        case "attack" if kind == "npc":
            return [SetNpcStatus(npc=target, status=NpcStatus.UNCONSCIOUS if full else NpcStatus.INJURED)]
        case "kill" if kind == "npc":
            return [SetNpcStatus(npc=target, status=NpcStatus.DEAD if full else NpcStatus.INJURED)]
    return []


def _use(state: WorldState, action: Action) -> list[Operation]:
    entity = state.entities[action.target]
    if DISGUISE_ITEMS_TAG in entity.tags:
        ops: list[Operation] = [SetTag(subject=action.actor, tag=DISGUISED)]
        if action.target not in carried(state, action.actor):
            ops.insert(0, Transfer(item=action.target, to=action.actor))
        return ops
    return [SetTag(subject=action.target, tag="used")]


def _damage(state: WorldState, action: Action, full: bool) -> list[Operation]:
    target = resolve_target(state, action)
    door = door_for(state, action, target)
    if door is not None:
        return [SetLock(subject=door.id, locked=False), SetTag(subject=door.a, tag="damaged")] if full else []
    if target.kind == "entity":
        entity = state.entities[target.id]
        ops: list[Operation] = [SetTag(subject=target.id, tag="damaged" if not full else "destroyed")]
        if full and entity.container and entity.locked:
            ops.append(SetLock(subject=target.id, locked=False))
        return ops
    if target.kind == "location":
        return [SetTag(subject=target.id, tag="damaged")]
    return []


def _persuaded(state: WorldState, action: Action) -> list[Operation]:
    npc = state.npcs[action.target]
    if npc.enforcer:
        # A fooled guard stands down and stops investigating.
        return [SetAlertness(npc=npc.id, level=0), SetInvestigating(npc=npc.id)]
    return [
        SetNpcStatus(npc=npc.id, status=NpcStatus.COMPLIANT),
        SetFollowing(npc=npc.id, member=action.actor),
    ]


def _noticed(state: WorldState, here: str, verb: str) -> list[Operation]:
    """Witnesses grow more alert (two levels for a ``loud`` verb); guards are told where to look."""
    ops: list[Operation] = []
    step = 2 if rule_for(verb).loud else 1
    for npc in witnesses(state, here):
        ops.append(SetAlertness(npc=npc.id, level=min(MAX_ALERTNESS, npc.alertness + step)))
    for guard in (n for n in state.npcs.values() if n.enforcer and n.current_location != here):
        if any(not w.enforcer for w in witnesses(state, here)) and guard.alertness < 2:
            ops += [SetAlertness(npc=guard.id, level=2), SetInvestigating(npc=guard.id, location=here)]
    return ops


def _catastrophe(state: WorldState, action: Action, here: str) -> list[Operation]:
    """Caught in the act by an alert guard or officer: arrest; otherwise the actor is hurt."""
    if enforcer_present(state, here):
        return [SetMemberStatus(member=action.actor, status=MemberStatus.ARRESTED)]
    return [SetMemberStatus(member=action.actor, status=MemberStatus.INJURED)]
