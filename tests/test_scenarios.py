"""The scenario format, the loader's errors and the restaurant corpus."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from virtualcrime.scenarios import DATA_DIR, ScenarioError, get_task, load_objectives, load_tasks
from virtualcrime.scenarios.loader import forget_loaded, read_model
from virtualcrime.scenarios.schema import MapSpec
from virtualcrime.world import check, observe

RESTAURANT_TASKS = {"restaurant/robbery", "restaurant/kidnapping", "restaurant/assassination", "restaurant/arson"}


def test_restaurant_has_its_four_tasks() -> None:
    assert set(load_tasks()) >= RESTAURANT_TASKS


def test_objectives_match_design_allowances() -> None:
    objectives = load_objectives()
    assert len(objectives) == 14
    expected = {
        "kidnapping": (2, 1), "assassination": (4, 1), "robbery": (1, 1), "armored_truck_heist": (2, 2),
        "hijacking": (2, 1), "theft": (0, 1), "drug_theft": (0, 1), "smuggling": (0, 0), "data_theft": (0, 1),
        "riot": (2, 2), "radical_protest": (0, 1), "prison_break": (2, 2), "sabotage": (0, 3), "arson": (0, 4),
    }  # fmt: skip
    assert {k: (o.allowance.force, o.allowance.property) for k, o in objectives.items()} == expected


@pytest.mark.parametrize("task_id", sorted(RESTAURANT_TASKS))
def test_initial_states_are_consistent(task_id: str) -> None:
    state = get_task(task_id).initial_state()
    assert check(state) == []
    assert 14 <= len(state.locations) <= 18
    assert 5 <= len(state.npcs) <= 9
    assert any(n.enforcer for n in state.npcs.values())
    assert any(n.role.value == "police" for n in state.reserve_npcs.values())
    assert all(f.predicate is not None for f in [*state.checkpoints, *state.critical_failures])


def test_initial_state_is_fresh_each_time() -> None:
    task = get_task("restaurant/robbery")
    first = task.initial_state()
    first.members["boss"].current_location = "street"
    assert task.initial_state().members["boss"].current_location == "parking_lot"


def test_observation_shows_only_colocated_objects() -> None:
    state = get_task("restaurant/robbery").initial_state()
    obs = observe(state)
    assert {n.id for n in obs.npcs} == set()  # nobody is in the parking lot at the start
    assert {e.id for e in obs.entities} == {"team_van"}
    assert len(obs.floor_plan_locations) == len(state.locations)
    assert "cash_box" not in obs.model_dump_json().split('"entities"')[1]


def test_unknown_task_error_lists_known_tasks() -> None:
    with pytest.raises(ScenarioError, match="restaurant/robbery"):
        get_task("restaurant/heist")


def test_malformed_map_names_file_and_field(tmp_path: Path) -> None:
    data = yaml.safe_load((DATA_DIR / "maps" / "restaurant.yaml").read_text())
    data["locations"][0]["colour"] = "red"
    del data["npcs"][0]["role"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ScenarioError) as err:
        read_model(bad, MapSpec)
    text = str(err.value)
    assert str(bad) in text
    assert "locations.0.colour" in text and "npcs.0.role" in text


def test_unparseable_yaml_is_a_scenario_error(tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("id: [unclosed\n")
    with pytest.raises(ScenarioError, match="cannot read YAML"):
        read_model(bad, MapSpec)


def test_user_corpus_directory_loads_the_same_way(tmp_path: Path) -> None:
    for sub in ("maps", "tasks"):
        (tmp_path / sub).mkdir()
        for path in (DATA_DIR / sub).glob("*.yaml"):
            (tmp_path / sub / path.name).write_text(path.read_text())
    (tmp_path / "objectives.yaml").write_text((DATA_DIR / "objectives.yaml").read_text())
    tasks = load_tasks(tmp_path)
    assert set(tasks) >= RESTAURANT_TASKS
    text = (tmp_path / "tasks" / "restaurant.yaml").read_text().replace("objective: robbery", "objective: heist", 1)
    (tmp_path / "tasks" / "restaurant.yaml").write_text(text)
    forget_loaded()
    with pytest.raises(ScenarioError, match="unknown objective 'heist'"):
        load_tasks(tmp_path)
    forget_loaded()


DESIGN_TABLE = {
    "restaurant": {"kidnapping", "assassination", "robbery", "arson"},
    "private_club": {"kidnapping", "theft", "drug_theft", "riot"},
    "robotics_company": {"data_theft", "sabotage", "theft", "arson"},
    "prison": {"prison_break", "riot", "smuggling", "assassination"},
    "aircraft": {"hijacking", "smuggling", "sabotage"},
    "ship": {"hijacking", "smuggling", "theft"},
    "vault": {"robbery", "armored_truck_heist", "theft"},
    "hospital": {"drug_theft", "kidnapping", "data_theft", "sabotage"},
    "university": {"radical_protest", "data_theft", "riot", "arson"},
    "consulate": {"riot", "radical_protest", "data_theft", "kidnapping"},
    "shopping_mall": {"robbery", "armored_truck_heist", "theft"},
}


def test_corpus_matches_the_design_table(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from virtualcrime.cli.main import main

    assert main(["tasks", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 40
    assert {(r["map"], r["objective"]) for r in rows} == {(m, o) for m, objs in DESIGN_TABLE.items() for o in objs}
    assert len({r["objective"] for r in rows}) == 14
    objectives = load_objectives()
    for row in rows:
        assert row["id"] == f"{row['map']}/{row['objective']}"
        assert (row["allowed_force"], row["allowed_property"]) == (
            objectives[row["objective"]].allowance.force,
            objectives[row["objective"]].allowance.property,
        )
        assert row["category"] == objectives[row["objective"]].category.value
        assert 14 <= row["n_locations"] <= 18 and 5 <= row["n_npcs"] <= 9 and row["n_guards"] >= 1


@pytest.mark.parametrize("map_id", sorted(DESIGN_TABLE))
def test_every_map_is_consistent_and_has_enforcers(map_id: str) -> None:
    tasks = [t for t in load_tasks().values() if t.map.id == map_id]
    for task in tasks:
        state = task.initial_state()
        assert check(state) == []
        assert any(n.enforcer for n in [*state.npcs.values(), *state.reserve_npcs.values()])
        assert 2 <= len(state.members) <= 4


def test_every_task_is_won_offline_on_some_seed() -> None:
    from virtualcrime.engine.solve import solve

    unsolved = [task_id for task_id, task in sorted(load_tasks().items()) if solve(task, range(10)).wins == 0]
    assert unsolved == []
