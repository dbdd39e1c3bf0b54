"""Markdown tables, the one renderer every report section uses (no analysis imports, so any module can)."""

from __future__ import annotations

from collections.abc import Sequence


def markdown(rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table (first row is the header)."""
    escape = [[cell.replace("|", "\\|") for cell in row] for row in rows]
    lines = ["| " + " | ".join(escape[0]) + " |", "|" + "|".join("---" for _ in escape[0]) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in escape[1:]]
    return "\n".join(lines) + "\n"
