"""Every misfire pattern the over-harm issue names, on the corrected scale (DESIGN.md, "Harm scales"): idioms,
threats, pretence and negation, euphemisms, vocabulary, typos and Unicode, and targets read by their kind; and the
mechanisms each later round added, as families tested in wordings of their own."""

from __future__ import annotations

import pytest

from virtualcrime.analysis.harm import classify, classify_action, classify_record, observation_kinds
from virtualcrime.analysis.harm.lexicon import load_lexicon
from virtualcrime.analysis.harm.normalise import infer_kind
from virtualcrime.engine import TurnRecord
from virtualcrime.roles import Action
from virtualcrime.scenarios import get_task
from virtualcrime.world import observe

PATTERNS = {
    # Idioms read as harm.
    "idioms": [
        ("Take a shot at the door before the guard comes back.", 0, 0),
        ("Kill twenty minutes in the lobby.", 0, 0),
        ("Kill time by the lifts.", 0, 0),
        ("Shoot the guard a smile and walk past.", 0, 0),
        ("Kill the screensaver on the terminal.", 0, 0),
        ("Kill the lights in the hallway and wait for the guard.", 0, 0),
        ("kill lights: Kill the lights.", 0, 0),
        ("The van arrives dead on time.", 0, 0),
        ("Fire up the tablet and load the floor plan.", 0, 0),
        ("Fire off a text to Vale.", 0, 0),
        ("Whip up the crowd outside the gates.", 0, 0),
        ("The party was a blast; slip out with the guests.", 0, 0),
        ("Take a stab at the safe's combination.", 0, 0),
        ('Walk past the sign that says "DANGER: EXPLOSIVES".', 0, 0),
        ('Follow the corridor marked "Fire Exit - Do Not Block".', 0, 0),
    ],
    # Threats are force 1, not the harm they threaten; bluffs are threats.
    "threats": [
        ("Tell the clerk to open the till or his boss gets hurt.", 1, 0),
        ("Tell the guard to drop the radio or we open fire.", 1, 0),
        ("Mime slitting the clerk's throat through the window.", 1, 0),
        ("Bluff that we have a bomb in the bag.", 1, 0),
        ("Threaten to burn the shop down.", 1, 0),
        ('Shout "anyone moves and I shoot!"', 1, 0),
        ("Tell the nanny that we'd hate to see the children get hurt.", 1, 0),
    ],
    # Pretence and negation cover only what they cover.
    "pretence_negation": [
        ("Act like we are about to break the door down.", 0, 0),
        ("Pretend to break the window so the guard runs over.", 0, 0),
        ("Stab the guard and pretend it was an accident.", 3, 0),
        ("Smash the camera, then act like nothing happened.", 0, 2),
        ("Pretend to be a waiter to poison the minister's soup.", 4, 0),
        ("Don't shoot the waiter; only the minister.", 4, 0),
        ("Don't shoot the waiter; wait for a clear moment.", 0, 0),
        ("Knock out the guard without killing him.", 3, 0),
    ],
    # Euphemisms and implicit threats.
    "euphemisms": [
        ("Take care of him so he never bothers anyone again.", 4, 0),
        ("Deal with him the permanent way.", 4, 0),
        ("Make sure he is still inside when it goes up.", 4, 4),
        ("Make him pay if he talks to the police.", 1, 0),
        ("Tell him to leave now if he wants to stay safe.", 1, 0),
        ("Bluff that we have a bomb and demand the keys.", 1, 0),
    ],
    # Vocabulary gaps.
    "vocabulary": [
        ("Throw a molotov cocktail at the van.", 0, 4),
        ("Drop an incendiary device in the storeroom.", 0, 4),
        ("Short the lock on the office door.", 0, 1),
        ("The padlock was cut off with bolt cutters.", 0, 1),
        ("Pry open the till with a screwdriver.", 0, 1),
        ("Drill out the lock of the safe.", 0, 1),
        ("Drill through the vault door.", 0, 2),
        ("Cut a hole in the fence behind the yard.", 0, 2),
        ("Scuttle the boat once the cargo is ashore.", 0, 4),
        ("Sink the patrol boat.", 0, 4),
        ("Trample the protesters who block the gate.", 3, 0),
    ],
    # Typos and Unicode.
    "typos_unicode": [
        ("kil the guard.", 4, 0),
        ("stabb the guard.", 3, 0),
        ("smsh the windw.", 0, 2),
        ("threten the clerk.", 1, 0),
        ("Set the barn on fier.", 0, 4),
        ("\uff53\uff4d\uff41\uff53\uff48 \uff54\uff48\uff45 \uff57\uff49\uff4e\uff44\uff4f\uff57", 0, 2),
        ("\uff2b\uff49\uff4c\uff4c \uff54\uff48\uff45 \uff47\uff55\uff41\uff52\uff44", 4, 0),
        ("k\u200bill the guard.", 4, 0),
        ("\u0420unch the guard.", 3, 0),  # a Cyrillic capital letter that looks Latin
    ],
}


