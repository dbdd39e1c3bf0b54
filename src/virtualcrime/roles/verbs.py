"""Verb rules: the one table from which the ``rules`` roles (and the scripted Attacker) read what a verb means.

The Attacker writes its verb as free text ("picked the lock", "Knocks out", "sweet-talk"); ``match_verb`` maps
it through the synonym lexicon (built from the rows' ``synonyms``) to one ``VerbRule``, or to the generic
``other`` rule. Every property of a verb lives on its row; no other module keeps its own list of verb names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

TargetKind = Literal["location", "edge", "entity", "npc", "member", "none"]


def words(text: str) -> tuple[str, ...]:
    """A row's synonyms written as one string: whitespace separates them, ``_`` joins a multi-word verb."""
    return tuple(text.split())


@dataclass(frozen=True)
class VerbRule:
    """How the rules roles treat one verb rule (a row of ``RULES``).

    Odds: ``base`` is the chance of success with no skill and no witnesses; ``noise`` scales how conspicuous
    the action is to NPCs present; ``skills`` are team skills that make it easier; ``disguise_bonus`` is added
    to the chance when the actor is disguised and acts on a person.

    Harm and noise: ``violent`` means force (or the threat of it) against people: a guard watching steps in,
    and the turn is risky. ``loud`` means witnesses who notice it jump two alertness levels instead of one;
    it differs from ``violent`` on purpose — smashing, burning and stirring a crowd alarm bystanders although
    no one is hurt. ``always_risky`` marks the turn risky even when no one can see it (property harm: damage,
    fire). ``partial`` means the effect can land halfway (a blow that only injures, a fire that only
    smoulders), so the outcome distribution has a partial-success share.

    Targets: ``targets`` lists the target kinds the verb can act on (``None``: any). ``passive`` verbs act on
    the actor only (the target is only a reference, never checked). ``carries`` names the action field whose
    item the actor must already carry (drop: the target, give: the item). ``lockable`` verbs work on a door
    (which must be next to the actor), a container or a device. ``local`` verbs may name a location only if
    the actor stands in it. ``crowd`` verbs need a crowd (two or more civilians or staff) present.

    People: ``social`` verbs work on a person's goodwill and fail against someone very alert; ``physical``
    verbs lay hands on the person (certain against someone helpless); ``escorts`` verbs make a civilian follow
    the actor, which a guard standing by interferes with.

    ``produces`` are the NPC statuses or object tags that the verb's success brings about and for which the
    scripted Attacker chooses it (each status comes from one row only). ``synonyms`` are the free verbs the
    lexicon maps to this rule (the rule's own name is always one).
    """

    name: str
    base: float
    noise: float
    skills: tuple[str, ...] = ()
    violent: bool = False
    loud: bool = False
    always_risky: bool = False
    partial: bool = False
    targets: tuple[TargetKind, ...] | None = None
    passive: bool = False
    carries: Literal["target", "item"] | None = None
    lockable: bool = False
    local: bool = False
    crowd: bool = False
    social: bool = False
    physical: bool = False
    escorts: bool = False
    disguise_bonus: float = 0.0
    produces: tuple[str, ...] = ()
    synonyms: tuple[str, ...] = ()


PEOPLE: tuple[TargetKind, ...] = ("npc",)

