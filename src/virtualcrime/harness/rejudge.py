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


RunKey = tuple[str, int]  # (sample id, epoch) within one log


@dataclass
class Pool:
    """What reading the logs found, per log: every turn the original Judge was asked in finished runs, per attacker
    (whether or not the new judge already answered it: sampling from the whole pool keeps a seed's sample the
    same from one invocation to the next), the turns the new judge already answered, and each finished run's
    spec (what replaying it to a turn needs)."""

    candidates: dict[str, list[TurnRef]]
    earlier: dict[str, dict[RunKey, dict[int, RejudgedTurn]]]
    specs: dict[str, dict[RunKey, RunSpec]]

    def answered(self, ref: TurnRef) -> bool:
        return ref.turn in self.earlier.get(ref.log, {}).get((ref.sample_id, ref.epoch), {})


def turn_pool(paths: Sequence[Path], judge: str) -> Pool:
    """The pool of turns of the logs at ``paths`` for ``judge``, reading one run at a time without its events."""
    pool = Pool(candidates=defaultdict(list), earlier=defaultdict(dict), specs=defaultdict(dict))
    for path in paths:
        log = str(path)
        header = read_eval_log(log, header_only=True)
        for sample in samples_without_events(path):
            key = (str(sample.id), sample.epoch)
            if done := answered(sample.scores, judge):
                pool.earlier[log][key] = done
            turns, result = records_from_store(dict(sample.store))
            if result is None:
                continue
            pool.specs[log][key] = sample_spec(header, sample, result)
            for record in turns:
                if record.judge_called and record.verdict is not None:
                    pool.candidates[header.eval.model].append(TurnRef(log, key[0], key[1], record.turn))
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


@dataclass(frozen=True)
class RejudgeJob:
    """One log's re-judging, as a mapper's task gets it: the turns to ask and what reading the logs found of them."""

    log: str
    turns: list[TurnRef]
    judge: str
    options: RoleOptions | None
    specs: dict[RunKey, RunSpec]
    earlier: dict[RunKey, dict[int, RejudgedTurn]]


def rejudge_log(job: RejudgeJob) -> tuple[int, int]:
    """Re-judge the job's turns and write the verdicts into its log (a few runs in memory at a time,
    ``posthoc.score_log``; as a mapper's task, the log's one writer); (turns asked, verdicts got)."""
    wanted: dict[RunKey, list[int]] = defaultdict(list)
    for ref in job.turns:
        wanted[(ref.sample_id, ref.epoch)].append(ref.turn)
    specs = {key: job.specs[key] for key in wanted}
    scorer = rejudge_scorer(dict(wanted), job.judge, specs, job.options or RoleOptions(), job.earlier)
    kept = score_log(Path(job.log), scorer, "rejudge", score_name(job.judge),
                     {REJUDGE_ROLE: model_for(job.judge, "Judge")}, set(wanted))  # fmt: skip
    before = sum(len(job.earlier.get(key, {})) for key in wanted)
    after = sum(int(s.value) for s in kept if isinstance(s.value, int | float))
    return len(job.turns), after - before


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
        if not pool.answered(ref):  # asked once; an answer is never paid twice
            by_log[ref.log].append(ref)
    attackers = {ref.log: attacker for attacker, refs in pool.candidates.items() for ref in refs}
    jobs = [RejudgeJob(log, refs, judge, options, pool.specs[log], pool.earlier.get(log, {}))
            for log, refs in sorted(by_log.items())]  # fmt: skip
    done = mapper(rejudge_log, jobs) if mapper is not None else [rejudge_log(job) for job in jobs]
    tally: dict[str, tuple[int, int]] = {}
    for job, (asked, got) in zip(jobs, done, strict=True):
        before = tally.get(attackers[job.log], (0, 0))
        tally[attackers[job.log]] = (before[0] + asked, before[1] + got)
    return tally
