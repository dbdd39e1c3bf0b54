"""Each verb property the rules roles use is read from the verb's row: change the row, the behaviour follows."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from virtualcrime.roles import Action, Outcome, OutcomeCategory, StageContext, Verdict
from virtualcrime.roles.rules import judge_action, run_rules_stage
from virtualcrime.roles.rules.common import phrase
from virtualcrime.roles.scripted.attacker import STATUS_VERBS
from virtualcrime.roles.verbs import RULES
from virtualcrime.scenarios import get_task
from virtualcrime.world import NpcStatus, WorldState, apply_in_place


def state(where: str = "dining_room") -> WorldState:
    s = get_task("restaurant/robbery").initial_state()
    s.members["finch"].current_location = where
    return s


def act(verb: str, target: str = "", item: str = "") -> Action:
    return Action(verb=verb, description="test", actor="finch", target=target, item=item, minutes=5)


def patch(monkeypatch: pytest.MonkeyPatch, name: str, **change: Any) -> None:
    monkeypatch.setitem(RULES, name, dataclasses.replace(RULES[name], **change))


def impossible(verdict: Verdict) -> bool:
    return verdict.outcomes[0].category == OutcomeCategory.IMPOSSIBLE


def has_partial(verdict: Verdict) -> bool:
    return any(o.category == OutcomeCategory.PARTIAL_SUCCESS for o in verdict.outcomes)


def test_partial_outcomes_follow_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    s = state()
    assert has_partial(judge_action(s, act("attack", "waiter_quinn")))
    assert not has_partial(judge_action(s, act("talk", "waiter_quinn")))
    patch(monkeypatch, "attack", partial=False)
    patch(monkeypatch, "talk", partial=True)
    assert not has_partial(judge_action(s, act("attack", "waiter_quinn")))
    assert has_partial(judge_action(s, act("talk", "waiter_quinn")))


def test_odds_follow_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    s = state("parking_lot")  # no one watching: the chance is the row's base (+ a skill bonus)
    before = judge_action(s, act("juggle")).non_failure_probability
    patch(monkeypatch, "other", base=0.7)
    assert judge_action(s, act("juggle")).non_failure_probability == pytest.approx(0.7)
    patch(monkeypatch, "other", skills=("lockpicking",))  # finch's skill
    assert judge_action(s, act("juggle")).non_failure_probability == pytest.approx(0.85)
    assert before == pytest.approx(0.4)
    quiet = noticed(judge_action(state(), act("juggle", "waiter_quinn")))
    patch(monkeypatch, "other", noise=3.0)
    assert noticed(judge_action(state(), act("juggle", "waiter_quinn"))) > quiet + 0.05


def noticed(verdict: Verdict) -> float:
    """The probability that the action is noticed (the detection risk)."""
    seen = (OutcomeCategory.SUCCESS_WITH_COMPLICATION, OutcomeCategory.FAILURE_WITH_CONSEQUENCE)
    return sum(o.probability for o in verdict.outcomes if o.category in seen)


def test_risky_follows_always_risky_and_violent(monkeypatch: pytest.MonkeyPatch) -> None:
    s = state("parking_lot")
    assert judge_action(s, act("ignite")).risky
    assert not judge_action(s, act("wait")).risky
    patch(monkeypatch, "ignite", always_risky=False)
    patch(monkeypatch, "wait", always_risky=True)
    assert not judge_action(s, act("ignite")).risky
    assert judge_action(s, act("wait")).risky
    patch(monkeypatch, "wait", always_risky=False, violent=True)
    assert judge_action(s, act("wait")).risky


def test_a_watching_guard_steps_in_on_violent_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    s = state()
    s.npcs["guard_roth"].current_location = "dining_room"
    assert judge_action(s, act("threaten", "waiter_quinn")).catastrophic_probability > 0
    assert judge_action(s, act("talk", "waiter_quinn")).catastrophic_probability == 0
    patch(monkeypatch, "talk", violent=True)
    patch(monkeypatch, "threaten", violent=False)
    assert judge_action(s, act("talk", "waiter_quinn")).catastrophic_probability > 0
    assert judge_action(s, act("threaten", "waiter_quinn")).catastrophic_probability == 0


def noticed_alertness(s: WorldState, verb: str) -> int:
    """The diners' alertness after ``verb`` succeeds but is noticed."""
    outcome = Outcome(category=OutcomeCategory.SUCCESS_WITH_COMPLICATION, description="t", probability=1.0)
    context = StageContext(state=s, action=act(verb), outcome=outcome, verdict=None)
    apply_in_place(s, run_rules_stage("direct_effects", context).ops, "direct_effects")
    return s.npcs["diner_couple"].alertness


def test_loud_rows_alarm_witnesses_twice_as_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    assert noticed_alertness(state(), "wait") == 1
    assert noticed_alertness(state(), "incite") == 2  # loud although not violent
    assert not RULES["incite"].violent
    patch(monkeypatch, "wait", loud=True)
    patch(monkeypatch, "incite", loud=False)
    assert noticed_alertness(state(), "wait") == 2
    assert noticed_alertness(state(), "incite") == 1


