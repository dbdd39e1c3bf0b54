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

from ..runs.logged import LogProblem, LogSummary
from .annotation import AnnotationSummary, build_annotation
from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, LEVEL, Bootstrap, pearson, spearman
from .coverage import LeftOut, left_out, log_folder
from .facts import RunFacts
from .harm import LEXICON_VERSION
from .harm.audit import HarmLabels
from .harm_audit import HarmCorrection, build_harm_correction
from .humans import HumanPlaySummary, build_human_play
from .interrogation import InterrogationSummary, build_interrogation
from .judges import (
    JudgeAgreement,
    RankCorrelation,
    SelfPreference,
    correlation_caveat,
    correlations,
    judge_agreement,
    self_preference,
)
from .metrics import Metric, call_totals, token_totals
from .overharm_figures import OverharmPairs, build_overharm_pairs
from .rejudged import RejudgeSummary, build_rejudge
from .review import ReviewSummary, build_review
from .review_store import Rating
from .table1 import (
    MIN_SHARED_TASKS,
    AttackerRow,
    JudgeRow,
    MedianRow,
    PairDifference,
    judge_tables,
    pairwise,
    table1_rows,
)

SUMMARY_SCHEMA = "virtualcrime.report/1"


class _S(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Correlation(_S):
    x: Metric
    y: Metric
    judge: str
    attackers: int
    attacker_names: list[str] = Field(default_factory=list, description="The attackers the correlation is over.")
    spearman: float | None
    pearson: float | None
    caveat: str = ""


class JudgeCoverage(_S):
    """What one judge judged: full runs (as the run's Judge) and turns it re-judged on fixed trajectories."""

    judge: str
    runs: int
    rejudged_turns: int
    attackers: list[str] = Field(description="Attackers with at least one turn this judge judged.")


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
    judges: list[str] = Field(description="Every judge: of full runs, and second judges that only re-judged.")
    judge_coverage: list[JudgeCoverage]
    tasks: list[str]
    table1: list[AttackerRow]
    min_shared_tasks: int = Field(description="Pairwise differences on fewer shared tasks are never significant.")
    pairwise: list[PairDifference]
    per_judge: list[JudgeRow]
    judge_median: list[MedianRow]
    judge_agreement: JudgeAgreement | None = Field(None, description="Judges on the turns all of them judged.")
    judge_rank_correlations: list[RankCorrelation]
    overharm_vs_nonfailure: Correlation | None
    self_preference: list[SelfPreference]
    left_out: list[LeftOut] = Field(description="Every attacker or judge missing from a table: why, and the fix.")
    per_task: list[TaskCell]
    overharm_pairs: OverharmPairs | None = Field(
        None, description="Figures 13-14: attacker-task pairs by over-harming runs and by the maximum level reached."
    )
    operations: list[Operations]
    rejudged: RejudgeSummary | None = Field(None, description="Judges compared on the same re-judged turns.")
    annotation: AnnotationSummary | None = Field(None, description="Behaviour annotation: agreement and levels.")
    interrogation: InterrogationSummary | None = Field(None, description="Post-hoc interrogation per framing.")
    review: ReviewSummary | None = Field(None, description="Human ratings of the Judge and the World Manager.")
    human_play: HumanPlaySummary | None = Field(None, description="Human play: solvability per task.")
    harm_correction: HarmCorrection | None = Field(
        None, description="Effect of correcting classifier disagreements with reviewed audit labels."
    )

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
    harm_labels: HarmLabels | None = None,
) -> Summary:
    """Compute every figure of the report. ``runs`` must be non-empty. ``ratings`` are the human review ratings
    read from the files ``review_stores``; ``harm_labels`` are reviewed audit verdicts (``harm audit``)."""
    if not runs:
        raise ValueError("no finished runs to report on")
    loaded_runs = {(r.eval_id, r.sample_id, r.epoch) for r in runs}
    runs, dropped = dedupe(runs)
    judge = choose_primary_judge(runs, primary_judge)
    tasks = sorted({r.task_id for r in runs})
    attackers = sorted({r.attacker for r in runs})
    coverage = _coverage(runs)
    judges = [c.judge for c in coverage]
    boot = Bootstrap.for_tasks(len(tasks), resamples, seed)
    primary = [r for r in runs if r.judge == judge]
    table_attackers = sorted({r.attacker for r in primary})

    tables = judge_tables(runs, tasks, attackers, judges, boot)
    table1 = table1_rows(runs, judge, tasks, attackers, judges, tables, boot)
    agreement = judge_agreement(runs, attackers)
    scatter = _overharm_vs_nonfailure(table1, judge)
    rejudged = build_rejudge(runs, tasks, boot)
    rejudge_judges = sorted({j for r in runs for j in r.rejudged if j != r.judge})
    failures: dict[str, int] = defaultdict(int)
    for run in runs:
        for name, n in run.rejudge_failures.items():
            failures[name] += n
    notes = left_out(
        runs, judge, attackers, judges, table1, tables.per_judge, agreement,
        scatter.attacker_names if scatter is not None else [], rejudge_judges, dict(failures),
        log_folder([log.log for log in logs]),
    )  # fmt: skip
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
        judge_coverage=coverage,
        tasks=tasks,
        table1=table1,
        min_shared_tasks=MIN_SHARED_TASKS,
        pairwise=pairwise(runs, judge, tasks, attackers, judges, table_attackers, tables, boot, seed),
        per_judge=tables.per_judge,
        judge_median=tables.medians,
        judge_agreement=agreement,
        judge_rank_correlations=[
            *(agreement.correlations if agreement is not None else []),
            *correlations(tables.points, "all_judged_turns"),
        ],
        overharm_vs_nonfailure=scatter,
        self_preference=self_preference(tables.points, attackers),
        left_out=notes,
        per_task=_per_task(primary),
        overharm_pairs=build_overharm_pairs(primary, judge),
        operations=_operations(runs),
        rejudged=rejudged,
        annotation=build_annotation(runs, tasks, boot),
        interrogation=build_interrogation(runs, tasks, boot),
        review=build_review(ratings, loaded_runs, review_stores),
        human_play=build_human_play(runs, {log.log: log.created for log in logs}),
        harm_correction=build_harm_correction(primary, judge, tasks, table_attackers, boot, harm_labels, seed)
        if harm_labels is not None and harm_labels.verdicts
        else None,
    )


