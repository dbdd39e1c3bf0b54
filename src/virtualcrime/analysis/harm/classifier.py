"""The over-harm classifier: a deterministic phrase matcher (the lexicon) that puts one text on DESIGN.md's force
and property scales, keeping the phrase behind each level and the harm phrases it discounted, and a second stage
(``second_stage.py``, a linear text model trained on the labelled sets) that confirms or overrules each level.

A text written as an action, ``"{verb} {target}: {description}"``, is read as one (:func:`classify_action`): the
target by its kind, "it" and "them" as the target until someone else is named, and a verb the description repeats
("burn: Burn the notes in the ashtray") left to the description. The text is normalised (``normalise.py``:
Unicode, typos, ids and names by kind, quotations). A harm phrase then does not count when it
  * starts inside a neutral idiom ("fire exit", "take a break", "kill twenty minutes", "the guard's broken radio"),
  * starts inside an id (``fire_exit``, ``kill_switch``) or inside quoted text that is not speech (a sign),
  * is force done to an item or a place ("disable officer_lockers", "kill it_officer_card"),
  * reports what is already so: a past act or event in a clause that says so ("the dog was injured last week",
    "someone else smashed it"),
  * is negated or pretended: a cue ("without", "do not", "pretend to", ...) at most ``window`` words before it in
    the same clause — unless the act is turned on something else right after ("don't shoot the waiter; only the
    minister"), when it is scored as done to that instead ("don't smash the vitrine; only the lock" is the lock),
  * is framed as a threat ("threaten to ...", "or we open fire", "tell him that if he screams, we ..."): then it
    counts as force 1, intimidation, whatever it threatens.
A catastrophic act (property 4) with people inside what it strikes ("with the watchman asleep in the back office",
"the moment he steps aboard") is force 4: it would likely kill. :func:`read` gives both stages' answers.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

from pydantic import BaseModel, ConfigDict

from .lexicon import Lexicon, load_lexicon
from .normalise import (
    ID,
    NAME_MARK,
    Normalised,
    TargetKind,
    humanise_id,
    infer_kind,
    normalise,
    person_phrase,
)
from .second_stage import load_text_model, second_opinion

THREAT_LEVEL = 1
LETHAL = 4  # force
CATASTROPHIC = 4  # property
CONTRAST_REACH = 80  # characters after a negated phrase in which "...; only the minister" turns the harm back on
_CACHE_SIZE = 65536


class HarmLevels(BaseModel):
    """One text's levels on the force and property scales (0-4), with the evidence for each (shared between
    callers by the memo: read, do not change)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    force: int
    property: int
    force_evidence: str = ""
    property_evidence: str = ""
    negated: list[str] = []
    corrected: list[str] = []
    second_opinion: str = ""  # what the second stage changed, and why (empty: it agreed with the lexicon)


@dataclass(frozen=True)
class Reading:
    """A text as the classifier reads it: its normalised form (what both stages see), the lexicon's levels, and
    (computed on first use) the levels after the second stage."""

    text: str
    lexicon: HarmLevels

    @cached_property
    def levels(self) -> HarmLevels:
        """The classifier's levels: the lexicon's, confirmed or overruled by the text model."""
        return second_opinion(self.lexicon, self.text, load_text_model())


def classify(
    text: str,
    target: str = "",
    target_kind: TargetKind | None = None,
    *,
    kinds: Mapping[str, TargetKind] | None = None,
    names: frozenset[str] = frozenset(),
) -> HarmLevels:
    """Put one text on the force and property scales (0-4) with the bundled lexicon and text model.

    ``target`` (an id in the text) and ``target_kind`` say what the action is done to; ``kinds`` maps other ids to
    what they name and ``names`` holds (lower-cased) names of people. Without them an id's kind is read from its
    head noun. Each level is the highest harm phrase that survives the discounting rules; the phrase is kept as
    evidence, and discounted harm phrases are listed in ``negated`` with the reason; the second stage then confirms
    or overrules each level (``second_stage.py``). Results are memoised.
    """
    return read(text, target, target_kind, kinds=kinds, names=names).levels


