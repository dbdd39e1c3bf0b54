"""What every report figure shares: the resolution, how a model name is shortened for an axis, and saving."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DPI = 130


def short(model: str, width: int = 28) -> str:
    """A model name that fits an axis label."""
    return model if len(model) <= width else "…" + model[-(width - 1) :]


def save(fig: Figure, path: Path) -> Path:
    """Write ``fig`` to ``path`` as PNG and free it."""
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path
