"""Table 1 and the other tables as Markdown, CSV and terminal text, from a Summary."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from .annotator_bias import self_bias_table
from .coverage import PAIRWISE, TABLE1
from .interrogation import InterrogationRow
from .judge_rows import (
    agreement_note,
    fmt,
    judge_rows,
    left_out_lines,
    notes_for,
    pairwise_rows,
)
from .markdown import markdown
from .metrics import Metric
from .review import ROLE_LABELS, both_raters_rows
from .summary import Summary
from .table1 import MIN_SHARED_TASKS

BOTH_RATERS_NOTE = ("Over the turns at least two raters rated: the share on which all of them gave 4–5 and 3–5 "
                    "(the paper's \"both annotators\").")  # fmt: skip

TABLE1_METRICS = (Metric.NON_FAILURE, Metric.CATASTROPHIC, Metric.OVER_HARM, Metric.TEAM_USAGE, Metric.PASS_AT_1,
                  Metric.REFUSAL)  # fmt: skip


def median_judges(row_of: dict[Metric, list[str]]) -> str:
    """How many judges the non-failure median is over (and the catastrophic one, when it differs)."""
    nf, cat = row_of.get(Metric.NON_FAILURE, []), row_of.get(Metric.CATASTROPHIC, [])
    return str(len(nf)) if len(cat) == len(nf) else f"{len(nf)} (catastrophic: {len(cat)})"


def table1_rows(summary: Summary) -> list[list[str]]:
    header = ["Attacker", "Runs", "Tasks", "Judges", *(m.label for m in TABLE1_METRICS)]
    rows = [
        [
            r.attacker,
            str(r.runs),
            str(r.tasks),
            median_judges(r.median_of),
            *(fmt(r.metrics[m]) for m in TABLE1_METRICS),
        ]
        for r in summary.table1
    ]
    return [header, *rows]


def table1_caption(summary: Summary) -> str:
    """What Table 1's columns are, as the paper defines them."""
    return (
        f"Table 1. One row per attacker with runs judged by the primary judge {summary.primary_judge}. Non-failure "
        "and catastrophic: the median across judges (column 'Judges': how many), where each judge's rate pools the "
        "turns of the runs it judged and the turns it re-judged on fixed trajectories (virtualcrime rejudge); "
        f"over-harm, team usage, Pass@1 and refusal: the runs judged by {summary.primary_judge}. Non-failure: mean "
        "over turns of the Judge's non-failure probability; catastrophic: mean over risky turns; over-harm, Pass@1, "
        "refusal: share of runs; team usage: share of the turns acted by a team member that a non-leader acted. "
        f"95 % percentile bootstrap intervals over {summary.bootstrap.resamples:,} resamples of the "
        f"{len(summary.tasks)} tasks (seed {summary.bootstrap.seed}); every run and re-judged turn of a task moves "
        "together, and the median is taken again in each resample."
    )


def table1_notes(summary: Summary) -> list[str]:
    """What a reader of Table 1 must know: attackers on few tasks, the judges of each median, what is left out."""
    notes = []
    few = [f"{r.attacker} ({r.tasks})" for r in summary.table1 if r.tasks < MIN_SHARED_TASKS]
    if few:
        notes.append(
            f"Attackers on fewer than {MIN_SHARED_TASKS} tasks: {', '.join(few)}. Their intervals come from so few "
            "tasks that they are too narrow (one task: zero width); compare them only with care."
        )
    for r in summary.table1:
        names = r.median_of.get(Metric.NON_FAILURE, [])
        if len(summary.judges) > 1 and len(names) < len(summary.judges):
            notes.append(
                f"{r.attacker}: its non-failure median is over {len(names)} of the {len(summary.judges)} judges "
                f"({', '.join(names) or 'none'})."
            )
    notes += [f"Left out: {line}" for line in left_out_lines(notes_for(summary, TABLE1))]
    return notes


def table1_markdown(summary: Summary) -> str:
    """``table1.md``: Table 1 with its caption and notes, then the per-judge rates its medians are over."""
    parts = [table1_caption(summary), markdown(table1_rows(summary)).rstrip()]
    notes = table1_notes(summary)
    if notes:
        parts.append("\n".join(f"- {n}" for n in notes))
    if len(summary.judges) > 1:
        parts += [
            "Per judge: the rates the medians are over (runs it judged, turns it re-judged), then the median.",
            markdown(judge_rows(summary)).rstrip(),
            "Judges' agreement: " + agreement_note(summary),
        ]
    return "\n\n".join(parts) + "\n"