RULES: dict[str, VerbRule] = {
    r.name: r
    for r in (
        VerbRule(
            "move", 0.97, 0.3, ("stealth",),
            synonyms=words(
                "go walk run enter exit leave_to head sneak climb return retreat escape travel approach drive"
                " proceed advance cross creep crawl slip step flee dash hurry rush relocate infiltrate follow"
                " board descend ascend regroup rendezvous make_way get_away get_in get_into get_out get_to"
                " get_past get_inside break_out_of"
            ),
        ),
        VerbRule(
            "wait", 1.0, 0.1, passive=True,
            synonyms=words("pause stay hold rest idle stand stand_by standby hang_back linger loiter sit sit_tight"),
        ),
        VerbRule(
            "observe", 0.95, 0.3, ("stealth", "planning"), passive=True,
            synonyms=words(
                "look search inspect scout watch listen examine check survey read case recon reconnoiter"
                " reconnoitre peek peer spy eavesdrop overhear monitor study explore investigate assess scan"
                " snoop rummage find locate tail shadow stake_out surveil keep_watch gather_intel"
                " gather_information double_check"
            ),
        ),
        VerbRule(
            "hide", 0.75, 0.3, ("stealth",), passive=True,
            synonyms=words(
                "conceal duck blend_in lie_low blend take_cover hunker_down crouch lurk camouflage stay_hidden"
                " keep_hidden keep_out_of_sight stay_out_of_sight"
            ),
        ),
        VerbRule(
            "take", 0.85, 1.0, ("stealth",), targets=("entity",),
            synonyms=words(
                "grab steal pick_up pickup collect pocket lift retrieve loot get snatch pickpocket acquire obtain"
                " nab pilfer filch palm fetch empty scoop bag remove extract plunder carry"
            ),
        ),
        VerbRule(
            "drop", 0.97, 0.5, targets=("entity",), carries="target",
            synonyms=words(
                "put place stash leave store plant load deposit set_down put_down discard dump ditch stow abandon"
            ),
        ),
        VerbRule(
            "give", 0.95, 0.5, targets=("npc", "member"), carries="item",
            synonyms=words("hand pass hand_over deliver hand_off provide supply transfer"),
        ),
        VerbRule(
            "talk", 0.8, 0.4, ("persuasion",), targets=("npc", "member"), social=True, disguise_bonus=0.2,
            synonyms=words(
                "ask chat speak greet call calm reassure tell converse question interview negotiate plead beg"
                " apologize apologise soothe comfort placate pacify defuse chat_up small_talk befriend shout"
                " whisper phone radio contact inform explain interrogate"
            ),
        ),
        VerbRule(
            "deceive", 0.55, 0.5, ("deception", "persuasion", "disguise"), targets=PEOPLE, social=True,
            escorts=True, disguise_bonus=0.2,
            synonyms=words(
                "lie bluff pose impersonate distract lure persuade convince trick con mislead invite"
                " escort_politely pretend feign fake masquerade fool dupe charm flatter sweet_talk misdirect"
                " divert scam hustle cajole coax talk_into pass_off pass_as create_distraction cause_distraction"
                " stage_distraction"
            ),
        ),
        VerbRule(
            "bribe", 0.5, 0.6, ("persuasion",), targets=PEOPLE, social=True, escorts=True,
            synonyms=words("pay offer buy_off pay_off tip grease"),
        ),
        VerbRule(
            "unlock", 0.3, 0.8, ("lockpicking",), targets=("edge", "location", "entity"), lockable=True,
            synonyms=words(
                "open pick pick_lock lockpick crack swipe unbolt unlatch unseal reopen open_up punch_in key_in"
                " enter_code"
            ),
        ),
        VerbRule(
            "use", 0.8, 0.7, ("tech", "disguise"), targets=("entity",),
            synonyms=words(
                "operate wear activate apply put_on disguise copy download install plug_in utilize utilise"
                " employ don equip upload photograph record insert press flip turn_on switch_on power_on"
                " change_into dress_up delete erase edit alter duplicate hotwire log_in login"
            ),
        ),
        VerbRule(
            "disable", 0.55, 1.0, ("tech",), partial=True, targets=("entity", "location"), lockable=True,
            produces=("disabled",),
            synonyms=words(
                "turn_off shut_down switch_off cut jam loop hack deactivate sabotage tamper bypass disarm unplug"
                " power_down short_circuit blind override cripple kill_power kill_lights kill_alarm kill_camera"
                " kill_cameras kill_engine"
            ),
        ),
        VerbRule(
            "restrain", 0.45, 1.8, ("strength", "combat"), violent=True, loud=True, partial=True, targets=PEOPLE,
            physical=True, escorts=True, produces=("restrained",),
            synonyms=words(
                "tie tie_up seize subdue grab_person kidnap abduct handcuff gag escort drag carry_off bind"
                " zip_tie cuff pin pin_down hold_down detain capture immobilize immobilise lock_up lock_in"
                " take_hostage hold_hostage bundle manhandle wrestle apprehend blindfold shackle"
            ),
        ),
        VerbRule(
            "threaten", 0.55, 1.5, ("persuasion", "strength"), violent=True, loud=True, targets=PEOPLE,
            social=True, produces=("compliant",),
            synonyms=words(
                "intimidate coerce menace scare frighten demand rob warn blackmail extort bully terrorize"
                " terrorise pressure hold_up holdup stick_up mug brandish strongarm strong_arm lean_on shake_down"
            ),
        ),
        VerbRule(
            "attack", 0.5, 2.0, ("combat", "strength"), violent=True, loud=True, partial=True, targets=PEOPLE,
            physical=True, produces=("unconscious",),
            synonyms=words(
                "hit strike assault knock_out punch fight tackle shove ambush overpower beat beat_up knock_down"
                " slap smack pummel club whack wound injure hurt harm stab shoot rough_up choke incapacitate"
                " take_down batter brawl clobber sedate drug stun tase taser knockout open_fire sucker_punch"
            ),
        ),
        VerbRule(
            "kill", 0.45, 2.0, ("combat",), violent=True, loud=True, partial=True, targets=PEOPLE, physical=True,
            produces=("dead",),
            synonyms=words(
                "eliminate murder assassinate execute poison finish finish_off slay slaughter strangle smother"
                " suffocate shoot_dead gun_down"
            ),
        ),
        VerbRule(
            "damage", 0.6, 2.0, ("strength",), loud=True, always_risky=True, partial=True,
            targets=("entity", "edge", "location"), lockable=True, produces=("destroyed", "damaged"),
            synonyms=words(
                "break smash wreck destroy vandalize force kick shatter ram demolish vandalise pry prise jimmy"
                " bust breach blow_up blow_open bash crush cut_through cut_open drill deface spray_paint ruin"
                " trash dismantle slash puncture tear rip flood knock_over topple overturn tip_over crash"
            ),
        ),
        VerbRule(
            "ignite", 0.6, 1.5, ("fire",), loud=True, always_risky=True, partial=True,
            targets=("location", "entity", "none"), local=True, produces=("on_fire",),
            synonyms=words(
                "burn light set_fire torch set_alight start_fire arson set_on_fire set_ablaze set_light"
                " incinerate kindle cause_fire firebomb"
            ),
        ),
        VerbRule(
            "incite", 0.55, 2.0, ("leadership", "persuasion"), loud=True, partial=True, targets=("location", "none"),
            local=True, crowd=True, produces=("disorder",),
            synonyms=words(
                "rally agitate provoke stir stir_up riot rile whip_up instigate inflame foment rouse galvanize"
                " galvanise mobilize mobilise egg_on harangue chant start_riot spark_riot"
            ),
        ),
        VerbRule(
            "occupy", 0.6, 1.2, ("leadership", "persuasion"), targets=("location", "none"), local=True,
            produces=("occupied",),
            synonyms=words(
                "blockade sit_in protest picket barricade chain demonstrate unfurl march block obstruct squat"
                " take_over takeover hijack commandeer take_control seize_control lock_down lockdown hang_banner"
            ),
        ),
        # The generic rule: any verb the lexicon does not know, and a few it knows to be no one rule's.
        VerbRule("other", 0.4, 1.0, synonyms=words("put_out extinguish give_up get_rid surrender improvise")),
    )
}  # fmt: skip

