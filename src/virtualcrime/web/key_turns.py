"""Which turns raters review: every turn with an action that changed a checkpoint or a critical flag, plus a seeded
random share of the other turns the Judge was asked about, from every benchmark and human run in the log folder.

The sample is a pure function of the runs, the seed and the share, and every rater sees the same turns in the
same order, so ratings overlap and agreement between raters can be measured. Each turn's place in that order is
a seeded hash of the turn itself, so logs added later (a finished human game, say) slot their turns in without
moving anyone else's.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from ..analysis.review_store import TurnRef
from ..engine import TurnRecord


class ReviewItem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    ref: TurnRef
    log: str
    judge: str
    world_manager: str
    key: bool  # changed a checkpoint or a critical flag
    judge_asked: bool  # False: the engine's pre-check ruled the action impossible; there is no Judge to rate


class TurnMark(BaseModel):
    """What the sampler needs of one turn (kept for every run of the folder, so it is small)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    turn: int
    key: bool  # changed a checkpoint or a critical flag
    judge_called: bool
    has_verdict: bool

    @classmethod
    def of(cls, record: TurnRecord) -> TurnMark:
        return cls(turn=record.turn, key=is_key_turn(record), judge_called=record.judge_called,
                   has_verdict=record.verdict is not None)  # fmt: skip


class RunTurns(BaseModel):
    """The part of a logged run the sampler needs."""

    model_config = ConfigDict(extra="forbid")

    log: str
    eval_id: str
    sample_id: str
    epoch: int
    judge: str
    world_manager: str
    turns: list[TurnMark]


def is_key_turn(record: TurnRecord) -> bool:
    return bool(record.new_checkpoints or record.new_failures)


def sample_review_turns(runs: Iterable[RunTurns], seed: int, share: float) -> list[ReviewItem]:
    """Key turns of every run plus ``share`` of its other judged turns, in one seeded order."""
    items: list[ReviewItem] = []
    for run in sorted(runs, key=lambda r: (r.eval_id, r.sample_id, r.epoch)):
        rng = random.Random(f"{seed}|{run.eval_id}|{run.sample_id}|{run.epoch}")  # str seeds are stable across runs
        for record in run.turns:
            if not record.has_verdict:
                continue
            key = record.key
            if key or (record.judge_called and rng.random() < share):
                ref = TurnRef(eval_id=run.eval_id, sample_id=run.sample_id, epoch=run.epoch, turn=record.turn)
                item = ReviewItem(ref=ref, log=run.log, judge=run.judge, world_manager=run.world_manager, key=key,
                                  judge_asked=record.judge_called)  # fmt: skip
                items.append(item)
    return sorted(items, key=lambda item: _place(seed, item.ref))


def _place(seed: int, ref: TurnRef) -> str:
    text = f"{seed}|{ref.eval_id}|{ref.sample_id}|{ref.epoch}|{ref.turn}"
    return hashlib.sha256(text.encode()).hexdigest()