def table1_csv(summary: Summary) -> str:
    """Machine-readable Table 1: value, low and high per metric in separate columns."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(
        [
            "attacker",
            "judge",
            "runs",
            "tasks",
            "median_judges",
            *(f"{m.value}_{part}" for m in TABLE1_METRICS for part in ("value", "low", "high")),
        ]
    )
    for r in summary.table1:
        values: list[str] = []
        for m in TABLE1_METRICS:
            est = r.metrics[m]
            values += ["" if v is None else f"{v:.6f}" for v in (est.value, est.low, est.high)]
        judges = ";".join(r.median_of.get(Metric.NON_FAILURE, []))
        writer.writerow([r.attacker, r.judge, r.runs, r.tasks, judges, *values])
    return buffer.getvalue()


def rejudge_rate_rows(summary: Summary) -> list[list[str]]:
    """Per attacker and judge on the re-judged turns, then the median across judges."""
    found = summary.rejudged
    if found is None:
        return []
    header = ["Attacker", "Judge", "Turns", Metric.NON_FAILURE.label, Metric.CATASTROPHIC.label]
    rows = [[r.attacker, r.judge, str(r.turns), fmt(r.non_failure), fmt(r.catastrophic)] for r in found.rates]
    rows += [[r.attacker, "median", "", fmt(r.non_failure), fmt(r.catastrophic)] for r in found.median]
    return [header, *rows]


def agreement_rows(summary: Summary) -> list[list[str]]:
    """Per pair of judges and feasibility dimension, on the turns both rated."""
    found = summary.rejudged
    if found is None:
        return []
    header = ["Judge A", "Judge B", "Dimension", "Turns", "Mean |Δ|", "Exact", "Within 1", "Spearman ρ"]
    rows = [
        [a.judge_a, a.judge_b, a.dimension, str(a.turns), f"{a.mean_abs_diff:.2f}", f"{a.exact:.2f}",
         f"{a.within_one:.2f}", "n/a" if a.spearman is None else f"{a.spearman:.2f}"]
        for a in found.agreement
    ]  # fmt: skip
    return [header, *rows]


def spread_rows(summary: Summary) -> list[list[str]]:
    """Per pair of judges: how far apart their outcome distributions are on the same turns."""
    found = summary.rejudged
    if found is None:
        return []
    header = ["Judge A", "Judge B", "Turns", "Mean |Δ non-failure|", "Mean total variation"]
    rows = [
        [d.judge_a, d.judge_b, str(d.turns), f"{d.mean_abs_non_failure_diff:.3f}", f"{d.mean_total_variation:.3f}"]
        for d in found.spread
    ]
    return [header, *rows]


def annotation_agreement_rows(summary: Summary) -> list[list[str]]:
    """Per annotator pair and dimension: agreement of the independent first pass, and the share dropped."""
    found = summary.annotation
    if found is None:
        return []
    header = ["Annotators", "Dimension", "Runs", "Weighted κ", "Exact", "Within 1", "Dropped"]
    rows = [
        [r.annotators, r.dimension, str(r.runs), "n/a" if r.kappa is None else f"{r.kappa:.2f}", f"{r.exact:.2f}",
         f"{r.within_one:.2f}", f"{r.dropped:.2f}"]
        for r in found.agreement
    ]  # fmt: skip
    return [header, *rows]


def behaviour_rows(summary: Summary) -> list[list[str]]:
    """Per attacker and dimension: mean reconciled level and Level-5 rate with intervals."""
    found = summary.annotation
    if found is None:
        return []
    header = ["Attacker", "Dimension", "Runs", "Mean level", "Level-5 rate"]
    rows = [[r.attacker, r.dimension, str(r.runs), fmt(r.mean_level, 2), fmt(r.level5_rate)] for r in found.behaviour]
    return [header, *rows]


def self_bias_rows(summary: Summary) -> list[list[str]]:
    """Per annotator: its deviation from its partner on its own model's, its vendor's and other runs, with intervals."""
    found = summary.annotation
    return self_bias_table(found.self_bias) if found is not None else []


def interrogation_rows(summary: Summary) -> list[list[str]]:
    """Per attacker and framing: the four interrogation rates, each with its change against CTRL."""
    found = summary.interrogation
    if found is None:
        return []
    names = ("admission", "refusal", "would_refuse", "credible")
    header = ["Attacker", "Framing", "Runs", *(f"{n.replace('_', ' ')} (Δ vs CTRL)" for n in names)]

    def cell(row: InterrogationRow, name: str) -> str:
        change = row.change_vs_ctrl.get(name)
        if change is None or change.value is None or change.low is None or change.high is None:
            return fmt(row.rates[name])
        return f"{fmt(row.rates[name])} ({change.value:+.2f} [{change.low:+.2f}, {change.high:+.2f}])"

    rows = [[r.attacker, r.condition, str(r.runs), *(cell(r, n) for n in names)] for r in found.rows]
    return [header, *rows]


def task_rows(summary: Summary) -> list[list[str]]:
    header = ["Attacker", "Task", "Runs", "Wins", "Over-harm runs", "Max force / allowed", "Max property / allowed"]
    rows = [
        [c.attacker, c.task, str(c.runs), str(c.wins), str(c.over_harm_runs),
         f"{c.max_force} / {c.allowance_force}", f"{c.max_property} / {c.allowance_property}"]
        for c in summary.per_task
    ]  # fmt: skip
    return [header, *rows]


def operations_rows(summary: Summary) -> list[list[str]]:
    header = ["Attacker", "Judge", "World Manager", "Role", "Calls", "Repaired", "Retried", "Failed", "Turns lost",
              "Input tokens", "Output tokens"]  # fmt: skip
    rows = []
    for op in summary.operations:
        for role in sorted(set(op.calls) | set(op.tokens)):
            c = op.calls.get(role, {})
            t = op.tokens.get(role, {})
            rows.append(
                [op.attacker, op.judge, op.world_manager, role, str(c.get("calls", 0)), str(c.get("repaired", 0)),
                 str(c.get("retried", 0)), str(c.get("failed", 0)), str(c.get("role_failures", 0)),
                 str(t.get("input", 0)), str(t.get("output", 0))]
            )  # fmt: skip
    return [header, *rows]


def review_model_rows(summary: Summary) -> list[list[str]]:
    """Per Judge model (its ratings) and World Manager model (theirs): how human raters rated it, 1–5."""
    found = summary.review
    if found is None:
        return []
    header = ["Rated", "Model", "Ratings", "Turns", "Raters", "Mean (1–5)", "Rated 4–5", "Rated 3–5"]
    rows = [[ROLE_LABELS[r.role], r.model, str(r.ratings), str(r.turns), str(r.raters), f"{r.mean:.2f}",
             f"{r.share_4_5:.2f}", f"{r.share_3_5:.2f}"] for r in found.models]  # fmt: skip
    return [header, *rows]


def review_agreement_rows(summary: Summary) -> list[list[str]]:
    """Per rated role and pair of raters, on the turns both rated: weighted κ, exact and within-one agreement."""
    found = summary.review
    if found is None:
        return []
    header = ["Rated", "Rater A", "Rater B", "Shared turns", "Weighted κ", "Exact", "Within 1", "Both 4–5",
              "Both 3–5"]  # fmt: skip
    rows = [
        [ROLE_LABELS[a.role], a.rater_a, a.rater_b, str(a.turns),
         f"{a.kappa:.2f}" if a.kappa is not None else f"undefined ({a.kappa_undefined.split(':')[0]})",
         f"{a.exact:.2f}", f"{a.within_one:.2f}", f"{a.both_4_5:.2f}", f"{a.both_3_5:.2f}"]
        for a in found.agreement
    ]  # fmt: skip
    return [header, *rows]


def review_note(summary: Summary) -> str:
    """One paragraph: what the review section counts, and how many ratings are of runs the report did not read."""
    found = summary.review
    if found is None:
        return ""
    text = (
        f"{found.ratings} rating(s) by {len(found.raters)} rater(s) of {found.turns} turn(s), from "
        f"{len(found.stores)} review file(s); {found.outside_loaded_logs} of them rate runs not among the loaded "
        "logs (they count: each rating names its Judge and World Manager models)."
    )
    if found.duplicates_dropped:
        text += f" {found.duplicates_dropped} older copies of the same rater's rating of a turn were dropped."
    if not found.agreement:
        text += " No two raters rated the same turn, so there is no agreement to measure."
    return text


def reviews_markdown(summary: Summary) -> str:
    """``reviews.md``: the human review of the Judge and the World Manager."""
    parts = [
        "Human review of Judge and World Manager. Raters scored the Judge's outcome distribution and the World "
        "Manager's update of key turns from 1 to 5 (higher is better). " + review_note(summary),
        markdown(review_model_rows(summary)).rstrip(),
    ]
    if summary.review is not None and any(r.multi_rated_turns for r in summary.review.models):
        parts += [BOTH_RATERS_NOTE, markdown(both_raters_rows(summary.review)).rstrip()]
    if len(review_agreement_rows(summary)) > 1:
        parts += [
            "Agreement between raters on the turns both rated (quadratic weighted Cohen's κ on 1–5):",
            markdown(review_agreement_rows(summary)).rstrip(),
        ]
    return "\n\n".join(parts) + "\n"


def human_rows(summary: Summary) -> list[list[str]]:
    """Per task a person played: its first players, their games, whether and by whom it was won, fewest turns."""
    found = summary.human_play
    if found is None:
        return []
    header = ["Task", f"Players (first {found.max_players})", "Games", "Solved", "Won by", "Fewest turns to win",
              "Outcomes", "Not counted"]  # fmt: skip
    rows = [
        [t.task, ", ".join(t.players), str(t.games), "yes" if t.solved else "no", ", ".join(t.winners) or "—",
         "—" if t.fewest_turns_to_win is None else str(t.fewest_turns_to_win),
         ", ".join(f"{status} {n}" for status, n in t.statuses.items()), ", ".join(t.not_counted)]
        for t in found.tasks
    ]  # fmt: skip
    return [header, *rows]


def human_note(summary: Summary) -> str:
    """One paragraph: games counted, tasks solved by people, and benchmark tasks nobody has played yet."""
    found = summary.human_play
    if found is None:
        return ""
    played = found.games + found.games_not_counted
    games = f"{len(found.players)} player(s) played {played} game(s), " + (
        f"of which {found.games} count (those of each task's first {found.max_players} players)"
        if found.games_not_counted
        else "all counted"
    )
    unplayed = f": {', '.join(found.unplayed)}" if found.unplayed else ""
    return (
        f"{games}. {found.solved} of {len(found.tasks)} task(s) played were solved. {len(found.unplayed)} of the "
        f"{found.benchmark_tasks} task(s) in the loaded benchmark logs have not been played by any human{unplayed}."
    )


def humans_markdown(summary: Summary) -> str:
    """``humans.md``: human play, solvability per task."""
    found = summary.human_play
    limit = found.max_players if found is not None else 0
    intro = (
        f"Human play: solvability per task. Per task, the first {limit} distinct players (in the order their games "
        "began) count; only a won game is a win (an abandoned game is played, not won). "
    )
    return intro + human_note(summary) + "\n\n" + markdown(human_rows(summary))


def plain(rows: Sequence[Sequence[str]]) -> str:
    """Aligned columns for the terminal."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def terminal_summary(summary: Summary) -> str:
    """What ``virtualcrime report`` prints: Table 1, significant differences, and what was left out."""
    parts = [
        f"Table 1: {sum(r.runs for r in summary.table1)} runs of {len(summary.table1)} attacker(s) on "
        f"{len(summary.tasks)} task(s) judged by the primary judge {summary.primary_judge}; non-failure and "
        f"catastrophic: median across {len(summary.judges)} judge(s) ({', '.join(summary.judges)}), each pooling its "
        f"runs and re-judged turns; 95% task-bootstrap intervals ({summary.bootstrap.resamples:,} resamples)",
        plain(table1_rows(summary)),
    ]
    notes = table1_notes(summary)
    if notes:
        parts.append("\n".join(f"- {n}" for n in notes))
    significant = [p for p in summary.pairwise if p.significant]
    if summary.pairwise:
        untested = sum(p.status in ("few tasks", "no variation", "no shared tasks") for p in summary.pairwise)
        rows = pairwise_rows(summary)
        why = f"fewer than {summary.min_shared_tasks} shared tasks, none, or no variation"
        parts.append(
            f"Significant pairwise differences (over the tasks both attackers played): {len(significant)} of "
            f"{len(summary.pairwise)}"
            + (f"; {untested} not tested ({why})" if untested else "")
            + ("" if not significant else "\n" + plain([rows[0], *[r for r in rows[1:] if r[-1] == "yes"]]))
        )
    if len(summary.judges) > 1:
        parts.append("Judges' agreement: " + agreement_note(summary))
    elsewhere = [n for n in summary.left_out if TABLE1 not in n.sections and PAIRWISE not in n.sections]
    if elsewhere:
        parts.append(
            "Left out of other tables (report.html, summary.json → left_out):\n"
            + "\n".join(f"- {line}" for line in left_out_lines(elsewhere))
        )
    if summary.review is not None:
        review = ["Human review of Judge and World Manager: " + review_note(summary), plain(review_model_rows(summary))]
        if len(review_agreement_rows(summary)) > 1:
            review += ["", "Agreement between raters on the same turns:", plain(review_agreement_rows(summary))]
        parts.append("\n".join(review))
    if summary.human_play is not None:
        parts.append("Human play: solvability per task. " + human_note(summary) + "\n" + plain(human_rows(summary)))
    if summary.problems:
        kinds: dict[str, int] = {}
        for p in summary.problems:
            kinds[p.kind] = kinds.get(p.kind, 0) + 1
        parts.append("Left out: " + ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(kinds.items())))
    if summary.duplicates_dropped:
        parts.append(f"{summary.duplicates_dropped} duplicate run(s) dropped (the newest copy of each run is used)")
    return "\n\n".join(parts)
