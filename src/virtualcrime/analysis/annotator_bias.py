"""Annotator self-bias: does an annotator model rate the runs of its own model higher than its partner does, beyond
how it rates everyone else's? (The paper's Section 5.3 reports −0.01 and −0.07 levels, intervals containing 0.)

Definition, per annotator X (pooled over every pair X annotated in, each time against that pair's partner Y):

- one **comparison** is one behaviour dimension of one run on which both first passes (independent, before either
  saw the other) gave an in-range level; its deviation is d = level_X − level_Y;
- the runs are split by their Attacker: **own model** (the Attacker's model name equals X's), **own vendor** (another
  model of X's vendor) and **others**; the runs of the partner's own model are left out of X's groups (counted in
  ``partner_runs``), since there the partner's own self-bias, not X's, would move the deviation;
- ``own``, ``vendor`` and ``others`` are the mean deviation over that group's comparisons (a ratio of sums:
  Σ d / number of comparisons);
- **self-bias** = own − others: X's deviation from its partner on its own model's runs, minus its deviation from
  the same partner on other Attackers' runs (so a generally lenient or harsh annotator shows no self-bias); and
  vendor − others likewise.

Every figure has a 95 % task-clustered percentile bootstrap interval (the report's resamples: all runs of a drawn
task move together); the differences are paired, own and others computed on the same resampled tasks. A positive
value means X favours its own model. Reconciled levels are not used: they agree by construction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..roles.annotation.scores import BEHAVIOURS, MAX_LEVEL, MIN_LEVEL
from ..runs.payloads import RunAnnotation
from .bootstrap import Bootstrap, Estimate
from .facts import RunFacts
from .judges import vendor

GROUPS = ("own", "vendor", "others")


class SelfBiasRow(BaseModel):
    """One annotator's deviation from its partners on its own model's, its vendor's and other Attackers' runs."""

    model_config = ConfigDict(extra="forbid")

    annotator: str
    own_runs: int = Field(description="Runs of the annotator's own model with both first passes.")
    vendor_runs: int = Field(0, description="Runs of other models of the annotator's vendor.")
    other_runs: int = Field(description="Runs of every other Attacker.")
    partner_runs: int = Field(0, description="Runs of the partner's own model, left out.")
    own_minus_partner: float | None = Field(description="Point value of ``own``.")
    others_minus_partner: float | None = Field(description="Point value of ``others``.")
    bias: float | None = Field(description="Point value of ``own_vs_others``.")
    own: Estimate = Field(description="Mean (X − partner) over the own model's comparisons, with interval.")
    vendor: Estimate = Field(description="Mean (X − partner) over the own vendor's comparisons.")
    others: Estimate = Field(description="Mean (X − partner) over the other Attackers' comparisons.")
    own_vs_others: Estimate = Field(description="Self-bias: own − others, paired over resampled tasks.")
    vendor_vs_others: Estimate = Field(description="vendor − others, paired over resampled tasks.")


def valid_level(value: object) -> bool:
    """Whether a stored level is a whole number in MIN_LEVEL..MAX_LEVEL."""
    return isinstance(value, int) and not isinstance(value, bool) and MIN_LEVEL <= value <= MAX_LEVEL


def group_of(attacker: str, annotator: str, partner: str = "") -> str:
    """``own`` (same model), ``partner`` (the partner's model: left out), ``vendor`` (same vendor, other model) or
    ``others``."""
    if attacker == annotator:
        return "own"
    if attacker == partner:
        return "partner"
    return "vendor" if vendor(attacker) == vendor(annotator) else "others"


def deviations(first_x: Mapping[str, int], first_y: Mapping[str, int]) -> list[int]:
    """X − Y per dimension both rated with an in-range level."""
    return [first_x[d] - first_y[d] for d in BEHAVIOURS
            if valid_level(first_x.get(d)) and valid_level(first_y.get(d))]  # fmt: skip


def self_bias(
    annotated: Sequence[tuple[RunFacts, RunAnnotation]], tasks: Sequence[str], boot: Bootstrap
) -> list[SelfBiasRow]:
    """One row per annotator that gave a first pass (see the module docstring for the definition)."""
    comparisons: list[tuple[str, str, str, int, int]] = []  # annotator, group, task, deviation sum, count
    runs: dict[tuple[str, str], int] = {}
    for run, note in annotated:
        if not note.first_a or not note.first_b:
            continue
        a, b = note.annotator_a, note.annotator_b
        for me, partner, mine, theirs in ((a, b, note.first_a, note.first_b), (b, a, note.first_b, note.first_a)):
            found = deviations(mine, theirs)
            if not found:
                continue
            group = group_of(run.attacker, me, partner)
            runs[(me, group)] = runs.get((me, group), 0) + 1
            if group != "partner":
                comparisons.append((me, group, run.task_id, sum(found), len(found)))
    annotators = sorted({me for me, _ in runs})
    if not annotators:
        return []
    columns = {(a, g): i for i, (a, g) in enumerate((a, g) for a in annotators for g in GROUPS)}
    task_index = {t: i for i, t in enumerate(tasks)}
    num = np.zeros((len(tasks), len(columns)))
    den = np.zeros_like(num)
    for me, group, task, total, count in comparisons:
        num[task_index[task], columns[(me, group)]] += total
        den[task_index[task], columns[(me, group)]] += count
    point, samples = boot.resample(num, den)
    estimates = [
        Estimate.of(iv, float(n), float(d))
        for iv, n, d in zip(boot.intervals(point, samples), num.sum(0), den.sum(0), strict=True)
    ]

    def minus(a: int, b: int) -> Estimate:
        return Estimate.of(boot.intervals(point[[a]] - point[[b]], samples[:, [a]] - samples[:, [b]])[0])

    rows = []
    for annotator in annotators:
        own, ven, oth = (columns[(annotator, g)] for g in GROUPS)
        bias = minus(own, oth)
        rows.append(
            SelfBiasRow(
                annotator=annotator,
                own_runs=runs.get((annotator, "own"), 0),
                vendor_runs=runs.get((annotator, "vendor"), 0),
                other_runs=runs.get((annotator, "others"), 0),
                partner_runs=runs.get((annotator, "partner"), 0),
                own_minus_partner=estimates[own].value,
                others_minus_partner=estimates[oth].value,
                bias=bias.value,
                own=estimates[own],
                vendor=estimates[ven],
                others=estimates[oth],
                own_vs_others=bias,
                vendor_vs_others=minus(ven, oth),
            )
        )
    return rows


def _signed(e: Estimate) -> str:
    return e.text(2, sign=True)


def self_bias_table(rows: Sequence[SelfBiasRow]) -> list[list[str]]:
    """The self-bias table (header first), levels with 95 % intervals."""
    header = ["Annotator", "Own runs", "Vendor runs", "Other runs", "Own − partner", "Vendor − partner",
              "Others − partner", "Self-bias (own − others)", "Vendor − others"]  # fmt: skip
    return [header] + [
        [r.annotator, str(r.own_runs), str(r.vendor_runs), str(r.other_runs), _signed(r.own), _signed(r.vendor),
         _signed(r.others), _signed(r.own_vs_others), _signed(r.vendor_vs_others)]
        for r in rows
    ]  # fmt: skip


SELF_BIAS_NOTE = (
    "Annotator self-bias, in levels: for each annotator, its first-pass level minus its partner's on the same run "
    "and dimension, averaged over the runs of its own model, of its vendor's other models and of every other "
    "Attacker but its partner's own model; self-bias is own − others (positive: it favours its own model beyond "
    "how it rates everyone). "
    "95 % task-clustered bootstrap intervals, differences paired over the same resampled tasks."
)
