"""Writing post-hoc results (re-judged verdicts, annotations, interrogations) into finished logs as scores.

Inspect's own scoring (``inspect_ai.score``) runs a scorer over a log's samples with extra model roles; the
result is stored under a name of our choosing, so the results of several judges or annotator pairs live side by
side in one log, readable by Inspect's viewer and by ``virtualcrime report``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspect_ai import score as inspect_score
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import Model
from inspect_ai.scorer import Score


def read_log(path: Path) -> EvalLog:
    """A whole log, samples included, for a post-hoc command to score."""
    return read_eval_log(str(path))


def score_into_log(
    log: EvalLog,
    scorer: Any,
    scorer_name: str,
    store_as: str,
    model_roles: Mapping[str, Model],
    wanted: set[tuple[str, int]] | None = None,
) -> list[Score]:
    """Score ``log`` (read in full) and keep each wanted sample's new score as ``store_as``; other samples keep
    what they had. The log is written back to its location. Returns the new scores kept."""
    scored = inspect_score(log, scorer, model_roles=dict(model_roles), action="append", display="none")
    kept: list[Score] = []
    for sample in scored.samples or []:
        scores = dict(sample.scores or {})
        new = scores.pop(scorer_name, None)
        if new is not None and (wanted is None or (str(sample.id), sample.epoch) in wanted):
            scores[store_as] = new
            kept.append(new)
        sample.scores = scores
    if scored.results is not None:
        scored.results.scores = [s for s in scored.results.scores if s.name != scorer_name]
    write_eval_log(scored, log.location)
    return kept
