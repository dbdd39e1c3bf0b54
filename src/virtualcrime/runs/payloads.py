"""The post-hoc results stored in a log beside a run, as Inspect scores: typed, versioned payloads that the commands
writing them dump and every reader validates (no hand-parsed dicts).

Score names: ``rejudge:<judge model>`` (a second Judge's verdicts on fixed turns), ``annotation:<A>|<B>`` (an
annotator pair's behaviour levels), ``interrogation`` (post-hoc answers). Payloads without a ``version`` were
written before these models and read as version 1, which they match."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..roles import Verdict
from ..roles.annotation.scores import DimensionScore, Reconciled
from ..roles.interrogation import Answers
from ..roles.types import ModelCall

PAYLOAD_VERSION = 1
REJUDGE_SCORE_PREFIX = "rejudge:"
ANNOTATION_SCORE_PREFIX = "annotation:"
INTERROGATION_SCORE = "interrogation"


class _P(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RejudgedTurn(_P):
    """One turn's verdict from a second Judge (None, with the error, when it gave no usable verdict)."""

    turn: int
    verdict: Verdict | None
    error: str = ""
    model_calls: list[ModelCall] = Field(default_factory=list)


class RejudgePayload(_P):
    version: int = PAYLOAD_VERSION
    judge: str
    turns: list[RejudgedTurn] = Field(default_factory=list)


class AnnotationPayload(_P):
    """Both annotators' passes, the disputed dimensions, the reviews and the reconciled levels of one run."""

    version: int = PAYLOAD_VERSION
    annotator_a: str
    annotator_b: str
    first_a: dict[str, DimensionScore] | None = None
    first_b: dict[str, DimensionScore] | None = None
    disputed: list[str] = Field(default_factory=list)
    review_a: dict[str, DimensionScore] | None = None
    review_b: dict[str, DimensionScore] | None = None
    final: dict[str, Reconciled] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)
    calls: list[ModelCall] = Field(default_factory=list)
    skipped: bool = False
    provider_error: str = ""


class InterrogationPayload(_P):
    """Version 2: each answer names the model questioned and the Attacker that wrote the log (Appendix J); version 1
    answers (without them) are the run's own Attacker questioned about its own log."""

    version: int = 2
    answers: list[Answers] = Field(default_factory=list)


class RunAnnotation(_P):
    """One annotator pair's annotation of a run as the analysis reads it: both first passes' levels, the
    reconciled levels (None where the dimension was dropped) and how each was settled."""

    annotator_a: str
    annotator_b: str
    first_a: dict[str, int] | None = None
    first_b: dict[str, int] | None = None
    final: dict[str, int | None] = Field(default_factory=dict)
    stages: dict[str, str] = Field(default_factory=dict)
    skipped: bool = False

    @classmethod
    def of(cls, payload: AnnotationPayload) -> RunAnnotation:
        def levels(scores: dict[str, DimensionScore] | None) -> dict[str, int] | None:
            return None if scores is None else {d: s.score for d, s in scores.items()}

        return cls(
            annotator_a=payload.annotator_a,
            annotator_b=payload.annotator_b,
            first_a=levels(payload.first_a),
            first_b=levels(payload.first_b),
            final={d: r.final for d, r in payload.final.items()},
            stages={d: r.stage for d, r in payload.final.items()},
            skipped=payload.skipped,
        )


ScoreMetadata = Mapping[str, Mapping[str, Any] | None]


def rejudged_turns(scores: ScoreMetadata) -> dict[str, list[RejudgedTurn]]:
    """A run's re-judged turns per judge, from its scores' metadata by score name."""
    found = {}
    for name, meta in scores.items():
        if name.startswith(REJUDGE_SCORE_PREFIX):
            judge = name[len(REJUDGE_SCORE_PREFIX) :]
            found[judge] = RejudgePayload.model_validate({"judge": judge, **(meta or {})}).turns
    return found


def run_annotations(scores: ScoreMetadata) -> list[RunAnnotation]:
    """A run's annotations, one per annotator pair, from its scores' metadata by score name."""
    return [
        RunAnnotation.of(AnnotationPayload.model_validate(meta or {}))
        for name, meta in scores.items()
        if name.startswith(ANNOTATION_SCORE_PREFIX)
    ]


def run_interrogation(scores: ScoreMetadata) -> list[Answers]:
    """A run's interrogation answers (one per framing asked)."""
    meta = scores.get(INTERROGATION_SCORE)
    return InterrogationPayload.model_validate(meta or {}).answers
