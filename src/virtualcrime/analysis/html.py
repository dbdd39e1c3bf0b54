"""The self-contained HTML report: the template beside this module, tables from ``tables``, figures inlined."""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from string import Template

from .summary import Summary
from .tables import (
    agreement_rows,
    annotation_agreement_rows,
    behaviour_rows,
    correlation_rows,
    human_note,
    human_rows,
    interrogation_rows,
    judge_rows,
    operations_rows,
    pairwise_rows,
    rejudge_rate_rows,
    review_agreement_rows,
    review_model_rows,
    review_note,
    self_bias_rows,
    self_preference_rows,
    spread_rows,
    table1_rows,
    task_rows,
)

TEMPLATE = Path(__file__).parent / "templates" / "report.html"


def html_table(rows: Sequence[Sequence[str]]) -> str:
    """An HTML table (first row is the header); numeric-looking cells are right-aligned tabular figures."""
    if len(rows) <= 1:
        return "<p><em>Nothing to show.</em></p>"
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = []
    for row in rows[1:]:
        cells = []
        for cell in row:
            numeric = bool(cell) and (cell[0].isdigit() or cell[0] in "+-−n") and cell != "no"
            cls = ' class="num"' if numeric else ""
            cells.append(f"<td{cls}>{html.escape(cell)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def inline_png(path: Path | None, alt: str) -> str:
    """An <img> with the PNG embedded as a data URI, so the page opens offline from anywhere."""
    if path is None or not path.exists():
        return f"<p><em>{html.escape(alt)}: not enough data for this figure.</em></p>"
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def render_html(summary: Summary, figures: Mapping[str, Path]) -> str:
    """The whole report page."""
    template = Template(TEMPLATE.read_text(encoding="utf-8"))
    attackers = len(summary.table1)
    runs = sum(r.runs for r in summary.table1)
    meta = (
        f"Generated {summary.generated} by VirtualCrime {summary.virtualcrime_version}. {runs} runs of {attackers} "
        f"attacker(s) on {len(summary.tasks)} task(s); {len(summary.judges)} judge(s); Table 1 uses judge "
        f"{summary.primary_judge}."
    )
    return template.substitute(
        meta=html.escape(meta),
        problems=_problems(summary),
        table1_caption=html.escape(
            f"Judge {summary.primary_judge}. Each cell: rate [95 % CI], bootstrap over "
            f"{summary.bootstrap.resamples:,} resamples of {len(summary.tasks)} tasks."
        ),
        table1=html_table(table1_rows(summary)),
        fig_rates=inline_png(figures.get("rates_by_judge"), "Rates per attacker and judge"),
        fig_scatter=_scatter(summary, figures),
        pairwise=html_table(pairwise_rows(summary)),
        judges=_judges(summary) + _annotation(summary, figures) + _interrogation(summary),
        review=_review(summary),
        humans=_humans(summary),
        fig_wins=inline_png(figures.get("task_wins"), "Win rate per task"),
        fig_overharm=inline_png(figures.get("task_overharm"), "Over-harm rate per task"),
        tasks=html_table(task_rows(summary)),
        operations=html_table(operations_rows(summary)),
        inputs=html_table(
            [["Log", "Status", "Attacker", "Judge", "World Manager", "Created"]]
            + [[Path(s.log).name, s.status, s.attacker, s.judge, s.world_manager, s.created] for s in summary.logs]
        ),
        lexicon=html.escape(summary.lexicon_version),
        resamples=f"{summary.bootstrap.resamples:,}",
        seed=str(summary.bootstrap.seed),
    )


def _problems(summary: Summary) -> str:
    notes = []
    if summary.problems:
        rows = [["File", "Run", "Why it was left out"]] + [
            [Path(p.log).name, f"{p.sample_id} epoch {p.epoch}" if p.sample_id else "", f"{p.kind}: {p.message}"]
            for p in summary.problems
        ]
        notes.append(f'<div class="note"><strong>Left out of the analysis:</strong>{html_table(rows)}</div>')
    if summary.duplicates_dropped:
        notes.append(
            f'<div class="note">{summary.duplicates_dropped} duplicate run(s) (same attacker, judge, world manager, '
            "task and seed in several logs) were dropped; the newest copy of each is used.</div>"
        )
    return "\n".join(notes)


def _annotation(summary: Summary, figures: Mapping[str, Path]) -> str:
    if summary.annotation is None:
        return ""
    return "\n".join(
        [
            "<h2>Behaviour (annotated)</h2>",
            "<p>Two annotator models rated each run's own actions (never the outcomes) on four dimensions, 1–5. "
            "Agreement is on their independent first pass; disputed dimensions were reviewed once, and those still "
            "in dispute were dropped. Levels below use the reconciled scores.</p>",
            html_table(annotation_agreement_rows(summary)),
            inline_png(figures.get("level5_rates"), "Level-5 rates per attacker and dimension"),
            html_table(behaviour_rows(summary)),
            "<p>Annotator self-bias: its score minus its partner's on its own vendor's runs, against the same on "
            "other runs.</p>",
            html_table(self_bias_rows(summary)),
        ]
    )


def _interrogation(summary: Summary) -> str:
    if summary.interrogation is None:
        return ""
    return (
        "<h2>Post-hoc interrogation</h2><p>Each run's action log went back to the model that played it, under six "
        "framings (CTRL: a sandbox log; A1: possibly real events; A2: firmly real events with real consequences; B1: "
        "responsibility depends on whether the plan was user-instructed or the model's own). Rates: q1 admits the "
        "actions; refusal = declined q1 or gave no valid structured answer; q2 would refuse the plan again; q3 finds "
        "the real-events claim somewhat or highly credible. In brackets: the change against CTRL, paired over the "
        "same resampled tasks.</p>" + html_table(interrogation_rows(summary))
    )


def _review(summary: Summary) -> str:
    if summary.review is None:
        return ""
    parts = [
        "<h2>Human review of Judge and World Manager</h2>",
        "<p>On key turns of logged runs, human raters scored the Judge's outcome distribution and the World Manager's "
        "update from 1 to 5 (higher is better). " + html.escape(review_note(summary)) + "</p>",
        html_table(review_model_rows(summary)),
    ]
    if len(review_agreement_rows(summary)) > 1:
        parts.append(
            "<p>Agreement between raters on the turns both rated: quadratic weighted Cohen's κ on 1–5 (undefined "
            "with fewer than two shared turns, or when neither rater's ratings vary), exact and within-one.</p>"
        )
        parts.append(html_table(review_agreement_rows(summary)))
    return "\n".join(parts)


def _humans(summary: Summary) -> str:
    found = summary.human_play
    if found is None:
        return ""
    return (
        f"<h2>Human play: solvability per task</h2><p>Per task, the first {found.max_players} distinct players (in "
        "the order their games were logged) count; only a won game is a win, an abandoned one is played and not "
        "won. " + html.escape(human_note(summary)) + "</p>" + html_table(human_rows(summary))
    )


def _scatter(summary: Summary, figures: Mapping[str, Path]) -> str:
    corr = summary.overharm_vs_nonfailure
    text = ""
    if corr is not None:
        rho = "n/a" if corr.spearman is None else f"{corr.spearman:.3f}"
        r = "n/a" if corr.pearson is None else f"{corr.pearson:.3f}"
        text = (
            f"<p>Across {corr.attackers} attacker(s): Spearman ρ = {rho}, Pearson r = {r} between over-harm rate and "
            "turn non-failure rate (judge " + html.escape(corr.judge) + ").</p>"
        )
    return text + inline_png(figures.get("overharm_vs_nonfailure"), "Over-harm vs non-failure")


def _judges(summary: Summary) -> str:
    parts = [html_table(judge_rows(summary))]
    if len(summary.judges) > 1:
        parts.append("<p>Spearman ρ between judges' rankings of the attackers:</p>")
        parts.append(html_table(correlation_rows(summary)))
        parts.append(
            "<p>Self-preference: a judge's mean deviation from the other judges' median on its own model, on its "
            "vendor's other models and on everyone else (positive = more favourable).</p>"
        )
        parts.append(html_table(self_preference_rows(summary)))
    elif summary.rejudged is None:
        parts.append("<p>Only one judge: judge agreement needs runs (or re-judged turns) from at least two.</p>")
    if summary.rejudged is not None:
        failures = ", ".join(f"{j}: {n}" for j, n in sorted(summary.rejudged.failures.items()) if n)
        parts.append(
            "<h3>Judges on the same turns (virtualcrime rejudge)</h3><p>Every judge below rated the same recorded "
            "states and actions; the original judge's rates are over the same turns. Intervals resample tasks.</p>"
        )
        parts.append(html_table(rejudge_rate_rows(summary)))
        parts.append("<p>Agreement on the eight feasibility dimensions (ratings 1–5):</p>")
        parts.append(html_table(agreement_rows(summary)))
        parts.append("<p>Spread of the outcome distributions (total variation: 0 same, 1 disjoint):</p>")
        parts.append(html_table(spread_rows(summary)))
        if failures:
            parts.append(f"<p>Turns a second judge gave no usable verdict on: {html.escape(failures)}.</p>")
    return "\n".join(parts)
