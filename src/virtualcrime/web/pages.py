"""HTML rendering: Jinja templates beside this module, autoescaped; one ``page`` helper for every route."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = lambda x: f"{100 * x:.0f}%"
    return env


def page(template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """Render ``templates/<template>`` with ``context``."""
    html = environment().get_template(template).render(**context)
    return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})


def error_page(message: str, status: int, back: str = "/", back_text: str = "Back") -> HTMLResponse:
    return page("error.html", status=status, message=message, code=status, back=back, back_text=back_text)