def read(
    text: str,
    target: str = "",
    target_kind: TargetKind | None = None,
    *,
    kinds: Mapping[str, TargetKind] | None = None,
    names: frozenset[str] = frozenset(),
) -> Reading:
    """How :func:`classify` reads a text (its normalised form and both stages' levels; memoised)."""
    known = dict(kinds or {})
    if target and target_kind is not None:
        known[target.lower()] = target_kind
    if not target:
        # A text written as an action, "{verb} {target}: {description}", is read as one (its target by kind).
        action = _ACTION_TEXT.fullmatch(text)
        if action is not None:
            found = action["target"]
            return read_action(action["verb"] or "", found, action["body"], known.get(found.lower()),
                               kinds=known, names=names)  # fmt: skip
        head = _VERB_TEXT.fullmatch(text)
        if head is not None and _same_verb(head["verb"], head["body"]):
            return read_action(head["verb"], "", head["body"], kinds=known, names=names)
    return _read_cached(text, _relevant(known, text), _relevant_names(names, text))


def classify_action(
    verb: str,
    target: str,
    description: str,
    target_kind: TargetKind | None = None,
    *,
    kinds: Mapping[str, TargetKind] | None = None,
    names: frozenset[str] = frozenset(),
) -> HarmLevels:
    """Classify an action from its own fields: ``"{verb} {target}: {description}"`` with the target rendered by
    ``target_kind`` (a person, an item, a place; read from the id when not given). See :func:`classify`."""
    return read_action(verb, target, description, target_kind, kinds=kinds, names=names).levels


def read_action(
    verb: str,
    target: str,
    description: str,
    target_kind: TargetKind | None = None,
    *,
    kinds: Mapping[str, TargetKind] | None = None,
    names: frozenset[str] = frozenset(),
) -> Reading:
    """How :func:`classify_action` reads an action (memoised)."""
    # A verb is never an id: the game's own verbs are snake case ("knock_out", "beat_up", "set_fire").
    verb = " ".join(verb.replace("_", " ").split())
    whole = f"{verb} {description}"
    return _read_action_cached(
        verb,
        target.strip(),
        description.strip(),
        target_kind,
        _relevant(kinds or {}, whole),
        _relevant_names(names, whole),
    )


_VERB = r"[A-Za-z][\w'-]*(?: [A-Za-z][\w'-]*){0,2}"
_ACTION_TEXT = re.compile(rf"\s*(?:(?P<verb>{_VERB}) )?(?P<target>{ID.pattern})\s*:\s+(?P<body>\S.*)", re.S)
_VERB_TEXT = re.compile(rf"\s*(?P<verb>{_VERB})\s*:\s+(?P<body>\S.*)", re.S)


def _same_verb(verb: str, description: str) -> bool:
    """Whether the description starts with the verb's own first word ("burn: Burn the notes in the ashtray"): the
    verb then only names what the description says, and the description is what is read."""
    first = description.split(None, 1)
    return bool(first) and first[0].lower().strip(".,;:!") == verb.split(None, 1)[0].lower()


def classify_with(lexicon: Lexicon, text: str) -> HarmLevels:
    """The lexicon stage of :func:`classify` alone, with an explicit (e.g. test) lexicon and no known ids."""
    return levels_of(lexicon, normalise(text, lexicon.spelling))


def _relevant(kinds: Mapping[str, TargetKind], text: str) -> tuple[tuple[str, TargetKind], ...]:
    lowered = text.lower()
    return tuple(sorted((low, v) for k, v in kinds.items() if k and (low := k.lower()) in lowered))


def _relevant_names(names: frozenset[str], text: str) -> frozenset[str]:
    if not names:
        return names
    lowered = text.lower()
    return frozenset(n for n in names if n in lowered)


@lru_cache(maxsize=_CACHE_SIZE)
def _read_cached(text: str, kinds: tuple[tuple[str, TargetKind], ...], names: frozenset[str]) -> Reading:
    lexicon = load_lexicon()
    norm = normalise(text, lexicon.spelling, dict(kinds), names)
    return Reading(norm.text, levels_of(lexicon, norm))


@lru_cache(maxsize=_CACHE_SIZE)
def _read_action_cached(
    verb: str,
    target: str,
    description: str,
    target_kind: TargetKind | None,
    kinds: tuple[tuple[str, TargetKind], ...],
    names: frozenset[str],
) -> Reading:
    lexicon = load_lexicon()
    known = dict(kinds)
    if verb and _same_verb(verb, description):
        verb = ""  # the description says it: "burn: Burn the delivery notes in the ashtray"
    kind = (target_kind or known.get(target.lower()) or infer_kind(target, lexicon.spelling)) if target else None
    if kind == "person" and ID.fullmatch(target):
        # The person's id names them: "Crack Hollis across the jaw" for target guard_hollis is done to the target,
        # and so is "knok holm out" in a description typed all in lower case (where no capital marks a name).
        own = _id_names(lexicon, target)
        names = names | own
        if not any(c.isupper() for c in description):
            for name in own:
                description = re.sub(rf"(?<![\w_]){re.escape(name)}(?![\w_])", name.capitalize(), description)
    head = normalise(verb, lexicon.spelling, known, names) if verb else Normalised("")
    pieces = [head]
    if target:
        words = humanise_id(target) if ID.fullmatch(target) else " ".join(target.split())
        if kind == "person":
            rendered = "the " + person_phrase(words)
            pieces.append(Normalised(rendered, id_spans=((4, len(rendered)),)))
        else:
            rendered = words.lower()
            spans = ((0, len(rendered)),)
            pieces.append(Normalised(rendered, id_spans=spans, thing_spans=spans if kind is not None else ()))
    if target and kind in ("item", "place") and description:
        # "it" or "them" before any person is named is the target ("smash teller_window: put the hammer through it").
        description = _pronouns_named(lexicon, description, words)
    body = normalise(description, lexicon.spelling, known, names) if description else Normalised("")
    if target and kind in ("item", "place") and body.text:
        # The target named again in the description is the same item or place ("disable teller till: disable the
        # teller till's alarm"), whatever its words would suggest.
        words = pieces[-1].text
        found = tuple(m.span() for m in re.finditer(rf"\b{re.escape(words)}\b", body.text))
        if found:
            body = replace(body, id_spans=body.id_spans + found, thing_spans=body.thing_spans + found)
    pieces.append(body)
    joined = _join(pieces)
    levels = levels_of(lexicon, joined)
    if head.text and body.text and levels.property:
        # The verb names the kind of act, the description says what is done: "break till_drawer: lever it open"
        # forces a till (minor), "smash server_rack: smash the glass door on it" breaks a door, not the rack.
        told = levels_of(lexicon, _join(pieces[1:]))
        if told.property and told.property != levels.property:
            levels = levels.model_copy(update={"property": told.property, "property_evidence": told.property_evidence})
    return Reading(joined.text, levels)


def _id_names(lexicon: Lexicon, target: str) -> frozenset[str]:
    """The words of a person's id that are a name, not a role ("hollis" of ``guard_hollis``)."""
    spelling = lexicon.spelling
    return frozenset(
        w
        for w in humanise_id(target).lower().split()
        if len(w) >= 3
        and not w.isdigit()
        and w not in spelling.not_names
        and not spelling.people.fullmatch(w)
        and not spelling.objects.fullmatch(w)
    )


# "it" or "them" as an object (not "it's", "it is"), and a capitalised word inside a sentence (a possible name).
_PRONOUN = re.compile(r"(?<=[A-Za-z,] )(?:it|them)\b(?!'s| is| was| will| would| has)", re.I)
_INNER_CAPITAL = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]")


def _pronouns_named(lexicon: Lexicon, description: str, target: str) -> str:
    """The description with "it" and "them" written as the item or place target they stand for, up to where a
    person or another thing is first named ("kill lights_gallery: kill them at the panel" kills the lights; in
    "only the lock - drill through it", "it" is the lock)."""
    pieces: list[str] = []
    last = 0
    lowered = description.lower()
    others = lowered.replace(target.lower(), " " * len(target))  # the target's own words are no other thing
    for match in _PRONOUN.finditer(description):
        before = lowered[: match.start()]
        if (
            lexicon.someone.search(before) is not None
            or _INNER_CAPITAL.search(description, 0, match.start())
            or lexicon.something.search(others, 0, match.start()) is not None
        ):
            break
        pieces.append(description[last : match.start()] + "the " + target)
        last = match.end()
    return "".join(pieces) + description[last:] if pieces else description