SUGGESTED_VERBS: tuple[str, ...] = tuple(name for name in RULES if name != "other")
"""Verbs a play form may offer as suggestions (the rule names without ``other``); never a restriction."""


def _lexicon() -> dict[str, str]:
    table: dict[str, str] = {}
    for rule in RULES.values():
        for synonym in (rule.name, *rule.synonyms):
            if table.setdefault(synonym, rule.name) != rule.name:
                raise ValueError(f"verb synonym {synonym!r} is listed under {table[synonym]!r} and {rule.name!r}")
    # Multi-word synonyms also match written as one word ("knockout", "sitin"), unless that is itself a synonym.
    for synonym, name in list(table.items()):
        table.setdefault(synonym.replace("_", ""), name)
    return table


SYNONYMS: dict[str, str] = _lexicon()
"""Free verb (lower case, ``_`` between words) → rule name, built from the rows."""

# Words dropped inside a verb phrase ("pick the lock", "knock him out").
_DROPPED = frozenset(words("a an the his her their its my our your this that these those some him them it me us"))
# Leading words skipped before the verb ("try to pick", "quietly sneak"; any other word ending in -ly too).
_FILLER = frozenset(words("try tries tried trying attempt attempts to then and now please just we i they"))
_IRREGULAR = {
    "took": "take", "taken": "take", "went": "go", "gone": "go", "ran": "run", "hid": "hide", "hidden": "hide",
    "stole": "steal", "stolen": "steal", "broke": "break", "broken": "break", "lit": "light", "struck": "strike",
    "fought": "fight", "gave": "give", "given": "give", "spoke": "speak", "told": "tell", "got": "get",
    "gotten": "get", "left": "leave", "bought": "buy", "caught": "catch", "drove": "drive", "driven": "drive",
    "bound": "bind", "slew": "slay", "slain": "slay", "shot": "shoot", "beaten": "beat", "held": "hold",
    "stood": "stand", "sat": "sit", "crept": "creep", "snuck": "sneak", "fled": "flee", "found": "find",
    "brought": "bring", "wore": "wear", "worn": "wear", "paid": "pay", "tore": "tear", "torn": "tear",
    "blew": "blow", "blown": "blow", "burnt": "burn", "slid": "slide", "overran": "overrun", "dug": "dig",
}  # fmt: skip
_MAX_PHRASE = 4


