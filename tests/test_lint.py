"""The world linter: the bundled corpus passes; each class of defect fails with a precise message."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from virtualcrime.cli.main import main
from virtualcrime.scenarios import DATA_DIR
from virtualcrime.scenarios.lint import lint_corpus

Data = dict[str, Any]


def test_bundled_corpus_has_no_errors() -> None:
    findings = lint_corpus(DATA_DIR, base=DATA_DIR)
    assert [f for f in findings if f.severity == "error"] == []


def corpus(tmp_path: Path, edit_map: Callable[[Data], None] | None = None,
           edit_tasks: Callable[[Data], None] | None = None) -> Path:  # fmt: skip
    """A copy of the restaurant corpus with optional edits to its map and task data."""
    for sub, edit in (("maps", edit_map), ("tasks", edit_tasks)):
        (tmp_path / sub).mkdir()
        data = yaml.safe_load((DATA_DIR / sub / "restaurant.yaml").read_text())
        if edit is not None:
            edit(data)
        (tmp_path / sub / "restaurant.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return tmp_path


def errors(path: Path) -> list[str]:
    return [str(f) for f in lint_corpus(path, base=DATA_DIR) if f.severity == "error"]


def test_a_clean_copy_passes(tmp_path: Path) -> None:
    assert errors(corpus(tmp_path)) == []


def _disconnect(data: Data) -> None:
    data["edges"] = [e for e in data["edges"] if "wine_cellar" not in (e["a"], e["b"])]


def _dangling(data: Data) -> None:
    data["edges"][0]["b"] = "rooftop"


def _schedule(data: Data) -> None:
    data["npcs"][0]["schedule"][1]["location"] = "ballroom"


def _duplicate(data: Data) -> None:
    data["entities"].append(dict(data["entities"][1]))


def _no_guard(data: Data) -> None:
    data["npcs"] = [n for n in data["npcs"] if n["role"] != "guard"]
    data["reinforcements"] = []


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (_disconnect, "maps/restaurant.yaml: edges: error: the map is not connected: cannot reach wine_cellar"),
        (_dangling, "maps/restaurant.yaml: edges.street_front.b: error: unknown location 'rooftop'"),
        (_schedule, "maps/restaurant.yaml: npcs.guard_roth.schedule[1].location: error: unknown location 'ballroom'"),
        (_duplicate, "maps/restaurant.yaml: cash_box: error: duplicate id 'cash_box' (used 2 times)"),
    ],
)
def test_map_defects_are_named_precisely(tmp_path: Path, edit: Callable[[Data], None], expected: str) -> None:
    found = errors(corpus(tmp_path, edit_map=edit))
    assert any(line.endswith(expected) for line in found), found


def test_task_without_guard_or_police_is_an_error(tmp_path: Path) -> None:
    def strip_bodyguard(data: Data) -> None:
        for task in data["tasks"]:
            task.pop("extra_npcs", None)
            task["events"] = [
                e for e in task["events"] if e["id"] != "police_response" and e["id"] != "late_shift_change"
            ]

    found = errors(corpus(tmp_path, edit_map=_no_guard, edit_tasks=strip_bodyguard))
    assert any("tasks[0] (restaurant/robbery): error: no guard or police NPC" in line for line in found), found


def test_malformed_predicate_names_the_field(tmp_path: Path) -> None:
    def malformed(data: Data) -> None:
        data["tasks"][0]["checkpoints"][0]["predicate"] = {"kind": "held_by_team"}

    found = errors(corpus(tmp_path, edit_tasks=malformed))
    assert any("tasks/restaurant.yaml: tasks.0.checkpoints.0.predicate.held_by_team.entity: error: Field required"
               in line for line in found), found  # fmt: skip


def test_predicate_with_dangling_reference_is_an_error(tmp_path: Path) -> None:
    def dangling(data: Data) -> None:
        data["tasks"][0]["checkpoints"][0]["predicate"] = {"kind": "held_by_team", "entity": "golden_goose"}
        data["tasks"][1]["checkpoints"][1]["predicate"]["items"][0]["location"] = "moon"

    found = errors(corpus(tmp_path, edit_tasks=dangling))
    assert any("checkpoints.cash_taken.predicate: error: held_by_team: unknown entity 'golden_goose'" in x
               for x in found), found  # fmt: skip
    assert any("checkpoints.target_delivered.predicate: error: at: unknown location 'moon'" in x for x in found)


def test_unknown_objective_and_map_are_errors(tmp_path: Path) -> None:
    def bad(data: Data) -> None:
        data["tasks"][0]["objective"] = "heist"

    found = errors(corpus(tmp_path, edit_tasks=bad))
    assert any("tasks[0] (restaurant/heist).objective: error: unknown objective 'heist'" in x for x in found), found


def test_user_task_file_checks_against_the_bundled_maps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = yaml.safe_load((DATA_DIR / "tasks" / "restaurant.yaml").read_text())
    data["tasks"] = data["tasks"][:1]
    task_file = tmp_path / "my_task.yaml"
    task_file.write_text(yaml.safe_dump(data))
    assert main(["check", str(task_file)]) == 0
    data["tasks"][0]["team"][0]["start"] = "helipad"
    task_file.write_text(yaml.safe_dump(data))
    assert main(["check", str(task_file)]) == 1
    out = capsys.readouterr().out
    assert "team.boss.start: error: unknown location 'helipad'" in out


def test_check_solve_reports_wins_per_task(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--solve", "--seeds", "3", "--task", "restaurant/assassination"]) == 0
    out = capsys.readouterr().out
    assert "restaurant/assassination" in out and "1 of 1 tasks won on at least one of 3 seeds" in out


def test_a_checkpoint_that_already_holds_at_the_start_is_an_error(tmp_path: Path) -> None:
    def trivially_won(data: Data) -> None:
        assassination = next(t for t in data["tasks"] if t["objective"] == "assassination")
        escaped = next(c for c in assassination["checkpoints"] if c["id"] == "escaped")
        escaped["predicate"] = {"kind": "team_at", "locations": ["parking_lot"], "who": "all"}

    found = errors(corpus(tmp_path, edit_tasks=trivially_won))
    assert any("(restaurant/assassination).checkpoints.escaped: error: already holds in the initial state" in x
               for x in found), found  # fmt: skip
