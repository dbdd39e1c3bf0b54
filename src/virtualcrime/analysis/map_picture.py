"""Map pictures: the location graph with NPC start positions, guards highlighted, locked doors and objective targets.

The layout starts from a seeded spring layout and then pushes location blocks (a box plus the lines of labels
beneath it) apart until nothing overlaps, so every box and label stays readable. Geometry is in points; the PNG
draws it at one data unit per point and the web map (``web.map_svg``) draws the same geometry scaled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import NamedTuple

import networkx as nx
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.legend import Legend
from matplotlib.legend_handler import HandlerBase
from matplotlib.lines import Line2D
from matplotlib.patches import FancyBboxPatch, Patch
from matplotlib.text import Text
from matplotlib.textpath import text_to_path
from matplotlib.transforms import Transform

from ..scenarios.schema import MapSpec, TaskSpec
from ..world.enums import NpcRole
from ..world.models import Npc
from ..world.predicates import referenced_ids

ROLE_COLOURS = {"guard": "#c62828", "police": "#1565c0", "staff": "#6d4c41", "civilian": "#558b2f"}
LOCATION_COLOUR = "#eceff1"
EXIT_COLOUR = "#fff59d"
BORDER_COLOUR, RESTRICTED_COLOUR = "#455a64", "#ef6c00"
TEAM_COLOUR = "#6a1b9a"
TARGET_COLOUR = "#00838f"
ENFORCER_GLYPH, OTHER_GLYPH, TARGET_GLYPH = "★", "•", "◎"
NAME_SIZE, NOTE_SIZE, LABEL_SIZE = 8.5, 7.0, 7.5  # points
BOX_PAD_X, BOX_PAD_Y, RING = 6.0, 3.5, 3.0  # box padding; the target ring's distance from the box
GAP = 9.0  # clear space kept between blocks
PERSON_ROW = 14.0  # height of one row of six person markers on the web map, kept free under every box
PERSONS_PER_ROW = 6
ASPECT, DENSITY, MARGIN = 2.0, 0.55, 14.0  # width to height of the spread, share of the area blocks start on
SEEDS = (7, 1, 2, 3, 4, 5, 6, 8)  # spring layouts tried, in order
DPI = 120

Rect = tuple[float, float, float, float]  # x0, y0, x1, y1


def role_glyph(role: NpcRole | str) -> str:
    """The glyph NPC labels of ``role`` start with: a star for enforcers (guards, police), a bullet otherwise."""
    npc = Npc(id="probe", name="", description="", current_location="", role=NpcRole(role))
    return ENFORCER_GLYPH if npc.enforcer else OTHER_GLYPH


class Item(NamedTuple):
    """A target item: its id and name, what holds it ("in the safe", "with Hex"; may be empty) and where it starts."""

    id: str
    name: str
    holder: str
    location: str


@dataclass(frozen=True)
class Targets:
    """What a task's checkpoints are about: locations, NPCs and items."""

    locations: frozenset[str] = frozenset()
    npcs: frozenset[str] = frozenset()
    items: tuple[Item, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.locations or self.npcs or self.items)


def objective_targets(spec: MapSpec, task: TaskSpec) -> Targets:
    """The targets named anywhere in the predicate trees of ``task``'s checkpoints (members are not targets)."""
    named = {i for flag in task.checkpoints if flag.predicate for _, i in referenced_ids(flag.predicate)}
    locations = {loc.id: loc for loc in spec.locations}
    npcs = {n.id: n for n in [*spec.npcs, *task.extra_npcs]}
    entities = {e.id: e for e in [*spec.entities, *task.extra_entities]}
    members = {m.id: m for m in task.team}
    items: list[Item] = []
    for entity_id in sorted(named & set(entities)):
        entity, where, holder = entities[entity_id], entities[entity_id].current_location, ""
        for _ in range(len(entities) + 1):  # follow containers and carriers to a location
            if where in entities:
                holder = holder or f"in {entities[where].name}"
                where = entities[where].current_location
            elif where in npcs:
                holder, where = holder or f"with {npcs[where].name}", npcs[where].current_location
            elif where in members:
                holder, where = holder or f"with {members[where].name}", members[where].start
            else:
                break
        if where in locations:
            items.append(Item(entity_id, entity.name, holder, where))
    return Targets(frozenset(named & set(locations)), frozenset(named & set(npcs)), tuple(items))


