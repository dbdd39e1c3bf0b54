"""Writing post-hoc results (re-judged verdicts, annotations, interrogations) into finished logs as scores.

Inspect's own scoring (``inspect_ai.score_async``) runs a scorer over a log's samples with extra model roles; the
result is stored under a name of our choosing, so the results of several judges or annotator pairs live side by
side in one log, readable by Inspect's viewer and by ``virtualcrime report``.

A log is never read whole: ``score_log`` streams the samples it scores (at most ``IN_MEMORY`` of them, events
included, at a time) into a new copy of the log whose other samples are copied over byte for byte, and only then
replaces the log with it (an atomic rename). Its memory is independent of the log's size, and a process killed
mid-way leaves the log as it was (running the command again redoes that log).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from inspect_ai import score as inspect_score
from inspect_ai import score_async
from inspect_ai.log import (
    EvalLog,
    EvalSample,
    read_eval_log,
    read_eval_log_sample_async,
    read_eval_log_sample_summaries,
    write_eval_log,
)
from inspect_ai.model import Model
from inspect_ai.scorer import Score

Key = tuple[str, int]
# Samples (events included) held at once while scoring: a model-role run of 60 turns is tens of MiB in memory.
IN_MEMORY = 4
PARTIAL_SUFFIX = ".partial"  # the new copy of a log being written (not a log name: log finders skip it)


def read_log(path: Path) -> EvalLog:
    """A whole log, samples included (for the small logs of tests and ``.json`` logs; see ``score_log``)."""
    return read_eval_log(str(path))


def score_log(
    path: Path,
    scorer: Any,
    scorer_name: str,
    store_as: str,
    model_roles: Mapping[str, Model],
    wanted: set[Key],
    in_memory: int = IN_MEMORY,
) -> list[Score]:
    """Score the ``wanted`` samples of the log at ``path`` and keep each one's new score as ``store_as``; other
    samples keep what they had. The log is rewritten (see the module). Returns the new scores kept."""
    if not wanted:
        return []
    header = read_eval_log(str(path), header_only=True)
    if not str(path).endswith(".eval") or header.results is None:  # a .json log is one JSON document
        return score_into_log(read_log(path), scorer, scorer_name, store_as, model_roles, wanted)
    from inspect_ai._util.platform import platform_init

    platform_init()  # as inspect_ai.score does before scoring (environment, logging)
    return asyncio.run(_score_streaming(path, header, scorer, scorer_name, store_as, model_roles, wanted, in_memory))


async def _score_streaming(
    path: Path,
    header: EvalLog,
    scorer: Any,
    scorer_name: str,
    store_as: str,
    model_roles: Mapping[str, Model],
    wanted: set[Key],
    in_memory: int,
) -> list[Score]:
    from inspect_ai.log._condense import condense_sample
    from inspect_ai.log._recorders.eval import EvalRecorder

    summaries = [(s.id, s.epoch) for s in read_eval_log_sample_summaries(str(path))]
    scored = [(sid, epoch) for sid, epoch in summaries if (str(sid), epoch) in wanted]
    copied = {(sid, epoch) for sid, epoch in summaries if (str(sid), epoch) not in wanted}
    partial = path.with_name(path.name + PARTIAL_SUFFIX)
    partial.unlink(missing_ok=True)  # a killed earlier attempt's
    recorder = EvalRecorder(str(path.parent))
    await recorder.log_init(header.eval, str(partial), clean=True)
    kept: list[Score] = []
    gate = asyncio.Semaphore(in_memory)
    try:
        if copied:
            await recorder.log_seed(header.eval, str(path), copied)
        await recorder.log_start(header.eval, header.plan)

        @contextlib.asynccontextmanager
        async def sample_at(index: int) -> AsyncIterator[EvalSample]:
            async with gate:
                sample_id, epoch = scored[index]
                sample = await read_eval_log_sample_async(str(path), sample_id, epoch)
                yield sample
                scores = dict(sample.scores or {})
                new = scores.pop(scorer_name, None)
                if new is not None:
                    scores[store_as] = new
                    kept.append(new)
                sample.scores = scores
                await recorder.log_sample(header.eval, condense_sample(sample))
                await recorder.flush(header.eval)

        job = header.model_copy(deep=True)  # scoring adds its scorer to the header: the log keeps its own
        assert job.results is not None
        job.results.total_samples = len(scored)
        await score_async(job, scorer, model_roles=dict(model_roles), action="append", display="none", copy=False,
                          samples=sample_at)  # fmt: skip
        await recorder.log_finish(header.eval, header.status, header.stats, header.results, header.reductions,
                                  header.error, invalidated=header.invalidated, log_updates=header.log_updates,
                                  config_updates=header.config_updates)  # fmt: skip
    except BaseException:
        with contextlib.suppress(Exception):
            await recorder.log_discard(header.eval)
        partial.unlink(missing_ok=True)
        raise
    _replace(partial, path)
    return kept


def _replace(new: Path, old: Path) -> None:
    """``new`` becomes ``old`` atomically, durably (the file and then its folder are synced)."""
    with new.open("rb") as file:
        os.fsync(file.fileno())
    os.replace(new, old)
    folder = os.open(old.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


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
