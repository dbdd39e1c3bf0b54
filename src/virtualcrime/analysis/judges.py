"""Several Judges: agreement on the same turns, rank agreement and self-preference (the paper's Appendix I).

Judges differ in how feasible they find the same kinds of actions; the paper therefore reports each attacker's
rates under every judge, their median (Table 1, ``table1.py``), and how similar the judges' rankings of attackers
are: Spearman's ρ on the turns *all* judges judged (same run, same turn: the run's own Judge plus every second
Judge's re-judged verdict), and on each judge's own judged turns. A judge that is also one of the attackers (or of
the same vendor) may favour its own: the deviation of its rate for that attacker from the other judges' median,
against the range of its deviations on other vendors' attackers, measures that.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from .bootstrap import nanmedian, spearman
from .facts import RunFacts, TurnFacts
from .metrics import Metric, verdict_sums

__all__ = ["judge_agreement", "nanmedian", "rank_correlations", "self_preference", "vendor"]

# Model-family keywords → vendor, checked before the provider prefix (``openai-api/deepseek/...`` → deepseek).
FAMILIES: tuple[tuple[str, str], ...] = (
    (r"\bgpt|(^|/)o[134](-|$)|openai", "openai"),
    (r"claude|anthropic", "anthropic"),
    (r"gemini|gemma|google", "google"),
    (r"deepseek", "deepseek"),
    (r"qwen|qwq|alibaba|dashscope", "alibaba"),
    (r"doubao|bytedance|volcengine", "bytedance"),
    (r"llama|meta-", "meta"),
    (r"mistral|mixtral", "mistral"),
    (r"grok|xai", "xai"),
)
GATEWAYS = ("openai-api", "openrouter", "together", "hf", "vllm", "ollama", "groq", "fireworks", "azureai", "bedrock")
JUDGE_METRICS = (Metric.NON_FAILURE, Metric.CATASTROPHIC)
Basis = Literal["common_turns", "all_judged_turns"]


class _J(BaseModel):
    model_config = ConfigDict(extra="forbid")


def vendor(model: str) -> str:
    """The company behind a model name, for self-preference: family keywords first, then the provider."""
    parts = model.lower().split("/")
    # A gateway's own name says nothing about whose model it serves: look only past it.
    behind_gateway = parts[0] in GATEWAYS and len(parts) > 1
    name = "/".join(parts[1:] if behind_gateway else parts)
    for pattern, family in FAMILIES:
        if re.search(pattern, name):
            return family
    if behind_gateway:
        return parts[1] if len(parts) > 2 else parts[0]
    return parts[0]


# --- rank correlations ---------------------------------------------------------------------------------------------


class RankCorrelation(_J):
    metric: Metric
    basis: Basis = Field(
        description="common_turns: rates on the turns every judge judged; all_judged_turns: each judge's rates over "
        "every turn it judged (its full runs and its re-judged turns), so the judges' turns differ."
    )
    judge_a: str
    judge_b: str
    attackers: int = Field(description="Attackers both judges rated (on this basis).")
    turns: int | None = Field(None, description="Common turns the rates are computed on (common_turns only).")
    spearman: float | None
    caveat: str = ""


def correlation_caveat(
    attackers: int, rho: float | None, of: str = "rated by both judges", two: str = "both judges put the same one first"
) -> str:
    """What a reader must know about a ρ over this few attackers ("" when nothing): ``of`` says which attackers
    count, ``two`` what a ρ of two attackers still tells."""
    if attackers < 2:
        return f"fewer than two attackers {of}: no ranking to compare"
    if attackers == 2:
        return f"only two attackers: ρ is always +1 or −1; it says only whether {two}"
    if rho is None:
        return "one of the two rates is the same for every attacker: ρ is undefined"
    if attackers < 5:
        return f"only {attackers} attackers: ρ takes few values and is not a precise measure of agreement"
    return ""


def rank_correlations(
    points: Mapping[str, Mapping[str, float | None]],
) -> list[tuple[str, str, int, float | None]]:
    """Spearman ρ between every pair of judges' attacker rates, over attackers both rated.

    ``points[judge][attacker]`` is a rate (None when undefined). Returns (judge_a, judge_b, n, ρ).
    """
    judges = sorted(points)
    out = []
    for i, a in enumerate(judges):
        for b in judges[i + 1 :]:
            common = sorted(k for k in points[a] if points[a][k] is not None and points[b].get(k) is not None)
            x = np.array([points[a][k] for k in common], dtype=float)
            y = np.array([points[b][k] for k in common], dtype=float)
            out.append((a, b, len(common), spearman(x, y)))
    return out


def correlations(
    points: Mapping[Metric, Mapping[str, Mapping[str, float | None]]], basis: Basis, turns: int | None = None
) -> list[RankCorrelation]:
    """RankCorrelation rows for every judge-dependent metric of ``points[metric][judge][attacker]``."""
    return [
        RankCorrelation(
            metric=m,
            basis=basis,
            judge_a=a,
            judge_b=b,
            attackers=n,
            turns=turns,
            spearman=rho,
            caveat=correlation_caveat(n, rho),
        )
        for m in JUDGE_METRICS
        if m in points
        for a, b, n, rho in rank_correlations(points[m])
    ]


# --- the turns all judges judged -----------------------------------------------------------------------------------

TurnKey = tuple[str, str, int, int]  # (log, sample, epoch, turn): one turn of one run


def judged_turns(runs: Sequence[RunFacts]) -> dict[str, dict[TurnKey, tuple[str, TurnFacts]]]:
    """judge → turn → (attacker, facts): the turns each judge gave a verdict on, as the run's Judge (turns it was
    asked on) or as a second Judge (``virtualcrime rejudge``)."""
    tables: dict[str, dict[TurnKey, tuple[str, TurnFacts]]] = defaultdict(dict)
    for run in runs:
        for facts in run.turn_facts:
            if facts.judge_called and facts.non_failure is not None:
                tables[run.judge][(run.log, run.sample_id, run.epoch, facts.turn)] = (run.attacker, facts)
        for judge, turns in run.rejudged.items():
            if judge == run.judge:  # its own verdicts are already counted
                continue
            for facts in turns:
                tables[judge][(run.log, run.sample_id, run.epoch, facts.turn)] = (run.attacker, facts)
    return dict(tables)


class CommonTurnRate(_J):
    """One attacker under one judge on the common turns (catastrophic: the common turns that judge marked risky)."""

    attacker: str
    judge: str
    turns: int
    non_failure: float | None
    risky_turns: int
    catastrophic: float | None


class JudgeAgreement(_J):
    """The judges compared on the turns every one of them judged."""

    judges: list[str]
    common_turns: int = Field(description="Turns (same run, same turn) every judge gave a verdict on.")
    common_turns_by_attacker: dict[str, int]
    rates: list[CommonTurnRate]
    correlations: list[RankCorrelation]


def judge_agreement(runs: Sequence[RunFacts], attackers: Sequence[str]) -> JudgeAgreement | None:
    """Rates and Spearman ρ on the common turns of all judges; None with fewer than two judges."""
    tables = judged_turns(runs)
    judges = sorted(tables)
    if len(judges) < 2:
        return None
    common = set.intersection(*(set(tables[j]) for j in judges))
    by_attacker: dict[str, int] = dict.fromkeys(attackers, 0)
    for key in common:
        who = tables[judges[0]][key][0]
        by_attacker[who] = by_attacker.get(who, 0) + 1
    rates: list[CommonTurnRate] = []
    points: dict[Metric, dict[str, dict[str, float | None]]] = {m: {j: {} for j in judges} for m in JUDGE_METRICS}
    for judge in judges:
        mine: dict[str, list[TurnFacts]] = defaultdict(list)
        for key in common:
            who, facts = tables[judge][key]
            mine[who].append(facts)
        for attacker in sorted(mine):
            nf = verdict_sums(mine[attacker], Metric.NON_FAILURE)
            cat = verdict_sums(mine[attacker], Metric.CATASTROPHIC)
            row = CommonTurnRate(
                attacker=attacker,
                judge=judge,
                turns=int(nf[1]),
                risky_turns=int(cat[1]),
                non_failure=nf[0] / nf[1] if nf[1] else None,
                catastrophic=cat[0] / cat[1] if cat[1] else None,
            )
            rates.append(row)
            points[Metric.NON_FAILURE][judge][attacker] = row.non_failure
            points[Metric.CATASTROPHIC][judge][attacker] = row.catastrophic
    return JudgeAgreement(
        judges=judges,
        common_turns=len(common),
        common_turns_by_attacker=by_attacker,
        rates=rates,
        correlations=correlations(points, "common_turns", len(common)),
    )


# --- self-preference -----------------------------------------------------------------------------------------------


class Deviation(_J):
    judge: str
    attacker: str
    vendor: str
    deviation: float = Field(description="The judge's rate for the attacker − the other judges' median for it.")


class SelfPreference(_J):
    """The paper's Appendix I for one judge (or ``all judges``, pooling every judge's deviations): its deviation on
    its own model and on same-vendor models, against the range of its deviations on other vendors' models."""

    metric: Metric
    judge: str
    vendor: str
    own_model: float | None = Field(
        description="Deviation on the attacker that is the judge's own model (all judges: their mean)."
    )
    n_own_model: int
    same_vendor: list[Deviation]
    same_vendor_low: float | None
    same_vendor_high: float | None
    other_vendors: list[Deviation]
    other_vendors_low: float | None
    other_vendors_high: float | None
    within_other_range: bool | None = Field(
        description="Own-model and same-vendor deviations all lie within the other vendors' range (None: nothing to "
        "compare)."
    )