@cache
def text_size(text: str, size: float, bold: bool) -> tuple[float, float]:
    """Width and line height (points) of ``text`` set in matplotlib's font (DejaVu Sans) at ``size`` points."""
    prop = FontProperties(size=size, weight="bold" if bold else "normal")
    width, _, _ = text_to_path.get_text_width_height_descent(text, prop, ismath=False)
    _, height, descent = text_to_path.get_text_width_height_descent("lp", prop, ismath=False)
    return width, height + descent  # matplotlib sizes a line by "lp", so every line is as tall


@dataclass(frozen=True)
class Label:
    """One line of text; a white backing keeps it readable over passages, ``frame`` colours its border."""

    text: str
    size: float
    colour: str = "#263238"
    bold: bool = False
    frame: str = ""

    @property
    def pad(self) -> float:
        return (0.35 if self.frame else 0.15) * self.size

    @property
    def width(self) -> float:
        return text_size(self.text, self.size, self.bold)[0] + 2 * self.pad

    @property
    def height(self) -> float:
        return text_size(self.text, self.size, self.bold)[1] + 2 * self.pad


@dataclass(frozen=True)
class Block:
    """A location's box (title lines inside) with label lines above and below it; offsets from the box centre."""

    title: tuple[Label, ...]
    above: tuple[Label, ...]
    below: tuple[Label, ...]
    fill: str
    edge: str
    target: bool
    reserve: float  # room kept free under the box

    @property
    def box_size(self) -> tuple[float, float]:
        width = max(lab.width for lab in self.title) + 2 * BOX_PAD_X
        return width, sum(lab.height for lab in self.title) + 2 * BOX_PAD_Y

    @property
    def outer(self) -> float:
        """Half the box's height, plus the target ring around it."""
        return self.box_size[1] / 2 + (RING + 1 if self.target else 0)

    @property
    def extent(self) -> Rect:
        """The whole block relative to the box centre."""
        box_w, _ = self.box_size
        widths = [box_w + (2 * RING + 2 if self.target else 0), PERSONS_PER_ROW * PERSON_ROW]
        half = max(widths + [lab.width for lab in self.above + self.below]) / 2
        below = max(sum(lab.height for lab in self.below), self.reserve)
        return -half, -self.outer - below, half, self.outer + sum(lab.height for lab in self.above)

    def lines(self, x: float, y: float) -> list[tuple[Label, float, float]]:
        """Every label with the centre it is drawn at, for a box centred on (x, y)."""
        placed = []
        stacks = ((self.title, y + self.box_size[1] / 2 - BOX_PAD_Y, -1), (self.above[::-1], y + self.outer, 1),
                  (self.below, y - self.outer, -1))  # fmt: skip
        for labels, top, direction in stacks:  # title and below stack downwards, above upwards
            for lab in labels:
                placed.append((lab, x, top + direction * lab.height / 2))
                top += direction * lab.height
        return placed


def _blocks(spec: MapSpec, task: TaskSpec | None) -> dict[str, Block]:
    npcs: list[Npc] = [*spec.npcs, *(task.extra_npcs if task else [])]
    targets = objective_targets(spec, task) if task else Targets()
    blocks = {}
    for loc in spec.locations:
        notes = " · ".join(note for note, on in (("exit", loc.exit), ("police arrive", loc.entry)) if on)
        target = loc.id in targets.locations
        title = [Label((TARGET_GLYPH + " " if target else "") + loc.name, NAME_SIZE, bold=target)]
        title += [Label(notes, NOTE_SIZE, colour="#37474f")] if notes else []
        here = [n for n in npcs if n.current_location == loc.id]
        below = [Label(f"{role_glyph(n.role)} {n.name}", LABEL_SIZE, ROLE_COLOURS[n.role.value], bold=n.enforcer,
                       frame=TARGET_COLOUR if n.id in targets.npcs else "") for n in here]  # fmt: skip
        for item in (i for i in targets.items if i.location == loc.id):
            below.append(Label(f"{TARGET_GLYPH} {item.name}", LABEL_SIZE, TARGET_COLOUR, True, TARGET_COLOUR))
            below += [Label(f"({item.holder})", NOTE_SIZE, TARGET_COLOUR)] if item.holder else []
        team = sum(m.start == loc.id for m in task.team) if task else 0
        markers = len(here) + team + sum(item.location == loc.id for item in targets.items)
        rows = max(1, math.ceil(markers / PERSONS_PER_ROW))
        above = (Label("team starts here", LABEL_SIZE, TEAM_COLOUR, True),) if team else ()
        blocks[loc.id] = Block(tuple(title), above, tuple(below), EXIT_COLOUR if loc.exit else LOCATION_COLOUR,
                               RESTRICTED_COLOUR if "restricted" in loc.tags else BORDER_COLOUR, target,
                               rows * PERSON_ROW)  # fmt: skip
    return blocks


