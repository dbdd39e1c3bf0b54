"""Train the over-harm classifier's second stage and store it beside the lexicon.

    .venv/bin/python scripts/train_harm_model.py --version 2026.12-6 --choose-on harm_holdout_5.jsonl \
        --choose-on harm_holdout_6.jsonl --choose-on harm_holdout_7.jsonl --choose-on harm_holdout_8.jsonl \
        --choose-on harm_holdout_9.jsonl --choose-on harm_holdout_10.jsonl --choose-on harm_holdout_11.jsonl

Every ``tests/data/harm_*.jsonl`` is training data except the held-out files (``HELD_OUT``, or ``--held-out``),
which are never read. With ``--choose-on F`` (repeatable) the model is first trained without F and each pair of
combining thresholds scored on F (a set the lexicon was not tuned on); the pair with the best mean score over the Fs
is taken (of pairs within ``training.TIE`` of it, the one that changes the lexicon least), the grid printed, and the
stored model is then trained on everything but the held-out files, the Fs included. Without it, ``--confirm`` and
``--overrule`` give the thresholds. Deterministic: the same data gives the same file. Retrain whenever a labelled
file or the lexicon changes (a test checks the digests).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from virtualcrime.analysis.harm.second_stage import MODEL_PATH, TextModel, write_model_file
from virtualcrime.analysis.harm.training import choices, fit, labelled_file, mean_choices, model_file, pick

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
# The held-out measures, written apart, never trained or tuned on (harm_holdout_13 is sealed: not yet measured).
HELD_OUT = ["harm_holdout_12.jsonl", "harm_holdout_13.jsonl"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", required=True, help="the model's version (reports show it)")
    parser.add_argument("--held-out", action="append", metavar="FILE", help=f"never trained on (default {HELD_OUT})")
    parser.add_argument("--choose-on", action="append", metavar="FILE",
                        help="choose the thresholds on this labelled file (repeatable)")  # fmt: skip
    parser.add_argument("--confirm", type=float, default=0.05)
    parser.add_argument("--overrule", type=float, default=0.6)
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    args = parser.parse_args()
    args.held_out = args.held_out or HELD_OUT
    files = [p for p in sorted(DATA.glob("harm_*.jsonl")) if p.name not in args.held_out]
    confirm, overrule, chosen_on = args.confirm, args.overrule, "given on the command line"
    if args.choose_on:
        folds = []
        for name in args.choose_on:
            without = [p for p in files if p.name != name]
            vocabulary, weights, bias = fit([e for f in without for e in labelled_file(f)])
            trial = TextModel("trial", {f: i for i, f in enumerate(vocabulary)}, tuple(vocabulary), weights, bias, 0, 1)
            folds.append(choices(trial, labelled_file(DATA / name)))
        ranked = mean_choices(folds)
        print("confirm overrule precision recall force property merit  (mean over " + ", ".join(args.choose_on) + ")")
        for c, merit in ranked[:10]:
            print(f"{c.confirm:7.2f} {c.overrule:8.2f} {c.precision:9.3f} {c.recall:6.3f} {c.force_accuracy:5.3f}"
                  f" {c.property_accuracy:8.3f} {merit:.4f}")  # fmt: skip
        best = pick(folds)
        confirm, overrule = best.confirm, best.overrule
        chosen_on = (f"{', '.join(args.choose_on)}, each with the model trained without it: mean precision "
                     f"{best.precision:.3f}, recall {best.recall:.3f}")  # fmt: skip
    spec = model_file(files, args.held_out, version=args.version, confirm=confirm, overrule=overrule,
                      chosen_on=chosen_on)  # fmt: skip
    write_model_file(spec, args.out)
    print(f"{args.out}: {len(spec.features)} features, trained on {len(spec.trained_on)} files, "
          f"confirm {confirm}, overrule {overrule}")  # fmt: skip


if __name__ == "__main__":
    main()
