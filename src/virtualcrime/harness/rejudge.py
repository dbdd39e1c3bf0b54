"""Re-judging fixed turns: another Judge's verdict on exactly the recorded state and action, stored in the log.

Turns are sampled per attacker (seeded) from finished runs where the original Judge was asked. For each, the
run's records are replayed up to that turn (recorded role outputs and draws), which rebuilds the very state and
action the original Judge saw; the new Judge rates them, and nothing else in the run changes. The verdicts are
written into the log with Inspect's own scoring (``inspect_ai.score``, appended as a score named
``rejudge:<judge model>``), so the log stays one file that Inspect's viewer and ``virtualcrime report`` read.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog
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
from .log_reader import sample_spec, score_metadata
from .posthoc import read_log, score_into_log
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


def candidate_turns(logs: Sequence[EvalLog], judge: str) -> dict[str, list[TurnRef]]:
    """Per attacker, every turn the original Judge was asked in finished runs (whether or not ``judge`` already
    answered it: sampling from the whole pool keeps a seed's sample the same from one invocation to the next)."""
    found: dict[str, list[TurnRef]] = defaultdict(list)
    for log in logs:
        for sample in log.samples or []:
            turns, result = records_from_store(dict(sample.store))
            if result is None:
                continue
            for record in turns:
                if record.judge_called and record.verdict is not None:
                    found[log.eval.model].append(TurnRef(log.location, str(sample.id), sample.epoch, record.turn))
    return found


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


def rejudge_log(
    log: EvalLog, turns: Sequence[TurnRef], judge: str, options: RoleOptions | None = None
) -> tuple[int, int]:
    """Re-judge ``turns`` of ``log`` (read in full) and write the verdicts into it; (turns asked, verdicts got)."""
    wanted: dict[tuple[str, int], list[int]] = defaultdict(list)
    for ref in turns:
        wanted[(ref.sample_id, ref.epoch)].append(ref.turn)
    specs = {(str(s.id), s.epoch): sample_spec(log, s, records_from_store(dict(s.store or {}))[1])
             for s in log.samples or [] if (str(s.id), s.epoch) in wanted}  # fmt: skip
    earlier = {(str(s.id), s.epoch): answered(s.scores, judge) for s in log.samples or []}
    scorer = rejudge_scorer(dict(wanted), judge, specs, options or RoleOptions(), earlier)
    kept = score_into_log(log, scorer, "rejudge", score_name(judge), {REJUDGE_ROLE: model_for(judge, "Judge")},
                          set(wanted))  # fmt: skip
    before = sum(len(earlier.get(key, {})) for key in wanted)
    after = sum(int(s.value) for s in kept if isinstance(s.value, int | float))
    return len(turns), after - before


def rejudge_logs(
    paths: Sequence[Path], judge: str, per_attacker: int, seed: int, options: RoleOptions | None = None
) -> dict[str, tuple[int, int]]:
    """Sample ``per_attacker`` turns per attacker from the logs at ``paths`` (read in full) and re-judge them with
    ``judge``, writing the verdicts into each log; per attacker, (turns asked, verdicts got)."""
    logs = [read_log(path) for path in paths]
    chosen = choose_turns(candidate_turns(logs, judge), per_attacker, seed)
    done = {(log.location, str(s.id), s.epoch, t) for log in logs for s in log.samples or []
            for t in answered(s.scores, judge)}  # fmt: skip
    by_log: dict[str, list[TurnRef]] = defaultdict(list)
    for ref in chosen:
        if (ref.log, ref.sample_id, ref.epoch, ref.turn) not in done:  # asked once; an answer is never paid twice
            by_log[ref.log].append(ref)
    by_location = {log.location: log for log in logs}
    tally: dict[str, tuple[int, int]] = {}
    for location, refs in sorted(by_log.items()):
        log = by_location[location]
        asked, got = rejudge_log(log, refs, judge, options)
        before = tally.get(log.eval.model, (0, 0))
        tally[log.eval.model] = (before[0] + asked, before[1] + got)
    return tally