def _landscape(points: list[tuple[float, float]]) -> tuple[list[float], list[float]]:
    """Turn the layout so its longest spread runs across, then stretch it to about ``ASPECT`` wide to high."""
    n = len(points)
    mx, my = sum(p[0] for p in points) / n, sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    syy = sum((p[1] - my) ** 2 for p in points)
    sxy = sum((p[0] - mx) * (p[1] - my) for p in points)
    angle = 0.5 * math.atan2(2 * sxy, sxx - syy)  # the principal axis
    cos, sin = math.cos(angle), math.sin(angle)
    xs = [(p[0] - mx) * cos + (p[1] - my) * sin for p in points]
    ys = [-(p[0] - mx) * sin + (p[1] - my) * cos for p in points]
    spread_x = math.sqrt(sum(x * x for x in xs) / n) or 1.0
    spread_y = math.sqrt(sum(y * y for y in ys) / n) or 1.0
    return [x / spread_x * ASPECT for x in xs], [y / spread_y for y in ys]


def _rect(extent: Rect, at: list[float], pad: float = 0.0) -> Rect:
    return at[0] + extent[0] - pad, at[1] + extent[1] - pad, at[0] + extent[2] + pad, at[1] + extent[3] + pad


def _separate(extents: list[Rect], pos: list[list[float]]) -> None:
    """Push overlapping blocks apart along their smaller overlap until none overlap (spreading out if stuck)."""
    for sweep in range(10_000):
        moved = False
        for i in range(len(extents)):
            for j in range(i + 1, len(extents)):
                a, b = _rect(extents[i], pos[i], GAP / 2), _rect(extents[j], pos[j], GAP / 2)
                over_x, over_y = min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])
                if over_x <= 0 or over_y <= 0:
                    continue
                moved = True
                axis, over = (0, over_x) if over_x < over_y else (1, over_y)
                centre = [(a[axis] + a[axis + 2]) / 2, (b[axis] + b[axis + 2]) / 2]
                sign = 1.0 if centre[1] > centre[0] or (centre[1] == centre[0] and i % 2 == 0) else -1.0
                pos[i][axis] -= sign * (over / 2 + 0.01)
                pos[j][axis] += sign * (over / 2 + 0.01)
        if not moved:
            return
        if sweep % 50 == 49:  # a tight cluster can shuffle for ever: give everything more room
            for p in pos:
                p[0], p[1] = p[0] * 1.05, p[1] * 1.05


def _crossing(p: list[float], q: list[float], rect: Rect) -> bool:
    """Whether segment p-q passes through ``rect`` (Liang-Barsky clipping)."""
    low, high = 0.0, 1.0
    for start, delta, lo, hi in ((p[0], q[0] - p[0], rect[0], rect[2]), (p[1], q[1] - p[1], rect[1], rect[3])):
        if abs(delta) < 1e-9:
            if not lo < start < hi:
                return False
            continue
        t0, t1 = sorted(((lo - start) / delta, (hi - start) / delta))
        low, high = max(low, t0), min(high, t1)
    return low < high