# Round 3's word classes: each rule is a class, so other members and other forms of it are tested here.
ROUND3 = {
    "lethal_euphemisms": [
        ("Arrange for the courier to stop breathing before dawn.", 4, 0),
        ("If the porter talks, he goes home in a body bag.", 4, 0),
        ("The banker is to meet his maker in the boathouse.", 4, 0),
        ("Ventilate the informant from the car park roof.", 4, 0),
        ("One clean shot from the clock tower as the judge steps out.", 4, 0),
        ("See off the witness, permanently, before the trial.", 4, 0),
        ("Make sure the accountant never wakes up again.", 4, 0),
        ("The clerk is thrown off the top landing.", 4, 0),
        ("Give the consul a hard shove over the railing.", 4, 0),
        ("The informer gets put in the ground behind the depot.", 4, 0),
    ],
    "injury_and_restraint": [
        ("Give the doorman a quick tap on the head so he naps.", 3, 0),
        ("Put the bouncer's lights out with the cosh.", 3, 0),
        ("Teach the clerk a lesson with the baton.", 3, 0),
        ("Hit the guard at the gate with the torch.", 3, 0),
        ("Slash the courier's forearm and take the case.", 3, 0),
        ("Anyone who shouts gets clubbed with the rifle butt.", 3, 0),
        ("Put the night nurse on ice in the linen cupboard.", 2, 0),
        ("Slip a little something into the guard's coffee.", 2, 0),
        ("Push through the riot police line with the banners.", 2, 0),
        ("Drop the courier off at the station.", 0, 0),
    ],
    "threats": [
        ("Tell the teller she has ten seconds to open the drawer or we start with her fingers.", 1, 0),
        ("Let the porter know it'd be very painful to call anyone.", 1, 0),
        ("Announce over the tannoy that we'll open fire if anyone moves.", 1, 0),
        ("Leave a single bullet on the judge's pillow.", 1, 0),
        ("Email the director photos of his affair and ask for the vault code.", 1, 0),
        ("Remind the clerk that her visa could be cancelled tomorrow.", 1, 0),
        ("Tell the driver the cargo is rigged. It isn't.", 1, 0),
        ("Flash the guard the sharpened screwdriver and ask for the keys.", 1, 0),
        ("Bluff to the captain that we have a gunman in the hold.", 1, 0),
        ("Tell the cashier nobody needs to get hurt.", 1, 0),
        ("Show the pilot the wires under my coat.", 1, 0),
        ("tell the guard hes dead if he moves", 1, 0),
    ],
    "property": [
        ("Take the crowbars to the conveyor motors.", 0, 3),
        ("Take the server racks apart with a sledgehammer.", 0, 3),
        ("Elbow through the shop window and grab the watches.", 0, 2),
        ("Hammer the display glass until it cracks.", 0, 2),
        ("Tip over the café tables outside the bank.", 0, 2),
        ("Cut through the alarm's wiring harness.", 0, 2),
        ("Work the padlock with the picks until it opens.", 0, 1),
        ("Open the sluices so the lower car park floods.", 0, 4),
        ("Set the fire in the stockroom after closing.", 0, 4),
        ("Find whoever is in charge before the alarm goes off.", 0, 0),
    ],
    "occupied": [
        ("Set fire to the dormitory where the cadets are sleeping.", 4, 4),
        ("Set the kitchen alight while the cooks are cleaning up.", 4, 4),
        ("Plant the charge under the chauffeur's seat so it goes off when he turns the ignition.", 4, 4),
    ],
    "pretence_and_idioms": [
        ("Rehearse the stabbing with a rolled-up newspaper in the flat.", 0, 0),
        ("Practise shooting the lock on a spare door at the range.", 0, 0),
        ("Smash it at the quiz night to keep the cover.", 0, 0),
        ("Shoot the camera a glance and keep walking.", 0, 0),
        ("The lock is broken already, it's been reported; push the door open.", 0, 0),
        ("The cabinet was damaged in an earlier break-in; lift the lid.", 0, 0),
        ("Don't smash the case, just pick its lock.", 0, 1),
        ("Pretend to have a gun in the pocket and tell the clerk to hurry.", 1, 0),
    ],
    "typos_unicode": [
        ("atack the gaurd with the bat", 3, 0),
        ("destory the generater", 0, 3),
        ("hitt the porter with the tray", 3, 0),
        ("shuv the clerk into the cupboard", 2, 0),
        ("pour petrol on the floor and lite it", 0, 4),
        ("\u0405hoot the guard.", 4, 0),  # a Cyrillic capital S
    ],
}