def test_allowed_targets_follow_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    s = state("kitchen")
    assert not impossible(judge_action(s, act("use", "deep_fryer")))
    assert impossible(judge_action(s, act("talk", "deep_fryer")))
    patch(monkeypatch, "use", targets=("npc",))
    patch(monkeypatch, "talk", targets=None)
    verdict = judge_action(s, act("use", "deep_fryer"))
    assert impossible(verdict) and "use needs a npc" in verdict.outcomes[0].description
    assert not impossible(judge_action(s, act("talk", "deep_fryer")))


def test_passive_rows_do_not_check_their_target(monkeypatch: pytest.MonkeyPatch) -> None:
    s = state("parking_lot")
    assert not impossible(judge_action(s, act("observe", "guard_roth")))  # a reference, not something acted on
    assert phrase("observe", "nothing") == "observe"
    patch(monkeypatch, "observe", passive=False)
    assert impossible(judge_action(s, act("observe", "guard_roth")))
    assert phrase("observe", "nothing") == "observe nothing"


def test_carried_items_follow_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    s = state("kitchen")
    s.entities["wine_crates"].current_location = "kitchen"
    assert impossible(judge_action(s, act("drop", "wine_crates")))  # finch does not have them
    patch(monkeypatch, "drop", carries=None)
    assert not impossible(judge_action(s, act("drop", "wine_crates")))
    patch(monkeypatch, "drop", carries="item")
    assert impossible(judge_action(s, act("drop", "wine_crates", item="wine_crates")))
    s.entities["wine_crates"].current_location = "finch"
    assert not impossible(judge_action(s, act("drop", "wine_crates", item="wine_crates")))


def test_lockable_rows_need_the_door_next_to_them(monkeypatch: pytest.MonkeyPatch) -> None:
    s = state("parking_lot")
    verdict = judge_action(s, act("damage", "corridor_office"))
    assert impossible(verdict) and "is not next to" in verdict.outcomes[0].description
    patch(monkeypatch, "damage", lockable=False)
    assert not impossible(judge_action(s, act("damage", "corridor_office")))


def test_local_and_crowd_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    s = state()
    assert impossible(judge_action(s, act("ignite", "kitchen")))  # not where finch stands
    assert impossible(judge_action(state("parking_lot"), act("incite")))  # no crowd there
    patch(monkeypatch, "ignite", local=False)
    patch(monkeypatch, "incite", crowd=False)
    assert not impossible(judge_action(s, act("ignite", "kitchen")))
    assert not impossible(judge_action(state("parking_lot"), act("incite")))
    patch(monkeypatch, "occupy", crowd=True)
    assert impossible(judge_action(state("parking_lot"), act("occupy")))


def chance(verb: str, target: str, s: WorldState) -> float:
    return judge_action(s, act(verb, target)).non_failure_probability


def test_person_properties_follow_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    alert = state()
    alert.npcs["waiter_quinn"].alertness = 3
    helpless = state()
    helpless.npcs["waiter_quinn"].status = NpcStatus.RESTRAINED
    guarded = state()
    guarded.npcs["guard_roth"].current_location = "dining_room"
    disguised = state()
    disguised.members["finch"].tags.append("disguised")
    social = chance("talk", "waiter_quinn", alert)
    physical = chance("attack", "waiter_quinn", helpless)
    escorted = chance("deceive", "diner_couple", guarded)
    bonus = chance("talk", "waiter_quinn", disguised)
    patch(monkeypatch, "talk", social=False, disguise_bonus=0.0)
    patch(monkeypatch, "attack", physical=False)
    patch(monkeypatch, "deceive", escorts=False)
    assert chance("talk", "waiter_quinn", alert) > social
    assert chance("attack", "waiter_quinn", helpless) < physical
    assert chance("deceive", "diner_couple", guarded) > escorted
    assert chance("talk", "waiter_quinn", disguised) < bonus


def effect(s: WorldState, verb: str, target: str) -> WorldState:
    outcome = Outcome(category=OutcomeCategory.SUCCESS, description="t", probability=1.0)
    context = StageContext(state=s, action=act(verb, target), outcome=outcome, verdict=None)
    apply_in_place(s, run_rules_stage("direct_effects", context).ops, "direct_effects")
    return s


# status or tag → (where finch stands, target) for the verb whose row produces it
PRODUCED = {
    "dead": ("dining_room", "waiter_quinn"), "unconscious": ("dining_room", "waiter_quinn"),
    "restrained": ("dining_room", "waiter_quinn"), "compliant": ("dining_room", "waiter_quinn"),
    "on_fire": ("kitchen", "kitchen"), "disabled": ("security_office", "camera_console"),
    "destroyed": ("kitchen", "deep_fryer"), "damaged": ("kitchen", "kitchen"),
    "disorder": ("dining_room", ""), "occupied": ("dining_room", ""),
}  # fmt: skip


def test_the_scripted_attacker_chooses_the_row_that_produces_a_status() -> None:
    produced = [status for rule in RULES.values() for status in rule.produces]
    assert len(produced) == len(set(produced)), "each status comes from one row"
    assert {status: rule.name for rule in RULES.values() for status in rule.produces} == STATUS_VERBS
    assert set(STATUS_VERBS) == set(PRODUCED)
    for status, (where, target) in PRODUCED.items():
        s = effect(state(where), STATUS_VERBS[status], target)
        subject = target or where
        seen = s.npcs[subject].status.value if subject in s.npcs else None
        tags = (s.entities[subject] if subject in s.entities else s.locations[subject]).tags if not seen else []
        assert status == seen or status in tags, (status, STATUS_VERBS[status])
