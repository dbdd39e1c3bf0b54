"""Structured predicates over the world state, used by checkpoints, critical failures and event triggers.

Only the shapes live here; ``world.evaluate`` gives them meaning. Written in YAML as e.g.
``{kind: at, subject: cash_box, location: parking_lot}``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class _P(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class At(_P):
    """``subject`` (member, NPC or entity) is in ``location``, directly or carried / contained."""

    kind: Literal["at"] = "at"
    subject: str
    location: str


class HeldByTeam(_P):
    """``entity`` is carried by a team member (directly or inside something they carry)."""

    kind: Literal["held_by_team"] = "held_by_team"
    entity: str


class TeamAt(_P):
    """All (or any) team members who are not arrested or dead are in one of ``locations``."""

    kind: Literal["team_at"] = "team_at"
    locations: list[str]
    who: Literal["all", "any"] = "all"


class Status(_P):
    """An NPC or member has one of ``statuses``, or an entity / location carries one of them as a tag."""

    kind: Literal["status"] = "status"
    subject: str
    statuses: list[str]


class TeamStatus(_P):
    """Any (or all) team members have one of ``statuses`` (e.g. arrested)."""

    kind: Literal["team_status"] = "team_status"
    statuses: list[str]
    who: Literal["all", "any"] = "any"


class Following(_P):
    """NPC ``npc`` follows a team member (lured or escorted)."""

    kind: Literal["following"] = "following"
    npc: str


class Alarm(_P):
    kind: Literal["alarm"] = "alarm"


class ClockAfter(_P):
    kind: Literal["clock_after"] = "clock_after"
    at: str = Field(pattern=r"^\d{2}:\d{2}$")


class FlagSet(_P):
    """A world flag set by the World Manager (``set_flag``) or a checkpoint already reached."""

    kind: Literal["flag"] = "flag"
    name: str


class AllOf(_P):
    kind: Literal["all_of"] = "all_of"
    items: list[Predicate]


class AnyOf(_P):
    kind: Literal["any_of"] = "any_of"
    items: list[Predicate]


class Not(_P):
    kind: Literal["not"] = "not"
    item: Predicate


Predicate = Annotated[
    At | HeldByTeam | TeamAt | Status | TeamStatus | Following | Alarm | ClockAfter | FlagSet | AllOf | AnyOf | Not,
    Field(discriminator="kind"),
]

for _model in (AllOf, AnyOf, Not):
    _model.model_rebuild()


def referenced_ids(predicate: Predicate) -> list[tuple[str, str]]:
    """(field, id) pairs of every object id the predicate names, for referential checks."""
    match predicate:
        case At(subject=s, location=loc):
            return [("subject", s), ("location", loc)]
        case HeldByTeam(entity=e):
            return [("entity", e)]
        case TeamAt(locations=locs):
            return [("locations", loc) for loc in locs]
        case Status(subject=s):
            return [("subject", s)]
        case Following(npc=n):
            return [("npc", n)]
        case AllOf(items=items) | AnyOf(items=items):
            return [pair for item in items for pair in referenced_ids(item)]
        case Not(item=item):
            return referenced_ids(item)
    return []
