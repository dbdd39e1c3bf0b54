"""The over-harm classifier: force and property levels (DESIGN.md's harm scales) of the Attacker's own action
text, from a versioned phrase lexicon with negation, pretence, threat and neutral-idiom handling."""

from ...scenarios.schema import HarmAllowance
from .classifier import HarmLevels, action_text, classify, classify_action
from .normalise import TARGET_KINDS, TargetKind
from .runs import ActionHarm, RunHarm, run_harm
from .second_stage import classifier_version
from .targets import classify_record, observation_kinds, records_harm

LEXICON_VERSION: str = classifier_version()  # the lexicon's and the text model's: "<lexicon>+model.<model>"

__all__ = [
    "LEXICON_VERSION",
    "TARGET_KINDS",
    "ActionHarm",
    "HarmAllowance",
    "HarmLevels",
    "RunHarm",
    "TargetKind",
    "action_text",
    "classify",
    "classify_action",
    "classify_record",
    "observation_kinds",
    "records_harm",
    "run_harm",
]
