"""Server-side validation of every form: typed fields, length limits and ids checked against the player's view.

Bodies are URL-encoded forms parsed here (no multipart), with a cap on the number of fields; each problem is
reported against its field in plain words, and the submitted values are kept so the page can show them again.
"""

from __future__ import annotations

import re
from functools import cache
from urllib.parse import parse_qs

from ..roles import Action, PlanUpdate
from ..roles.types import field_limit
from .player_view import PlayerView

MAX_FIELDS = 32


@cache
def turn_limits() -> dict[str, int]:
    """The turn form's bounds, as the engine's models set them (the page's hints and the checks both use these)."""
    return {
        "memory": field_limit(PlanUpdate, "memory", "max_length"),
        "plan": field_limit(PlanUpdate, "plan", "max_length"),
        "verb": field_limit(Action, "verb", "max_length"),
        "description": field_limit(Action, "description", "max_length"),
        "minutes_min": field_limit(Action, "minutes", "ge"),
        "minutes_max": field_limit(Action, "minutes", "le"),
    }


NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")
NAME_RULE = "1-32 letters, digits, '.', '_' or '-', starting with a letter or digit"


class FormErrors(ValueError):
    """One message per field that failed; ``values`` are what was submitted."""

    def __init__(self, errors: dict[str, str], values: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors, self.values = errors, values


def parse_form(body: bytes) -> dict[str, str]:
    """A URL-encoded body as one value per field (the first), refusing bodies with too many fields."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise FormErrors({"form": "the form is not UTF-8 text"}, {}) from None
    try:
        parsed = parse_qs(text, keep_blank_values=True, max_num_fields=MAX_FIELDS, strict_parsing=False)
    except ValueError:
        raise FormErrors({"form": f"the form has more than {MAX_FIELDS} fields"}, {}) from None
    return {key: values[0] for key, values in parsed.items()}


def _text(values: dict[str, str], name: str, errors: dict[str, str], limit: int, required: bool = True) -> str:
    value = values.get(name, "").replace("\r\n", "\n").strip()
    if required and not value:
        errors[name] = "required"
    elif len(value) > limit:
        errors[name] = f"at most {limit} characters (this has {len(value)})"
    return value


def _integer(values: dict[str, str], name: str, errors: dict[str, str], low: int, high: int) -> int:
    raw = values.get(name, "").strip()
    try:
        number = int(raw)
    except ValueError:
        errors[name] = f"a whole number from {low} to {high}"
        return low
    if not low <= number <= high:
        errors[name] = f"a whole number from {low} to {high} (not {number})"
    return number


def player_name(values: dict[str, str], errors: dict[str, str], field: str = "player") -> str:
    name = values.get(field, "").strip()
    if not NAME.fullmatch(name):
        errors[field] = NAME_RULE
    return name


def turn_form(values: dict[str, str], view: PlayerView) -> tuple[int, PlanUpdate, Action]:
    """The turn number the form was made for, the player's notes and action; FormErrors lists every problem."""
    errors: dict[str, str] = {}
    turn = _integer(values, "turn", errors, 1, 10_000)
    limits = turn_limits()
    memory = _text(values, "memory", errors, limits["memory"], required=False)
    plan = _text(values, "plan", errors, limits["plan"], required=False)
    verb = _text(values, "verb", errors, limits["verb"])
    description = _text(values, "description", errors, limits["description"])
    actor = values.get("actor", "").strip()
    if actor not in view.members:
        errors["actor"] = f"choose a team member ({', '.join(view.members)})"
    target = values.get("target", "").strip()
    if target and target not in view.usable_ids:
        errors["target"] = "not an id you can name this turn; choose one from the list or leave it empty"
    item = values.get("item", "").strip()
    if item and item not in view.item_ids:
        errors["item"] = "not an item in view; choose one from the list or leave it empty"
    minutes = _integer(
        values, "minutes", errors, field_limit(Action, "minutes", "ge"), field_limit(Action, "minutes", "le")
    )
    if errors:
        raise FormErrors(errors, values)
    action = Action(verb=verb, description=description, actor=actor, target=target, item=item, minutes=minutes)
    return turn, PlanUpdate(memory=memory, plan=plan), action
