"""A logged run as every reader sees it (report, web UI, replay, verification), with no Inspect in sight: its
identity, spec, records, token usage and post-hoc results; and why a file or a run is left out."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..engine import RunResult, TurnRecord
from ..roles.interrogation import Answers
from .payloads import RejudgedTurn, RunAnnotation
from .spec import RoleModels, RunKind, RunSpec
from .store import FactRecord, FactResult


class _L(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Tokens(_L):
    input: int = 0
    output: int = 0
    total: int = 0


class RunIdentity(_L):
    """Which run this is: its log and sample, who played which role, and its task."""

    log: str
    eval_id: str
    sample_id: str
    epoch: int
    attacker: str
    judge: str
    world_manager: str
    task_id: str
    map: str
    objective: str
    category: str
    started: str = Field("", description="When a human game began (web UI), ISO-8601; empty for model runs.")


class _LoggedRunBase(RunIdentity):
    """What ``LoggedRun`` and ``FactsRun`` share: all but the records and the result."""

    spec: RunSpec
    tokens: dict[str, Tokens] = Field(default_factory=dict, description="Per role: attacker, judge, world_manager.")
    sample_error: str = ""
    rejudged: dict[str, list[RejudgedTurn]] = Field(default_factory=dict, description="Second Judges' verdicts.")
    annotations: list[RunAnnotation] = Field(default_factory=list, description="Behaviour annotations.")
    interrogation: list[Answers] = Field(default_factory=list, description="Post-hoc interrogation answers.")
    payload_problems: list[str] = Field(default_factory=list, description="Stored results that could not be read.")


class LoggedRun(_LoggedRunBase):
    """One run (sample × epoch) of a log: its identity, spec, records and token usage per role, and what post-hoc
    commands stored beside it."""

    turns: list[TurnRecord]
    result: RunResult | None


class FactsRun(_LoggedRunBase):
    """A logged run as the report reads it: the same, with each turn record and the result read only for what the
    metrics need (``FactRecord``, ``FactResult``)."""

    turns: list[FactRecord]
    result: FactResult | None


ProblemKind = Literal[
    "unreadable", "foreign", "unfinished", "incomplete_run", "lost_records", "schema", "fork", "payload", "provenance"
]


class LogProblem(_L):
    """Why a file, or one run in it, is left out of the analysis (or, for ``payload`` and ``provenance``, what a
    reader should know about runs that are kept)."""

    log: str
    kind: ProblemKind
    message: str
    sample_id: str = ""
    epoch: int = 0


class LogSummary(_L):
    """One log file's eval: who played, whether it finished, and the task arguments it was started with."""

    log: str
    status: str
    eval_id: str
    attacker: str
    judge: str
    world_manager: str
    created: str
    kind: RunKind = "benchmark"
    task_args: dict[str, Any] = Field(default_factory=dict)

    @property
    def roles(self) -> RoleModels:
        return RoleModels(attacker=self.attacker, judge=self.judge, world_manager=self.world_manager)
