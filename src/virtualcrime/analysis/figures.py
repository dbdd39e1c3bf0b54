"""The report's figures, drawn from a Summary only (PNG, matplotlib's non-interactive backend).

- ``rates_by_judge.png``: each attacker's rates, one dot per judge and a tick at their median with its interval
  (the paper's Fig. 2);
- ``overharm_vs_nonfailure.png``: over-harm against non-failure across attackers, with Spearman's ρ (Fig. 3c);
- ``task_wins.png`` and ``task_overharm.png``: attacker × task heatmaps (Figs. 12–14).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .metrics import Metric
from .overharm_figures import draw_overharm_figures
from .plotting import save, short
from .processes import forked_map
from .summary import Summary, TaskCell

JUDGE_MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*")
JUDGE_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
FIGURE_METRICS = (Metric.NON_FAILURE, Metric.CATASTROPHIC, Metric.OVER_HARM, Metric.PASS_AT_1, Metric.TEAM_USAGE)


def draw_all(summary: Summary, out_dir: Path, workers: int | None = None) -> dict[str, Path]:
    """Write every figure into ``out_dir``; returns name → path. The figures are drawn side by side in ``workers``
    forked processes (default: one per CPU; drawing is most of a big report's writing time), each to its own
    file, so what is drawn does not depend on how."""
    out_dir.mkdir(parents=True, exist_ok=True)
    jobs = [(k, summary, out_dir) for k in range(len(_FIGURES))]
    results = forked_map(_drawn, jobs, workers if workers is not None else os.cpu_count() or 1)
    drawn: dict[str, Path] = {}
    for found in results if results is not None else map(_drawn, jobs):
        drawn.update(found)
    return drawn


def _rates(summary: Summary, out_dir: Path) -> dict[str, Path]:
    return {"rates_by_judge": save(rates_by_judge(summary), out_dir / "rates_by_judge.png")}


def _heatmaps(summary: Summary, out_dir: Path) -> dict[str, Path]:
    return {
        "task_wins": save(task_heatmap(summary, "wins"), out_dir / "task_wins.png"),
        "task_overharm": save(task_heatmap(summary, "overharm"), out_dir / "task_overharm.png"),
    }


def _level5(summary: Summary, out_dir: Path) -> dict[str, Path]:
    if summary.annotation is None:
        return {}
    return {"level5_rates": save(level5_rates(summary), out_dir / "level5_rates.png")}


def _scatter(summary: Summary, out_dir: Path) -> dict[str, Path]:
    scatter = overharm_vs_nonfailure(summary)
    return {} if scatter is None else {"overharm_vs_nonfailure": save(scatter, out_dir / "overharm_vs_nonfailure.png")}


def _pairs(summary: Summary, out_dir: Path) -> dict[str, Path]:
    if summary.overharm_pairs is None:
        return {}
    return draw_overharm_figures(summary.overharm_pairs, out_dir)  # the paper's Figures 13-14


# Each drawer writes its figures and returns name -> path; draw_all keeps this order.
_FIGURES: tuple[Callable[[Summary, Path], dict[str, Path]], ...] = (_rates, _heatmaps, _level5, _scatter, _pairs)


def _drawn(job: tuple[int, Summary, Path]) -> dict[str, Path]:
    index, summary, out_dir = job
    return _FIGURES[index](summary, out_dir)


def rates_by_judge(summary: Summary) -> Figure:
    """One panel per metric: attackers on the y axis, a dot per judge, the median tick with its 95 % interval."""
    attackers = summary.attackers
    judges = summary.judges
    # Three panels a row keeps the figure readable at page width; the sixth cell holds the legend.
    cols, rows = 3, 2
    panel_height = max(2.0, 0.36 * len(attackers) + 1.0)
    fig, grid = plt.subplots(rows, cols, figsize=(4.4 * cols, panel_height * rows + 0.8), sharey=True, squeeze=False)
    cells = list(grid.flat)
    axes, legend_cell = cells[: len(FIGURE_METRICS)], cells[-1]
    y = np.arange(len(attackers))
    per_judge = {(r.attacker, r.judge): r for r in summary.per_judge}
    medians = {r.attacker: r for r in summary.judge_median}
    for ax, metric in zip(axes, FIGURE_METRICS, strict=True):
        for k, judge in enumerate(judges):
            xs = [per_judge[(a, judge)].metrics[metric].value if (a, judge) in per_judge else None for a in attackers]
            pts = [(x, yy) for x, yy in zip(xs, y, strict=True) if x is not None]
            if pts:
                ax.scatter(
                    [p[0] for p in pts],
                    [p[1] for p in pts],
                    marker=JUDGE_MARKERS[k % len(JUDGE_MARKERS)],
                    color=JUDGE_COLOURS[k % len(JUDGE_COLOURS)],
                    s=28,
                    alpha=0.85,
                    label=short(judge, 36),
                    zorder=3,
                )
        for yy, attacker in zip(y, attackers, strict=True):
            est = medians[attacker].metrics[metric] if attacker in medians else None
            if est is None or est.value is None:
                continue
            if est.low is not None and est.high is not None:
                ax.plot([est.low, est.high], [yy, yy], color="#444444", lw=1.2, zorder=2)
            ax.plot([est.value, est.value], [yy - 0.28, yy + 0.28], color="black", lw=2.2, zorder=4)
        ax.set_title(metric.label, fontsize=10)
        ax.set_xlim(-0.03, 1.03)
        ax.grid(axis="x", alpha=0.3)
        ax.set_yticks(y, [short(a) for a in attackers], fontsize=8)
        ax.invert_yaxis()
    handles, labels = axes[0].get_legend_handles_labels()
    handles.append(Line2D([], [], color="black", lw=2.2, marker="|", markersize=10, linestyle="-"))
    labels.append("median across judges, 95% CI")
    legend_cell.axis("off")
    legend_cell.legend(handles, labels, loc="center", fontsize=8, title="Judge", frameon=False)
    fig.suptitle(f"Rates per attacker: one dot per judge, median with 95% CI ({len(summary.tasks)} tasks)")
    fig.tight_layout()
    return fig


def overharm_vs_nonfailure(summary: Summary) -> Figure | None:
    """Over-harm rate against turn non-failure rate across attackers (primary judge), with Spearman's ρ."""
    corr = summary.overharm_vs_nonfailure
    if corr is None:
        return None
    fig, ax = plt.subplots(figsize=(5.6, 4.4))
    for row in summary.table1:
        x = row.metrics[Metric.NON_FAILURE]
        y = row.metrics[Metric.OVER_HARM]
        if x.value is None or y.value is None:
            continue
        _errorbar(ax, x.value, y.value, (x.low, x.high), (y.low, y.high))
        ax.annotate(short(row.attacker, 22), (x.value, y.value), fontsize=7, xytext=(4, 4), textcoords="offset points")
    rho = "n/a" if corr.spearman is None else f"{corr.spearman:.2f}"
    few = {1: " — one attacker: no correlation", 2: " — two attackers: ρ is always ±1"}.get(corr.attackers, "")
    ax.set_title(f"Over-harm vs non-failure (Spearman ρ = {rho}, n = {corr.attackers}){few}", fontsize=10)
    ax.set_xlabel(f"{Metric.NON_FAILURE.label} (median across judges)")
    ax.set_ylabel(Metric.OVER_HARM.label)
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def _errorbar(
    ax: Axes, x: float, y: float, xerr: tuple[float | None, float | None], yerr: tuple[float | None, float | None]
) -> None:
    def span(v: float, bounds: tuple[float | None, float | None]) -> list[list[float]]:
        # Rounding can put a point a hair outside its own interval (every turn rated alike: 0.92 in [0.92, 0.92]
        # summed in another order); matplotlib refuses a negative error bar.
        lo, hi = bounds
        return [[max(0.0, v - lo) if lo is not None else 0.0], [max(0.0, hi - v) if hi is not None else 0.0]]

    ax.errorbar(x, y, xerr=span(x, xerr), yerr=span(y, yerr), fmt="o", ms=5, capsize=2, color="#1f77b4", alpha=0.9)


def task_heatmap(summary: Summary, kind: str) -> Figure:
    """Attacker × task heatmap of win rate (``wins``) or over-harm rate (``overharm``, cells labelled with the
    highest force / property level reached when a run over-harmed)."""
    attackers = sorted({c.attacker for c in summary.per_task})
    tasks = summary.tasks
    cells = {(c.attacker, c.task): c for c in summary.per_task}
    grid = np.full((len(attackers), len(tasks)), np.nan)
    for i, a in enumerate(attackers):
        for j, t in enumerate(tasks):
            cell = cells.get((a, t))
            if cell is not None:
                grid[i, j] = cell.win_rate if kind == "wins" else cell.over_harm_rate
    width = max(6.0, 0.32 * len(tasks) + 3.0)
    fig, ax = plt.subplots(figsize=(width, max(2.2, 0.42 * len(attackers) + 2.2)))
    cmap = plt.get_cmap("Greens" if kind == "wins" else "Reds").with_extremes(bad="#eeeeee")
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(np.arange(len(tasks)), tasks, rotation=90, fontsize=7)
    ax.set_yticks(np.arange(len(attackers)), [short(a) for a in attackers], fontsize=8)
    if kind == "overharm":
        _label_levels(ax, attackers, tasks, cells)
    title = "Win rate per task" if kind == "wins" else "Over-harm rate per task (labels: highest force F / property P)"
    ax.set_title(f"{title} — judge {short(summary.primary_judge, 30)}; grey = not run", fontsize=10)
    fig.colorbar(image, ax=ax, fraction=0.025, pad=0.01)
    fig.tight_layout()
    return fig


def _label_levels(
    ax: Axes, attackers: Sequence[str], tasks: Sequence[str], cells: dict[tuple[str, str], TaskCell]
) -> None:
    for i, a in enumerate(attackers):
        for j, t in enumerate(tasks):
            cell = cells.get((a, t))
            if cell is not None and cell.over_harm_runs:
                colour = "white" if cell.over_harm_rate > 0.55 else "black"  # readable on dark and light cells
                label = f"F{cell.max_force}\nP{cell.max_property}"
                ax.text(j, i, label, ha="center", va="center", fontsize=5.5, color=colour)


def level5_rates(summary: Summary) -> Figure:
    """Grouped bars: each attacker's Level-5 rate per behaviour dimension, with 95 % intervals."""
    assert summary.annotation is not None
    rows = summary.annotation.behaviour
    attackers = sorted({r.attacker for r in rows})
    dimensions = list(dict.fromkeys(r.dimension for r in rows))
    cell = {(r.attacker, r.dimension): r.level5_rate for r in rows}
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(dimensions) * max(1, len(attackers)) / 2 + 3), 3.6))
    width = 0.8 / max(1, len(attackers))
    x = np.arange(len(dimensions))
    for k, attacker in enumerate(attackers):
        estimates = [cell.get((attacker, d)) for d in dimensions]
        values = [e.value if e is not None and e.value is not None else 0.0 for e in estimates]
        low = [
            v - (e.low if e is not None and e.low is not None else v) for v, e in zip(values, estimates, strict=True)
        ]
        high = [
            (e.high if e is not None and e.high is not None else v) - v for v, e in zip(values, estimates, strict=True)
        ]
        ax.bar(x + (k - (len(attackers) - 1) / 2) * width, values, width, yerr=[low, high], capsize=3,
               color=JUDGE_COLOURS[k % len(JUDGE_COLOURS)], label=short(attacker, 36))  # fmt: skip
    ax.set_xticks(x, [d.replace("_", " ") for d in dimensions])
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("Level-5 rate")
    ax.set_title("Level-5 behaviour per attacker and dimension (reconciled annotations, 95% CI)", fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig
