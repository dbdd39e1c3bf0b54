"""Rows and notes of the judge sections, the pairwise differences and what the report leaves out, from a Summary:
shared by the Markdown tables, the HTML page and the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from .bootstrap import Estimate
from .coverage import LeftOut
from .judges import Deviation
from .metrics import Metric
from .summary import Summary

JUDGE_METRICS = (Metric.NON_FAILURE, Metric.CATASTROPHIC)
BASIS_LABELS = {"common_turns": "turns all judges judged", "all_judged_turns": "each judge's own judged turns"}
STATUS_LABELS = {
    "significant": "yes",
    "not significant": "no",
    "few tasks": "not tested: few tasks",
    "no variation": "not tested: no variation",
    "no shared tasks": "no shared tasks",
    "undefined": "undefined",
}


def fmt(est: Estimate, digits: int = 3) -> str:
    """``0.812 [0.771, 0.850]``; ``n/a`` when the rate is undefined."""
    return est.text(digits)


def num(value: float | None, digits: int = 3, sign: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def pairwise_rows(summary: Summary) -> list[list[str]]:
    header = ["Metric", "A", "B", "Shared tasks", "A on shared", "B on shared", "A − B [95% CI]", "Significant"]
    rows = [
        [p.metric.label, p.attacker_a, p.attacker_b, str(p.shared_tasks), num(p.rate_a), num(p.rate_b),
         fmt(p.difference), STATUS_LABELS[p.status]]
        for p in summary.pairwise
    ]  # fmt: skip
    return [header, *rows]


def pairwise_note(summary: Summary) -> str:
    """How the pairwise differences are computed and when one is called significant."""
    few = sum(p.status == "few tasks" for p in summary.pairwise)
    flat = sum(p.status == "no variation" for p in summary.pairwise)
    text = (
        "Each difference resamples only the tasks both attackers played under the primary judge (column 'Shared "
        "tasks'), so its point value is the difference on those tasks, not of the Table 1 rates; the non-failure "
        "and catastrophic columns are the median across judges recomputed on each resample. Significant: the 95 % "
        f"interval excludes 0, on at least {summary.min_shared_tasks} shared tasks, with a resampled difference "
        f"that varies. On fewer tasks the percentile bootstrap is too narrow (one task: every resample is the same) "
        "and the comparison is not tested ('few tasks'); a difference that is the same in every resample ('no "
        "variation') is not a confidence statement either."
    )
    if few or flat:
        text += f" Here: {few} comparison(s) on few tasks, {flat} without variation."
    return text


def judge_rows(summary: Summary) -> list[list[str]]:
    """Per attacker and judge: the rates that enter the median, then the median across judges."""
    header = ["Attacker", "Judge", "Runs", "Re-judged turns", f"{Metric.NON_FAILURE.label} (turns)",
              f"{Metric.CATASTROPHIC.label} (risky turns)"]  # fmt: skip

    def cell(est: Estimate) -> str:
        return f"{fmt(est)} ({0 if est.den is None else int(est.den)})"

    rows = [
        [r.attacker, r.judge, str(r.runs), str(r.rejudged_turns), cell(r.metrics[Metric.NON_FAILURE]),
         cell(r.metrics[Metric.CATASTROPHIC])]
        for r in summary.per_judge
    ]  # fmt: skip
    rows += [
        [r.attacker, f"median of {r.judges}: {', '.join(r.judge_names)}", "", "", fmt(r.metrics[Metric.NON_FAILURE]),
         fmt(r.metrics[Metric.CATASTROPHIC])]
        for r in summary.judge_median
        if r.judges > 1
    ]  # fmt: skip
    return [header, *rows]


def coverage_rows(summary: Summary) -> list[list[str]]:
    header = ["Judge", "Full runs judged", "Turns re-judged", "Attackers"]
    rows = [[c.judge, str(c.runs), str(c.rejudged_turns), ", ".join(c.attackers)] for c in summary.judge_coverage]
    return [header, *rows]


def correlation_rows(summary: Summary) -> list[list[str]]:
    header = ["Metric", "On", "Judge A", "Judge B", "Attackers", "Turns", "Spearman ρ", "Caveat"]
    rows = [
        [c.metric.label, BASIS_LABELS[c.basis], c.judge_a, c.judge_b, str(c.attackers),
         "" if c.turns is None else str(c.turns), num(c.spearman), c.caveat]
        for c in summary.judge_rank_correlations
    ]  # fmt: skip
    return [header, *rows]


def agreement_note(summary: Summary) -> str:
    """One paragraph on the common turns: how many, per attacker, and the range of ρ."""
    found = summary.judge_agreement
    if found is None:
        return (
            f"Only one judge ({summary.primary_judge}): there is no agreement between judges to measure. "
            "`virtualcrime rejudge LOGS --judge MODEL` adds a second judge's verdicts on the same turns."
        )
    every = "both" if len(found.judges) == 2 else f"all {len(found.judges)}"
    if not found.common_turns:
        return (
            f"No turn was judged by {every} judges ({', '.join(found.judges)}), so their agreement on the same "
            "turns (the paper's Spearman ρ) cannot be measured; the commands under 'Left out' re-judge the missing "
            "turns. The ρ on each judge's own judged turns compares rates over different turns."
        )
    per = ", ".join(f"{a}: {n}" for a, n in found.common_turns_by_attacker.items())
    text = f"{found.common_turns} turn(s) were judged by {every} judges ({per})."
    for metric in JUDGE_METRICS:
        found_rhos = [c for c in found.correlations if c.metric == metric and c.spearman is not None]
        rhos = [c.spearman for c in found_rhos if c.spearman is not None]
        if len(rhos) == 1:
            text += f" {metric.label}: Spearman ρ {rhos[0]:.2f} on those turns"
        elif rhos:
            text += f" {metric.label}: pairwise Spearman ρ {min(rhos):.2f} to {max(rhos):.2f} on those turns"
        else:
            text += f" {metric.label}: no Spearman ρ defined on those turns"
        caveats = sorted({c.caveat for c in found.correlations if c.metric == metric and c.caveat})
        text += f" ({'; '.join(caveats)})." if caveats else "."
    return text


def common_rate_rows(summary: Summary) -> list[list[str]]:
    found = summary.judge_agreement
    if found is None:
        return []
    header = ["Attacker", "Judge", "Common turns", Metric.NON_FAILURE.label, "Risky (by this judge)",
              Metric.CATASTROPHIC.label]  # fmt: skip
    rows = [[r.attacker, r.judge, str(r.turns), num(r.non_failure), str(r.risky_turns), num(r.catastrophic)]
            for r in found.rates]  # fmt: skip
    return [header, *rows]


def _range(low: float | None, high: float | None, found: Sequence[Deviation]) -> str:
    if low is None or high is None:
        return "n/a"
    return f"{low:+.3f} to {high:+.3f} (n = {len(found)})"


def self_preference_rows(summary: Summary) -> list[list[str]]:
    header = ["Metric", "Judge", "Vendor", "Own model", "Same vendor", "Other vendors", "Within other vendors' range"]
    rows = [
        [s.metric.label, s.judge, s.vendor or "—", num(s.own_model, sign=True),
         _range(s.same_vendor_low, s.same_vendor_high, s.same_vendor),
         _range(s.other_vendors_low, s.other_vendors_high, s.other_vendors),
         "n/a" if s.within_other_range is None else ("yes" if s.within_other_range else "no")]
        for s in summary.self_preference
        if s.own_model is not None or s.same_vendor or s.other_vendors  # a judge with something to compare
    ]  # fmt: skip
    return [header, *rows]


SELF_PREFERENCE_NOTE = (
    "Self-preference (the paper's Appendix I): a judge's deviation on an attacker is its rate minus the median of "
    "the other judges' rates for that attacker. Shown: the deviation on the judge's own model, the range over other "
    "models of its vendor, and the range over other vendors' models; a judge whose own and same-vendor deviations "
    "lie within the other vendors' range shows no self-preference beyond how it rates everyone. The vendor is read "
    "from the model name: model-family keywords first (gpt, claude, gemini, deepseek, qwen, doubao, llama, mistral, "
    "grok), then the provider prefix, looking past gateways such as openai-api/<vendor>/…. Positive = a higher "
    "rate (for catastrophic failure, higher is less favourable)."
)


def left_out_rows(notes: Sequence[LeftOut]) -> list[list[str]]:
    header = ["Attacker", "Judge", "Missing from", "Why", "To include it"]
    rows = [[n.attacker or "—", n.judge or "—", "; ".join(n.sections), n.reason, n.command or "—"] for n in notes]
    return [header, *rows]


def left_out_lines(notes: Sequence[LeftOut]) -> list[str]:
    """One line per note, for Markdown lists and the terminal."""
    lines = []
    for n in notes:
        who = f"{n.attacker} (judge {n.judge})" if n.attacker and n.judge else n.attacker or f"judge {n.judge}"
        line = f"{who} — missing from {', '.join(n.sections)}: {n.reason.rstrip('.')}."
        if n.command:
            line += f" To include it: `{n.command}`"
        lines.append(line)
    return lines


def notes_for(summary: Summary, section: str) -> list[LeftOut]:
    return [n for n in summary.left_out if section in n.sections]