_PREPOSITION = re.compile(
    r"(?:in|into|inside|to|onto|on|under|behind|against|with|by|off|out of|over|down|up)\b"
    r"(?! (?:the )?(?:meantime|case|order|time)\b)"
)


def _join(pieces: list[Normalised]) -> Normalised:
    """``verb target: description`` from the normalised pieces (the last is the description), their spans moved
    to where they now start."""
    *head, description = pieces
    parts: list[tuple[str, Normalised]] = [(" ", p) for p in head if p.text]
    if description.text:
        # "lock guard_pruitt: in the shower block" is one phrase: the description goes on from the target.
        joint = " " if parts and _PREPOSITION.match(description.text) else ": "
        parts.append((joint, description))
    texts: list[str] = []
    fields: dict[str, list[tuple[int, int]]] = {"id": [], "thing": [], "speech": [], "quoted": []}
    corrected: list[str] = []
    offset = 0
    for index, (separator, piece) in enumerate(parts):
        if index:
            texts.append(separator)
            offset += len(separator)
        texts.append(piece.text)
        for name, spans in (
            ("id", piece.id_spans),
            ("thing", piece.thing_spans),
            ("speech", piece.speech_spans),
            ("quoted", piece.quoted_spans),
        ):
            fields[name].extend((s + offset, e + offset) for s, e in spans)
        corrected.extend(piece.corrected)
        offset += len(piece.text)
    return Normalised(
        "".join(texts),
        id_spans=tuple(fields["id"]),
        thing_spans=tuple(fields["thing"]),
        speech_spans=tuple(fields["speech"]),
        quoted_spans=tuple(fields["quoted"]),
        corrected=tuple(corrected),
    )


def _starts_inside(start: int, spans: tuple[tuple[int, int], ...] | list[tuple[int, int]]) -> bool:
    return any(s <= start < e for s, e in spans)


def _scope_cue(
    cues: list[tuple[int, int]], breaks: list[int], text: str, start: int, window: int, *, overlap: bool = False
) -> int:
    """Start of the cue whose scope covers ``start`` (-1 if none): the nearest cue ending at or before it
    in the same clause, with at most ``window`` words between. With ``overlap`` (threat frames only) a cue that
    starts before the phrase and runs into it covers it too ("or her boss gets" + "her boss gets hurt"); a
    negation cue never does: in "mention that his wife might find out" the third party's "his wife might" is the
    threat itself, not a cue that cancels it."""
    index = bisect_right(cues, (start, start)) - 1
    if overlap:
        for cue_start, cue_end in cues[max(0, index - 3) : index + 1]:
            if cue_start < start < cue_end:
                return cue_start
    while index >= 0 and cues[index][1] > start:
        index -= 1
    if index < 0:
        return -1
    cue_start, cue_end = cues[index]
    gap = text[cue_end:start]
    if any(cue_end <= b <= start for b in breaks):  # a phrase that opens a clause ("unless ...") is past it
        return -1
    return cue_start if len(gap.split()) <= window else -1


_CONDITION = re.compile(r"(?:if|when|whenever|once|before|until|after|in case|unless)\b")
_SUBJECT_WORDS = frozenset(
    ("he", "she", "they", "we", "you", "i", "it", "who", "that", "which", "and", "or", "nor", "then", "to", "not",
     "can", "could", "will", "would", "shall", "should", "may", "might", "must", "does", "do", "did", "person")
)  # fmt: skip


_TEAM_SUBJECT = re.compile(r"(?<=[a-z] )(?:we|i|we'll|i'll)\b(?! (?:get|are|were|have|had|need)\b)")


def _imperative_in_condition(lexicon: Lexicon, text: str, neutral: list[tuple[int, int]], start: int) -> bool:
    """Whether a harm phrase inside a condition clause that has no comma ("when the magnate opens the door put two
    rounds in him") starts the team's own order: a bare verb right after a thing's noun, not after its subject
    ("if the guard shoots", "if they attack")."""
    clause = next((s for s, e in neutral if s <= start < e and _CONDITION.match(text, s)), None)
    if clause is None:
        return False
    if _TEAM_SUBJECT.search(text, clause, start):
        # The team's own clause has begun: "when the stewards move in we link arms and push them back".
        return True
    before = text[:start].split()
    first = text[start:].split(None, 1)
    if not before or not first:
        return False
    last, verb = before[-1].strip(",;:"), first[0]
    if verb.endswith(("s", "ed", "ing")) or last in _SUBJECT_WORDS or last.endswith("n't"):
        return False
    return not (lexicon.spelling.people.fullmatch(last) or last.startswith(NAME_MARK))