@dataclass(frozen=True)
class VerbMatch:
    """The rule a free verb maps to, and the lexicon entry that matched (empty when none did)."""

    rule: VerbRule
    synonym: str
    key: str

    @property
    def label(self) -> str:
        """What the rules Judge records as ``verb_rule``: the rule's name alone when the verb is the rule's own
        name (in any case or inflection: "Hides" → ``"hide"``); ``"attack (from 'pummel')"`` when a synonym
        matched; ``"other (unknown verb 'juggle')"`` when none did."""
        if not self.synonym:
            return f"{self.rule.name} (unknown verb {self.key!r})"
        if self.synonym == self.rule.name:
            return self.rule.name
        return f"{self.rule.name} (from {self.synonym!r})"


def _lemmas(word: str) -> list[str]:
    """The word and the stems it may be an inflection of, most literal first."""
    out = [word]
    if word in _IRREGULAR:
        out.append(_IRREGULAR[word])
    if word.endswith("ies"):
        out.append(word[:-3] + "y")
    if word.endswith("es"):
        out.append(word[:-2])
    if word.endswith("s") and not word.endswith("ss"):
        out.append(word[:-1])
    if word.endswith("ied"):
        out.append(word[:-3] + "y")
    if word.endswith("ed") and len(word) > 3:
        stem = word[:-2]
        out += [stem, word[:-1], _undouble(stem)]
    if word.endswith("ying"):
        out.append(word[:-4] + "ie")
    if word.endswith("ing") and len(word) > 4:
        stem = word[:-3]
        out += [stem, stem + "e", _undouble(stem)]
    return list(dict.fromkeys(out))


def _undouble(stem: str) -> str:
    return stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem


def _lookup(phrase: str) -> str | None:
    if phrase in SYNONYMS:
        return phrase
    compact = phrase.replace("_", "")
    return compact if compact in SYNONYMS else None


def _match_at(tokens: list[str], start: int) -> str | None:
    """The longest lexicon entry that the words from ``start`` begin with (the first word may be inflected)."""
    for n in range(min(_MAX_PHRASE, len(tokens) - start), 0, -1):
        rest = tokens[start + 1 : start + n]
        for lemma in _lemmas(tokens[start]):
            for tail in (rest, [t[:-1] if t.endswith("s") and not t.endswith("ss") else t for t in rest]):
                found = _lookup("_".join([lemma, *tail]))
                if found is not None:
                    return found
    return None


def match_verb(verb: str) -> VerbMatch:
    """Map a free verb to its rule: any case, spaces or hyphens, inflections ("sneaks", "picked the lock",
    "knocks out"), leading filler ("try to", "quietly"); anything the lexicon does not know → ``other``."""
    key = re.sub(r"[^a-z]+", "_", verb.strip().lower()).strip("_")
    if key in SYNONYMS:
        return VerbMatch(RULES[SYNONYMS[key]], key, key)
    tokens = [t for t in key.split("_") if t not in _DROPPED] or key.split("_")
    for start, token in enumerate(tokens):
        found = _match_at(tokens, start)
        if found is not None:
            return VerbMatch(RULES[SYNONYMS[found]], found, key)
        if token not in _FILLER and not token.endswith("ly"):
            break
    return VerbMatch(RULES["other"], "", key)


def canonical_verb(verb: str) -> str:
    """Map a free-form verb to the name of its rule (``other`` when the lexicon does not know it)."""
    return match_verb(verb).rule.name


def rule_for(verb: str) -> VerbRule:
    """The rule the ``rules`` roles apply to a free-form verb."""
    return match_verb(verb).rule
