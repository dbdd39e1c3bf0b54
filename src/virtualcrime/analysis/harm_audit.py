"""The effect of correcting classifier disagreements (the paper's audit): each reviewed action's verdict replaces
the classifier's, and the report shows per attacker the over-harm rate before and after with intervals, which
attackers change side of the median, and which pairwise-significant differences are kept, lost, gained or
reversed. Runs are the primary judge's, resampled over the same tasks as Table 1."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from .bootstrap import DEFAULT_SEED, Bootstrap, Estimate, Interval, task_counts
from .facts import RunFacts
from .harm import LEXICON_VERSION
from .harm.audit import HarmLabels
from .table1 import pair_status

Group = Literal["above", "below", "median", ""]
PairStatus = Literal["kept", "lost", "gained", "reversed"]


class _C(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AttackerCorrection(_C):
    """One attacker's over-harm rate before and after the reviewed verdicts replace the classifier's."""

    attacker: str
    runs: int
    before: Estimate
    after: Estimate
    runs_to_over_harm: int = Field(description="Runs the review makes over-harming.")
    runs_to_within: int = Field(description="Runs the review clears.")
    group_before: Group
    group_after: Group


class PairCorrection(_C):
    """A pair of attackers whose over-harm difference is significant before or after the correction."""

    attacker_a: str
    attacker_b: str
    before: Estimate = Field(description="rate(a) - rate(b) with the classifier's verdicts")
    after: Estimate = Field(description="rate(a) - rate(b) with the reviewed verdicts")
    status: PairStatus


class HarmCorrection(_C):
    """The whole correction effect section."""

    files: list[str]
    lexicon_versions: list[str] = Field(description="Lexicon versions the audit files were made with.")
    lexicon_version: str = Field(description="The lexicon this report's classifier uses.")
    judge: str
    labelled: int = Field(description="Reviewed actions in the files.")
    matched: int = Field(description="Reviewed actions found in this report's runs.")
    disagreements: int = Field(description="Matched reviewed actions whose verdict differs from the classifier's.")
    runs_changed: int
    median_before: float | None
    median_after: float | None
    attackers: list[AttackerCorrection]
    pairs: list[PairCorrection]
    groups_changed: int
    pairs_kept: int
    pairs_lost: int
    pairs_gained: int
    pairs_reversed: int


def _by_run(labels: HarmLabels) -> dict[tuple[str, str, int], dict[int, bool]]:
    found: dict[tuple[str, str, int], dict[int, bool]] = defaultdict(dict)
    for key, verdict in labels.verdicts.items():
        eval_id, sample_id, epoch, turn = key.rsplit("|", 3)
        found[(eval_id, sample_id, int(epoch))][int(turn)] = verdict
    return found


def corrected_over_harm(run: RunFacts, reviewed: dict[int, bool]) -> bool:
    """Whether a run over-harms once the reviewed turns' verdicts replace the classifier's."""
    if any(reviewed.values()):
        return True
    return any(turn not in reviewed for turn in run.harm.exceeding_turns)


def build_harm_correction(
    runs: Sequence[RunFacts],
    judge: str,
    tasks: Sequence[str],
    attackers: Sequence[str],
    boot: Bootstrap,
    labels: HarmLabels,
    seed: int = DEFAULT_SEED,
) -> HarmCorrection:
    """The correction effect over ``runs`` (the primary judge's), resampled with ``boot`` over ``tasks``; pairs of
    attackers are compared over the tasks both played, with the report's significance rule (``table1.pair_status``,
    resamples seeded by ``seed`` as Table 1's pairs are)."""
    reviewed = _by_run(labels)
    task_index = {t: i for i, t in enumerate(tasks)}
    group_index = {a: i for i, a in enumerate(attackers)}
    shape = (len(tasks), len(attackers))
    before, after, den = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    counts: dict[str, list[int]] = {a: [0, 0, 0] for a in attackers}  # runs, to over-harm, to within
    matched = disagreements = changed = 0
    for run in runs:
        g = group_index.get(run.attacker)
        if g is None:
            continue
        mine = reviewed.get((run.eval_id, run.sample_id, run.epoch), {})
        known = set(run.harm.exceeding_turns) | {t.turn for t in run.turn_facts if t.has_action}
        for turn, verdict in mine.items():
            if turn in known:
                matched += 1
                disagreements += verdict != (turn in run.harm.exceeding_turns)
        was, now = run.harm.over_harm, corrected_over_harm(run, {t: v for t, v in mine.items() if t in known})
        t = task_index[run.task_id]
        before[t, g] += was
        after[t, g] += now
        den[t, g] += 1
        counts[run.attacker][0] += 1
        counts[run.attacker][1] += now and not was
        counts[run.attacker][2] += was and not now
        changed += was != now
    estimates = {}
    for name, num in (("before", before), ("after", after)):
        intervals = boot.ratio_intervals(num, den)
        estimates[name] = [
            Estimate.of(iv, float(n), float(d)) for iv, n, d in zip(intervals, num.sum(0), den.sum(0), strict=True)
        ]
    medians = {name: _median([e.value for e in found]) for name, found in estimates.items()}
    rows = [
        AttackerCorrection(
            attacker=a,
            runs=counts[a][0],
            before=estimates["before"][i],
            after=estimates["after"][i],
            runs_to_over_harm=counts[a][1],
            runs_to_within=counts[a][2],
            group_before=_group(estimates["before"][i].value, medians["before"]),
            group_after=_group(estimates["after"][i].value, medians["after"]),
        )
        for i, a in enumerate(attackers)
    ]
    pairs = _pairs(attackers, boot, (before, after), den, seed)
    return HarmCorrection(
        files=labels.files,
        lexicon_versions=labels.lexicon_versions,
        lexicon_version=LEXICON_VERSION,
        judge=judge,
        labelled=len(labels.verdicts),
        matched=matched,
        disagreements=disagreements,
        runs_changed=changed,
        median_before=medians["before"],
        median_after=medians["after"],
        attackers=rows,
        pairs=pairs,
        groups_changed=sum(r.group_before != r.group_after for r in rows),
        pairs_kept=sum(p.status == "kept" for p in pairs),
        pairs_lost=sum(p.status == "lost" for p in pairs),
        pairs_gained=sum(p.status == "gained" for p in pairs),
        pairs_reversed=sum(p.status == "reversed" for p in pairs),
    )


def _median(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return float(np.median(known)) if known else None


def _group(value: float | None, median: float | None) -> Group:
    if value is None or median is None:
        return ""
    return "above" if value > median else "below" if value < median else "median"


def _pairs(
    attackers: Sequence[str], boot: Bootstrap, nums: tuple[np.ndarray, np.ndarray], den: np.ndarray, seed: int
) -> list[PairCorrection]:
    found = []
    for i, j in ((int(a), int(b)) for a, b in zip(*np.triu_indices(len(attackers), k=1), strict=True)):
        shared = np.flatnonzero((den[:, i] > 0) & (den[:, j] > 0))
        on_shared = Bootstrap(task_counts(len(shared), boot.n_resamples, seed), boot.level)
        was, now = (_difference(on_shared, num[shared][:, [i, j]], den[shared][:, [i, j]], len(shared))
                    for num in nums)  # fmt: skip
        if not (was[1] or now[1]):
            continue
        if was[1] and now[1]:
            status: PairStatus = "kept" if (was[0].value or 0) * (now[0].value or 0) > 0 else "reversed"
        else:
            status = "lost" if was[1] else "gained"
        found.append(PairCorrection(attacker_a=attackers[i], attacker_b=attackers[j], before=Estimate.of(was[0]),
                                    after=Estimate.of(now[0]), status=status))  # fmt: skip
    return found


def _difference(boot: Bootstrap, num: np.ndarray, den: np.ndarray, shared: int) -> tuple[Interval, bool]:
    """rate(a) - rate(b) over the shared tasks, and whether the report would call it significant."""
    if shared == 0:
        return Interval(None, None, None), False
    interval = boot.paired_differences(num, den)[(0, 1)]
    rates = num.sum(axis=0) / den.sum(axis=0)
    return interval, pair_status(shared, interval, float(rates[0]), float(rates[1])) == "significant"


def _pct(e: Estimate) -> str:
    if e.value is None:
        return "n/a"
    low = "?" if e.low is None else f"{100 * e.low:.1f}"
    high = "?" if e.high is None else f"{100 * e.high:.1f}"
    return f"{100 * e.value:.1f} % [{low}, {high}]"


def _change(row: AttackerCorrection) -> float | None:
    """after − before (a point value; no interval is computed for it)."""
    if row.before.value is None or row.after.value is None:
        return None
    return row.after.value - row.before.value


def correction_rows(found: HarmCorrection) -> list[list[str]]:
    """The per-attacker table (header first)."""
    header = ["Attacker", "Runs", "Over-harm before", "After review", "Change (pp)", "Runs now over-harming",
              "Runs cleared"]  # fmt: skip
    rows = [[*header, "Median side before", "After"]]
    for r in found.attackers:
        change = _change(r)
        rows.append(
            [
                r.attacker,
                str(r.runs),
                _pct(r.before),
                _pct(r.after),
                "n/a" if change is None else f"{100 * change:+.1f}",
                str(r.runs_to_over_harm),
                str(r.runs_to_within),
                r.group_before or "-",
                r.group_after or "-",
            ]
        )
    return rows


def pair_rows(found: HarmCorrection) -> list[list[str]]:
    """The significant pairs before or after (header first)."""
    rows = [["Attacker A", "Attacker B", "A - B before", "A - B after", "Significance"]]
    for p in found.pairs:
        rows.append([p.attacker_a, p.attacker_b, _pct(p.before), _pct(p.after), p.status])
    return rows


def correction_note(found: HarmCorrection) -> str:
    """One paragraph saying what was corrected and with what."""
    versions = ", ".join(found.lexicon_versions) or "unknown"
    stale = (
        f" The audit was made with lexicon {versions}; this report classifies with {found.lexicon_version}, so "
        "actions it now flags differently are corrected only where they were reviewed."
        if found.lexicon_versions != [found.lexicon_version]
        else ""
    )
    changes = [(abs(c), r.attacker) for r in found.attackers if (c := _change(r)) is not None]
    largest = max(changes, default=None)
    moved = (
        f"The largest change of an attacker's over-harm rate is {100 * largest[0]:.1f} percentage points "
        f"({largest[1]}). "
        if largest is not None
        else ""
    )
    return (
        f"{found.matched} of {found.labelled} reviewed actions are in the runs of judge {found.judge}; "
        f"{found.disagreements} of them disagree with the classifier, changing {found.runs_changed} run(s). {moved}"
        f"{found.groups_changed} attacker(s) change side of the median; of the pairs significant before or after, "
        f"{found.pairs_kept} kept, {found.pairs_lost} lost, {found.pairs_gained} gained, {found.pairs_reversed} "
        f"reversed.{stale}"
    )
