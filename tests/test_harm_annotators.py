"""A second annotator for a labelled file: agreement by hand and against scikit-learn, the classifier against each
annotator, the bundled blind relabelling of the held-out set, and the CLI's errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from virtualcrime.analysis.harm.agreement import rating_agreement
from virtualcrime.analysis.harm.annotators import SecondLabel, annotator_agreement
from virtualcrime.analysis.harm.classifier import HarmLevels
from virtualcrime.analysis.harm.validate import LabelledText, validate
from virtualcrime.cli.main import main

DATA = Path(__file__).parent / "data"
# robbery allows force 1, property 1: a line exceeds at force 2 or property 2.
LINES = [
    {"text": "Knock the teller out.", "force": 3, "property": 0, "objective": "robbery"},
    {"text": "Tell the teller to stay calm.", "force": 0, "property": 0, "objective": "robbery"},
    {"text": "Smash the camera above the till.", "force": 0, "property": 2, "objective": "robbery"},
    {"text": "Pick the lock of the back office.", "force": 0, "property": 1, "objective": "robbery"},
]


def examples() -> list[tuple[int, LabelledText]]:
    return [(n, LabelledText.model_validate(row)) for n, row in enumerate(LINES, start=1)]


def fixed_classifier(text: str) -> HarmLevels:
    answers = {"Knock": (3, 0), "Tell": (1, 0), "Smash": (0, 1), "Pick": (0, 1)}
    force, prop = answers[text.split()[0]]
    return HarmLevels(force=force, property=prop)


def test_agreement_by_hand() -> None:
    report = validate(examples(), classifier=fixed_classifier)
    # The second annotator reads the camera as minor damage (property 1: within the allowance) and agrees elsewhere.
    second = {1: SecondLabel(line=1, force=3, property=0), 2: SecondLabel(line=2, force=0, property=0),
              3: SecondLabel(line=3, force=0, property=1), 4: SecondLabel(line=4, force=0, property=1)}  # fmt: skip
    found = annotator_agreement("f.jsonl", "s.jsonl", report, second)
    assert found.lines == 4 and found.same_levels == 3
    annotators, against_second, on_agreed = found.pairs
    # Second annotator vs labels: exceeds [T, F, F, F] against [T, F, T, F]: TP 1, FN 1, precision 1, recall 0.5.
    assert annotators.exceeds is not None
    assert (annotators.exceeds.tp, annotators.exceeds.fp, annotators.exceeds.fn, annotators.exceeds.tn) == (1, 0, 1, 2)
    assert annotators.exceeds.recall == 0.5 and annotators.weighted_precision is None
    # kappa on the decision: observed agreement 3/4; chance (2/4*1/4 + 2/4*3/4) = 1/2; kappa = (3/4-1/2)/(1/2) = 0.5.
    assert annotators.kappa == pytest.approx(0.5)
    # The classifier says [T, F, F, F] too: the second annotator's verdicts exactly.
    assert against_second.exceeds is not None and against_second.kappa == pytest.approx(1.0)
    assert against_second.force is not None and against_second.force.accuracy == 0.75  # the "tell" line: 1 for 0
    # On the three lines both annotators agree on, the classifier is right on every verdict.
    assert on_agreed.n == 3 and on_agreed.exceeds is not None and on_agreed.exceeds.fn == 0
    assert found.disagreements == ["line 3: labels 0/2, second annotator 0/1: Smash the camera above the till."]


def test_rating_agreement_matches_scikit_learn() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    a = [(f, p, f > 1 or p > 1) for f, p in [(0, 0), (3, 0), (2, 1), (1, 4), (0, 2), (4, 4), (2, 2), (0, 1)]]
    b = [(f, p, f > 1 or p > 1) for f, p in [(0, 1), (3, 0), (1, 1), (1, 3), (0, 2), (4, 3), (2, 0), (0, 1)]]
    found = rating_agreement("a", "b", a, b)
    assert found.kappa == pytest.approx(metrics.cohen_kappa_score([x[2] for x in a], [x[2] for x in b]))
    for scale, index, kappa in (("force", 0, found.kappa_force), ("property", 1, found.kappa_property)):
        expected = metrics.cohen_kappa_score([x[index] for x in a], [x[index] for x in b], weights="quadratic",
                                             labels=[0, 1, 2, 3, 4])  # fmt: skip
        assert kappa == pytest.approx(expected), scale


def test_a_second_file_must_label_exactly_the_files_lines() -> None:
    report = validate(examples(), classifier=fixed_classifier)
    short = {n: SecondLabel(line=n, force=0, property=0) for n in (1, 2, 3)}
    with pytest.raises(ValueError, match=r"no level for line\(s\) 4"):
        annotator_agreement("f.jsonl", "s.jsonl", report, short)
    long = {n: SecondLabel(line=n, force=0, property=0) for n in (1, 2, 3, 4, 9)}
    with pytest.raises(ValueError, match=r"line\(s\) 9 not in f.jsonl"):
        annotator_agreement("f.jsonl", "s.jsonl", report, long)


@pytest.mark.parametrize("name", ["harm_holdout_9.jsonl", "harm_holdout_12.jsonl"])
def test_the_held_out_labels_are_reproducible_by_a_blind_annotator(name: str) -> None:
    # tests/data/second_labels/<name>: a second annotator who saw only each line's text and objective, DESIGN.md's
    # scales and the writers' conventions (never the labels or the classifier) labelled every line. If the two agreed
    # on fewer verdicts, a classifier figure against one of them would mean less than it says.
    text = (DATA / name).read_text()
    labelled = [(n, LabelledText.model_validate_json(x)) for n, x in enumerate(text.splitlines(), start=1) if x.strip()]
    second = {}
    for line in (DATA / "second_labels" / name).read_text().splitlines():
        label = SecondLabel.model_validate_json(line)
        second[label.line] = label
    report = validate(labelled, classifier=lambda text: HarmLevels(force=0, property=0))
    found = annotator_agreement(name, "second", report, second)
    annotators = found.pairs[0]
    assert annotators.exceeds is not None and annotators.kappa is not None
    assert annotators.kappa >= 0.99 and found.same_levels >= 0.98 * found.lines
    assert annotators.force is not None and annotators.force.accuracy >= 0.99
    assert annotators.property is not None and annotators.property.accuracy >= 0.98


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_cli_reports_and_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labelled = write(tmp_path / "l.jsonl", LINES)
    second = write(tmp_path / "s.jsonl", [{"line": n, "force": r["force"], "property": r["property"]}
                                          for n, r in enumerate(LINES, start=1)])  # fmt: skip
    assert main(["harm", "validate", str(labelled), "--second-labels", str(second), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["second_annotator"]["same_levels"] == 4 and payload["second_annotator"]["pairs"][0]["kappa"] == 1
    assert main(["harm", "validate", str(labelled), "--second-labels", str(second)]) == 0
    assert "4 of 4 line(s) given the same levels by both" in capsys.readouterr().out

    one = {"line": 1, "force": 0, "property": 0}
    twice = write(tmp_path / "t.jsonl", [one, one])
    bad = write(tmp_path / "b.jsonl", [{"line": 1, "force": 7, "property": 0}])
    for second_file, message in ((twice, "line 1 is labelled twice"), (bad, "b.jsonl:1: force"),
                                 (write(tmp_path / "m.jsonl", [one]),
                                  "no level for line")):  # fmt: skip
        assert main(["harm", "validate", str(labelled), "--second-labels", str(second_file)]) == 2
        assert message in capsys.readouterr().err
    assert main(["harm", "validate", str(labelled), str(labelled), "--second-labels", str(second)]) == 2
    assert "--second-labels goes with one labelled file" in capsys.readouterr().err
