"""Human review of the Judge and the World Manager in the report: how raters scored them (1–5) on key turns, per
model, and how well raters agree with each other on the same turns.

Each rating carries the Judge and World Manager models of its log, so ratings count even when their run is not
among the logs the report read (the section says how many). When the same rater rated the same turn more than
once (the store keeps one rating per rater and turn, but the same rating can reach the report from two copies of a
review file) only the latest counts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from itertools import combinations
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from .annotation import quadratic_weighted_kappa
from .review_store import Rating, TurnRef

Role = Literal["judge", "world_manager"]
ROLES: tuple[Role, ...] = ("judge", "world_manager")
ROLE_LABELS: dict[Role, str] = {"judge": "Judge", "world_manager": "World Manager"}
LOW, HIGH = 1, 5
TOO_FEW_TURNS = "fewer than 2 shared turns"
NO_VARIANCE = "no variance: both raters gave every shared turn the same rating"


class _R(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReviewModelRow(_R):
    """The ratings one Judge (role ``judge``) or World Manager (role ``world_manager``) model received."""

    role: Role
    model: str
    ratings: int
    turns: int
    raters: int
    mean: float
    share_4_5: float
    share_3_5: float
    multi_rated_turns: int = Field(0, description="Turns that at least two raters rated for this role.")
    all_4_5: float | None = Field(
        None, description="Share of those turns on which every rater gave 4 or 5 (None without such turns)."
    )
    all_3_5: float | None = Field(None, description="Share of those turns on which every rater gave 3 to 5.")


class RaterAgreement(_R):
    """Two raters on the turns both rated, for one role: weighted κ (None, with why, when undefined)."""

    role: Role
    rater_a: str
    rater_b: str
    turns: int
    kappa: float | None
    kappa_undefined: str = ""
    exact: float
    within_one: float
    both_4_5: float = Field(0.0, description="Share of the shared turns on which both raters gave 4 or 5.")
    both_3_5: float = Field(0.0, description="Share of the shared turns on which both raters gave 3 to 5.")


class ReviewSummary(_R):
    stores: list[str]
    ratings: int
    duplicates_dropped: int
    raters: list[str]
    turns: int
    outside_loaded_logs: int
    models: list[ReviewModelRow]
    agreement: list[RaterAgreement]


def role_rating(rating: Rating, role: Role) -> int | None:
    """The rating given to ``role`` (None: the Judge was not asked on that turn, so it has no Judge rating)."""
    return rating.judge_rating if role == "judge" else rating.world_manager_rating


def role_model(rating: Rating, role: Role) -> str:
    """The model that played ``role`` in the rated turn's log."""
    return rating.judge if role == "judge" else rating.world_manager


def latest_ratings(ratings: Sequence[Rating]) -> tuple[list[Rating], int]:
    """One rating per (turn, rater): the latest by ``created`` (later in the list on a tie). Returns the ratings
    kept, in their first order, and how many were dropped."""
    kept: dict[tuple[TurnRef, str], tuple[int, Rating]] = {}
    for index, rating in enumerate(ratings):
        key = (rating.ref, rating.rater)
        earlier = kept.get(key)
        if earlier is None:
            kept[key] = (index, rating)
        elif utc_time(rating.created) >= utc_time(earlier[1].created):
            kept[key] = (earlier[0], rating)
    ordered = [rating for _, rating in sorted(kept.values(), key=lambda pair: pair[0])]
    return ordered, len(ratings) - len(ordered)


def all_at_least(ratings: Sequence[Rating], role: Role, threshold: int) -> tuple[int, float | None]:
    """Over the turns that at least two raters rated for ``role``: how many there are, and the share on which every
    one of them gave ``role`` at least ``threshold`` (None without such turns). One rating per rater and turn is
    expected (``latest_ratings``)."""
    by_turn: dict[TurnRef, list[int]] = defaultdict(list)
    for rating in ratings:
        score = role_rating(rating, role)
        if score is not None:
            by_turn[rating.ref].append(score)
    shared = [scores for scores in by_turn.values() if len(scores) >= 2]
    if not shared:
        return 0, None
    return len(shared), float(np.mean([min(scores) >= threshold for scores in shared]))


