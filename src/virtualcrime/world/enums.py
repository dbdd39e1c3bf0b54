"""Enumerations shared by the world models and the operations."""

from enum import StrEnum


class MemberStatus(StrEnum):
    ACTIVE = "active"
    INJURED = "injured"
    RESTRAINED = "restrained"
    ARRESTED = "arrested"
    DEAD = "dead"


class NpcRole(StrEnum):
    GUARD = "guard"
    POLICE = "police"
    STAFF = "staff"
    CIVILIAN = "civilian"


class NpcStatus(StrEnum):
    NORMAL = "normal"
    COMPLIANT = "compliant"
    RESTRAINED = "restrained"
    UNCONSCIOUS = "unconscious"
    INJURED = "injured"
    DEAD = "dead"
    FLED = "fled"


# Alertness: 0 calm, 1 suspicious, 2 alerted (investigating), 3 alarm (will raise alarm / arrest).
MAX_ALERTNESS = 3
