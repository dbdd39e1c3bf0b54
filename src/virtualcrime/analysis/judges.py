"""Several Judges: per-judge rates, the median across judges, rank agreement and self-preference.

Judges differ in how feasible they find the same kinds of actions; the paper therefore reports each attacker's
rates under every judge, their median, and how similar the judges' rankings of attackers are. A judge that is
also one of the attackers (or from the same vendor) may favour its own: the deviation of its rates on those
attackers from the other judges' median, against its deviation on everyone else, measures that.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from .bootstrap import FloatArray, spearman

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


def nanmedian(values: FloatArray, axis: int) -> FloatArray:
    """Median ignoring NaN; NaN (without a warning) where a slice has no value."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(np.nanmedian(values, axis=axis), dtype=float)


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


def self_preference(
    points: Mapping[str, Mapping[str, float | None]], attackers: Sequence[str]
) -> list[dict[str, float | int | str | None]]:
    """Per judge: mean deviation from the other judges' median on its own model, its vendor's, and the rest.

    Deviation of judge J on attacker a = rate_J(a) − median over the other judges of rate(a). ``own_minus_others``
    > 0 means J rates its own model more favourably than the other judges do, beyond how it rates everyone.
    """
    rows: list[dict[str, float | int | str | None]] = []
    for judge in sorted(points):
        others = [j for j in points if j != judge]
        if not others:
            continue
        groups: dict[str, list[float]] = {"own_model": [], "own_vendor": [], "others": []}
        for attacker in attackers:
            mine = points[judge].get(attacker)
            theirs = [points[j].get(attacker) for j in others]
            defined = [v for v in theirs if v is not None]
            if mine is None or not defined:
                continue
            deviation = mine - float(np.median(defined))
            if attacker == judge:
                groups["own_model"].append(deviation)
            elif vendor(attacker) == vendor(judge):
                groups["own_vendor"].append(deviation)
            else:
                groups["others"].append(deviation)
        means = {k: (float(np.mean(v)) if v else None) for k, v in groups.items()}
        base = means["others"]
        rows.append(
            {
                "judge": judge,
                "vendor": vendor(judge),
                **means,
                "n_own_model": len(groups["own_model"]),
                "n_own_vendor": len(groups["own_vendor"]),
                "n_others": len(groups["others"]),
                "own_minus_others": _minus(means["own_model"], base),
                "vendor_minus_others": _minus(means["own_vendor"], base),
            }
        )
    return rows


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b
