"""Errors the user can fix, told in one plain line: Inspect's prerequisite errors (a missing API key or provider
package) carry console markup and several lines; the command line shows them as one sentence."""

from __future__ import annotations

import re

from inspect_ai._util.error import PrerequisiteError

_MARKUP = re.compile(r"\[/?[a-z][a-z0-9 _#.,-]*\]")


def plain_message(err: BaseException) -> str:
    """The exception's message as one line, without console markup or a leading ``ERROR:``."""
    text = _MARKUP.sub("", str(err))
    joined = " ".join(line.strip() for line in text.splitlines() if line.strip())
    return re.sub(r"^(ERROR|Error):\s*", "", joined) or type(err).__name__


def user_error(err: BaseException) -> str | None:
    """A one-line message when ``err`` is the user's to fix (Inspect's PrerequisiteError), else None."""
    if isinstance(err, PrerequisiteError):
        return plain_message(err)
    return None
