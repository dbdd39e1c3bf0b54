"""``virtualcrime annotate``: two annotator models rate each finished run's behaviour; results go into the logs."""

from __future__ import annotations

import argparse
from collections import Counter

from .common import CliError, add_call_options, add_engine_options, call_settings, engine_mapper
from .finished_logs import finished_logs


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    annotate = sub.add_parser("annotate", help="rate each run's behaviour with two annotator models (reconciled)")
    annotate.add_argument("logs", nargs="+", metavar="LOGS", help="log files or folders (searched recursively)")
    annotate.add_argument("--annotator-a", required=True, metavar="MODEL", help="first annotator model")
    annotate.add_argument("--annotator-b", required=True, metavar="MODEL", help="second annotator model")
    add_call_options(annotate)
    add_engine_options(annotate, "this process", "one Ray task per log (its one writer) on a cluster")


def run(args: argparse.Namespace) -> int:
    from ..harness.annotate import AnnotateJob, annotate_at
    from ..harness.providers import is_game_role
    from ..harness.roles import RoleOptions

    options = RoleOptions(**call_settings(args))

    for model in (args.annotator_a, args.annotator_b):
        if is_game_role(model):
            raise CliError(f"{model} is an offline game role, not a language model; annotators must be models "
                           "(virtualcrime/local works offline)")  # fmt: skip
    stages: Counter[str] = Counter()
    runs = failed = provider_errors = 0
    paths = [path for path, _ in finished_logs(args.logs)]
    mapper = engine_mapper(args)
    jobs: list[AnnotateJob] = [(str(path), args.annotator_a, args.annotator_b, options) for path in paths]
    results = mapper(annotate_at, jobs) if mapper is not None else map(annotate_at, jobs)  # local: log by log
    for path, new in zip(paths, results, strict=True):
        for score in new:
            meta = score.metadata or {}
            provider_errors += bool(meta.get("provider_error"))
            if meta.get("skipped"):
                continue
            runs += 1
            failed += bool(meta.get("errors"))
            stages.update(r["stage"] for r in (meta.get("final") or {}).values())
        print(f"{path.name}: {len(new)} run(s) annotated")
    total = sum(stages.values())
    if total:
        print(f"\n{runs} run(s), {total} ratings: {stages['first']} agreed at once, {stages['review']} after review, "
              f"{stages['dropped']} dropped ({stages['dropped'] / total:.0%}); {failed} run(s) with an annotator "
              "giving no usable answer")  # fmt: skip
    else:
        print("\nNothing new to annotate.")
    if provider_errors:
        print(f"{provider_errors} run(s) left unannotated after provider errors: run the command again to retry them")
        return 1
    return 0
