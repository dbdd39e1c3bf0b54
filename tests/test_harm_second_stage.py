"""The harm classifier's second stage: its features, the per-threshold combination with the lexicon, the reasons it
keeps, and the stored model's provenance (trained on exactly the labelled files there are, never the held-out set,
and reproducible from them)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from test_harm import DATA, HOLDOUTS
from virtualcrime.analysis.harm import classify, classify_action
from virtualcrime.analysis.harm.classifier import HarmLevels, read
from virtualcrime.analysis.harm.lexicon import load_lexicon
from virtualcrime.analysis.harm.second_stage import (
    MODEL_PATH,
    TextModel,
    classifier_version,
    combined_levels,
    features,
    file_digest,
    load_text_model,
    pack_weights,
    read_model_file,
    second_opinion,
    unpack_weights,
)
from virtualcrime.cli.main import main


def tiny_model(
    weights: dict[str, list[float]], bias: list[float], confirm: float = 0.05, overrule: float = 0.6
) -> TextModel:
    names = tuple(sorted(weights))
    return TextModel("t", {n: i for i, n in enumerate(names)}, names, np.array([weights[n] for n in names]),
                     np.array(bias, dtype=float), confirm, overrule)  # fmt: skip


def test_features_are_words_near_pairs_and_marked_character_grams() -> None:
    found = features("tie him up")
    assert {"w:tie", "w:him", "w:up", "b:tie him", "b:him up", "s:tie up"} <= set(found)
    wider = features("slips a sedative into his tea")
    assert {"s:slips sedative", "s:slips into", "s:a into", "s:sedative his"} <= set(wider)
    assert "s:slips his" not in wider and "s:slips a" not in wider  # four apart; adjacent (a "b:" pair)
    assert {"c4:<tie", "c4:tie>", "c5:<tie>", "c4:<up>"} <= set(found)
    assert "c5:<up>" not in found  # "<up>" has four characters
    assert not any(f.startswith("c3:") for f in found)  # 3-grams are shared by too many short words
    assert found == sorted(set(found)) and features("tie him up") == found


@pytest.mark.parametrize(
    ("lexicon", "probabilities", "expected"),
    [
        (3, [0.9, 0.8, 0.04, 0.01], 2),  # the lexicon's 3rd threshold falls under `confirm`
        (3, [0.9, 0.8, 0.06, 0.01], 3),  # it stands at 0.06
        (0, [0.7, 0.65, 0.2, 0.1], 2),  # two thresholds the lexicon missed, both at `overrule` or above
        (0, [0.59, 0.99, 0.99, 0.99], 0),  # a level needs every threshold below it
        (4, [0.01, 0.9, 0.9, 0.9], 0),
        (1, [0.5, 0.1, 0.0, 0.0], 1),
    ],
)
def test_each_threshold_is_confirmed_or_overruled(lexicon: int, probabilities: list[float], expected: int) -> None:
    assert combined_levels(lexicon, np.array(probabilities), confirm=0.05, overrule=0.6) == expected


def test_a_raised_level_names_the_model_and_its_strongest_features() -> None:
    # "across the back" pulls force >= 1..3 up; the bias keeps everything else at 0.
    pull = [12.0, 12.0, 12.0, 0, 0, 0, 0, 0]
    model = tiny_model({"b:across the": pull, "w:stool": [1.0, 1.0, 1.0, 0, 0, 0, 0, 0]}, [-6.0] * 8)
    levels = second_opinion(HarmLevels(force=0, property=0), "a bar stool across the back", model)
    assert (levels.force, levels.property) == (3, 0)
    assert levels.force_evidence == "model: 'across the', 'stool'"
    assert levels.second_opinion.startswith("force 0->3: model P(>=3) 0.9")


def test_a_lowered_level_keeps_the_overruled_phrase_as_discounted() -> None:
    model = tiny_model({"w:fire": [0] * 8}, [-8.0] * 8)  # the model sees no harm at all
    lexicon = HarmLevels(force=0, property=4, property_evidence="fire")
    levels = second_opinion(lexicon, "walk to the fire door", model)
    assert (levels.force, levels.property, levels.property_evidence) == (0, 0, "")
    assert levels.negated == ["fire (model)"] and "property 4->0" in levels.second_opinion
    agreed = HarmLevels(force=0, property=0)
    assert second_opinion(agreed, "walk to the fire door", model) is agreed  # nothing to change: the same object


def test_classify_is_the_lexicon_then_the_bundled_model() -> None:
    model = load_text_model()
    for text in ("Bar manager Pike gets a bar stool across the back.", "Walk to the fire exit.", "Smash the camera."):
        reading = read(text)
        assert classify(text) == reading.levels == second_opinion(reading.lexicon, reading.text, model)
    assert classify_action("knock_out", "guard_cobb", "", "person").force == 3


def test_the_stored_model_was_trained_on_every_labelled_file_but_the_held_out_ones() -> None:
    spec = read_model_file()
    assert spec.held_out == sorted(HOLDOUTS) and not set(spec.trained_on) & set(HOLDOUTS)
    present = {p.name: file_digest(p) for p in DATA.glob("harm_*.jsonl") if p.name not in HOLDOUTS}
    # A labelled file changed, added or removed since training: retrain (scripts/train_harm_model.py).
    assert spec.trained_on == present
    assert spec.lexicon_version == load_lexicon().version
    assert classifier_version() == f"{load_lexicon().version}+model.{spec.version}"
    assert 0 < spec.confirm < spec.overrule < 1 and spec.chosen_on


def test_retraining_on_the_same_files_reproduces_the_stored_model() -> None:
    pytest.importorskip("sklearn")
    from virtualcrime.analysis.harm.training import model_file

    stored = read_model_file()
    files = [DATA / name for name in stored.trained_on]
    again = model_file(files, stored.held_out, version=stored.version, confirm=stored.confirm,
                       overrule=stored.overrule, chosen_on=stored.chosen_on,
                       regularisation=stored.regularisation, min_count=stored.min_count)  # fmt: skip
    assert again.features == stored.features
    features = len(stored.features)
    again_weights, stored_weights = unpack_weights(again.weights, features), unpack_weights(stored.weights, features)
    assert np.allclose(again_weights, stored_weights, atol=2e-3) and np.allclose(again.bias, stored.bias, atol=2e-3)


def test_training_refuses_a_held_out_file() -> None:
    pytest.importorskip("sklearn")
    from virtualcrime.analysis.harm.training import model_file

    with pytest.raises(ValueError, match=r"held-out files cannot be trained on: harm_holdout_9\.jsonl"):
        model_file([DATA / "harm_holdout_9.jsonl"], ["harm_holdout_9.jsonl"], version="x", confirm=0.1,
                   overrule=0.5, chosen_on="-")  # fmt: skip


def test_a_missing_or_damaged_model_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"train_harm_model\.py"):
        load_text_model(tmp_path / "none.json.gz")
    spec = read_model_file().model_copy(update={"weights": pack_weights(np.zeros((1, 8)))})
    damaged = tmp_path / "damaged.json.gz"
    damaged.write_bytes(gzip.compress(spec.model_dump_json().encode()))
    with pytest.raises(ValueError, match=r"32 bytes of weights for \d+ features"):
        load_text_model(damaged)
    # A file of the earlier layout (format 1: weights as lists of floats) is refused by name, not half-read.
    older = tmp_path / "format1.json.gz"
    fields = json.loads(spec.model_dump_json()) | {"format": 1, "weights": [[0.0] * 8]}
    older.write_bytes(gzip.compress(json.dumps(fields).encode()))
    with pytest.raises(ValueError, match=r"format1\.json\.gz is not a text model file this version reads \(format"):
        load_text_model(older)
    assert MODEL_PATH.exists()


def test_packed_weights_are_the_rounded_weights_exactly() -> None:
    weights = np.round(np.random.default_rng(3).normal(0, 2, size=(50, 8)), 4)
    weights[0] = [0.1234, -0.0001, 0.0, 12.5, -7.0625, 1e-4, -1e-4, 3.3333]
    assert np.array_equal(unpack_weights(pack_weights(weights), 50), weights)
    with pytest.raises(ValueError, match="not base64"):
        unpack_weights("not base64!", 1)


def test_validate_can_score_the_lexicon_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labelled = tmp_path / "one.jsonl"
    labelled.write_text('{"text": "Bar manager Pike gets a bar stool across the back.", "force": 3, "property": 0, '
                        '"objective": "riot"}\n')  # fmt: skip
    assert main(["harm", "validate", str(labelled), "--lexicon-only"]) == 0
    alone = capsys.readouterr().out
    assert f"classifier {load_lexicon().version}\n" in alone
    assert main(["harm", "validate", str(labelled)]) == 0
    both = capsys.readouterr().out
    assert f"classifier {classifier_version()}" in both


def test_thresholds_are_chosen_by_their_mean_merit_over_the_folds() -> None:
    from virtualcrime.analysis.harm.training import Choice, mean_choices

    # Pair A is best on the first fold only; pair B is good on both: B wins on the mean.
    fold1 = [Choice(0.1, 0.5, 0.99, 0.99, 0.9, 0.9), Choice(0.2, 0.6, 0.95, 0.95, 0.9, 0.9)]
    fold2 = [Choice(0.1, 0.5, 0.80, 0.90, 0.9, 0.9), Choice(0.2, 0.6, 0.94, 0.96, 0.9, 0.9)]
    (best, best_merit), (second, second_merit) = mean_choices([fold1, fold2])
    assert best_merit > second_merit
    assert (best.confirm, best.overrule) == (0.2, 0.6)
    assert best.precision == pytest.approx(0.945) and best.recall == pytest.approx(0.955)
    assert (second.confirm, second.precision) == (0.1, pytest.approx(0.895))
    # A pair missing from a fold is not ranked.
    assert len(mean_choices([fold1, fold2[:1]])) == 1


def test_of_nearly_equal_pairs_the_one_that_changes_the_lexicon_least_is_kept() -> None:
    from virtualcrime.analysis.harm.training import TIE, Choice, pick

    best = Choice(0.05, 0.5, 0.95, 0.96, 0.92, 0.95)
    close = Choice(0.05, 0.6, 0.95 - TIE / 2, 0.96, 0.92, 0.95)  # within the tie: overrules less, kept
    far = Choice(0.05, 0.7, 0.95 - 2 * TIE, 0.96, 0.92, 0.95)  # overrules even less but scores clearly worse
    assert (pick([[best, close, far]]).confirm, pick([[best, close, far]]).overrule) == (0.05, 0.6)
    assert pick([[best, far]]).overrule == 0.5
