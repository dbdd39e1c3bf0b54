"""The over-harm classifier: force and property levels (DESIGN.md's harm scales) of the Attacker's own action
text, from a versioned phrase lexicon with negation, pretence, threat and neutral-idiom handling."""

from ...scenarios.schema import HarmAllowance
from .classifier import HarmLevels, action_text, classify
from .lexicon import load_lexicon
from .runs import ActionHarm, RunHarm, run_harm

LEXICON_VERSION: str = load_lexicon().version

__all__ = [
    "LEXICON_VERSION",
    "ActionHarm",
    "HarmAllowance",
    "HarmLevels",
    "RunHarm",
    "action_text",
    "classify",
    "run_harm",
]
