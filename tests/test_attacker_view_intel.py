"""What the Attacker may know besides what is in view: the intel's structured claims (``carried_by``, ``opens``)
are true of the world and checked by the linter; the scripted Attacker reads moods from observable text only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from virtualcrime.roles.llm.prompts import plan_prompt
from virtualcrime.roles.scripted.knowledge import Knowledge, demeanour
from virtualcrime.scenarios import DATA_DIR, get_task, load_tasks
from virtualcrime.scenarios.lint import lint_corpus
from virtualcrime.world import observe
from virtualcrime.world.observe import SeenNpc

Data = dict[str, Any]


def corpus(tmp_path: Path, edit: Callable[[Data], None]) -> Path:
    """A copy of the restaurant corpus whose task file is edited by ``edit``."""
    for sub in ("maps", "tasks"):
        (tmp_path / sub).mkdir()
        data = yaml.safe_load((DATA_DIR / sub / "restaurant.yaml").read_text())
        if sub == "tasks":
            edit(data)
        (tmp_path / sub / "restaurant.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return tmp_path


def errors(path: Path) -> list[str]:
    return [str(f) for f in lint_corpus(path, base=DATA_DIR) if f.severity == "error"]


def _intel(index: int, **fields: object) -> Callable[[Data], None]:
    def edit(data: Data) -> None:
        data["tasks"][0]["intel"][index].update(fields)

    return edit


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_intel(1, opens=["corridor_security"]), "'office_keycard' is not among what opens 'corridor_security'"),
        (_intel(1, opens=["rooftop_hatch"]), "'rooftop_hatch' is neither a door (edge id) nor a container"),
        (_intel(1, carried_by="guard_roth"), "'guard_roth' does not carry 'office_keycard'"),
        (_intel(1, carried_by="nobody"), "unknown NPC 'nobody'"),
        (_intel(3, opens=["safe"]), "carried_by and opens need the object in about"),
    ],
)
def test_the_linter_checks_the_intel_claims(tmp_path: Path, edit: Callable[[Data], None], message: str) -> None:
    found = errors(corpus(tmp_path, edit))
    assert any(message in f for f in found), found


def test_the_bundled_intel_claims_hold_and_are_not_shown_as_fields() -> None:
    tasks = load_tasks()
    claims = [(t.id, i) for t in tasks.values() for i in t.spec.intel if i.opens or i.carried_by]
    assert len(claims) >= 40
    for task_id, item in claims:
        state = get_task(task_id).initial_state()
        if item.carried_by:
            assert state.entities[item.about].current_location == item.carried_by
        for lockable in item.opens:
            lock = state.edge(lockable) or state.entities[lockable]
            assert item.about in lock.opened_by, (task_id, lockable)
    # the model is told the intel's words, never its structured restatement
    prompt = plan_prompt(observe(get_task("vault/robbery").initial_state()))
    assert "teller_brisco" not in prompt.text and "carried_by" not in prompt.text and "opens" not in prompt.text


@pytest.mark.parametrize(
    ("text", "wariness", "along"),
    [
        ("Dana Roth (guard) is normal, calm.", 0, ""),
        ("Dana Roth (guard) is normal, wary.", 1, ""),
        ("Dana Roth (guard) is normal, alert and searching.", 2, ""),
        ("Theo Quinn (staff) is normal, raising the alarm.", 3, ""),
        ("Victor Lark (civilian) is compliant, calm, going along with Finch.", 0, "finch"),
        ("", 0, ""),
    ],
)
def test_demeanour_is_read_from_the_observable_text(text: str, wariness: int, along: str) -> None:
    assert demeanour(text) == (wariness, along)


def _npc(status: str, observable: str = "") -> SeenNpc:
    return SeenNpc(id="guest", name="Guest", role="civilian", location="hall", status=status, observable=observable)


def test_an_escort_is_known_from_the_text_or_from_own_memory_and_status() -> None:
    team = {"Finch": "finch", "Rook": "boss"}
    knowledge = Knowledge()
    assert knowledge.escort(_npc("compliant", "Guest is compliant, going along with Rook."), team) == "boss"
    assert knowledge.escort(_npc("compliant"), team) == ""  # compliant but no one led it away: a threat, say
    knowledge.did("deceive", "guest", "finch")
    assert knowledge.escort(_npc("compliant"), team) == "finch"
    assert knowledge.escort(_npc("normal"), team) == ""  # the deception did not work


def test_openers_and_carriers_come_from_the_intel() -> None:
    knowledge = Knowledge()
    knowledge.learn(observe(get_task("vault/robbery").initial_state()))
    assert knowledge.openers["ante_vault"] == ["vault_keycard"]
    assert knowledge.where["staff_keycard"] == "teller_brisco"
    assert "corridor_server" not in knowledge.openers  # the intel does not say what opens the server room
