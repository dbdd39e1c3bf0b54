"""Map pictures: the location graph with NPC start positions, guards highlighted and locked doors marked."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import networkx as nx
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..scenarios.schema import MapSpec, TaskSpec
from ..world.models import Npc

ROLE_COLOURS = {"guard": "#c62828", "police": "#1565c0", "staff": "#6d4c41", "civilian": "#558b2f"}
LOCATION_COLOUR = "#eceff1"
EXIT_COLOUR = "#fff59d"


def layout(spec: MapSpec) -> dict[str, tuple[float, float]]:
    """A deterministic force-directed layout of the location graph (seeded)."""
    graph = nx.Graph()
    graph.add_nodes_from(loc.id for loc in spec.locations)
    graph.add_edges_from((e.a, e.b) for e in spec.edges)
    spread = 2.2 / max(1, len(spec.locations)) ** 0.5
    positions = nx.spring_layout(graph, seed=7, k=spread, iterations=500)
    return {node: (float(x), float(y)) for node, (x, y) in positions.items()}


def draw_map(spec: MapSpec, out: Path, task: TaskSpec | None = None) -> Path:
    """Draw ``spec`` (with a task's extra NPCs and team start, if given) to a PNG at ``out``."""
    positions = layout(spec)
    plt.switch_backend("Agg")  # files only; never open a window
    fig, ax = plt.subplots(figsize=(14, 10), dpi=110)
    ax.set_axis_off()
    for edge in spec.edges:
        (x1, y1), (x2, y2) = positions[edge.a], positions[edge.b]
        style = {"color": "#b71c1c", "linestyle": "--", "linewidth": 2.2} if edge.locked else {
            "color": "#90a4ae", "linestyle": "-", "linewidth": 1.6}  # fmt: skip
        ax.plot([x1, x2], [y1, y2], zorder=1, **style)  # type: ignore[arg-type]
        if edge.locked:
            box = {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"}
            ax.text((x1 + x2) / 2, (y1 + y2) / 2, "locked", fontsize=7, color="#b71c1c", ha="center",
                    va="center", zorder=3, bbox=box)  # fmt: skip
    npcs: list[Npc] = [*spec.npcs, *(task.extra_npcs if task else [])]
    starts = {m.start for m in task.team} if task else set()
    for location in spec.locations:
        x, y = positions[location.id]
        colour = EXIT_COLOUR if location.exit else LOCATION_COLOUR
        edge_colour = "#ef6c00" if "restricted" in location.tags else "#455a64"
        label = location.name + ("\n(exit)" if location.exit else "") + ("\n(police arrive)" if location.entry else "")
        ax.text(x, y, label, fontsize=8.5, ha="center", va="center", zorder=4,
                bbox={"boxstyle": "round,pad=0.35", "fc": colour, "ec": edge_colour, "lw": 1.5})  # fmt: skip
        here = [n for n in npcs if n.current_location == location.id]
        for index, npc in enumerate(here):
            ax.text(x, y - 0.075 - 0.045 * index, ("★ " if npc.enforcer else "• ") + npc.name, fontsize=7.5,
                    ha="center", va="center", zorder=5, color=ROLE_COLOURS[npc.role.value],
                    fontweight="bold" if npc.enforcer else "normal")  # fmt: skip
        if location.id in starts:
            ax.text(x, y + 0.075, "team starts here", fontsize=7.5, ha="center", color="#4a148c", zorder=5)
    title = f"{spec.name} ({spec.id}) — {len(spec.locations)} locations, {len(npcs)} NPCs"
    ax.set_title(title, fontsize=13)
    legend = [
        Line2D([0], [0], color="#90a4ae", lw=1.6, label="passage"),
        Line2D([0], [0], color="#b71c1c", lw=2.2, linestyle="--", label="locked door"),
        Patch(fc=EXIT_COLOUR, ec="#455a64", label="exit"),
        Patch(fc=LOCATION_COLOUR, ec="#ef6c00", label="restricted area"),
        *(Line2D([0], [0], marker="o", color="w", markerfacecolor=c, markersize=8, label=r)
          for r, c in ROLE_COLOURS.items()),
    ]  # fmt: skip
    ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=True)
    xs = [p[0] for p in positions.values()]
    ys = [p[1] for p in positions.values()]
    ax.set_xlim(min(xs) - 0.25, max(xs) + 0.25)
    ax.set_ylim(min(ys) - 0.3, max(ys) + 0.2)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, bbox_inches="tight")
    plt.close(fig)
    return out
