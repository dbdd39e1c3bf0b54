"""The offline ``rules`` World Manager: the four stages of DESIGN.md as deterministic code."""

from __future__ import annotations

from ...world import WorldState, holds
from ...world.ops import (
    CompleteEvent,
    FoldHistory,
    Operation,
    SetObservable,
    TriggerEvent,
)
from ..types import Stage, StageContext, StageResult
from .effects import direct_effects
from .npcs import npc_reactions

HISTORY_FOLD_AT = 6
HISTORY_KEEP = 4
ALERTNESS_WORDS = ("calm", "wary", "alert and searching", "raising the alarm")


class RulesWorldManager:
    """Deterministic World Manager; each stage reads the state left by the previous one."""

    name = "virtualcrime/rules"

    async def run_stage(self, stage: Stage, context: StageContext) -> StageResult:
        return run_rules_stage(stage, context)


def run_rules_stage(stage: Stage, context: StageContext) -> StageResult:
    """One stage of the rules World Manager as a plain function."""
    state = context.state
    match stage:
        case "direct_effects":
            ops = direct_effects(state, context.action, context.outcome)
            note = context.outcome.description
        case "events":
            ops = event_engine(state)
            note = ", ".join(op.event for op in ops if isinstance(op, TriggerEvent)) or "no event"
        case "npcs":
            ops = npc_reactions(state)
            note = f"{len(ops)} NPC operations"
        case "synthesis":
            ops = synthesis(state)
            note = "observables refreshed"
    return StageResult(stage=stage, ops=ops, note=note)


def event_engine(state: WorldState) -> list[Operation]:
    """Trigger events whose trigger now holds; apply the effects of those whose delay has run out."""
    ops: list[Operation] = []
    for event in state.events:
        if event.done:
            continue
        if event.triggered_turn is None:
            if not holds(state, event.trigger):
                continue
            ops.append(TriggerEvent(event=event.id))
            due = event.delay_turns == 0
        else:
            due = state.turn >= event.triggered_turn + event.delay_turns
        if due:
            ops += [*event.effects, CompleteEvent(event=event.id)]
    return ops


def synthesis(state: WorldState) -> list[Operation]:
    """Observables from the state, and history folding so that prompts stay flat over a long run."""
    wanted: dict[str, str] = {}
    for npc in state.npcs.values():
        mood = ALERTNESS_WORDS[npc.alertness]
        extra = f", going along with {state.members[npc.following].name}" if npc.following in state.members else ""
        wanted[npc.id] = f"{npc.name} ({npc.role.value}) is {npc.status.value}, {mood}{extra}."
    for location in state.locations.values():
        parts = [t.replace("_", " ") for t in location.tags if t != "restricted"]
        if state.globals.alarm:
            parts.append("an alarm is ringing")
        wanted[location.id] = ("Here: " + ", ".join(parts) + ".") if parts else ""
    for entity in state.entities.values():
        parts = [t.replace("_", " ") for t in entity.tags]
        if entity.container:
            parts.append("locked" if entity.locked else "open")
        wanted[entity.id] = ", ".join(parts)
    for member in state.members.values():
        parts = [member.status.value, *member.tags]
        if member.hidden:
            parts.append("hidden")
        wanted[member.id] = ", ".join(parts)
    ops: list[Operation] = []
    for object_id, text in wanted.items():
        obj = state.obj(object_id)
        if obj is not None and obj.observable != text:
            ops.append(SetObservable(subject=object_id, text=text))
        if obj is not None and len(obj.history) > HISTORY_FOLD_AT:
            folded = len(obj.history) - HISTORY_KEEP
            ops.append(FoldHistory(subject=object_id, keep=HISTORY_KEEP, summary=f"({folded} earlier events)"))
    return ops
