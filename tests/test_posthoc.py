"""Post-hoc scoring streams a log: the scored samples gain their score and scoring events, every other sample is
copied unchanged, at most ``in_memory`` samples are open at once, and a failure leaves the log as it was."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.event import ScoreEvent
from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import TaskState

from virtualcrime.harness.posthoc import PARTIAL_SUFFIX, score_log

SCORED_AS = "posthoc:test"


def sample_keys(path: Path) -> list[tuple[str, int]]:
    return [(str(s.id), s.epoch) for s in read_eval_log_sample_summaries(str(path))]


@pytest.fixture
def log(matrix_logs: Path, tmp_path: Path) -> Path:
    source = sorted(matrix_logs.glob("*.eval"))[0]
    return Path(shutil.copy(source, tmp_path / source.name))


class Tally:
    def __init__(self) -> None:
        self.open = 0
        self.peak = 0
        self.seen: list[tuple[str, int]] = []


def counting_scorer(tally: Tally, fail_on: int | None = None) -> Any:
    @scorer(metrics=[mean()], name="probe")
    def probe() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            tally.open += 1
            tally.peak = max(tally.peak, tally.open)
            tally.seen.append((str(state.sample_id), state.epoch))
            await asyncio.sleep(0.01)  # let every other sample the gate admits open meanwhile
            tally.open -= 1
            if fail_on is not None and len(tally.seen) >= fail_on:
                raise RuntimeError("the provider went away")
            return Score(value=1, answer="probed", metadata={"turns": len(state.store.get("RunStore:turns", []))})

        return score

    return probe()


def test_only_wanted_samples_change_and_keep_their_events(log: Path) -> None:
    before = read_eval_log(str(log))
    keys = sample_keys(log)
    wanted = set(keys[1:3])
    tally = Tally()
    kept = score_log(log, counting_scorer(tally), "probe", SCORED_AS, {}, wanted, in_memory=1)
    assert len(kept) == 2 and sorted(tally.seen) == sorted(wanted)
    after = read_eval_log(str(log))
    assert after.results == before.results and after.eval == before.eval and after.status == before.status
    old = {(str(s.id), s.epoch): s for s in before.samples or []}
    assert len(after.samples or []) == len(old)
    for sample in after.samples or []:
        key = (str(sample.id), sample.epoch)
        previous = old[key]
        if key not in wanted:
            assert sample.model_dump() == previous.model_dump()
            continue
        assert sample.scores is not None and "probe" not in sample.scores
        assert sample.scores[SCORED_AS].answer == "probed"
        assert sample.scores[SCORED_AS].metadata == {"turns": len(previous.store["RunStore:turns"])}
        assert {k: v for k, v in sample.scores.items() if k != SCORED_AS} == previous.scores
        assert sample.store == previous.store and sample.messages == previous.messages
        known = {e.uuid for e in previous.events}
        assert [e for e in sample.events if e.uuid in known] == previous.events  # the run's own transcript, whole
        added = [e for e in sample.events if e.uuid not in known]  # Inspect nests them in the scorers span
        assert any(isinstance(e, ScoreEvent) and e.scorer == "probe" for e in added)
    summaries = {(str(s.id), s.epoch): s for s in read_eval_log_sample_summaries(str(log))}
    assert all((SCORED_AS in (summaries[k].scores or {})) == (k in wanted) for k in summaries)
    assert not log.with_name(log.name + PARTIAL_SUFFIX).exists()


def test_at_most_in_memory_samples_are_open_at_once(log: Path) -> None:
    keys = set(sample_keys(log))
    tally = Tally()
    score_log(log, counting_scorer(tally), "probe", SCORED_AS, {}, keys, in_memory=2)
    assert len(tally.seen) == len(keys) > 2
    assert tally.peak == 2


def test_a_failure_mid_way_leaves_the_log_as_it_was(log: Path) -> None:
    before = log.read_bytes()
    with pytest.raises(RuntimeError, match="went away"):
        score_log(log, counting_scorer(Tally(), fail_on=2), "probe", SCORED_AS, {}, set(sample_keys(log)), in_memory=1)
    assert log.read_bytes() == before
    assert not log.with_name(log.name + PARTIAL_SUFFIX).exists()


def test_nothing_wanted_reads_nothing(log: Path) -> None:
    before = log.stat().st_mtime_ns
    assert score_log(log, counting_scorer(Tally()), "probe", SCORED_AS, {}, set()) == []
    assert log.stat().st_mtime_ns == before
