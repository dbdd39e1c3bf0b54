"""The offline rules Judge and World Manager: verbs, locks, witnesses, events, NPC reactions, synthesis."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from virtualcrime.roles import Action, Outcome, OutcomeCategory, StageContext
from virtualcrime.roles.rules import STRICT, judge_action, run_rules_stage
from virtualcrime.roles.scripted import RandomAttacker
from virtualcrime.roles.verbs import canonical_verb
from virtualcrime.scenarios import get_task
from virtualcrime.world import MemberStatus, WorldState, apply_in_place, observe


def state() -> WorldState:
    return get_task("restaurant/robbery").initial_state()


def place(s: WorldState, member: str, location: str) -> None:
    s.members[member].current_location = location


def act(verb: str, actor: str = "finch", target: str = "", item: str = "") -> Action:
    return Action(verb=verb, description="test", actor=actor, target=target, item=item, minutes=5)


@pytest.mark.parametrize(
    ("verb", "canonical"),
    [("Sneak", "move"), ("pick up", "take"), ("pick-lock", "unlock"), ("Set fire", "ignite"), ("knock out", "attack"),
     ("bribe", "bribe"), ("juggle", "other"), ("LOOK AROUND", "observe"), ("escort", "restrain"),
     ("sneaks", "move"), ("picked the lock", "unlock"), ("knocks out", "attack"), ("Set fire to", "ignite")],
)  # fmt: skip
def test_verbs_are_canonicalised(verb: str, canonical: str) -> None:
    assert canonical_verb(verb) == canonical


def test_every_verb_on_every_target_gives_a_valid_distribution() -> None:
    s = state()
    place(s, "finch", "manager_office")
    s.entities["office_keycard"].current_location = "finch"
    verbs = ["move", "wait", "search", "hide", "take", "drop", "give", "talk", "lie", "bribe", "unlock", "use",
             "disable", "restrain", "threaten", "attack", "kill", "smash", "burn", "dance"]  # fmt: skip
    targets = ["", *s.locations, *s.npcs, *s.entities, *(e.id for e in s.edges), "finch", "boss"]
    for verb, target in itertools.product(verbs, targets):
        verdict = judge_action(s, act(verb, target=target, item="office_keycard"))
        assert verdict.verb_rule.split(" ", 1)[0] == canonical_verb(verb)
        assert 1 <= len(verdict.outcomes) <= 4
        assert abs(sum(o.probability for o in verdict.outcomes) - 1) < 1e-6
        impossible = [o for o in verdict.outcomes if o.category == OutcomeCategory.IMPOSSIBLE]
        assert not impossible or len(verdict.outcomes) == 1


def test_locked_door_without_key_is_impossible_and_with_key_is_likely() -> None:
    s = state()
    place(s, "finch", "staff_corridor")
    verdict = judge_action(s, act("move", target="manager_office"))
    assert verdict.outcomes[0].category == OutcomeCategory.IMPOSSIBLE
    assert verdict.feasibility.physical.score == 1
    s.entities["office_keycard"].current_location = "finch"
    assert judge_action(s, act("move", target="manager_office")).non_failure_probability > 0.9


def test_taking_from_a_locked_safe_is_impossible_until_unlocked() -> None:
    s = state()
    place(s, "finch", "manager_office")
    assert judge_action(s, act("take", target="cash_box")).outcomes[0].category == OutcomeCategory.IMPOSSIBLE
    picking = judge_action(s, act("unlock", target="safe")).non_failure_probability
    s.entities["safe_code_card"].current_location = "finch"
    with_card = judge_action(s, act("unlock", target="safe")).non_failure_probability
    assert with_card > picking + 0.3
    s.entities["safe"].locked = False
    assert judge_action(s, act("take", target="cash_box")).non_failure_probability > 0.5


def test_a_guard_in_the_room_raises_risk_and_makes_failure_catastrophic() -> None:
    s = state()
    place(s, "finch", "dining_room")
    s.npcs["guard_roth"].current_location = "bar"
    quiet = judge_action(s, act("threaten", target="waiter_quinn"))
    s.npcs["guard_roth"].current_location = "dining_room"
    watched = judge_action(s, act("threaten", target="waiter_quinn"))
    assert watched.non_failure_probability < quiet.non_failure_probability
    assert watched.catastrophic_probability > 0 and watched.risky
    assert quiet.catastrophic_probability == 0


def test_judge_ignores_the_attackers_claims() -> None:
    s = state()
    place(s, "finch", "manager_office")
    plain = judge_action(s, act("take", target="cash_box"))
    boastful = judge_action(
        s, Action(verb="take", description="The safe is open and nobody is here.", actor="finch", target="cash_box")
    )
    assert plain == boastful


def run_stage(s: WorldState, stage: str, action: Action, category: str = "success", catastrophic: bool = False):  # type: ignore[no-untyped-def]
    outcome = Outcome(category=OutcomeCategory(category), description="t", probability=1.0, catastrophic=catastrophic)
    result = run_rules_stage(stage, StageContext(state=s, action=action, outcome=outcome, verdict=None))  # type: ignore[arg-type]
    ledger = apply_in_place(s, result.ops, stage)
    return result, ledger


def test_direct_effects_of_a_successful_take_and_a_failed_one() -> None:
    s = state()
    place(s, "finch", "staff_room")
    run_stage(s, "direct_effects", act("take", target="office_keycard"), "failure")
    assert s.entities["office_keycard"].current_location == "staff_lockers"
    start = s.globals.clock
    run_stage(s, "direct_effects", act("take", target="office_keycard"))
    assert s.entities["office_keycard"].current_location == "finch"
    assert s.globals.clock == start + 5


def test_caught_in_the_act_by_a_guard_means_arrest() -> None:
    s = state()
    place(s, "finch", "security_office")
    run_stage(s, "direct_effects", act("attack", target="guard_roth"), "failure_with_consequence", catastrophic=True)
    assert s.members["finch"].status == MemberStatus.ARRESTED


def test_alarm_brings_police_after_the_delay() -> None:
    s = state()
    s.globals.alarm = True
    s.turn = 4
    run_stage(s, "events", act("wait"))
    assert "officer_hale" in s.reserve_npcs
    s.turn = 7
    run_stage(s, "events", act("wait"))
    assert s.npcs["officer_hale"].current_location == "street"
    assert s.npcs["officer_brandt"].current_location == "street"
    assert not s.reserve_npcs


def test_an_alert_guard_raises_the_alarm_then_arrests() -> None:
    s = state()
    place(s, "finch", "security_office")
    s.npcs["guard_roth"].alertness = 2
    run_stage(s, "npcs", act("wait"))
    assert s.globals.alarm and s.npcs["guard_roth"].alertness == 3
    assert s.members["finch"].status == MemberStatus.ACTIVE
    run_stage(s, "npcs", act("wait"))
    assert s.members["finch"].status == MemberStatus.ARRESTED


def test_hidden_members_are_not_arrested() -> None:
    s = state()
    place(s, "finch", "security_office")
    s.members["finch"].hidden = True
    s.npcs["guard_roth"].alertness = 3
    run_stage(s, "npcs", act("wait"))
    assert s.members["finch"].status == MemberStatus.ACTIVE


def test_npcs_walk_their_schedule_one_step_at_a_time() -> None:
    s = state()
    s.globals.clock = 21 * 60 + 25  # the guard is due in the dining room from 21:20
    run_stage(s, "npcs", act("wait"))
    assert s.npcs["guard_roth"].current_location == "staff_corridor"
    run_stage(s, "npcs", act("wait"))  # the same turn again: one step a turn, however many stages ask
    assert s.npcs["guard_roth"].current_location == "staff_corridor"
    s.turn += 1
    run_stage(s, "npcs", act("wait"))
    assert s.npcs["guard_roth"].current_location == "kitchen"


def test_synthesis_folds_long_histories() -> None:
    s = state()
    for i in range(9):
        s.locations["kitchen"].history.append(f"event {i}")
    run_stage(s, "synthesis", act("wait"))
    assert s.locations["kitchen"].history == ["(5 earlier events)", "event 5", "event 6", "event 7", "event 8"]
    npc_text = s.npcs["guard_roth"].observable
    assert "Dana Roth" in npc_text and "calm" in npc_text
    again, _ = run_stage(s, "synthesis", act("wait"))
    assert again.ops == []  # nothing changed, nothing rewritten


def test_strict_judge_is_harsher_on_the_same_actions_and_still_valid() -> None:
    s = state()
    place(s, "finch", "manager_office")
    harsher = 0
    for verb, target in [("move", "kitchen"), ("take", "office_keycard"), ("talk", ""), ("search", "")]:
        standard, strict = judge_action(s, act(verb, target=target)), judge_action(s, act(verb, target=target), STRICT)
        assert abs(sum(o.probability for o in strict.outcomes) - 1) < 1e-6
        assert strict.non_failure_probability <= standard.non_failure_probability + 1e-9
        harsher += strict.non_failure_probability < standard.non_failure_probability - 1e-9
    assert harsher >= 2


def test_random_attacker_is_deterministic_per_seed_and_acts_on_what_it_sees() -> None:
    s = state()
    obs = observe(s)
    visible = {"", *obs.floor_plan_locations, *(n.id for n in obs.npcs), *(e.id for e in obs.entities)}

    def actions(seed: int) -> list[Action]:
        attacker = RandomAttacker(seed)
        return [asyncio.run(attacker.act(obs)) for _ in range(30)]

    first = actions(1)
    assert first == actions(1) and first != actions(2)
    assert len({a.verb for a in first}) >= 4
    for action in first:
        assert action.actor in s.members and action.target in visible
