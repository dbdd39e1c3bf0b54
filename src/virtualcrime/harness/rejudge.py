"""Re-judging fixed turns: another Judge's verdict on exactly the recorded state and action, stored in the log.

Turns are sampled per attacker (seeded) from finished runs where the original Judge was asked. For each, the
run's records are replayed up to that turn (recorded role outputs and draws), which rebuilds the very state and
action the original Judge saw; the new Judge rates them, and nothing else in the run changes. The verdicts are
written into the log with Inspect's own scoring (streamed a few runs at a time, ``posthoc.score_log``; appended as
a score named ``rejudge:<judge model>``), so the log stays one file that Inspect's viewer and ``virtualcrime report``
read.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log
from inspect_ai.model import get_model
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import TaskState

from ..engine.replay import judge_inputs
from ..roles import RoleError
from ..roles.types import RecordsCalls
from ..runs.payloads import REJUDGE_SCORE_PREFIX, RejudgedTurn, RejudgePayload, rejudged_turns
from ..runs.spec import RunSpec
from ..runs.store import records_from_store
from ..scenarios import get_task
from .log_reader import sample_spec, samples_without_events, score_metadata
from .posthoc import score_log
from .roles import RoleOptions, judge_for, model_for

REJUDGE_ROLE = "rejudge"


@dataclass(frozen=True)
class TurnRef:
    log: str
    sample_id: str
    epoch: int
    turn: int


def score_name(judge: str) -> str:
    """The score a judge's verdicts are stored under (one per judge; a later rejudge by it replaces them)."""
    return f"{REJUDGE_SCORE_PREFIX}{judge}"


@dataclass
class Pool:
    """What reading the logs found: per attacker, every turn the original Judge was asked in finished runs
    (whether or not the new judge already answered it: sampling from the whole pool keeps a seed's sample the
    same from one invocation to the next), and the turns the new judge already answered."""

    candidates: dict[str, list[TurnRef]]
    answered: set[TurnRef]


def turn_pool(paths: Sequence[Path], judge: str) -> Pool:
    """The pool of turns of the logs at ``paths`` for ``judge``, reading one run at a time without its events."""
    pool = Pool(candidates=defaultdict(list), answered=set())
    for path in paths:
        attacker = read_eval_log(str(path), header_only=True).eval.model
        for sample in samples_without_events(path):
            sample_id, epoch = str(sample.id), sample.epoch
            pool.answered.update(TurnRef(str(path), sample_id, epoch, t) for t in answered(sample.scores, judge))
            turns, result = records_from_store(dict(sample.store))
            if result is None:
                continue
            for record in turns:
                if record.judge_called and record.verdict is not None:
                    pool.candidates[attacker].append(TurnRef(str(path), sample_id, epoch, record.turn))
    return pool


def choose_turns(candidates: dict[str, list[TurnRef]], per_attacker: int, seed: int) -> list[TurnRef]:
    """``per_attacker`` turns per attacker, uniformly without replacement, reproducible from ``seed``."""
    chosen: list[TurnRef] = []
    for attacker in sorted(candidates):
        pool = sorted(candidates[attacker], key=lambda t: (t.log, t.sample_id, t.epoch, t.turn))
        rng = random.Random(f"rejudge/{seed}/{attacker}")
        chosen += rng.sample(pool, min(per_attacker, len(pool)))
    return chosen


def answered(scores: object, judge: str) -> dict[int, RejudgedTurn]:
    """The turns of a sample that ``judge`` already gave a verdict on (failed attempts are not answers)."""
    return {t.turn: t for t in rejudged_turns(score_metadata(scores)).get(judge, []) if t.verdict is not None}


@scorer(metrics=[mean()], name="rejudge")
def rejudge_scorer(
    wanted: dict[tuple[str, int], list[int]],
    judge_name: str,
    specs: dict[tuple[str, int], RunSpec],
    options: RoleOptions,
    earlier: dict[tuple[str, int], dict[int, RejudgedTurn]] | None = None,
) -> Any:
    """A scorer that re-judges the wanted turns of each sample with the ``rejudge`` model role; the verdicts the
    judge gave earlier (``earlier``) are kept beside the new ones."""

    async def score(state: TaskState, target: Target) -> Score:
        key = (str(state.sample_id), state.epoch)
        turns = sorted(wanted.get(key, []))
        kept = dict((earlier or {}).get(key, {}))
        records, result = records_from_store(dict(state.store.items()))
        if not turns or result is None:
            return _score(judge_name, kept)
        spec = specs[key]
        initial = get_task(spec.task_id).initial_state()
        inputs = await judge_inputs(initial, spec.seed, records, set(turns), spec.limits, spec.reseed)
        judge = judge_for(get_model(role=REJUDGE_ROLE), replace(options, run_scope=f"rejudge/{state.sample_id}"))
        rejudged: list[RejudgedTurn] = []
        for turn in turns:
            if turn not in inputs:
                rejudged.append(RejudgedTurn(turn=turn, verdict=None, error="the Judge was not asked on this turn"))
                continue
            world, action = inputs[turn]
            try:
                verdict, error = await judge.judge(world, action), ""
            except RoleError as err:  # no usable verdict, or the provider failed after retries
                verdict, error = None, str(err)
            calls = judge.drain_calls() if isinstance(judge, RecordsCalls) else []
            rejudged.append(RejudgedTurn(turn=turn, verdict=verdict, error=error, model_calls=calls))
        return _score(judge_name, {**kept, **{r.turn: r for r in rejudged}})

    return score


