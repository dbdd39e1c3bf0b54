"""Map pictures render for every bundled map, at a sane size, through the CLI too, with nothing overlapping."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch
from matplotlib.text import Text
from PIL import Image

from virtualcrime.analysis.map_picture import (
    ROLE_COLOURS,
    TARGET_COLOUR,
    TARGET_GLYPH,
    draw_map,
    drawn_rectangles,
    layout,
    map_geometry,
    objective_targets,
    overlaps,
    render_map,
)
from virtualcrime.cli.main import main
from virtualcrime.scenarios import MapSpec, Task, TaskSpec, load_tasks

# Rendering and measuring a picture takes about 0.15 s: every bare map, and the tasks whose pictures carry the
# most labels, are rendered; every map and task is checked on its geometry.
RENDERED_TASKS = ["aircraft/hijacking", "restaurant/robbery", "ship/smuggling", "private_club/drug_theft",
                  "university/data_theft", "robotics_company/data_theft"]  # fmt: skip


@cache
def tasks() -> dict[str, Task]:
    return load_tasks()


def bundled_maps() -> dict[str, MapSpec]:
    return {t.map.id: t.map for t in tasks().values()}


def every_case() -> list[tuple[str, MapSpec, TaskSpec | None]]:
    maps = [(map_id, spec, None) for map_id, spec in sorted(bundled_maps().items())]
    return maps + [(task_id, t.map, t.spec) for task_id, t in sorted(tasks().items())]


def test_every_map_renders_to_a_sane_png(tmp_path: Path) -> None:
    for map_id, spec in sorted(bundled_maps().items()):
        out = draw_map(spec, tmp_path / f"{map_id}.png")
        with Image.open(out) as image:
            width, height = image.size
            assert image.format == "PNG"
            assert 800 <= width <= 4000 and 600 <= height <= 4000, (map_id, image.size)
            colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
            assert colours is not None and len(colours) > 50, f"{map_id} looks blank"
        assert out.stat().st_size > 20_000


def test_layout_is_deterministic_and_covers_every_location() -> None:
    spec = bundled_maps()["restaurant"]
    first, second = layout(spec), layout(spec)
    assert first == second
    assert set(first) == {loc.id for loc in spec.locations}
    task = tasks()["aircraft/hijacking"]
    assert map_geometry(task.map, task.spec) == map_geometry(task.map, task.spec)


def test_no_box_or_label_overlaps_in_the_layout_of_any_map_or_task() -> None:
    assert len(every_case()) == 11 + 40
    for name, spec, task in every_case():
        geometry = map_geometry(spec, task)
        rects = geometry.rectangles()
        assert overlaps(rects) == [], name
        width, height = geometry.size
        assert all(r[0] >= 0 and r[2] <= width and r[1] >= 0 and r[3] <= height for _, r in rects), name
        names = {r for r, _ in rects}
        assert {f"box:{loc.id}" for loc in spec.locations} <= names
        npcs = [*spec.npcs, *(task.extra_npcs if task else [])]
        assert sum(len(b.below) for b in geometry.blocks.values()) >= len(npcs), f"{name}: an NPC has no label"


def measured(fig: Figure) -> dict[str, tuple[float, float, float, float]]:
    return dict(drawn_rectangles(fig))


def box_texts_fit(fig: Figure) -> list[str]:
    """Names of boxes whose text spills out of the box as rendered."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = {p.get_gid(): p.get_window_extent(renderer) for p in fig.axes[0].patches
             if isinstance(p, FancyBboxPatch) and p.get_facecolor()[3] > 0}  # fmt: skip
    spilled = []
    for text in fig.axes[0].texts:
        gid = text.get_gid() or ""
        if gid.startswith("box:"):
            extent, box = text.get_window_extent(renderer), boxes[gid]
            if not (box.x0 < extent.x0 and extent.x1 < box.x1 and box.y0 < extent.y0 and extent.y1 < box.y1):
                spilled.append(f"{gid} {text.get_text()!r}")
    return spilled


@pytest.mark.parametrize("name", [*sorted(bundled_maps()), *RENDERED_TASKS])
def test_nothing_overlaps_in_the_rendered_picture(name: str) -> None:
    spec, task = (tasks()[name].map, tasks()[name].spec) if "/" in name else (bundled_maps()[name], None)
    fig = render_map(spec, task)
    rects = measured(fig)
    assert overlaps(list(rects.items())) == []
    assert {f"box:{loc.id}" for loc in spec.locations} | {"title", "legend"} <= set(rects)
    assert box_texts_fit(fig) == []
    for gid, (x0, y0, x1, y1) in rects.items():  # inside the canvas, so nothing is cut off before saving
        assert gid == "title" or gid == "legend" or (x0 >= 0 and x1 <= fig.bbox.width and y0 >= 0), gid
        assert gid == "legend" or y1 <= fig.bbox.height + 40, gid


