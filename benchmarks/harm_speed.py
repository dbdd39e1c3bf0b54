"""Over-harm classifier speed, printed as figures (not a test).

    python benchmarks/harm_speed.py [--repeat N]

Over the development texts (``tests/data/harm_dev*.jsonl`` but the round-4 held-out slice; never a held-out set),
measures:
  1. loading the lexicon and compiling every pattern (once per process; with the compiled programs already kept on
     disk, ``VIRTUALCRIME_CACHE_DIR``, this reads them back instead: run with ``VIRTUALCRIME_CACHE_DIR=off`` for the
     cold figure);
  2. ``classify(text)`` on texts made unique (no memoised answer to hide behind), texts per second;
  3. ``classify_action(verb, target, description, kind)`` the same way, for the lines that give an action's fields;
  4. the plain texts once, then again: the second pass is memoised (a report over repeated turns mostly is).
Target (issue 17): at least ~1,200 texts a second for (2).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from virtualcrime.analysis.harm import LEXICON_VERSION, classify, classify_action
from virtualcrime.analysis.harm.lexicon import _cache_dir, load_lexicon

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
HELD_OUT = {"harm_dev_round4_heldout.jsonl"}  # never read here (round 4's held-out slice)
TARGET = 1200


def dev_rows() -> list[dict[str, Any]]:
    """Every line of the development files (``harm_dev*.jsonl``), in file order."""
    rows: list[dict[str, Any]] = []
    for path in sorted(p for p in DATA.glob("harm_dev*.jsonl") if p.name not in HELD_OUT):
        rows.extend(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return rows


def rate(label: str, count: int, work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    spent = time.perf_counter() - start
    per_second = count / spent if spent else float("inf")
    print(f"{label}: {count} in {spent:.3f} s = {per_second:,.0f} texts/s")
    return per_second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="passes over the texts (best one reported)")
    args = parser.parse_args()
    rows = dev_rows()
    texts = [r.get("text") or f"{r.get('verb', '')} {r.get('target', '')}: {r.get('description', '')}" for r in rows]
    actions = [r for r in rows if isinstance(r.get("verb"), str)]
    print(f"lexicon {LEXICON_VERSION}; {len(texts)} development texts, {len(actions)} with action fields")

    folder = _cache_dir()
    kept = len(list(folder.glob("*.bin"))) if folder is not None and folder.is_dir() else 0
    start = time.perf_counter()
    load_lexicon().compile_all()
    where = f"compiled programs kept in {folder} ({kept} there before)" if folder is not None else "no cache"
    print(f"load + compile every pattern: {time.perf_counter() - start:.3f} s; {where}")

    def classify_all(batch: list[str]) -> Callable[[], object]:
        return lambda: [classify(t) for t in batch]

    best = 0.0
    for attempt in range(args.repeat):
        unique = [f"{t} (turn {attempt}-{i})" for i, t in enumerate(texts)]
        best = max(best, rate(f"classify, unique texts, pass {attempt + 1}", len(unique), classify_all(unique)))
    print(f"  best {best:,.0f} texts/s; target >= {TARGET:,}: {'met' if best >= TARGET else 'NOT met'}")

    if actions:
        fields = [
            (str(r["verb"]), str(r.get("target", "")), f"{r.get('description', '')} (turn {i})", r.get("target_kind"))
            for i, r in enumerate(actions)
        ]
        work = lambda: [classify_action(v, t, d, k) for v, t, d, k in fields]  # noqa: E731
        rate("classify_action, unique fields", len(fields), work)

    rate("classify, plain texts, first sight", len(texts), classify_all(texts))
    rate("classify, the same texts again (memoised)", len(texts), classify_all(texts))


if __name__ == "__main__":
    main()
