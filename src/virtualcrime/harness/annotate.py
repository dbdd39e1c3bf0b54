"""Two annotator models rate each finished run's action log; results are stored in the log as a score.

Independent first pass by both; on the dimensions where they differ, each sees the other's score and reason and
rates again; dimensions still in dispute are dropped (kept in the record, counted in the report). Every pass,
score, reason, model call and the reconciliation is kept in the score's metadata, named
``annotation:<annotator A>|<annotator B>``. A log is annotated as a whole: a run interrupted mid-log redoes that
log, and runs already annotated by the pair are left as they are.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log_sample_summaries
from inspect_ai.model import get_model
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import TaskState

from ..roles import RoleError
from ..roles.annotation import Annotator, action_log, reconcile
from ..roles.annotation.scores import DimensionScore, disputed
from ..roles.types import RoleProviderError
from ..runs.payloads import ANNOTATION_SCORE_PREFIX, AnnotationPayload
from ..runs.store import records_from_store
from .posthoc import score_log
from .roles import RoleOptions, model_for, role_generate

ROLES = ("annotator_a", "annotator_b")


def annotation_name(annotator_a: str, annotator_b: str) -> str:
    """The score name of one annotator pair's results."""
    return f"{ANNOTATION_SCORE_PREFIX}{annotator_a}|{annotator_b}"


@scorer(metrics=[mean()], name="annotate")
def annotate_scorer(annotator_a: str, annotator_b: str, wanted: set[tuple[str, int]], options: RoleOptions) -> Any:
    """Annotate the wanted samples with the ``annotator_a`` and ``annotator_b`` model roles."""

    async def score(state: TaskState, target: Target) -> Score:
        meta: dict[str, Any] = {"annotator_a": annotator_a, "annotator_b": annotator_b}
        if (str(state.sample_id), state.epoch) not in wanted:
            return Score(value=0, metadata=meta)
        records, result = records_from_store(dict(state.store.items()))
        actions = [(r.turn, r.action) for r in records if r.action is not None]
        if result is None or not actions:
            return Score(value=0, explanation="no finished run with actions", metadata={**meta, "skipped": True})
        task, log_text = str(state.metadata.get("task_id", state.sample_id)), action_log(actions)
        scope = f"annotate/{state.sample_id}/{state.epoch}"
        options_here = replace(options, run_scope=scope)
        a, b = (
            Annotator(role_generate(get_model(role=role), "annotator", options_here), name, options.max_attempts)
            for role, name in zip(ROLES, (annotator_a, annotator_b), strict=True)
        )
        first = await asyncio.gather(a.first_pass(task, log_text), b.first_pass(task, log_text), return_exceptions=True)
        provider = next((e for e in first if isinstance(e, RoleProviderError)), None)
        if provider is not None:  # not the annotators' answer: left unannotated, so running again retries it
            return Score(value=0, explanation=str(provider), metadata={**meta, "skipped": True,
                                                                      "provider_error": str(provider)})  # fmt: skip
        first_a, first_b = (_scores_or_none(f) for f in first)
        dims = disputed(first_a, first_b) if first_a is not None and first_b is not None else []
        reviewed: list[Any] = []
        if dims and first_a is not None and first_b is not None:
            reviewed = list(
                await asyncio.gather(
                    a.review(task, log_text, first_a, first_b, dims),
                    b.review(task, log_text, first_b, first_a, dims),
                    return_exceptions=True,
                )
            )
        provider = next((e for e in reviewed if isinstance(e, RoleProviderError)), None)
        if provider is not None:
            return Score(value=0, explanation=str(provider), metadata={**meta, "skipped": True,
                                                                      "provider_error": str(provider)})  # fmt: skip
        review_a, review_b = (_scores_or_none(r) for r in reviewed) if reviewed else (None, None)
        errors = [str(e) for e in (*first, *reviewed) if isinstance(e, BaseException)]
        final = reconcile(first_a or {}, first_b or {}, review_a, review_b)
        kept = sum(r.final is not None for r in final.values())
        return Score(
            value=kept,
            answer=f"{kept} of {len(final)} dimensions agreed",
            explanation="; ".join(
                f"{d}: {r.final if r.final is not None else 'dropped'} ({r.stage})" for d, r in final.items()
            ),
            metadata=AnnotationPayload(
                **meta,
                first_a=first_a,
                first_b=first_b,
                disputed=dims,
                review_a=review_a,
                review_b=review_b,
                final=final,
                errors=errors,
                calls=[*a.drain_calls(), *b.drain_calls()],
            ).model_dump(mode="json"),
        )

    return score


def _scores_or_none(result: object) -> dict[str, DimensionScore] | None:
    """A pass's scores, or None when the annotator gave no usable answer (any other exception propagates)."""
    if isinstance(result, RoleError):
        return None
    if isinstance(result, BaseException):
        raise result
    return result  # type: ignore[return-value]


def unannotated(path: Path, name: str) -> set[tuple[str, int]]:
    """Samples of the log at ``path`` without this pair's annotation yet (from the log's sample summaries, whose
    scores keep the short ``provider_error`` of a pass that failed)."""

    def done(sample: Any) -> bool:
        score = (sample.scores or {}).get(name)
        return score is not None and not (score.metadata or {}).get("provider_error")

    return {(str(s.id), s.epoch) for s in read_eval_log_sample_summaries(str(path)) if not done(s)}


def annotate_log(path: Path, annotator_a: str, annotator_b: str, options: RoleOptions | None = None) -> list[Score]:
    """Annotate the runs of the log at ``path`` this pair has not annotated yet (a few samples in memory at a time,
    ``posthoc.score_log``); returns the new scores."""
    name = annotation_name(annotator_a, annotator_b)
    wanted = unannotated(path, name)
    if not wanted:
        return []
    roles = {role: model_for(model, "annotator") for role, model in zip(ROLES, (annotator_a, annotator_b), strict=True)}
    scorer = annotate_scorer(annotator_a, annotator_b, wanted, options or RoleOptions())
    return score_log(path, scorer, "annotate", name, roles, wanted)


AnnotateJob = tuple[str, str, str, RoleOptions | None]  # (log location, annotator A, annotator B, options)


def annotate_at(job: AnnotateJob) -> list[Score]:
    """Annotate one log at its location (a task of a mapper: the log's one writer)."""
    location, annotator_a, annotator_b, options = job
    return annotate_log(Path(location), annotator_a, annotator_b, options)