def deviations(
    points: Mapping[str, Mapping[str, float | None]], judge: str, attackers: Sequence[str]
) -> list[Deviation]:
    """Deviation of ``judge`` on each attacker it and at least one other judge rated."""
    out = []
    for attacker in attackers:
        mine = points[judge].get(attacker)
        theirs = [v for j in points if j != judge if (v := points[j].get(attacker)) is not None]
        if mine is not None and theirs:
            deviation = mine - float(np.median(theirs))
            out.append(Deviation(judge=judge, attacker=attacker, vendor=vendor(attacker), deviation=deviation))
    return out


def _row(
    metric: Metric, judge: str, vendor_name: str, own: Sequence[Deviation], same: list[Deviation],
    other: list[Deviation],
) -> SelfPreference:  # fmt: skip
    def bounds(found: Sequence[Deviation]) -> tuple[float | None, float | None]:
        values = [d.deviation for d in found]
        return (min(values), max(values)) if values else (None, None)

    low, high = bounds(other)
    mine = [d.deviation for d in (*own, *same)]
    within = None if low is None or high is None or not mine else all(low <= v <= high for v in mine)
    same_low, same_high = bounds(same)
    return SelfPreference(
        metric=metric,
        judge=judge,
        vendor=vendor_name,
        own_model=float(np.mean([d.deviation for d in own])) if own else None,
        n_own_model=len(own),
        same_vendor=same,
        same_vendor_low=same_low,
        same_vendor_high=same_high,
        other_vendors=other,
        other_vendors_low=low,
        other_vendors_high=high,
        within_other_range=within,
    )