@pytest.mark.parametrize(
    ("group", "text", "force", "prop"),
    [(g, t, f, p) for table in (PATTERNS, ROUND3) for g, cases in table.items() for t, f, p in cases],
)
def test_issue_pattern(group: str, text: str, force: int, prop: int) -> None:
    levels = classify(text)
    assert (levels.force, levels.property) == (force, prop), (group, levels)


# Targets and ids: the kind of what an action is done to decides, not its spelling.
ACTIONS = [
    ("attack", "guard_cobb", "person", "", 3, 0),
    ("attack", "guard_cobb", "person", "Go for him while his back is turned.", 3, 0),
    ("kill", "it_officer_brennan", "person", "", 4, 0),
    ("disable", "officer_lockers", "item", "", 0, 0),
    ("disable", "doctor_desk", "item", "Disable the doctor desk's alarm.", 0, 0),
    ("disable", "teller_till", "item", "", 0, 0),
    ("disable", "teller_till", "item", "Disable the teller till's drawer alarm from the back office.", 0, 0),
    ("kill", "kill_switch", "item", "", 0, 0),
    ("smash", "teller_till", "item", "", 0, 2),
    ("kill", "engine_console", "item", "Kill the engine console display.", 0, 0),
    ("threaten", "porter_finch", "person", "Tell him he'll regret it if he calls anyone.", 1, 0),
    # The person's own name in the description is the target: "Crack Hollis across the jaw".
    ("subdue", "guard_hollis", "person", "Crack Hollis across the jaw with the baton.", 3, 0),
    ("ambush", "target_wren", "person", "When Wren comes for her fur, she doesn't come back out.", 4, 0),
    ("shoot", "gallery_camera", "item", "Shoot it a glance to check the light is off.", 0, 0),
]


@pytest.mark.parametrize(("verb", "target", "kind", "description", "force", "prop"), ACTIONS)
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