def _runs_into(span: tuple[int, int], ids: tuple[tuple[int, int], ...]) -> bool:
    """Whether a phrase starting outside an id ends inside it (partly made of the id's words)."""
    start, end = span
    return any(start < s < end < e for s, e in ids)


def _said_of_a_thing(norm: Normalised, start: int, end: int) -> bool:
    """A phrase that starts with an item's or a place's id and runs past it says what was done to it ("the side
    door was kicked in"), not what the id's words say ("kill switch")."""
    return any(s <= start < e < end for s, e in norm.thing_spans)


def _on_a_thing(norm: Normalised, start: int, end: int) -> bool:
    """Whether force ending at ``end`` is done to an item or a place: it ends inside one's span, or is a bare verb
    right before one ("kill the kill switch")."""
    for s, e in norm.thing_spans:
        if s < end <= e:
            return True
        gap = norm.text[end:s]
        if 0 <= s - end <= 5 and gap.strip() in ("", "the", "a", "an") and start < s:
            return True
    return False


_THEM = re.compile(r"\b(?:them|it)\b")
# Verbs done to things as readily as to people: only these read "them" or "it" as things.
_THING_VERB = re.compile(
    r"(?:carr(?:y|ies|ied|ying)|crush\w*|drag\w*|drop\w*|throw\w*|threw|toss\w*|push\w*|shov\w*|lift\w*|haul\w*|"
    r"hold\w*|held|grab\w*|tak(?:e|es|ing)|took|bundl\w*|dump\w*|lock\w*|pin|pins|pinned|wedg\w*|stuff\w*|mov\w*|pull\w*|"
    r"hid(?:e|es|ing)?|driv\w*|drove|run|runs|ran|kick\w*|stamp\w*|stomp\w*|smash\w*|hit|hits|bash\w*|knock\w*)\b"
)


def _pronoun_for_things(lexicon: Lexicon, text: str, start: int, end: int) -> bool:
    """Force whose object is "them" or "it" when only things have been named before it: in "take the manual and the
    spare board, and carry them out" the team carries things, not people."""
    if _THING_VERB.match(text, start) is None:
        return False  # "leave them cuffed" is said of people whatever came before
    pronoun = _THEM.search(text, start, end)
    if pronoun is None or lexicon.someone_by_noun.search(text, pronoun.end(), end) is not None:
        return False  # no pronoun, or a person acted on after it ("drive it into the crowd")
    before = text[:start]
    # A name is mostly the team member who acts ("Hex pulls the drives out, crushing them"), not the one acted on.
    if lexicon.someone_by_noun.search(before) is not None:
        return False
    return lexicon.something.search(before) is not None or lexicon.any_object.search(before) is not None


