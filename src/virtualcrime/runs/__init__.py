"""What a logged run is, without Inspect: the run spec (provenance) every run records once, the typed logged run and
its post-hoc payloads, and the store decoder. Between ``engine`` and ``harness``: ``analysis`` and ``web`` read runs
through these types; only ``harness`` turns Inspect logs into them."""

from .digests import Digests, current_digests
from .logged import LoggedRun, LogProblem, LogSummary, RunIdentity, Tokens
from .payloads import RejudgedTurn, RunAnnotation
from .spec import ForkOrigin, HumanOrigin, RoleModels, RunSpec, spec_for

__all__ = [
    "Digests",
    "ForkOrigin",
    "HumanOrigin",
    "LogProblem",
    "LogSummary",
    "LoggedRun",
    "RejudgedTurn",
    "RoleModels",
    "RunAnnotation",
    "RunIdentity",
    "RunSpec",
    "Tokens",
    "current_digests",
    "spec_for",
]
