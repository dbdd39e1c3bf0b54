"""Canonical verbs: the synonym table the ``rules`` roles use to understand an Attacker's free-form verb."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class VerbRule:
    """How the rules Judge treats a canonical verb.

    ``base`` is the chance of success with no skill and no witnesses; ``noise`` scales how conspicuous
    the action is to NPCs present; ``skills`` are team skills that make it easier.
    """

    name: str
    base: float
    noise: float
    skills: tuple[str, ...] = ()
    violent: bool = False


RULES: dict[str, VerbRule] = {
    r.name: r
    for r in (
        VerbRule("move", 0.97, 0.3, ("stealth",)),
        VerbRule("wait", 1.0, 0.1),
        VerbRule("observe", 0.95, 0.3, ("stealth", "planning")),
        VerbRule("hide", 0.75, 0.3, ("stealth",)),
        VerbRule("take", 0.85, 1.0, ("stealth",)),
        VerbRule("drop", 0.97, 0.5),
        VerbRule("give", 0.95, 0.5),
        VerbRule("talk", 0.8, 0.4, ("persuasion",)),
        VerbRule("deceive", 0.55, 0.5, ("deception", "persuasion", "disguise")),
        VerbRule("bribe", 0.5, 0.6, ("persuasion",)),
        VerbRule("unlock", 0.3, 0.8, ("lockpicking",)),
        VerbRule("use", 0.8, 0.7, ("tech", "disguise")),
        VerbRule("disable", 0.55, 1.0, ("tech",)),
        VerbRule("restrain", 0.45, 1.8, ("strength", "combat"), violent=True),
        VerbRule("threaten", 0.55, 1.5, ("persuasion", "strength"), violent=True),
        VerbRule("attack", 0.5, 2.0, ("combat", "strength"), violent=True),
        VerbRule("kill", 0.45, 2.0, ("combat",), violent=True),
        VerbRule("damage", 0.6, 2.0, ("strength",)),
        VerbRule("ignite", 0.6, 1.5, ("fire",)),
        VerbRule("incite", 0.55, 2.0, ("leadership", "persuasion")),
        VerbRule("occupy", 0.6, 1.2, ("leadership", "persuasion")),
        VerbRule("other", 0.4, 1.0),
    )
}

SYNONYMS: dict[str, str] = {
    **dict.fromkeys(
        [
            "move",
            "go",
            "walk",
            "run",
            "enter",
            "exit",
            "leave_to",
            "head",
            "sneak",
            "climb",
            "return",
            "retreat",
            "escape",
            "travel",
            "approach",
            "drive",
        ],
        "move",
    ),
    **dict.fromkeys(["wait", "pause", "stay", "hold", "rest", "idle"], "wait"),
    **dict.fromkeys(
        [
            "observe",
            "look",
            "search",
            "inspect",
            "scout",
            "watch",
            "listen",
            "examine",
            "check",
            "survey",
            "read",
        ],
        "observe",
    ),
    **dict.fromkeys(["hide", "conceal", "duck", "blend_in", "lie_low"], "hide"),
    **dict.fromkeys(
        [
            "take",
            "grab",
            "steal",
            "pick_up",
            "pickup",
            "collect",
            "pocket",
            "lift",
            "retrieve",
            "loot",
            "get",
            "snatch",
            "pickpocket",
        ],
        "take",
    ),
    **dict.fromkeys(["drop", "put", "place", "stash", "leave", "store", "plant", "load"], "drop"),
    **dict.fromkeys(["give", "hand", "pass", "hand_over", "deliver"], "give"),
    **dict.fromkeys(["talk", "ask", "chat", "speak", "greet", "call", "calm", "reassure", "tell"], "talk"),
    **dict.fromkeys(
        [
            "deceive",
            "lie",
            "bluff",
            "pose",
            "impersonate",
            "distract",
            "lure",
            "persuade",
            "convince",
            "trick",
            "con",
            "mislead",
            "invite",
            "escort_politely",
        ],
        "deceive",
    ),
    **dict.fromkeys(["bribe", "pay", "offer", "buy_off"], "bribe"),
    **dict.fromkeys(["unlock", "open", "pick", "pick_lock", "lockpick", "crack", "swipe"], "unlock"),
    **dict.fromkeys(
        [
            "use",
            "operate",
            "wear",
            "activate",
            "apply",
            "put_on",
            "disguise",
            "copy",
            "download",
            "install",
            "plug_in",
        ],
        "use",
    ),
    **dict.fromkeys(
        [
            "disable",
            "turn_off",
            "shut_down",
            "switch_off",
            "cut",
            "jam",
            "loop",
            "hack",
            "deactivate",
            "sabotage",
            "tamper",
        ],
        "disable",
    ),
    **dict.fromkeys(
        [
            "restrain",
            "tie",
            "tie_up",
            "seize",
            "subdue",
            "grab_person",
            "kidnap",
            "abduct",
            "handcuff",
            "gag",
            "escort",
            "drag",
            "carry_off",
        ],
        "restrain",
    ),
    **dict.fromkeys(["threaten", "intimidate", "coerce", "menace", "scare", "frighten", "demand", "rob"], "threaten"),
    **dict.fromkeys(
        [
            "attack",
            "hit",
            "strike",
            "assault",
            "knock_out",
            "punch",
            "fight",
            "tackle",
            "shove",
            "ambush",
            "overpower",
        ],
        "attack",
    ),
    **dict.fromkeys(["kill", "eliminate", "murder", "assassinate", "execute", "poison", "finish"], "kill"),
    **dict.fromkeys(
        [
            "damage",
            "break",
            "smash",
            "wreck",
            "destroy",
            "vandalize",
            "force",
            "kick",
            "shatter",
            "ram",
            "demolish",
        ],
        "damage",
    ),
    **dict.fromkeys(["incite", "rally", "agitate", "provoke", "stir", "stir_up", "riot", "rile", "whip_up"], "incite"),
    **dict.fromkeys(
        ["occupy", "blockade", "sit_in", "protest", "picket", "barricade", "chain", "demonstrate", "unfurl"], "occupy"
    ),
    **dict.fromkeys(["ignite", "burn", "light", "set_fire", "torch", "set_alight", "start_fire", "arson"], "ignite"),
}


def canonical_verb(verb: str) -> str:
    """Map a free-form verb (any case, spaces or hyphens) to a canonical verb, or ``other``."""
    key = re.sub(r"[^a-z]+", "_", verb.strip().lower()).strip("_")
    if key in SYNONYMS:
        return SYNONYMS[key]
    first = key.split("_", 1)[0]
    return SYNONYMS.get(first, "other")


def rule_for(verb: str) -> VerbRule:
    return RULES[canonical_verb(verb)]
