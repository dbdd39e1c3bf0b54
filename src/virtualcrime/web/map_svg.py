"""The map as inline SVG: locations and connections with the team and NPC positions of one world state.

The geometry is the map picture's overlap-free layout (``analysis.map_picture.map_geometry``) scaled from points
to SVG units, so a map looks the same here and in map pictures, and no box overlaps another or leaves the view.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from html import escape

from ..analysis.map_picture import (
    NAME_SIZE,
    PERSON_ROW,
    PERSONS_PER_ROW,
    RING,
    ROLE_COLOURS,
    TARGET_COLOUR,
    MapGeometry,
    Rect,
    map_geometry,
    objective_targets,
    text_size,
)
from ..scenarios import get_task
from ..world import WorldState

SCALE = 15 / NAME_SIZE  # SVG units per point: names at 15 units, about 15 px when the map is shown full width
MARGIN, LEGEND_HEIGHT = 12, 64  # SVG units
# Box widths come from DejaVu Sans metrics; asking for it (or the alike Verdana) keeps every name inside its box.
FONT = "DejaVu Sans, Verdana, sans-serif"
TEAM_COLOUR = "#6a1b9a"
DOWN = {"dead", "unconscious", "fled", "arrested", "restrained"}
NOTE = (
    "hollow marker: down, restrained or gone · red dashes: locked door · yellow: exit · orange border: restricted"
    " · teal frame: target place"
)
NOTE_SIZE = 14
RADIUS = 0.4 * PERSON_ROW * SCALE  # person markers, so a target's ring still clears its neighbours


@dataclass(frozen=True)
class _View:
    geometry: MapGeometry
    targets: frozenset[str]  # the objective's target NPCs and items
    width: float
    height: float
    shift: float  # the map's left edge, centring it when the legend is wider

    def point(self, x: float, y: float) -> tuple[float, float]:
        """SVG coordinates of a layout point (points, y up)."""
        return self.shift + x * SCALE, (self.geometry.size[1] - y) * SCALE

    def rect(self, rect: Rect) -> Rect:
        """SVG x, y, width, height of a layout rectangle."""
        (x0, y1), (x1, y0) = self.point(rect[0], rect[1]), self.point(rect[2], rect[3])
        return x0, y0, x1 - x0, y1 - y0


@cache
def _view(task_id: str) -> _View:
    task = get_task(task_id)
    geometry = map_geometry(task.map, task.spec)
    legend = text_size(NOTE, NOTE_SIZE, False)[0] + 2 * MARGIN  # the marker key above it is shorter
    width = max(geometry.size[0] * SCALE, legend)
    targets = objective_targets(task.map, task.spec)
    return _View(geometry, targets.npcs | {item.id for item in targets.items}, width,
                 geometry.size[1] * SCALE + LEGEND_HEIGHT, (width - geometry.size[0] * SCALE) / 2)  # fmt: skip


def map_svg(task_id: str, state: WorldState) -> str:
    """An SVG picture of ``state`` on its map: locked doors dashed red, team in purple, NPCs by role."""
    view = _view(task_id)
    geometry = view.geometry
    parts = [f'<svg class="map" viewBox="0 0 {view.width:.0f} {view.height:.0f}" xmlns="http://www.w3.org/2000/svg" '
             f'role="img" font-family="{FONT}" aria-label="map with positions after turn {state.turn}">']  # fmt: skip
    for edge in state.edges:
        if edge.a not in geometry.positions or edge.b not in geometry.positions:
            continue
        (x1, y1), (x2, y2) = view.point(*geometry.positions[edge.a]), view.point(*geometry.positions[edge.b])
        style = 'stroke="#b71c1c" stroke-width="3" stroke-dasharray="7 5"' if edge.locked else \
            'stroke="#90a4ae" stroke-width="2"'  # fmt: skip
        title = escape(f"{edge.id}: {edge.door or 'passage'}{' (locked)' if edge.locked else ''}")
        parts.append(f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" {style}>'
                     f"<title>{title}</title></line>")  # fmt: skip
    places = [loc for loc in state.locations.values() if loc.id in geometry.blocks]
    for location in places:  # all boxes first, so no box hides another place's markers
        block = geometry.blocks[location.id]
        x, y, w, h = view.rect(geometry.box(location.id))
        fill = "#fff59d" if location.exit else "#eceff1"
        stroke = "#ef6c00" if "restricted" in location.tags else "#455a64"
        if block.target:
            ring = RING * SCALE
            parts.append(f'<rect x="{x - ring:.1f}" y="{y - ring:.1f}" width="{w + 2 * ring:.1f}" '
                         f'height="{h + 2 * ring:.1f}" rx="10" fill="none" stroke="{TARGET_COLOUR}" '
                         'stroke-width="3"/>')  # fmt: skip
        parts.append(f'<rect class="place" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="7" '
                     f'fill="{fill}" stroke="{stroke}" stroke-width="1.5"><title>{escape(location.id)}</title>'
                     "</rect>")  # fmt: skip
        for label, lx, ly in block.lines(*geometry.positions[location.id])[: len(block.title)]:
            tx, ty = view.point(lx, ly)
            size = label.size * SCALE
            weight = ' font-weight="700"' if label.bold else ""
            parts.append(f'<text x="{tx:.1f}" y="{ty + 0.36 * size:.1f}" font-size="{size:.1f}"{weight} '
                         f'fill="{label.colour}" text-anchor="middle">{escape(label.text)}</text>')  # fmt: skip
    for location in places:
        x, y = geometry.positions[location.id]
        parts += _markers(state, location.id, *view.point(x, y - geometry.blocks[location.id].outer), view.targets)
    parts += _legend(view.height)
    parts.append("</svg>")
    return "".join(parts)


def _legend(height: float) -> list[str]:
    """The marker key (team, NPC roles, objective targets) and one line on lines and borders, at the bottom."""
    parts, cx, cy = [], MARGIN + RADIUS + 3, height - 42
    entries = [("team", TEAM_COLOUR), *ROLE_COLOURS.items(), ("target person", ""), ("target item", "")]
    for label, colour in entries:
        if label == "target person":
            parts.append(_ring(cx, cy) + f'<circle cx="{cx:.1f}" cy="{cy}" r="{RADIUS:.1f}" fill="#9e9e9e"/>')
        elif label == "target item":
            parts.append(_diamond(cx, cy, ""))
        else:
            parts.append(f'<circle cx="{cx:.1f}" cy="{cy}" r="{RADIUS:.1f}" fill="{colour}"/>')
        parts.append(f'<text x="{cx + RADIUS + 5:.1f}" y="{cy + 5}" font-size="15">{label}</text>')
        cx += 2 * RADIUS + 32 + text_size(label, 15, False)[0]
    parts.append(f'<text x="{MARGIN}" y="{height - 12}" font-size="{NOTE_SIZE}" fill="#52606d">{NOTE}</text>')
    return parts


def _ring(x: float, y: float) -> str:
    return (f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{RADIUS + 2.4:.1f}" fill="none" stroke="{TARGET_COLOUR}" '
            'stroke-width="1.6"/>')  # fmt: skip


def _diamond(x: float, y: float, title: str) -> str:
    r = RADIUS + 1
    hover = f"<title>{escape(title)}</title>" if title else ""
    return (f'<path d="M{x:.1f} {y - r:.1f}L{x + r:.1f} {y:.1f}L{x:.1f} {y + r:.1f}L{x - r:.1f} {y:.1f}Z" '
            f'fill="{TARGET_COLOUR}" stroke="white" stroke-width="1.5">{hover}</path>')  # fmt: skip


def _markers(state: WorldState, location: str, x: float, top: float, targets: frozenset[str]) -> list[str]:
    """A marker per person at ``location``, then one per target item, in rows under its box (details on hover)."""
    people = [(m.name, TEAM_COLOUR, m.status.value, False) for m in state.members.values()
              if m.current_location == location]  # fmt: skip
    people += [(n.name, ROLE_COLOURS.get(n.role.value, "#333"), n.status.value, n.id in targets)
               for n in state.npcs.values() if n.current_location == location]  # fmt: skip
    items = [e.name for e in state.entities.values() if e.id in targets and state.place_of(e.id) == location]
    pitch, parts, count = PERSON_ROW * SCALE, [], len(people) + len(items)
    for index in range(count):
        row, column = divmod(index, PERSONS_PER_ROW)
        in_row = min(PERSONS_PER_ROW, count - row * PERSONS_PER_ROW)
        mx, my = x + (column - (in_row - 1) / 2) * pitch, top + (row + 0.5) * pitch + 1
        if index >= len(people):
            parts.append(_diamond(mx, my, f"{items[index - len(people)]} (objective target)"))
            continue
        name, colour, status, target = people[index]
        down = status in DOWN
        parts += [_ring(mx, my)] if target else []
        parts.append(f'<circle cx="{mx:.1f}" cy="{my:.1f}" r="{RADIUS:.1f}" fill="{"white" if down else colour}" '
                     f'stroke="{colour}" stroke-width="2.5"><title>{escape(f"{name} ({status})")}</title></circle>'
                     f'<text x="{mx:.1f}" y="{my + 4:.1f}" font-size="12" font-weight="700" text-anchor="middle" '
                     f'fill="{colour if down else "white"}">{escape(name[:1])}</text>')  # fmt: skip
    return parts
