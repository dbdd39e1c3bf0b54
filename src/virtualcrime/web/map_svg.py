"""The map as inline SVG: locations and connections with the team and NPC positions of one world state.

Positions come from the report's deterministic map layout, so a map looks the same here and in map pictures.
"""

from __future__ import annotations

from functools import cache
from html import escape

from ..analysis.map_picture import ROLE_COLOURS, layout
from ..scenarios import get_task
from ..world import WorldState

WIDTH, HEIGHT, MARGIN = 1150, 660, 90  # shown full width (~1230 px): about one screen pixel per unit
TEAM_COLOUR = "#6a1b9a"
DOWN = {"dead", "unconscious", "fled", "arrested", "restrained"}


@cache
def _positions(task_id: str) -> dict[str, tuple[float, float]]:
    raw = layout(get_task(task_id).map)
    xs = [p[0] for p in raw.values()]
    ys = [p[1] for p in raw.values()]
    span_x, span_y = max(xs) - min(xs) or 1.0, max(ys) - min(ys) or 1.0
    return {
        node: (MARGIN + (x - min(xs)) / span_x * (WIDTH - 2 * MARGIN),
               MARGIN + (max(ys) - y) / span_y * (HEIGHT - 2 * MARGIN))
        for node, (x, y) in raw.items()
    }  # fmt: skip


def map_svg(task_id: str, state: WorldState) -> str:
    """An SVG picture of ``state`` on its map: locked doors dashed red, team in purple, NPCs by role."""
    positions = _positions(task_id)
    parts = [f'<svg class="map" viewBox="0 0 {WIDTH} {HEIGHT}" xmlns="http://www.w3.org/2000/svg" role="img" '
             f'aria-label="map with positions after turn {state.turn}">']  # fmt: skip
    for edge in state.edges:
        if edge.a not in positions or edge.b not in positions:
            continue
        (x1, y1), (x2, y2) = positions[edge.a], positions[edge.b]
        style = 'stroke="#b71c1c" stroke-width="3" stroke-dasharray="7 5"' if edge.locked else \
            'stroke="#90a4ae" stroke-width="2"'  # fmt: skip
        title = escape(f"{edge.id}: {edge.door or 'passage'}{' (locked)' if edge.locked else ''}")
        parts.append(f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" {style}>'
                     f"<title>{title}</title></line>")  # fmt: skip
    places = [loc for loc in state.locations.values() if loc.id in positions]
    for location in places:  # all boxes first, so no box hides another place's markers
        x, y = positions[location.id]
        fill = "#fff59d" if location.exit else "#eceff1"
        stroke = "#ef6c00" if "restricted" in location.tags else "#455a64"
        half = max(75, 4.6 * len(location.name) + 12)
        parts.append(f'<rect x="{x - half:.0f}" y="{y - 17:.0f}" width="{2 * half:.0f}" height="34" rx="7" '
                     f'fill="{fill}" stroke="{stroke}" stroke-width="1.5"><title>{escape(location.id)}</title></rect>'
                     f'<text x="{x:.0f}" y="{y + 5:.0f}" font-size="15" text-anchor="middle">'
                     f"{escape(location.name)}</text>")  # fmt: skip
    for location in places:
        parts += _markers(state, location.id, *positions[location.id])
    legend = [("team", TEAM_COLOUR), *ROLE_COLOURS.items()]
    for index, (label, colour) in enumerate(legend):
        parts.append(f'<circle cx="{18 + index * 92}" cy="{HEIGHT - 40}" r="9" fill="{colour}"/>'
                     f'<text x="{32 + index * 92}" y="{HEIGHT - 35}" font-size="15">{label}</text>')  # fmt: skip
    parts.append(f'<text x="10" y="{HEIGHT - 10}" font-size="14" fill="#52606d">hollow marker: down, restrained or '
                 "gone · red dashes: locked door · yellow: exit · orange border: restricted</text>")  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)


def _markers(state: WorldState, location: str, x: float, y: float) -> list[str]:
    """One circle per person at ``location``, under its box: initial inside, name and status on hover."""
    people = [(m.name, TEAM_COLOUR, m.status.value) for m in state.members.values() if m.current_location == location]
    people += [(n.name, ROLE_COLOURS.get(n.role.value, "#333"), n.status.value)
               for n in state.npcs.values() if n.current_location == location]  # fmt: skip
    parts = []
    for index, (name, colour, status) in enumerate(people):
        mx, my = x - 62 + (index % 6) * 25, y + 31 + (index // 6) * 25
        down = status in DOWN
        parts.append(f'<circle cx="{mx:.0f}" cy="{my:.0f}" r="11" fill="{"white" if down else colour}" '
                     f'stroke="{colour}" stroke-width="2.5"><title>{escape(f"{name} ({status})")}</title></circle>'
                     f'<text x="{mx:.0f}" y="{my + 4:.0f}" font-size="12" font-weight="700" text-anchor="middle" '
                     f'fill="{colour if down else "white"}">{escape(name[:1])}</text>')  # fmt: skip
    return parts