def _clear_passages(spec: MapSpec, ids: list[str], extents: list[Rect], pos: list[list[float]]) -> bool:
    """Move blocks off passages they are not part of (a line under a box reads as a connection). True if moved."""
    index = {loc: i for i, loc in enumerate(ids)}
    moved = False
    for edge in spec.edges:
        p, q = pos[index[edge.a]], pos[index[edge.b]]
        length = math.dist(p, q) or 1.0
        normal = (-(q[1] - p[1]) / length, (q[0] - p[0]) / length)
        for k, extent in enumerate(extents):
            rect = _rect(extent, pos[k], GAP / 2)
            if k in (index[edge.a], index[edge.b]) or not _crossing(p, q, rect):
                continue
            centre = ((rect[0] + rect[2]) / 2, (rect[1] + rect[3]) / 2)
            side = (centre[0] - p[0]) * normal[0] + (centre[1] - p[1]) * normal[1]
            reach = (rect[2] - rect[0]) / 2 * abs(normal[0]) + (rect[3] - rect[1]) / 2 * abs(normal[1])
            push = (reach - abs(side) + 1.0) * (1.0 if side >= 0 else -1.0)
            pos[k][0] += push * normal[0]
            pos[k][1] += push * normal[1]
            moved = True
    return moved


@dataclass(frozen=True)
class MapGeometry:
    """Where everything goes, in points: the blocks, their box centres and the size of the whole."""

    blocks: dict[str, Block]
    positions: dict[str, tuple[float, float]]
    size: tuple[float, float]

    def box(self, location: str) -> Rect:
        """The location's box (without the target ring)."""
        (x, y), (w, h) = self.positions[location], self.blocks[location].box_size
        return x - w / 2, y - h / 2, x + w / 2, y + h / 2

    def rectangles(self) -> list[tuple[str, Rect]]:
        """Every box (with its ring) and every label outside a box, named, as laid out."""
        rects = []
        for loc, block in self.blocks.items():
            x0, y0, x1, y1 = self.box(loc)
            ring = RING if block.target else 0.0
            rects.append((f"box:{loc}", (x0 - ring, y0 - ring, x1 + ring, y1 + ring)))
            for n, (lab, x, y) in enumerate(block.lines(*self.positions[loc])[len(block.title) :]):
                rects.append((f"label:{loc}:{n}", (x - lab.width / 2, y - lab.height / 2, x + lab.width / 2,
                                                   y + lab.height / 2)))  # fmt: skip
        return rects


def overlaps(rects: list[tuple[str, Rect]]) -> list[tuple[str, str]]:
    """The pairs of named rectangles that overlap (touching edges do not count)."""
    return [(name_a, name_b) for i, (name_a, a) in enumerate(rects) for name_b, b in rects[i + 1 :]
            if min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])]  # fmt: skip


def _arrange(spec: MapSpec, ids: list[str], extents: list[Rect], seed: int) -> list[list[float]]:
    """Block centres from one seeded spring layout, scaled to the blocks' area, pushed clear of each other."""
    graph = nx.Graph()
    graph.add_nodes_from(ids)
    graph.add_edges_from((e.a, e.b) for e in spec.edges)
    spring = nx.spring_layout(graph, seed=seed, k=2.2 / max(1, len(ids)) ** 0.5, iterations=500)
    xs, ys = _landscape([(float(spring[i][0]), float(spring[i][1])) for i in ids])
    area = sum((e[2] - e[0] + GAP) * (e[3] - e[1] + GAP) for e in extents)
    scale = math.sqrt(area / DENSITY / max(1e-6, (max(xs) - min(xs)) * (max(ys) - min(ys))))
    pos = [[x * scale, y * scale] for x, y in zip(xs, ys, strict=True)]
    for _ in range(30):
        _separate(extents, pos)
        if not _clear_passages(spec, ids, extents, pos):
            break
    _separate(extents, pos)
    return pos


def _tangles(spec: MapSpec, ids: list[str], extents: list[Rect], pos: list[list[float]]) -> int:
    """How many pairs of passages cross, and how many passages run under a block they do not join."""
    index = {loc: i for i, loc in enumerate(ids)}
    segments = [(index[e.a], index[e.b]) for e in spec.edges]

    def turn(a: list[float], b: list[float], c: list[float]) -> float:
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    count = 0
    for n, (a, b) in enumerate(segments):
        p, q = pos[a], pos[b]
        for c, d in segments[n + 1 :]:
            if len({a, b, c, d}) == 4 and turn(p, q, pos[c]) * turn(p, q, pos[d]) < 0 < -(
                turn(pos[c], pos[d], p) * turn(pos[c], pos[d], q)
            ):
                count += 1
        count += sum(k not in (a, b) and _crossing(p, q, _rect(e, pos[k])) for k, e in enumerate(extents))
    return count


