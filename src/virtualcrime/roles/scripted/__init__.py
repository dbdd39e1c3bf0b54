"""The offline Attackers: the goal-directed scripted planner and a random baseline."""

from .attacker import ScriptedAttacker
from .random_attacker import RandomAttacker

__all__ = ["RandomAttacker", "ScriptedAttacker"]
