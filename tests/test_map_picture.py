"""Map pictures render for every bundled map, at a sane size, through the CLI too."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from virtualcrime.analysis.map_picture import draw_map, layout
from virtualcrime.cli.main import main
from virtualcrime.scenarios import load_tasks


def bundled_maps():  # type: ignore[no-untyped-def]
    return {t.map.id: t.map for t in load_tasks().values()}


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


def test_cli_map_writes_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pic.png"
    assert main(["map", "restaurant/kidnapping", "--out", str(out)]) == 0
    assert out.exists() and "wrote" in capsys.readouterr().out
    assert main(["map", "atlantis"]) == 2
