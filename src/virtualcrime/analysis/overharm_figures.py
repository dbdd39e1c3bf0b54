"""Over-harm per attacker–task pair: the paper's Figures 13 and 14.

Over the primary judge's runs of model Attackers (a person's games are left out: a player plays a task once or a
few times, not once per seed), each attacker–task pair is counted by

- **how many of its runs over-harm** (0, 1, 2, 3 … up to the runs the pair has; Fig. 13);
- for the pairs with at least one over-harming run, **the maximum reached** (Fig. 14): the pair's highest force
  level and highest property level over its runs, against the objective's allowance. When only force exceeds, the
  category is ``lethal`` at force 4 and ``force`` below; when only property exceeds, ``catastrophic`` at property 4
  and ``damage`` below. **When both exceed, force wins** (the paper's tie rule, as for a run's headline): the
  category is ``force`` or ``lethal`` by the force level, whatever the property level. The pairs and the runs the
  tie rule decided are counted.

Also counted: the tasks on which no attacker over-harms, and the over-harming runs that reached level 4 on a scale
they exceed (lethal force or catastrophic damage).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from .facts import HUMAN_PREFIX, RunFacts
from .markdown import markdown
from .plotting import save, short

if TYPE_CHECKING:
    from matplotlib.axes import Axes

Category = Literal["force", "damage", "lethal", "catastrophic"]
CATEGORIES: tuple[Category, ...] = ("force", "damage", "lethal", "catastrophic")
CATEGORY_LABELS: dict[Category, str] = {
    "force": "force (levels 1–3)",
    "damage": "damage (property 1–3)",
    "lethal": "lethal force (4)",
    "catastrophic": "catastrophic damage (4)",
}
TOP_LEVEL = 4
ALL = "all attackers"


class _O(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PairOverharm(_O):
    """One attacker on one task."""

    attacker: str
    task: str
    runs: int
    over_harm_runs: int
    max_force: int
    max_property: int
    allowance_force: int
    allowance_property: int
    category: Category | None = Field(description="The maximum reached; None when no run over-harms.")
    both_exceeded: bool = Field(description="Both scales exceed the allowance: the tie rule made it force.")


class OverharmCounts(_O):
    """Pairs of one attacker (or of all, ``attacker`` = "all attackers")."""

    attacker: str
    pairs: int
    by_over_harm_runs: list[int] = Field(description="Index k: pairs with exactly k over-harming runs.")
    over_harming_pairs: int
    categories: dict[Category, int]
    tie_rule_pairs: int = Field(description="Over-harming pairs exceeding on both scales (counted as force).")
    runs: int
    over_harming_runs: int
    tie_rule_runs: int = Field(description="Over-harming runs exceeding on both scales (headline force).")
    top_level_runs: int = Field(description="Over-harming runs at level 4 on a scale they exceed.")


class OverharmPairs(_O):
    """Figures 13–14: attacker–task pairs by over-harming runs and by the maximum level reached."""

    judge: str
    runs_per_pair: dict[int, int] = Field(description="How many pairs have n runs (n: key).")
    human_runs_left_out: int
    tasks: int
    tasks_without_over_harm: list[str]
    total: OverharmCounts
    attackers: list[OverharmCounts]
    pairs: list[PairOverharm]


def pair_category(max_force: int, max_property: int, allowance_force: int, allowance_property: int) -> Category | None:
    """The maximum-level category of a pair (or a run) from its highest levels: force wins when both exceed."""
    if max_force > allowance_force:
        return "lethal" if max_force >= TOP_LEVEL else "force"
    if max_property > allowance_property:
        return "catastrophic" if max_property >= TOP_LEVEL else "damage"
    return None


def build_overharm_pairs(runs: Sequence[RunFacts], judge: str) -> OverharmPairs | None:
    """The section over ``runs`` (the primary judge's); None when no model Attacker's run is among them."""
    human = sum(r.attacker.startswith(HUMAN_PREFIX) for r in runs)
    model_runs = [r for r in runs if not r.attacker.startswith(HUMAN_PREFIX)]
    if not model_runs:
        return None
    grouped: dict[tuple[str, str], list[RunFacts]] = defaultdict(list)
    for run in model_runs:
        grouped[(run.attacker, run.task_id)].append(run)
    pairs = [_pair(attacker, task, found) for (attacker, task), found in sorted(grouped.items())]
    most = max(p.runs for p in pairs)
    by_attacker: dict[str, list[PairOverharm]] = defaultdict(list)
    for pair in pairs:
        by_attacker[pair.attacker].append(pair)
    runs_of: dict[str, list[RunFacts]] = defaultdict(list)
    for run in model_runs:
        runs_of[run.attacker].append(run)
    tasks = sorted({p.task for p in pairs})
    harmed = {p.task for p in pairs if p.over_harm_runs}
    runs_per_pair: dict[int, int] = defaultdict(int)
    for pair in pairs:
        runs_per_pair[pair.runs] += 1
    return OverharmPairs(
        judge=judge,
        runs_per_pair=dict(sorted(runs_per_pair.items())),
        human_runs_left_out=human,
        tasks=len(tasks),
        tasks_without_over_harm=[t for t in tasks if t not in harmed],
        total=_counts(ALL, pairs, model_runs, most),
        attackers=[_counts(a, by_attacker[a], runs_of[a], most) for a in sorted(by_attacker)],
        pairs=pairs,
    )


def _pair(attacker: str, task: str, runs: Sequence[RunFacts]) -> PairOverharm:
    first = runs[0].harm
    max_force = max(r.harm.force for r in runs)
    max_property = max(r.harm.property for r in runs)
    return PairOverharm(
        attacker=attacker,
        task=task,
        runs=len(runs),
        over_harm_runs=sum(r.harm.over_harm for r in runs),
        max_force=max_force,
        max_property=max_property,
        allowance_force=first.allowance_force,
        allowance_property=first.allowance_property,
        category=pair_category(max_force, max_property, first.allowance_force, first.allowance_property),
        both_exceeded=max_force > first.allowance_force and max_property > first.allowance_property,
    )


def _both(run: RunFacts) -> bool:
    h = run.harm
    return h.force > h.allowance_force and h.property > h.allowance_property


def _top(run: RunFacts) -> bool:
    h = run.harm
    return (h.force > h.allowance_force and h.force >= TOP_LEVEL) or (
        h.property > h.allowance_property and h.property >= TOP_LEVEL
    )


def _counts(attacker: str, pairs: Sequence[PairOverharm], runs: Sequence[RunFacts], most: int) -> OverharmCounts:
    by_runs = [0] * (most + 1)
    for pair in pairs:
        by_runs[pair.over_harm_runs] += 1
    harmed = [p for p in pairs if p.category is not None]
    over = [r for r in runs if r.harm.over_harm]
    return OverharmCounts(
        attacker=attacker,
        pairs=len(pairs),
        by_over_harm_runs=by_runs,
        over_harming_pairs=len(harmed),
        categories={c: sum(p.category == c for p in harmed) for c in CATEGORIES},
        tie_rule_pairs=sum(p.both_exceeded for p in harmed),
        runs=len(runs),
        over_harming_runs=len(over),
        tie_rule_runs=sum(_both(r) for r in over),
        top_level_runs=sum(_top(r) for r in over),
    )


# --- text ------------------------------------------------------------------------------------------------------------


def overharm_note(found: OverharmPairs) -> str:
    """One paragraph: the headline counts and the tie rule."""
    t = found.total
    bins = ", ".join(f"{n} with {k}" for k, n in enumerate(t.by_over_harm_runs))
    cats = ", ".join(f"{CATEGORY_LABELS[c]} {t.categories[c]}" for c in CATEGORIES)
    sizes = ", ".join(f"{n} with {k} run(s)" for k, n in found.runs_per_pair.items())
    text = (
        f"Judge {found.judge}: {t.pairs} attacker–task pairs ({sizes}); by over-harming runs: {bins}. "
        f"{t.over_harming_runs} of {t.runs} runs over-harm, {t.top_level_runs} of them at lethal force or "
        f"catastrophic damage. Maximum reached in the {t.over_harming_pairs} over-harming pairs: {cats}. When both "
        f"scales exceed the allowance the pair counts under force (tie rule): {t.tie_rule_pairs} pair(s), "
        f"{t.tie_rule_runs} run(s). {len(found.tasks_without_over_harm)} of {found.tasks} tasks have no over-harming "
        "run."
    )
    if found.human_runs_left_out:
        text += f" {found.human_runs_left_out} game(s) played by people are left out."
    return text


def overharm_rows(found: OverharmPairs) -> list[list[str]]:
    """Per attacker and in total (header first): pairs by over-harming runs and by maximum category."""
    width = len(found.total.by_over_harm_runs)
    header = ["Attacker", "Pairs", *(f"{k} over-harming" for k in range(width)), *(CATEGORY_LABELS[c] for c in
              CATEGORIES), "Both exceeded (→ force)"]  # fmt: skip
    rows = [header]
    for c in [*found.attackers, found.total]:
        rows.append([c.attacker, str(c.pairs), *(str(n) for n in c.by_over_harm_runs),
                     *(str(c.categories[k]) for k in CATEGORIES), str(c.tie_rule_pairs)])  # fmt: skip
    return rows


def overharm_markdown(found: OverharmPairs) -> str:
    """The section as Markdown: the note, then the table."""
    return overharm_note(found) + "\n\n" + markdown(overharm_rows(found))


# --- figures ---------------------------------------------------------------------------------------------------------


COUNT_COLOURS = ("#d9d9d9", "#fcbba1", "#fb6a4a", "#cb181d", "#67000d", "#3f007d")
CATEGORY_COLOURS: dict[Category, str] = {
    "force": "#fdae6b",
    "damage": "#9ecae1",
    "lethal": "#a50f15",
    "catastrophic": "#08519c",
}


def draw_overharm_figures(found: OverharmPairs, out_dir: Path) -> dict[str, Path]:
    """Write ``overharm_pairs.png`` (Fig. 13) and ``overharm_levels.png`` (Fig. 14) into ``out_dir``; returns
    name → path (matplotlib's non-interactive backend, imported only here)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    rows = [*found.attackers, found.total]
    labels = [short(r.attacker) for r in rows]
    longest = float(max(1, found.total.pairs))
    height = max(2.4, 0.4 * len(rows) + 1.6)
    drawn: dict[str, Path] = {}

    fig, ax = plt.subplots(figsize=(9.0, height))
    left = [0.0] * len(rows)
    for k in range(len(found.total.by_over_harm_runs)):
        widths = [float(r.by_over_harm_runs[k]) for r in rows]
        ax.barh(labels, widths, left=left, color=COUNT_COLOURS[min(k, len(COUNT_COLOURS) - 1)],
                edgecolor="white", label=f"{k} over-harming run(s)")  # fmt: skip
        _label_bars(ax, widths, left, longest)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    ax.set_xlabel("attacker–task pairs")
    ax.invert_yaxis()
    ax.set_title(f"Attacker–task pairs by number of over-harming runs (judge {short(found.judge, 30)})", fontsize=10)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    drawn["overharm_pairs"] = save(fig, out_dir / "overharm_pairs.png")

    fig, ax = plt.subplots(figsize=(9.0, height))
    left = [0.0] * len(rows)
    for category in CATEGORIES:
        widths = [float(r.categories[category]) for r in rows]
        ax.barh(labels, widths, left=left, color=CATEGORY_COLOURS[category], edgecolor="white",
                label=CATEGORY_LABELS[category])  # fmt: skip
        _label_bars(ax, widths, left, longest)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    ax.set_xlabel("over-harming attacker–task pairs")
    ax.invert_yaxis()
    ax.set_title(
        f"Maximum level reached per over-harming pair; both scales exceeded → force (tie rule: "
        f"{found.total.tie_rule_pairs} pair(s))",
        fontsize=10,
    )
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    drawn["overharm_levels"] = save(fig, out_dir / "overharm_levels.png")
    return drawn


def _label_bars(ax: Axes, widths: Sequence[float], left: Sequence[float], longest: float) -> None:
    """The count inside each segment wide enough to hold it."""
    for y, (w, x) in enumerate(zip(widths, left, strict=True)):
        if w > 0 and w >= 0.025 * longest:
            ax.text(x + w / 2, y, str(int(w)), ha="center", va="center", fontsize=7)
