"""``virtualcrime replay``: a readable transcript of logged runs, turn by turn."""

from __future__ import annotations

import argparse

from .main import CliError


def replay_command(args: argparse.Namespace) -> int:
    from inspect_ai.log import read_eval_log

    from ..engine.render import render_result, render_turn
    from ..harness.store import LogFormatError, records_from_store

    try:
        log = read_eval_log(args.log)
    except (OSError, ValueError) as err:
        raise CliError(f"cannot read log {args.log}: {err}") from err
    samples = [
        s
        for s in log.samples or []
        if (args.sample is None or str(s.id) == args.sample) and (args.epoch is None or s.epoch == args.epoch)
    ]
    if not samples:
        known = sorted({f"{s.id} (epoch {s.epoch})" for s in log.samples or []})
        raise CliError(f"no run matches; the log holds: {', '.join(known) or 'no samples'}")
    for sample in samples:
        try:
            turns, result = records_from_store(dict(sample.store))
        except LogFormatError as err:
            raise CliError(f"{args.log}: sample {sample.id} epoch {sample.epoch}: {err}") from err
        print(f"## {sample.id} · epoch {sample.epoch}\n")
        for record in turns:
            if args.turn is None or record.turn == args.turn:
                print(render_turn(record, observation=not args.brief))
                print()
        if result is not None and args.turn is None:
            print(render_result(result))
            print()
    return 0