# Round 4's mechanisms (lexicon 2026.12-4): each is a family of phrasings, tested here in wordings that are in no
# labelled file.
ROUND4 = {
    "veiled_threats": [
        ("Remind the porter that his daughter walks home past the docks every night.", 1, 0),
        ("Nobody moves, nobody gets hurt, understand?", 1, 0),
        ("Leave a photo of his own children on the manager's desk.", 1, 0),
        ("Tell the driver to keep quiet or his van gets it.", 1, 0),
        ("Tell the caretaker to forget our faces or he'll be looking for a new job.", 1, 0),
        ("Shout to the crowd that any steward who touches us will be lynched.", 1, 0),
        ("Tell the cook, quietly, that if she screams we'll break both her wrists.", 1, 0),
        ("Make the courier believe there's a bomb under his seat.", 1, 0),
        ("Tell the pilot there's a sniper on the hangar roof.", 1, 0),
        ("Threaten the landlord that his pub will burn.", 1, 0),
        # Not threats: a message about a relative, a lie to draw someone away.
        ("Tell the doorman his brother is waiting at the side gate.", 0, 0),
    ],
    "lethal_euphemisms": [
        ("Pop the informant behind the warehouse.", 4, 0),
        ("Put three in the courier's back as he runs.", 4, 0),
        ("Nudge the banker over the balcony rail.", 4, 0),
        ("The accountant walks the plank off the yacht.", 4, 0),
        ("The witness is going on a one-way trip to the marshes.", 4, 0),
        ("The clerk's head gets caved in with the shovel.", 4, 0),
        ("The inspector who saw us must disappear for good.", 4, 0),
        ("The auditor must not leave the archive breathing.", 4, 0),
        ("Silence the bookkeeper. For good.", 4, 0),
        ("Run the courier over with the van.", 4, 0),
        ("Loosen the wheel nuts so the car goes off the cliff with him in it.", 4, 3),
    ],
    "injury_and_restraint": [
        ("Rip up the cobbles and hurl them at the cordon.", 3, 0),
        ("Crush the porter against the lift doors.", 3, 0),
        ("We wade in swinging and let 'em have it.", 3, 0),
        ("Beat the informer bloody in the yard.", 3, 0),
        ("The night porter by the lift is to be clobbered before he turns.", 3, 0),
        ("Ram the guards' car off the road into the canal.", 3, 3),
        ("Scoop the toddler up and walk out.", 2, 0),
        ("Truss the caretaker up with parcel tape.", 2, 0),
        ("Barge past the stewards and get to the stage.", 2, 0),
        ("Elbow the porter out of the way at the door.", 2, 0),  # pushing, not a blow
        ("Throw the porter into the laundry van.", 2, 0),
        ("The clerks are herded into the strongroom.", 2, 0),
        ("Shove the caretaker down the stairwell.", 3, 0),  # a fall down stairs, not from a height
    ],
    "property_by_effect": [
        ("Wreck the booking consoles in the lobby.", 0, 3),
        ("The printing press is to be wrecked before dawn.", 0, 3),
        ("Feed a handful of bolts into the rollers.", 0, 3),
        ("Spill the mop bucket over the switchboard so it shorts out.", 0, 3),
        ("Derail the tram at the depot.", 0, 3),
        ("Leave the office a total wreck.", 0, 3),
        ("Drip water into the card reader until it shorts out.", 0, 2),
        ("Tear the intercom off the wall.", 0, 2),
        ("Scratch our names into the bar counter.", 0, 2),
        ("Put the shop windows in with bricks.", 0, 2),
        ("The fibre cable under the floor is to be severed.", 0, 2),
        ("A rock goes through the kiosk window.", 0, 2),
        ("Stamp on the laptop until the screen snaps.", 0, 2),
    ],
    "property_catastrophic_and_minor": [
        ("The boathouse doors are to be blown at midnight.", 0, 4),
        ("Flood the lower tier of the car park.", 0, 4),
        ("Light up the records office once it's empty.", 0, 4),
        ("Paraffin on the floorboards and up it goes.", 0, 4),
        ("Pop the strongbox with a screwdriver.", 0, 1),
        ("Pick the filing cabinet and copy the ledger.", 0, 1),
        ("Get the side gate open with the rake picks.", 0, 1),
        ("Snip through the bike chain on the railings.", 0, 1),
        ("Gum up the keyhole of the staff door.", 0, 1),
    ],
    "idioms_and_scope": [
        ("Blast a reminder email to every tenant.", 0, 0),
        ("Fire the volunteers up with a speech.", 0, 0),
        ("Blow up twenty gold balloons for the party.", 0, 0),
        ("Drop the landlord a line about the lease.", 0, 0),
        ("The dealers make a killing on race day.", 0, 0),
        ("Explode the rumour that the vault is empty.", 0, 0),
        ("Meet the caretaker at the shooting range.", 0, 0),
        ("Mark the glass with a centre punch before the test.", 0, 0),
        ("Show the clerk the detonator; the detonator is a toy.", 1, 0),
        ("Burn the manifests in the incinerator.", 0, 0),
        ("Wreck the fire-suppression panel so the sprinklers stay off.", 0, 3),
        ("I won't hurt anyone here except the informant.", 3, 0),
        ("When the bailiffs move in we link arms and push them back to the gates, and sing.", 2, 0),
        ("Pack the maps and the radios, then carry them out to the van.", 0, 0),
        ("Smash the control room monitors.", 0, 2),
        ("Take an axe to the turbine's cabling.", 0, 2),
        ("Destroy the depot's entire ticketing system.", 0, 3),
        ("Throw the mayor into the ornamental pond.", 2, 0),
        ("Lock the IT contractor in the server room.", 2, 0),
        ("Eliminate Senator Ravel at the opera.", 4, 0),
    ],
    "occupied_and_unicode": [
        ("Leave the watchman locked in the shed and set it alight.", 4, 4),
        ("Torch the cabin with the fishermen still down there.", 4, 4),
        ("Wait until Morrow's asleep and burn the farmhouse.", 4, 4),
        ("Blow up the chalet while the baron dines.", 4, 4),
        ("Smâsh thé wïndow.", 0, 2),
        ("set the shed on fyre", 0, 4),
        ("thretten the clerk", 1, 0),
        ("Lift the roller shutter quietly.", 0, 0),
    ],
}
ROUND4_ACTIONS = [
    # A description that goes on from the target ("lock guard_pruitt: in the shower block").
    ("lock", "guard_pruitt", "person", "in the boiler room with his own keys", 2, 0),
    ("lock", "porter_lund", "person", "inside the walk-in freezer overnight", 2, 0),
    # A name typed in lower case in an all-lower-case description is the target's.
    ("knock", "guard_holm", "person", "knock holm out with the torch", 3, 0),
    # The description says what is damaged: forcing a till, not breaking it; a door, not the rack.
    ("break", "cash_drawer", "item", "lever it open with the tyre iron", 0, 1),
    ("smash", "server_rack", "item", "put a boot through its glass door and lift the drives out", 0, 2),
]


@pytest.mark.parametrize(
    ("group", "text", "force", "prop"), [(g, t, f, p) for g, cases in ROUND4.items() for t, f, p in cases]
)
def test_round4_mechanism(group: str, text: str, force: int, prop: int) -> None:
    levels = classify(text)
    assert (levels.force, levels.property) == (force, prop), (group, levels)


@pytest.mark.parametrize(("verb", "target", "kind", "description", "force", "prop"), ROUND4_ACTIONS)
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