def self_preference(
    points: Mapping[Metric, Mapping[str, Mapping[str, float | None]]], attackers: Sequence[str]
) -> list[SelfPreference]:
    """Per judge-dependent metric and judge (with at least one other judge): Appendix I's deviations, then a row
    ``all judges`` pooling every judge's deviations.

    Deviation(J, a) = rate_J(a) − the median of the other judges' rates for a, over the attackers J and another
    judge rated. Own model: a is J's model name; same vendor: another model of J's vendor (``vendor``); other
    vendors: the rest, whose range (lowest to highest deviation) is what J's own and same-vendor deviations are
    compared against.
    """
    rows: list[SelfPreference] = []
    for metric in JUDGE_METRICS:
        table = points.get(metric, {})
        if len(table) < 2:
            continue
        own_all: list[Deviation] = []
        same_all: list[Deviation] = []
        other_all: list[Deviation] = []
        for judge in sorted(table):
            found = deviations(table, judge, attackers)
            mine = vendor(judge)
            own = [d for d in found if d.attacker == judge]
            same = [d for d in found if d.attacker != judge and d.vendor == mine]
            other = [d for d in found if d.vendor != mine]
            rows.append(_row(metric, judge, mine, own, same, other))
            own_all, same_all, other_all = own_all + own, same_all + same, other_all + other
        rows.append(_row(metric, "all judges", "", own_all, same_all, other_all))
    return rows
