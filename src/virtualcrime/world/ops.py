"""Typed world operations: the only way anything (World Manager, events, engine) changes the world."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from .enums import MAX_ALERTNESS, MemberStatus, NpcStatus

MAX_CLOCK_MINUTES_PER_TURN = 240
"""How far the simulated clock may advance in one turn, over all ``advance_clock`` operations of all stages.

An action's own time budget is at most 120 minutes and events may add time; a single operation can use the
whole allowance, so ``AdvanceClock.minutes`` is bounded by the same number.
"""


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Move(_Op):
    """Move a member or NPC along exactly one edge."""

    op: Literal["move"] = "move"
    subject: str
    to: str


class Transfer(_Op):
    """Put an item with a holder: a location, a member, an NPC or an open container, in the same place."""

    op: Literal["transfer"] = "transfer"
    item: str
    to: str


class SetObservable(_Op):
    op: Literal["set_observable"] = "set_observable"
    subject: str
    text: str = Field(max_length=600)


class AppendHistory(_Op):
    op: Literal["append_history"] = "append_history"
    subject: str
    text: str = Field(max_length=400)


class SetMemberStatus(_Op):
    op: Literal["set_member_status"] = "set_member_status"
    member: str
    status: MemberStatus


class SetNpcStatus(_Op):
    op: Literal["set_npc_status"] = "set_npc_status"
    npc: str
    status: NpcStatus


class SetAlertness(_Op):
    op: Literal["set_alertness"] = "set_alertness"
    npc: str
    level: int = Field(ge=0, le=MAX_ALERTNESS)


class SetFollowing(_Op):
    """Make an NPC follow a team member (empty ``member`` stops it)."""

    op: Literal["set_following"] = "set_following"
    npc: str
    member: str = ""


class SetInvestigating(_Op):
    op: Literal["set_investigating"] = "set_investigating"
    npc: str
    location: str = ""


class SetHidden(_Op):
    op: Literal["set_hidden"] = "set_hidden"
    member: str
    hidden: bool


class SetTag(_Op):
    """Add or remove a condition tag on an entity, location or member (on_fire, disabled, disguised…)."""

    op: Literal["set_tag"] = "set_tag"
    subject: str
    tag: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    value: bool = True


class FoldHistory(_Op):
    """Replace all but the last ``keep`` history entries of an object with one summary entry."""

    op: Literal["fold_history"] = "fold_history"
    subject: str
    keep: int = Field(ge=0, le=12)
    summary: str = Field(max_length=400)


class SetLock(_Op):
    """Lock or unlock a door (edge id) or a container entity."""

    op: Literal["set_lock"] = "set_lock"
    subject: str
    locked: bool


class SetFlag(_Op):
    """Set a world flag, or a checkpoint / critical failure that has no predicate."""

    op: Literal["set_flag"] = "set_flag"
    flag: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    value: bool = True


class AdvanceClock(_Op):
    """Move the clock forward; all advances of one turn together stay within ``MAX_CLOCK_MINUTES_PER_TURN``."""

    op: Literal["advance_clock"] = "advance_clock"
    minutes: int = Field(ge=0, le=MAX_CLOCK_MINUTES_PER_TURN)


class SetAlarm(_Op):
    op: Literal["set_alarm"] = "set_alarm"
    ringing: bool = True


class SpawnNpc(_Op):
    """Bring a declared reinforcement into the world at an entry location."""

    op: Literal["spawn_npc"] = "spawn_npc"
    npc: str
    at: str


class TriggerEvent(_Op):
    op: Literal["trigger_event"] = "trigger_event"
    event: str


class CompleteEvent(_Op):
    op: Literal["complete_event"] = "complete_event"
    event: str


Operation = Annotated[
    Move
    | Transfer
    | SetObservable
    | AppendHistory
    | SetMemberStatus
    | SetNpcStatus
    | SetAlertness
    | SetFollowing
    | SetInvestigating
    | SetHidden
    | SetTag
    | FoldHistory
    | SetLock
    | SetFlag
    | AdvanceClock
    | SetAlarm
    | SpawnNpc
    | TriggerEvent
    | CompleteEvent,
    Field(discriminator="op"),
]

OPERATION_ADAPTER: TypeAdapter[Operation] = TypeAdapter(Operation)
OPERATION_LIST_ADAPTER: TypeAdapter[list[Operation]] = TypeAdapter(list[Operation])


def parse_operation(data: object) -> Operation:
    """Validate one operation given as data (e.g. an event effect in YAML)."""
    return OPERATION_ADAPTER.validate_python(data)


class LedgerEntry(BaseModel):
    """What happened to one proposed operation: applied, or rejected with the reason."""

    model_config = ConfigDict(extra="forbid")

    stage: str
    op: Operation
    applied: bool
    reason: str = ""