def model_rows(ratings: Sequence[Rating]) -> list[ReviewModelRow]:
    """Per role and model: ratings, distinct turns, raters, mean rating, the shares of ratings of 4–5 and 3–5, and
    over the turns several raters rated, the shares on which all of them gave 4–5 and 3–5."""
    rows = []
    for role in ROLES:
        groups: dict[str, list[Rating]] = defaultdict(list)
        for rating in ratings:
            if role_rating(rating, role) is not None:
                groups[role_model(rating, role)].append(rating)
        for model, group in sorted(groups.items()):
            scores = np.array([role_rating(r, role) for r in group], dtype=float)
            multi, all_4_5 = all_at_least(group, role, 4)
            _, all_3_5 = all_at_least(group, role, 3)
            rows.append(
                ReviewModelRow(
                    role=role,
                    model=model,
                    ratings=len(group),
                    turns=len({r.ref for r in group}),
                    raters=len({r.rater for r in group}),
                    mean=float(scores.mean()),
                    share_4_5=float((scores >= 4).mean()),
                    share_3_5=float((scores >= 3).mean()),
                    multi_rated_turns=multi,
                    all_4_5=all_4_5,
                    all_3_5=all_3_5,
                )
            )
    return rows


def rater_agreement(ratings: Sequence[Rating]) -> list[RaterAgreement]:
    """Per role and pair of raters who rated at least one turn in common: quadratic weighted Cohen's κ on 1–5
    (None when there are fewer than 2 shared turns or no variance), exact and within-one agreement, and the shares
    of shared turns on which both gave 4–5 and both gave 3–5."""
    by_rater: dict[str, dict[TurnRef, Rating]] = defaultdict(dict)
    for rating in ratings:
        by_rater[rating.rater][rating.ref] = rating
    rows = []
    for role in ROLES:
        for a, b in combinations(sorted(by_rater), 2):
            both = set(by_rater[a]) & set(by_rater[b])
            rated = {ref for ref in both if role_rating(by_rater[a][ref], role) is not None
                     and role_rating(by_rater[b][ref], role) is not None}  # fmt: skip
            shared = sorted(rated, key=_ref_order)
            if not shared:
                continue
            x = np.array([role_rating(by_rater[a][ref], role) for ref in shared], dtype=int)
            y = np.array([role_rating(by_rater[b][ref], role) for ref in shared], dtype=int)
            kappa = quadratic_weighted_kappa(x.tolist(), y.tolist(), LOW, HIGH) if len(shared) >= 2 else None
            why = "" if kappa is not None else TOO_FEW_TURNS if len(shared) < 2 else NO_VARIANCE
            diff = np.abs(x - y)
            rows.append(
                RaterAgreement(
                    role=role,
                    rater_a=a,
                    rater_b=b,
                    turns=len(shared),
                    kappa=kappa,
                    kappa_undefined=why,
                    exact=float((diff == 0).mean()),
                    within_one=float((diff <= 1).mean()),
                    both_4_5=float((np.minimum(x, y) >= 4).mean()),
                    both_3_5=float((np.minimum(x, y) >= 3).mean()),
                )
            )
    return rows


def build_review(
    ratings: Sequence[Rating], loaded_runs: Collection[tuple[str, str, int]], stores: Sequence[str] = ()
) -> ReviewSummary | None:
    """The review section, or None without ratings. ``loaded_runs`` holds (eval_id, sample_id, epoch) of every run
    the report read; ratings of other runs still count and are counted."""
    kept, dropped = latest_ratings(ratings)
    if not kept:
        return None
    return ReviewSummary(
        stores=list(stores),
        ratings=len(kept),
        duplicates_dropped=dropped,
        raters=sorted({r.rater for r in kept}),
        turns=len({r.ref for r in kept}),
        outside_loaded_logs=sum((r.ref.eval_id, r.ref.sample_id, r.ref.epoch) not in loaded_runs for r in kept),
        models=model_rows(kept),
        agreement=rater_agreement(kept),
    )


def _ref_order(ref: TurnRef) -> tuple[str, str, int, int]:
    return (ref.eval_id, ref.sample_id, ref.epoch, ref.turn)


def utc_time(text: str, unreadable: datetime = datetime.min) -> datetime:
    """An ISO-8601 time for ordering, naive read as UTC; ``unreadable`` (as UTC) when it does not parse."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return unreadable.replace(tzinfo=UTC)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def both_raters_rows(found: ReviewSummary) -> list[list[str]]:
    """Per rated role and model, over the turns at least two raters rated: how many, and the shares on which all of
    them gave 4–5 and 3–5 (the paper's "both annotators gave 4–5 / 3–5"); header first."""

    def share(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}"

    header = ["Rated", "Model", "Turns rated by ≥ 2 raters", "All gave 4–5", "All gave 3–5"]
    return [header] + [
        [ROLE_LABELS[r.role], r.model, str(r.multi_rated_turns), share(r.all_4_5), share(r.all_3_5)]
        for r in found.models
    ]