def map_geometry(spec: MapSpec, task: TaskSpec | None = None) -> MapGeometry:
    """The overlap-free layout of ``spec`` (with a task's NPCs, team start and targets, if given); deterministic.

    Seeded spring layouts are tried in turn until one has no crossing passages (else the least crossed and
    smallest is kept). Cached by content: callers must not change the returned geometry.
    """
    return _geometry(spec.model_dump_json(), task.model_dump_json() if task else "")


@lru_cache(maxsize=256)
def _geometry(spec_json: str, task_json: str) -> MapGeometry:
    spec = MapSpec.model_validate_json(spec_json)
    blocks = _blocks(spec, TaskSpec.model_validate_json(task_json) if task_json else None)
    ids = [loc.id for loc in spec.locations]
    extents = [blocks[i].extent for i in ids]
    ranked = []
    for seed in SEEDS:  # the first without tangles wins, else the least tangled, then the smallest
        pos = _arrange(spec, ids, extents, seed)
        x0, y0, x1, y1 = (f(r[k] for r in (_rect(e, p) for e, p in zip(extents, pos, strict=True)))
                          for f, k in ((min, 0), (min, 1), (max, 2), (max, 3)))  # fmt: skip
        ranked.append((_tangles(spec, ids, extents, pos), (x1 - x0) * (y1 - y0), seed, (x0, y0, x1, y1), pos))
        if ranked[-1][0] == 0:
            break
    *_, (x0, y0, x1, y1), pos = min(ranked)
    positions = {i: (p[0] - x0 + MARGIN, p[1] - y0 + MARGIN) for i, p in zip(ids, pos, strict=True)}
    size = (x1 - x0 + 2 * MARGIN, y1 - y0 + 2 * MARGIN)
    return MapGeometry(blocks, positions, size)


def layout(spec: MapSpec, task: TaskSpec | None = None) -> dict[str, tuple[float, float]]:
    """Box centres (points) of the overlap-free, deterministic layout of the location graph."""
    return dict(map_geometry(spec, task).positions)