def _score(judge_name: str, turns: dict[int, RejudgedTurn]) -> Score:
    ordered = [turns[t] for t in sorted(turns)]
    ok = sum(r.verdict is not None for r in ordered)
    return Score(
        value=ok,
        answer=judge_name,
        explanation=f"{ok} of {len(ordered)} turn(s) re-judged by {judge_name}",
        metadata=RejudgePayload(judge=judge_name, turns=ordered).model_dump(mode="json"),
    )


def rejudge_log(path: Path, turns: Sequence[TurnRef], judge: str, options: RoleOptions | None = None
                ) -> tuple[int, int]:  # fmt: skip
    """Re-judge ``turns`` of the log at ``path`` and write the verdicts into it (a few runs in memory at a time,
    ``posthoc.score_log``); (turns asked, verdicts got)."""
    wanted: dict[tuple[str, int], list[int]] = defaultdict(list)
    for ref in turns:
        wanted[(ref.sample_id, ref.epoch)].append(ref.turn)
    header = read_eval_log(str(path), header_only=True)
    specs: dict[tuple[str, int], RunSpec] = {}
    earlier: dict[tuple[str, int], dict[int, RejudgedTurn]] = {}
    for sample in samples_without_events(path):
        key = (str(sample.id), sample.epoch)
        if key in wanted:
            specs[key] = sample_spec(header, sample, records_from_store(dict(sample.store or {}))[1])
            earlier[key] = answered(sample.scores, judge)
    scorer = rejudge_scorer(dict(wanted), judge, specs, options or RoleOptions(), earlier)
    kept = score_log(path, scorer, "rejudge", score_name(judge), {REJUDGE_ROLE: model_for(judge, "Judge")},
                     set(wanted))  # fmt: skip
    before = sum(len(earlier.get(key, {})) for key in wanted)
    after = sum(int(s.value) for s in kept if isinstance(s.value, int | float))
    return len(turns), after - before


RejudgeJob = tuple[str, list[TurnRef], str, RoleOptions | None]  # (log location, turns, judge, options)


def rejudge_at(job: RejudgeJob) -> tuple[int, int]:
    """Re-judge one log at its location (a task of a mapper: the log's one writer)."""
    location, refs, judge, options = job
    return rejudge_log(Path(location), refs, judge, options)


def rejudge_logs(
    paths: Sequence[Path],
    judge: str,
    per_attacker: int,
    seed: int,
    options: RoleOptions | None = None,
    mapper: Callable[[Callable[[RejudgeJob], tuple[int, int]], list[RejudgeJob]], list[tuple[int, int]]] | None = None,
) -> dict[str, tuple[int, int]]:
    """Sample ``per_attacker`` turns per attacker from the logs at ``paths`` (one run at a time) and re-judge them with
    ``judge``, writing the verdicts into each log; per attacker, (turns asked, verdicts got). With a ``mapper``
    (``harness.distributed.mapper``) each log is re-judged and written by its own task."""
    pool = turn_pool(paths, judge)
    chosen = choose_turns(pool.candidates, per_attacker, seed)
    by_log: dict[str, list[TurnRef]] = defaultdict(list)
    for ref in chosen:
        if ref not in pool.answered:  # asked once; an answer is never paid twice
            by_log[ref.log].append(ref)
    attackers = {ref.log: attacker for attacker, refs in pool.candidates.items() for ref in refs}
    tally: dict[str, tuple[int, int]] = {}
    jobs = sorted(by_log.items())
    done_by: list[tuple[int, int]] | None = None
    if mapper is not None:
        done_by = mapper(rejudge_at, [(location, refs, judge, options) for location, refs in jobs])
    for index, (location, refs) in enumerate(jobs):
        asked, got = done_by[index] if done_by is not None else rejudge_log(Path(location), refs, judge, options)
        before = tally.get(attackers[location], (0, 0))
        tally[attackers[location]] = (before[0] + asked, before[1] + got)
    return tally
