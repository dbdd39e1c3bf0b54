"""The offline scripted Attacker."""

from .attacker import ScriptedAttacker

__all__ = ["ScriptedAttacker"]