def legend_glyphs(fig: Figure) -> dict[str, tuple[str, str]]:
    """Legend label -> (glyph, colour) for the entries drawn as text glyphs."""
    legend = fig.axes[0].get_legend()
    assert legend is not None
    return {label.get_text(): (handle.get_text(), str(handle.get_color()))
            for handle, label in zip(legend.legend_handles, legend.get_texts(), strict=True)
            if isinstance(handle, Text)}  # fmt: skip


def test_the_legend_shows_the_glyphs_the_labels_use() -> None:
    task = tasks()["aircraft/hijacking"]
    fig = render_map(task.map, task.spec)
    fig.canvas.draw()
    glyphs = {label.split()[0]: glyph for label, glyph in legend_glyphs(fig).items()}
    assert glyphs["guard"] == ("★", ROLE_COLOURS["guard"]) and glyphs["police"] == ("★", ROLE_COLOURS["police"])
    assert glyphs["staff"] == ("•", ROLE_COLOURS["staff"]) and glyphs["civilian"] == ("•", ROLE_COLOURS["civilian"])
    by_colour = {ROLE_COLOURS[role]: glyphs[role][0] for role in ROLE_COLOURS}
    labels = [t for t in fig.axes[0].texts if (t.get_gid() or "").startswith("label:")]
    npc_labels = [t for t in labels if t.get_color() in by_colour]
    assert len(npc_labels) == len(task.map.npcs) + len(task.spec.extra_npcs)
    for text in npc_labels:
        assert text.get_text().startswith(by_colour[str(text.get_color())] + " "), text.get_text()
    legend = fig.axes[0].get_legend()
    assert legend is not None
    assert any(TARGET_GLYPH in t.get_text() and "target" in t.get_text() for t in legend.get_texts())


def test_a_bare_map_has_no_target_or_team_in_its_legend() -> None:
    fig = render_map(bundled_maps()["aircraft"])
    legend = fig.axes[0].get_legend()
    assert legend is not None
    assert not any("target" in t.get_text() or "team" in t.get_text() for t in legend.get_texts())
    assert not any(TARGET_GLYPH in t.get_text() for t in fig.axes[0].texts)


def test_targets_come_from_the_checkpoint_predicates() -> None:
    def targets(task_id: str) -> tuple[set[str], set[str], dict[str, str]]:
        task = tasks()[task_id]
        found = objective_targets(task.map, task.spec)
        return set(found.locations), set(found.npcs), {item.id: item.location for item in found.items}

    assert targets("aircraft/hijacking") == ({"cockpit"}, {"captain_varga", "first_officer_strand"}, {})
    assert targets("restaurant/robbery") == ({"parking_lot"}, set(), {"cash_box": "manager_office"})
    assert targets("consulate/kidnapping") == ({"side_street"}, {"consul_vintra"}, {})
    assert targets("ship/hijacking")[:2] == ({"bridge", "engine_control_room"}, {"captain_penhallow", "chief_okonjo"})
    assert targets("restaurant/arson") == ({"kitchen", "parking_lot"}, set(), {})
    # carried by a team member: drawn where that member starts
    task = tasks()["robotics_company/data_theft"]
    holder = next(m for m in task.spec.team if m.id == "hex")
    assert targets("robotics_company/data_theft") == ({"server_room", "car_park"}, set(), {"team_drive": holder.start})
    for task_id, task in tasks().items():
        assert objective_targets(task.map, task.spec), f"{task_id} has no target"


def test_the_targets_are_marked_in_the_picture() -> None:
    task = tasks()["aircraft/hijacking"]
    fig = render_map(task.map, task.spec)
    rings = [p for p in fig.axes[0].patches if p.get_gid() == "box:cockpit" and p.get_facecolor()[3] == 0]
    assert len(rings) == 1 and rings[0].get_edgecolor() == pytest.approx(to_rgba(TARGET_COLOUR))
    cockpit = next(t for t in fig.axes[0].texts if t.get_gid() == "box:cockpit")
    assert cockpit.get_text().startswith(TARGET_GLYPH)
    framed = {t.get_text() for t in fig.axes[0].texts
              if t.get_bbox_patch() is not None and t.get_bbox_patch().get_edgecolor()[3] > 0}  # fmt: skip
    assert framed == {"• Captain Idris Varga", "• First Officer Helena Strand"}
    assert sum(TARGET_GLYPH in t.get_text() for t in fig.axes[0].texts if t.get_gid() != "box:cockpit") == 0

    task = tasks()["restaurant/robbery"]
    fig = render_map(task.map, task.spec)
    items = [t for t in fig.axes[0].texts if "cash box" in t.get_text()]
    assert len(items) == 1 and items[0].get_text().startswith(TARGET_GLYPH)
    assert (items[0].get_gid() or "").startswith("label:manager_office:")


def test_cli_map_writes_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pic.png"
    assert main(["map", "restaurant/kidnapping", "--out", str(out)]) == 0
    assert out.exists() and "wrote" in capsys.readouterr().out
    assert main(["map", "atlantis"]) == 2
