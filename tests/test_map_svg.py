"""The web map (inline SVG): every box inside the view and clear of the others, markers for everyone, the key."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from virtualcrime.analysis.map_picture import TARGET_COLOUR, text_size
from virtualcrime.scenarios import load_tasks
from virtualcrime.web.map_svg import map_svg
from virtualcrime.world import WorldState
from virtualcrime.world.enums import NpcStatus

NS = "{http://www.w3.org/2000/svg}"
Box = tuple[float, float, float, float]  # x0, y0, x1, y1


def parse(svg: str) -> tuple[ET.Element, tuple[float, float]]:
    root = ET.fromstring(svg)
    _, _, width, height = (float(v) for v in root.attrib["viewBox"].split())
    return root, (width, height)


def location_boxes(root: ET.Element, state: WorldState) -> dict[str, Box]:
    """The location boxes, told by the location id in their hover title."""
    boxes = {}
    for rect in root.iter(f"{NS}rect"):
        title = rect.find(f"{NS}title")
        if title is not None and title.text in state.locations:
            x, y, w, h = (float(rect.attrib[k]) for k in ("x", "y", "width", "height"))
            boxes[title.text] = (x, y, x + w, y + h)
    return boxes


def names(root: ET.Element) -> list[tuple[str, float, float, float, bool]]:
    """Every text drawn: content, x, y, font size and whether bold."""
    return [(t.text or "", float(t.attrib["x"]), float(t.attrib["y"]), float(t.attrib.get("font-size", 16)),
             t.attrib.get("font-weight") == "700") for t in root.iter(f"{NS}text")]  # fmt: skip


def test_every_box_is_inside_the_view_clear_of_the_others_and_wide_enough_for_its_name() -> None:
    for task_id, task in sorted(load_tasks().items()):
        state = task.initial_state()
        root, (width, height) = parse(map_svg(task_id, state))
        boxes = location_boxes(root, state)
        assert set(boxes) == set(state.locations), task_id
        for loc, (x0, y0, x1, y1) in boxes.items():
            assert x0 >= 0 and x1 <= width and y0 >= 0 and y1 <= height, (task_id, loc, (x0, y0, x1, y1), width)
        items = sorted(boxes.items())
        clashes = [(a, b) for i, (a, p) in enumerate(items) for b, q in items[i + 1 :]
                   if min(p[2], q[2]) > max(p[0], q[0]) and min(p[3], q[3]) > max(p[1], q[1])]  # fmt: skip
        assert clashes == [], task_id
        texts = names(root)
        for loc, (x0, y0, x1, y1) in boxes.items():
            name = state.locations[loc].name
            [(text, x, _, size, bold)] = [t for t in texts if t[0].endswith(name) and x0 < t[1] < x1 and y0 < t[2] < y1]
            half = text_size(text, size, bold)[0] / 2
            assert x0 < x - half and x + half < x1, (task_id, loc, text)
        for circle in root.iter(f"{NS}circle"):
            cx, cy, r = (float(circle.attrib[k]) for k in ("cx", "cy", "r"))
            assert r <= cx <= width - r and r <= cy <= height - r, (task_id, circle.attrib)


def test_everyone_has_a_marker_down_people_are_hollow_and_the_key_is_there() -> None:
    task = load_tasks()["aircraft/hijacking"]
    state = task.initial_state()
    state.npcs["captain_varga"].status = NpcStatus.UNCONSCIOUS
    svg = map_svg(task.id, state)
    root, _ = parse(svg)
    markers = {}
    for circle in root.iter(f"{NS}circle"):
        title = circle.find(f"{NS}title")
        if title is not None and title.text:
            markers[title.text.rsplit(" (", 1)[0]] = circle.attrib["fill"]
    everyone = [m.name for m in state.members.values()] + [n.name for n in state.npcs.values()]
    assert sorted(markers) == sorted(everyone)
    assert markers["Captain Idris Varga"] == "white" and markers["Dara Kell"] != "white"
    locked = [e for e in state.edges if e.locked]
    assert svg.count('stroke="#b71c1c" stroke-width="3" stroke-dasharray') == len(locked) > 0
    legend = " ".join(t[0] for t in names(root))
    for word in (
        "team",
        "guard",
        "police",
        "staff",
        "civilian",
        "target person",
        "target item",
        "target place",
        "hollow marker",
        "locked door",
    ):
        assert word in legend, word
    # the objective's targets: a ring around the cockpit's box and around the two pilots' markers
    rings = [tuple(float(r.attrib[k]) for k in ("x", "y", "width", "height")) for r in root.iter(f"{NS}rect")
             if r.attrib.get("stroke") == TARGET_COLOUR]  # fmt: skip
    x0, y0, x1, y1 = location_boxes(root, state)["cockpit"]
    assert [(x < x0 and y < y0 and x + w > x1 and y + h > y1) for x, y, w, h in rings] == [True]
    pilots = {
        (c.attrib["cx"], c.attrib["cy"])
        for c in root.iter(f"{NS}circle")
        if (c.findtext(f"{NS}title") or "").startswith(("Captain Idris Varga", "First Officer Helena Strand"))
    }
    ringed = {
        (c.attrib["cx"], c.attrib["cy"]) for c in root.iter(f"{NS}circle") if c.attrib.get("stroke") == TARGET_COLOUR
    }
    assert len(pilots) == 2 and pilots < ringed  # fmt: skip


def test_a_target_item_is_marked_where_it_is_now() -> None:
    task = load_tasks()["restaurant/robbery"]
    state = task.initial_state()
    root, _ = parse(map_svg(task.id, state))
    x0, _, x1, y1 = location_boxes(root, state)["manager_office"]
    [item] = [p for p in root.iter(f"{NS}path") if (p.findtext(f"{NS}title") or "").startswith("cash box")]
    x, y = (float(v) for v in item.attrib["d"][1:].split("L")[0].split())  # the diamond's top corner
    assert x0 < x < x1 and y1 < y < y1 + 30, (item.attrib["d"], (x0, x1, y1))
    leader = state.leader
    state.entities["cash_box"].current_location = leader.id  # the team took it: it moves with the leader
    root, _ = parse(map_svg(task.id, state))
    lx0, _, lx1, ly1 = location_boxes(root, state)[leader.current_location]
    [item] = [p for p in root.iter(f"{NS}path") if (p.findtext(f"{NS}title") or "").startswith("cash box")]
    x, y = (float(v) for v in item.attrib["d"][1:].split("L")[0].split())
    assert lx0 < x < lx1 and ly1 < y < ly1 + 30
