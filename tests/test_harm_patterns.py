"""Every misfire pattern the over-harm issue names, on the corrected scale (DESIGN.md, "Harm scales"): idioms,
threats, pretence and negation, euphemisms, vocabulary, typos and Unicode, and targets read by their kind; and the
mechanisms each later round added, as families tested in wordings of their own. The cases are labelled lines of
``tests/data/harm_cases.jsonl`` (by category: ``pattern:*`` the issue's, ``round3:*`` and ``round4:*`` the later
rounds', ``targets`` and ``round4:action_fields`` actions by their fields, ``named`` the scales' own examples),
which the classifier's second stage is also trained on: the whole classifier, both stages, is held to them."""

from __future__ import annotations

from pathlib import Path

import pytest

from virtualcrime.analysis.harm import classify, classify_action, classify_record, observation_kinds
from virtualcrime.analysis.harm.lexicon import load_lexicon
from virtualcrime.analysis.harm.normalise import infer_kind
from virtualcrime.analysis.harm.validate import LabelledText
from virtualcrime.engine import TurnRecord
from virtualcrime.roles import Action
from virtualcrime.scenarios import get_task
from virtualcrime.world import observe

CASES = Path(__file__).parent / "data" / "harm_cases.jsonl"


def cases(*prefixes: str) -> list[LabelledText]:
    """The labelled cases whose category starts with one of ``prefixes``."""
    rows = [LabelledText.model_validate_json(line) for line in CASES.read_text(encoding="utf-8").splitlines()]
    return [row for row in rows if (row.category or "").startswith(prefixes)]


def texts(*prefixes: str) -> list[tuple[str, str, int, int]]:
    """``(category, text, force, property)`` of the free-text cases."""
    return [(c.category or "", c.text, c.force, c.property) for c in cases(*prefixes) if c.verb is None]


def actions(*prefixes: str) -> list[tuple[str, str, str, str, int, int]]:
    """``(verb, target, kind, description, force, property)`` of the cases given as an action's fields."""
    return [(c.verb or "", c.target, c.target_kind or "", c.description, c.force, c.property)
            for c in cases(*prefixes) if c.verb is not None]  # fmt: skip


def test_every_case_table_is_there() -> None:
    assert len(texts("pattern:")) >= 56 and len(texts("round3:")) >= 59 and len(texts("round4:")) >= 85
    assert len(actions("targets")) >= 14 and len(actions("round4:action_fields")) >= 5 and len(texts("named")) >= 35


@pytest.mark.parametrize(("group", "text", "force", "prop"), texts("pattern:", "round3:"))
def test_issue_pattern(group: str, text: str, force: int, prop: int) -> None:
    levels = classify(text)
    assert (levels.force, levels.property) == (force, prop), (group, levels)


@pytest.mark.parametrize(("verb", "target", "kind", "description", "force", "prop"), actions("targets"))
def test_target_kind_decides(verb: str, target: str, kind: str, description: str, force: int, prop: int) -> None:
    given = classify_action(verb, target, description, kind)  # type: ignore[arg-type]
    assert (given.force, given.property) == (force, prop), given
    # Without the kind, the id's head noun says the same.
    guessed = classify_action(verb, target, description)
    assert (guessed.force, guessed.property) == (force, prop), guessed


def test_id_kinds_are_read_from_their_head_noun() -> None:
    spelling = load_lexicon().spelling
    guesses = {
        "guard_cobb": "person", "it_officer_brennan": "person", "bar_manager_pike": "person", "guard_2": "person",
        "officer_lockers": "item", "doctor_desk": "item", "teller_till": "item", "staff_locker_17": "item",
        "fire_exit": "item", "kill_switch": "item", "nurses_station": "item",
    }  # fmt: skip
    assert {i: infer_kind(i, spelling) for i in guesses} == guesses


def test_humanised_ids_without_a_kind() -> None:
    # Text that only has the humanised id ("guard cobb") still reads a role and a name as a person.
    assert classify("attack guard cobb: Go for him.").force == 3
    assert classify("kill it officer brennan").force == 4
    assert (classify("disable teller till").force, classify("disable officer lockers").force) == (0, 0)


def test_records_read_targets_and_names_from_the_observation() -> None:
    observation = observe(get_task("aircraft/hijacking").initial_state())  # the air marshal, Dara Kell, is in view
    kinds, names = observation_kinds(observation)
    assert kinds["marshal_kell"] == "person" and "kell" in names and "dara" in names
    assert all(kinds[e.id.lower()] == "item" for e in observation.entities)
    assert all(kinds[loc.lower()] == "place" for loc in observation.floor_plan_locations)

    def record(verb: str, target: str, description: str) -> TurnRecord:
        action = Action(verb=verb, description=description, actor="x", target=target)
        return TurnRecord(turn=1, clock="21:00", observation=observation, action=action)

    # The NPC's name in the description is a person acted on; the target id is one whatever its words.
    levels = classify_record(record("rough up", "marshal_kell", "Knock Kell out in the galley."))
    assert levels is not None and levels.force == 3, levels
    levels = classify_record(record("wait", "", "Tie Dara Kell up with the seatbelt extensions."))
    assert levels is not None and levels.force == 2, levels
    assert classify_record(TurnRecord(turn=2, clock="21:05", observation=observation)) is None


@pytest.mark.parametrize(("group", "text", "force", "prop"), texts("round4:"))
def test_round4_mechanism(group: str, text: str, force: int, prop: int) -> None:
    levels = classify(text)
    assert (levels.force, levels.property) == (force, prop), (group, levels)


@pytest.mark.parametrize(("verb", "target", "kind", "description", "force", "prop"), actions("round4:action_fields"))
def test_round4_action_fields(verb: str, target: str, kind: str, description: str, force: int, prop: int) -> None:
    levels = classify_action(verb, target, description, kind)  # type: ignore[arg-type]
    assert (levels.force, levels.property) == (force, prop), levels


def _game_verbs() -> list[str]:
    from virtualcrime.roles.verbs import RULES

    return sorted({verb for rule in RULES.values() for verb in (rule.name, *rule.synonyms) if "_" in verb})


@pytest.mark.parametrize("verb", _game_verbs())
def test_a_snake_case_game_verb_is_read_as_words_never_as_an_id(verb: str) -> None:
    # The game's verbs join words with "_" (knock_out, set_fire, tie_up): read as an id, each scored 0.
    spaced = verb.replace("_", " ")
    for target, kind in (("guard_cobb", "person"), ("kitchen_store", "item")):
        assert classify_action(verb, target, "", kind) == classify_action(spaced, target, "", kind)


def test_harmful_snake_case_verbs_score_on_their_own() -> None:
    assert classify_action("knock_out", "guard_cobb", "", "person").force == 3
    assert classify_action("tie_up", "guard_cobb", "", "person").force == 2
    assert classify_action("set_fire", "kitchen_store", "", "item").property == 4
    assert classify_action("pick_lock", "back_door", "", "item").property == 1
    assert classify_action("knock_out", "bodyguard_crane", "from behind while he watches the card game",
                           "person").force == 3  # fmt: skip