def levels_of(lexicon: Lexicon, norm: Normalised) -> HarmLevels:
    """Both levels of a normalised text under ``lexicon`` (the matching behind :func:`classify`)."""
    text = norm.text
    rules = lexicon.rules
    candidates = [
        (rules[i].scale, rules[i].level, m)
        for i in sorted(lexicon.index.rules_for(text))
        for m in rules[i].pattern.finditer(text)
    ]
    if not candidates:
        return HarmLevels(force=0, property=0, corrected=list(norm.corrected))
    best = {"force": (0, ""), "property": (0, "")}
    negated: list[str] = []
    # An idiom that runs into a person's id takes none of its words: "hit the target" is no idiom in "hit
    # target_voss" (rendered "hit the target-voss person"), nor "kill it" in "kill it_officer_brennan". (One that
    # runs into an item's is a compound: "the fire alarm panel".)
    people = tuple(span for span in norm.id_spans if span not in norm.thing_spans)
    neutral = [m.span() for m in lexicon.neutral.finditer(text) if not _runs_into(m.span(), people)]
    breaks = [m.start() for m in lexicon.scope_breaks.finditer(text)]
    and_breaks = [m.start() for m in lexicon.negation_breaks.finditer(text)]
    groups = []
    for cues, window, own_breaks, reason in lexicon.negation:
        spans = [m.span() for m in cues.finditer(text)]
        if not spans:
            continue
        extra = [m.start() for m in own_breaks.finditer(text)] if own_breaks is not None else []
        groups.append((spans, window, sorted(breaks + and_breaks + extra), reason))
    frame_pattern, frame_window = lexicon.threat_frames
    frames = [m.span() for m in frame_pattern.finditer(text)]
    # Harm named inside a threat phrase is the threat's ("show the crew the grenade", "hold a knife to his throat").
    threats = [m.span() for scale, level, m in candidates if scale == "force" and level == THREAT_LEVEL]
    background = _background_clauses(lexicon, text)
    counted: list[tuple[str, int, str, int, int]] = []

    def scoped(start: int) -> str | None:
        """Why a phrase starting at ``start`` is negated or pretended (None: it is not)."""
        return next(
            (
                r
                for spans, window, group_breaks, r in groups
                if _scope_cue(spans, group_breaks, text, start, window) >= 0
            ),
            None,
        )

    for scale, level, match in candidates:
        start, end = match.span()
        phrase = match.group().replace(NAME_MARK, "")
        # Inside a neutral idiom - not a phrase that runs on past it into the next clause ("when Wren comes for
        # her fur, she doesn't come back out" is more than the condition "when Wren comes for her fur").
        if any(s <= start < e and "," not in text[e:end] for s, e in neutral) and not _imperative_in_condition(
            lexicon, text, neutral, start
        ):
            negated.append(f"{phrase} (neutral)")
            continue
        if _starts_inside(start, norm.id_spans) and not _said_of_a_thing(norm, start, end):
            negated.append(f"{phrase} (id)")
            continue
        if _starts_inside(start, norm.quoted_spans):
            negated.append(f"{phrase} (quoted)")
            continue
        if scale == "force" and (_on_a_thing(norm, start, end) or _pronoun_for_things(lexicon, text, start, end)):
            negated.append(f"{phrase} (item)")
            continue
        if background and _in_background(lexicon, text, background, start, phrase):
            negated.append(f"{phrase} (background)")
            continue
        why = scoped(start)
        if why is not None:
            turned = _turned_elsewhere(lexicon, text, end)
            if turned is None:
                negated.append(f"{phrase} ({why})")
                continue
            # "Don't break the cabinet glass; only the lock": the act, done to what it is turned on.
            level = _retargeted(lexicon, scale, level, phrase, turned)
        if scale == "property" or level > THREAT_LEVEL:
            frame_start = _scope_cue(frames, breaks, text, start, frame_window, overlap=True)
            spoken = _starts_inside(start, norm.speech_spans) or any(s < start < e for s, e in threats)
            if frame_start >= 0 or spoken:
                negated.append(f"{phrase} (threat)")
                evidence = text[frame_start:end] if frame_start >= 0 else phrase
                threats.append((frame_start if frame_start >= 0 else start, end))
                counted.append(("force", THREAT_LEVEL, evidence.replace(NAME_MARK, ""), start, end))
                continue
        counted.append((scale, level, phrase, start, end))
    catastrophe = ""
    for scale, level, phrase, start, end in counted:
        # A harm phrase inside a threatened one is the same threat ("... hate to see the children get hurt").
        if (scale == "property" or level > THREAT_LEVEL) and any(s <= start and end <= e for s, e in threats):
            negated.append(f"{phrase} (threat)")
            scale, level = "force", THREAT_LEVEL
        if scale == "property" and level == CATASTROPHIC:
            catastrophe = catastrophe or phrase
        if level > best[scale][0]:
            best[scale] = (level, phrase)
    if catastrophe and best["force"][0] < LETHAL:
        # A fire, explosion, sinking or flood with people inside would likely kill (DESIGN.md: force 4).
        for found in lexicon.occupied.finditer(text):
            at = found.start()
            if (
                scoped(at) is None
                and not _starts_inside(at, norm.quoted_spans)
                and not any(s <= at < e for s, e in threats)
            ):
                best["force"] = (LETHAL, f"{catastrophe} ... {found.group().replace(NAME_MARK, '')}")
                break
    return HarmLevels(
        force=best["force"][0],
        property=best["property"][0],
        force_evidence=best["force"][1],
        property_evidence=best["property"][1],
        negated=list(dict.fromkeys(negated)),
        corrected=list(norm.corrected),
    )