def _coverage(runs: Sequence[RunFacts]) -> list[JudgeCoverage]:
    """Every judge of the runs and every second judge with a re-judged verdict, in alphabetical order."""
    full: dict[str, int] = defaultdict(int)
    rejudged: dict[str, int] = defaultdict(int)
    attackers: dict[str, set[str]] = defaultdict(set)
    for run in runs:
        full[run.judge] += 1
        attackers[run.judge].add(run.attacker)
        for judge, facts in run.rejudged.items():
            if judge != run.judge and facts:
                rejudged[judge] += len(facts)
                attackers[judge].add(run.attacker)
    return [
        JudgeCoverage(judge=j, runs=full[j], rejudged_turns=rejudged[j], attackers=sorted(attackers[j]))
        for j in sorted(set(full) | set(rejudged))
    ]


def _overharm_vs_nonfailure(table1: Sequence[AttackerRow], judge: str) -> Correlation | None:
    pairs = [
        (r.attacker, r.metrics[Metric.OVER_HARM].value, r.metrics[Metric.NON_FAILURE].value)
        for r in table1
        if r.metrics[Metric.OVER_HARM].value is not None and r.metrics[Metric.NON_FAILURE].value is not None
    ]
    if not pairs:
        return None
    x = np.array([p[1] for p in pairs], dtype=float)
    y = np.array([p[2] for p in pairs], dtype=float)
    rho = spearman(x, y)
    return Correlation(
        x=Metric.OVER_HARM,
        y=Metric.NON_FAILURE,
        judge=judge,
        attackers=len(pairs),
        attacker_names=[p[0] for p in pairs],
        spearman=rho,
        pearson=pearson(x, y),
        caveat=correlation_caveat(
            len(pairs), rho, "with both rates", "the attacker with more over-harm also has the higher non-failure rate"
        ),
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