def render_map(spec: MapSpec, task: TaskSpec | None = None) -> Figure:
    """The map picture as a matplotlib figure (one data unit per point), outside pyplot: never opens a window."""
    geometry = map_geometry(spec, task)
    width, height = geometry.size
    fig = Figure(figsize=(width / 72, height / 72), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_axis_off()
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    pos = geometry.positions
    for edge in spec.edges:
        (x1, y1), (x2, y2) = pos[edge.a], pos[edge.b]
        style = {"color": "#b71c1c", "linestyle": "--", "linewidth": 2.2} if edge.locked else {
            "color": "#90a4ae", "linestyle": "-", "linewidth": 1.6}  # fmt: skip
        ax.plot([x1, x2], [y1, y2], zorder=1, **style)  # type: ignore[arg-type]
    for loc, block in geometry.blocks.items():
        x0, y0, x1, y1 = geometry.box(loc)
        box = FancyBboxPatch((x0, y0), x1 - x0, y1 - y0, boxstyle="round,pad=0,rounding_size=4", fc=block.fill,
                             ec=block.edge, lw=1.5, zorder=3, gid=f"box:{loc}")  # fmt: skip
        ax.add_patch(box)
        if block.target:
            ring = FancyBboxPatch((x0 - RING, y0 - RING), x1 - x0 + 2 * RING, y1 - y0 + 2 * RING, fc="none",
                                  boxstyle="round,pad=0,rounding_size=6", ec=TARGET_COLOUR, lw=2.2, zorder=3,
                                  gid=f"box:{loc}")  # fmt: skip
            ax.add_patch(ring)
        lines = block.lines(*pos[loc])
        for n, (lab, x, y) in enumerate(lines):
            inside = n < len(block.title)
            _text(ax, lab, x, y, f"box:{loc}" if inside else f"label:{loc}:{n - len(block.title)}", inside)
    npcs = len(spec.npcs) + len(task.extra_npcs if task else [])
    ax.set_title(f"{spec.name} ({spec.id}) — {len(spec.locations)} locations, {npcs} NPCs", fontsize=12)
    targets = task is not None and bool(objective_targets(spec, task))
    ax.legend(handles=legend_handles(task is not None, targets), loc="upper left",
              bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=True, borderaxespad=0.5,
              handler_map={Glyph: _GlyphHandler()})  # fmt: skip
    return fig


def _text(ax: Axes, lab: Label, x: float, y: float, gid: str, inside: bool = False) -> None:
    backing = None if inside else {"boxstyle": f"round,pad={lab.pad / lab.size:.3f}", "fc": "white", "alpha": 0.9,
                                   "ec": lab.frame or "none", "lw": 1.2}  # fmt: skip
    ax.text(x, y, lab.text, fontsize=lab.size, color=lab.colour, fontweight="bold" if lab.bold else "normal",
            ha="center", va="center", zorder=5, bbox=backing, gid=gid)  # fmt: skip


class Glyph(Patch):
    """A legend entry shown as a text glyph in its colour, the way the map's labels show it."""

    def __init__(self, glyph: str, colour: str, label: str, bold: bool = False) -> None:
        super().__init__(color=colour, label=label)
        self.glyph, self.colour, self.bold = glyph, colour, bold


class _GlyphHandler(HandlerBase):
    def create_artists(  # type: ignore[override]
        self, legend: Legend, orig_handle: Glyph, xdescent: float, ydescent: float, width: float, height: float,
        fontsize: float, trans: Transform,
    ) -> list[Artist]:  # fmt: skip
        text = Text(width / 2 - xdescent, height / 2 - ydescent, orig_handle.glyph, color=orig_handle.colour,
                    fontsize=fontsize * (0.9 if len(orig_handle.glyph) > 1 else 1.6), ha="center", va="center",
                    fontweight="bold" if orig_handle.bold else "normal", transform=trans)  # fmt: skip
        return [text]


def legend_handles(with_task: bool, with_targets: bool) -> list[Artist]:
    """The legend: passages, doors, area kinds, NPC roles with the glyphs their labels use, and the target mark."""
    handles: list[Artist] = [
        Line2D([0], [0], color="#90a4ae", lw=1.6, label="passage"),
        Line2D([0], [0], color="#b71c1c", lw=2.2, linestyle="--", label="locked door"),
        Patch(fc=EXIT_COLOUR, ec=BORDER_COLOUR, label="exit"),
        Patch(fc=LOCATION_COLOUR, ec=RESTRICTED_COLOUR, label="restricted area"),
    ]
    for role, colour in ROLE_COLOURS.items():
        glyph = role_glyph(role)
        handles.append(Glyph(glyph, colour, f"{role} ({'enforcer' if glyph == ENFORCER_GLYPH else 'not an enforcer'})",
                             bold=glyph == ENFORCER_GLYPH))  # fmt: skip
    if with_task:
        handles.append(Glyph("team", TEAM_COLOUR, "team starts here", bold=True))
    if with_targets:
        handles.append(Patch(fc=LOCATION_COLOUR, ec=TARGET_COLOUR, lw=2.2,
                             label=f"{TARGET_GLYPH} objective target\n(place, person or item)"))  # fmt: skip
    return handles


def drawn_rectangles(fig: Figure) -> list[tuple[str, Rect]]:
    """The rendered extents (pixels) of everything drawn but passages, merged per box (with its text) or label.

    Boxes are ``box:<location>``, labels ``label:<location>:<n>``, plus ``title`` and ``legend``; draws ``fig``.
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    merged: dict[str, Rect] = {}
    ax = fig.axes[0]
    legend = ax.get_legend()
    named = [(a.get_gid(), a) for a in ax.get_children()] + [("title", ax.title)] + [("legend", legend)] * bool(legend)
    for gid, artist in named:
        if not gid or artist is None:
            continue
        patch: Artist | None = getattr(artist, "get_bbox_patch", lambda: None)()
        box = (patch or artist).get_window_extent(renderer)
        old = merged.get(gid, (box.x0, box.y0, box.x1, box.y1))
        merged[gid] = (min(old[0], box.x0), min(old[1], box.y0), max(old[2], box.x1), max(old[3], box.y1))
    return list(merged.items())


def draw_map(spec: MapSpec, out: Path, task: TaskSpec | None = None) -> Path:
    """Draw ``spec`` (with a task's extra NPCs, team start and objective targets, if given) to a PNG at ``out``."""
    fig = render_map(spec, task)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, bbox_inches="tight", pad_inches=0.15, facecolor="white")
    return out