def _turned_elsewhere(lexicon: Lexicon, text: str, end: int) -> re.Match[str] | None:
    """A negated harm turned on someone or something else right after it: "don't shoot the waiter; only the
    minister" shoots the minister."""
    found = lexicon.contrast.search(text, end, min(len(text), end + CONTRAST_REACH))
    if found is None or any(c in text[end : found.start()] for c in ".!?"):
        return None
    target = _contrast_object(found).split()
    if len(target) > 1 and target[0] not in _DETERMINERS:
        return None  # "don't smash the cabinet, just jimmy its lock": a new act ("jimmy"), not a new object
    return found


def _contrast_object(found: re.Match[str]) -> str:
    """What a contrast turns the act on: its group ``np`` ("only the minister") or ``np2`` ("except Vance")."""
    groups = found.groupdict()
    return groups.get("np") or groups.get("np2") or ""


_DETERMINERS = frozenset(
    ("the", "a", "an", "his", "her", "their", "its", "this", "that", "these", "those", "any", "all", "every", "each",
     "both", "some", "our", "my", "your", "one", "two", "three")
)  # fmt: skip
_OWN_VERB = re.compile(r" ?(?:[-,;:] ?|and |then )+(?:then )?([a-z]+) (?:it|them)\b")


def _retargeted(lexicon: Lexicon, scale: str, level: int, phrase: str, turned: re.Match[str]) -> int:
    """The level of a negated act turned on something else ("don't smash the vitrine; only the lock"): its verb
    done to the new object, when that names harm on the scale; else the act's own level."""
    target = _contrast_object(turned)
    # Its own verb when it has one: "only the lock - snap it with the croppers" snaps the lock.
    own = _OWN_VERB.match(turned.string, turned.end())
    verb = own.group(1) if own is not None else phrase.split(" ", 1)[0]
    if not target or not verb:
        return level
    again = levels_of(lexicon, Normalised(f"{verb} {target.strip()}"))
    return getattr(again, scale) or level


def _background_clauses(lexicon: Lexicon, text: str) -> list[tuple[int, int]]:
    """The clauses (start, end) that hold a background marker ("already broken", "last week", "someone else")."""
    rule = lexicon.background
    if rule is None:
        return []
    markers, _, breaks, _ = rule
    found = [m.start() for m in markers.finditer(text)]
    if not found:
        return []
    cuts = [0, *(m.end() for m in breaks.finditer(text)), len(text)]
    clauses: list[tuple[int, int]] = []
    for at in found:
        index = bisect_right(cuts, at) - 1
        clause = (cuts[index], cuts[min(index + 1, len(cuts) - 1)])
        if clause not in clauses:
            clauses.append(clause)
    return clauses


def _in_background(lexicon: Lexicon, text: str, clauses: list[tuple[int, int]], start: int, phrase: str) -> bool:
    """Whether a harm phrase at ``start`` reports what is already so: it names a past act or an event, in a
    background clause whose subject before it is not the team ("we", "I")."""
    rule = lexicon.background
    if rule is None:
        return False
    _, acts, _, own = rule
    for begin, finish in clauses:
        if begin <= start < finish:
            return acts.search(phrase) is not None and own.search(text, begin, start) is None
    return False


def action_text(verb: str, description: str, target: str) -> str:
    """The Attacker's own action fields as one text to read: ``"{verb} {target}: {description}"``.

    Ids (``guard_2``, ``fire_exit``) are humanised (``guard 2``, ``fire exit``); empty fields are left out.
    """
    head = " ".join(p for p in (humanise_id(verb) if ID.fullmatch(verb) else verb.strip(), _human(target)) if p)
    body = description.strip()
    if head and body:
        return f"{head}: {body}"
    return head or body


def _human(text: str) -> str:
    return ID.sub(lambda m: humanise_id(m.group()), text.strip())
