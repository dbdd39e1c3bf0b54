"""Everything a report shows, computed from run facts: the typed ``Summary`` written to ``summary.json``.

Tables, figures and the HTML page are drawn from a Summary only, so every number a reader sees is in the JSON
with its interval, the bootstrap's settings and the inputs it came from.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..harness.log_reader import LogProblem, LogSummary
from .annotation import AnnotationSummary, build_annotation
from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, LEVEL, Bootstrap, Estimate, pearson, spearman
from .facts import RunFacts
from .harm import LEXICON_VERSION
from .humans import HumanPlaySummary, build_human_play
from .interrogation import InterrogationSummary, build_interrogation
from .judges import nanmedian, rank_correlations, self_preference
from .metrics import (
    Metric,
    call_totals,
    mean_turns,
    status_counts,
    sums_table,
    token_totals,
    turns_without_distribution,
)
from .rejudged import RejudgeSummary, build_rejudge
from .review import ReviewSummary, build_review
from .review_store import Rating

SUMMARY_SCHEMA = "virtualcrime.report/1"


class _S(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AttackerRow(_S):
    attacker: str
    judge: str
    runs: int
    tasks: int
    metrics: dict[Metric, Estimate]
    statuses: dict[str, int]
    mean_turns: float | None
    turns_without_distribution: int


class PairDifference(_S):
    metric: Metric
    attacker_a: str
    attacker_b: str
    difference: Estimate = Field(description="rate(a) − rate(b), paired over the same resampled tasks")
    significant: bool


class JudgeRow(_S):
    attacker: str
    judge: str
    runs: int
    metrics: dict[Metric, Estimate]


class MedianRow(_S):
    attacker: str
    judges: int
    metrics: dict[Metric, Estimate]


class RankCorrelation(_S):
    metric: Metric
    judge_a: str
    judge_b: str
    attackers: int
    spearman: float | None


class Correlation(_S):
    x: Metric
    y: Metric
    judge: str
    attackers: int
    spearman: float | None
    pearson: float | None


class SelfPreference(_S):
    metric: Metric
    judge: str
    vendor: str
    own_model: float | None
    own_vendor: float | None
    others: float | None
    n_own_model: int
    n_own_vendor: int
    n_others: int
    own_minus_others: float | None
    vendor_minus_others: float | None


class TaskCell(_S):
    """One attacker on one task (primary judge's runs): wins and over-harm with the highest levels reached."""

    attacker: str
    task: str
    objective: str
    runs: int
    wins: int
    over_harm_runs: int
    max_force: int
    max_property: int
    allowance_force: int
    allowance_property: int
    win_rate: float = 0.0
    over_harm_rate: float = 0.0


class Operations(_S):
    """How a configuration ran: model calls, repairs and failures, tokens per role."""

    attacker: str
    judge: str
    world_manager: str
    runs: int
    calls: dict[str, dict[str, int]]
    tokens: dict[str, dict[str, int]]


class BootstrapSettings(_S):
    resamples: int
    seed: int
    level: float
    unit: str = "task"


class Summary(_S):
    schema_id: str = Field(SUMMARY_SCHEMA, alias="schema")
    generated: str
    virtualcrime_version: str
    lexicon_version: str
    bootstrap: BootstrapSettings
    logs: list[LogSummary]
    problems: list[LogProblem]
    duplicates_dropped: int
    primary_judge: str
    attackers: list[str]
    judges: list[str]
    tasks: list[str]
    table1: list[AttackerRow]
    pairwise: list[PairDifference]
    per_judge: list[JudgeRow]
    judge_median: list[MedianRow]
    judge_rank_correlations: list[RankCorrelation]
    overharm_vs_nonfailure: Correlation | None
    self_preference: list[SelfPreference]
    per_task: list[TaskCell]
    operations: list[Operations]
    rejudged: RejudgeSummary | None = Field(None, description="Judges compared on the same re-judged turns.")
    annotation: AnnotationSummary | None = Field(None, description="Behaviour annotation: agreement and levels.")
    interrogation: InterrogationSummary | None = Field(None, description="Post-hoc interrogation per framing.")
    review: ReviewSummary | None = Field(None, description="Human ratings of the Judge and the World Manager.")
    human_play: HumanPlaySummary | None = Field(None, description="Human play: solvability per task.")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def dedupe(runs: Sequence[RunFacts]) -> tuple[list[RunFacts], int]:
    """One run per ``RunFacts.run_key`` (attacker, judge, world manager, task, seed; for a person's games also the
    eval): the last one read wins (logs are read oldest first), so a re-run replaces the earlier attempt. Returns
    the runs kept and how many were dropped."""
    kept: dict[tuple[str | int, ...], RunFacts] = {}
    for run in runs:
        kept[run.run_key] = run
    return list(kept.values()), len(runs) - len(kept)


def choose_primary_judge(runs: Sequence[RunFacts], requested: str | None = None) -> str:
    """The judge of Table 1: the one requested, else the judge with the most runs (ties: alphabetical)."""
    counts: dict[str, int] = defaultdict(int)
    for run in runs:
        counts[run.judge] += 1
    if requested is not None:
        if requested not in counts:
            raise ValueError(f"no runs judged by {requested!r}; judges in these logs: {', '.join(sorted(counts))}")
        return requested
    return min(counts, key=lambda j: (-counts[j], j))


def build_summary(
    runs: Sequence[RunFacts],
    logs: Sequence[LogSummary] = (),
    problems: Sequence[LogProblem] = (),
    primary_judge: str | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    ratings: Sequence[Rating] = (),
    review_stores: Sequence[str] = (),
) -> Summary:
    """Compute every figure of the report. ``runs`` must be non-empty. ``ratings`` are the human review ratings
    read from the files ``review_stores``."""
    if not runs:
        raise ValueError("no finished runs to report on")
    loaded_runs = {(r.eval_id, r.sample_id, r.epoch) for r in runs}
    runs, dropped = dedupe(runs)
    judge = choose_primary_judge(runs, primary_judge)
    tasks = sorted({r.task_id for r in runs})
    attackers = sorted({r.attacker for r in runs})
    judges = sorted({r.judge for r in runs})
    boot = Bootstrap.for_tasks(len(tasks), resamples, seed)
    primary = [r for r in runs if r.judge == judge]
    table_attackers = sorted({r.attacker for r in primary})

    table1, pairwise = _table1(primary, judge, tasks, table_attackers, boot)
    per_judge, medians, points = _judges(runs, tasks, attackers, judges, boot)
    correlations = [
        RankCorrelation(metric=m, judge_a=a, judge_b=b, attackers=n, spearman=rho)
        for m in Metric
        for a, b, n, rho in rank_correlations(points[m])
    ]
    preference = [
        SelfPreference(metric=m, **row)
        for m in Metric
        if m.judge_dependent
        for row in self_preference(points[m], attackers)
    ]
    return Summary(
        generated=datetime.now(UTC).isoformat(timespec="seconds"),
        virtualcrime_version=_version(),
        lexicon_version=LEXICON_VERSION,
        bootstrap=BootstrapSettings(resamples=boot.n_resamples, seed=seed, level=LEVEL),
        logs=list(logs),
        problems=list(problems),
        duplicates_dropped=dropped,
        primary_judge=judge,
        attackers=attackers,
        judges=judges,
        tasks=tasks,
        table1=table1,
        pairwise=pairwise,
        per_judge=per_judge,
        judge_median=medians,
        judge_rank_correlations=correlations,
        overharm_vs_nonfailure=_overharm_vs_nonfailure(table1, judge),
        self_preference=preference,
        per_task=_per_task(primary),
        operations=_operations(runs),
        rejudged=build_rejudge(runs, tasks, boot),
        annotation=build_annotation(runs, tasks, boot),
        interrogation=build_interrogation(runs, tasks, boot),
        review=build_review(ratings, loaded_runs, review_stores),
        human_play=build_human_play(runs, {log.log: log.created for log in logs}),
    )


def _table1(
    runs: Sequence[RunFacts], judge: str, tasks: Sequence[str], attackers: Sequence[str], boot: Bootstrap
) -> tuple[list[AttackerRow], list[PairDifference]]:
    by_attacker: dict[str, list[RunFacts]] = defaultdict(list)
    for run in runs:
        by_attacker[run.attacker].append(run)
    estimates: dict[Metric, list[Estimate]] = {}
    pairwise: list[PairDifference] = []
    for metric in Metric:
        num, den = sums_table(runs, metric, tasks, attackers, lambda r: r.attacker)
        intervals = boot.ratio_intervals(num, den)
        estimates[metric] = [
            Estimate.of(iv, float(n), float(d)) for iv, n, d in zip(intervals, num.sum(0), den.sum(0), strict=True)
        ]
        for (i, j), iv in boot.paired_differences(num, den).items():
            pairwise.append(
                PairDifference(
                    metric=metric,
                    attacker_a=attackers[i],
                    attacker_b=attackers[j],
                    difference=Estimate.of(iv),
                    significant=iv.excludes_zero,
                )
            )
    rows = [
        AttackerRow(
            attacker=a,
            judge=judge,
            runs=len(by_attacker[a]),
            tasks=len({r.task_id for r in by_attacker[a]}),
            metrics={m: estimates[m][i] for m in Metric},
            statuses=status_counts(by_attacker[a]),
            mean_turns=mean_turns(by_attacker[a]),
            turns_without_distribution=turns_without_distribution(by_attacker[a]),
        )
        for i, a in enumerate(attackers)
    ]
    return rows, pairwise


def _judges(
    runs: Sequence[RunFacts], tasks: Sequence[str], attackers: Sequence[str], judges: Sequence[str], boot: Bootstrap
) -> tuple[list[JudgeRow], list[MedianRow], dict[Metric, dict[str, dict[str, float | None]]]]:
    """Per (attacker, judge) rates, the per-attacker median over judges (bootstrapped as a median of the same
    resamples), and the point rates by judge and attacker for rank correlations."""
    pairs = [(a, j) for a in attackers for j in judges]
    keys = [f"{a}\x00{j}" for a, j in pairs]
    run_counts: dict[str, int] = defaultdict(int)
    for run in runs:
        run_counts[f"{run.attacker}\x00{run.judge}"] += 1
    per: dict[Metric, list[Estimate]] = {}
    median: dict[Metric, list[Estimate]] = {}
    points: dict[Metric, dict[str, dict[str, float | None]]] = {}
    for metric in Metric:
        num, den = sums_table(runs, metric, tasks, keys, lambda r: f"{r.attacker}\x00{r.judge}")
        point, samples = boot.resample(num, den)
        per[metric] = [
            Estimate.of(iv, float(n), float(d))
            for iv, n, d in zip(boot.intervals(point, samples), num.sum(0), den.sum(0), strict=True)
        ]
        shape = (len(attackers), len(judges))
        med_point = nanmedian(point.reshape(shape), axis=1)
        med_samples = nanmedian(samples.reshape((samples.shape[0], *shape)), axis=2)
        median[metric] = [Estimate.of(iv) for iv in boot.intervals(med_point, med_samples)]
        points[metric] = {j: {} for j in judges}
        for (a, j), p in zip(pairs, point, strict=True):
            points[metric][j][a] = None if np.isnan(p) else float(p)
    judge_rows = [
        JudgeRow(attacker=a, judge=j, runs=run_counts[k], metrics={m: per[m][i] for m in Metric})
        for i, ((a, j), k) in enumerate(zip(pairs, keys, strict=True))
        if run_counts[k]
    ]
    median_rows = [
        MedianRow(
            attacker=a,
            judges=sum(run_counts[f"{a}\x00{j}"] > 0 for j in judges),
            metrics={m: median[m][i] for m in Metric},
        )
        for i, a in enumerate(attackers)
    ]
    return judge_rows, median_rows, points


def _overharm_vs_nonfailure(table1: Sequence[AttackerRow], judge: str) -> Correlation | None:
    pairs = [
        (r.metrics[Metric.OVER_HARM].value, r.metrics[Metric.NON_FAILURE].value)
        for r in table1
        if r.metrics[Metric.OVER_HARM].value is not None and r.metrics[Metric.NON_FAILURE].value is not None
    ]
    if not pairs:
        return None
    x = np.array([p[0] for p in pairs], dtype=float)
    y = np.array([p[1] for p in pairs], dtype=float)
    return Correlation(
        x=Metric.OVER_HARM,
        y=Metric.NON_FAILURE,
        judge=judge,
        attackers=len(pairs),
        spearman=spearman(x, y),
        pearson=pearson(x, y),
    )


def _per_task(runs: Sequence[RunFacts]) -> list[TaskCell]:
    cells: dict[tuple[str, str], TaskCell] = {}
    for run in sorted(runs, key=lambda r: (r.attacker, r.task_id)):
        key = (run.attacker, run.task_id)
        cell = cells.get(key)
        if cell is None:
            cell = cells[key] = TaskCell(
                attacker=run.attacker,
                task=run.task_id,
                objective=run.objective,
                runs=0,
                wins=0,
                over_harm_runs=0,
                max_force=0,
                max_property=0,
                allowance_force=run.harm.allowance_force,
                allowance_property=run.harm.allowance_property,
            )
        cell.runs += 1
        cell.wins += run.won
        cell.over_harm_runs += run.harm.over_harm
        cell.max_force = max(cell.max_force, run.harm.force)
        cell.max_property = max(cell.max_property, run.harm.property)
        cell.win_rate, cell.over_harm_rate = cell.wins / cell.runs, cell.over_harm_runs / cell.runs
    return list(cells.values())


def _operations(runs: Sequence[RunFacts]) -> list[Operations]:
    groups: dict[tuple[str, str, str], list[RunFacts]] = defaultdict(list)
    for run in runs:
        groups[(run.attacker, run.judge, run.world_manager)].append(run)
    return [
        Operations(attacker=a, judge=j, world_manager=w, runs=len(g), calls=call_totals(g), tokens=token_totals(g))
        for (a, j, w), g in sorted(groups.items())
    ]


def _version() -> str:
    try:
        return version("virtualcrime")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
        return "unknown"
