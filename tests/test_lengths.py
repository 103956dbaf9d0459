"""A model answers only at the lengths it was trained for: the shipped model keeps only its trained position
rows, holds its accuracy at every length it accepts, and refuses longer input with a clear error."""
import json
import math

import pytest
import torch

from mlm_lib.model import BertConfig, BertForMLM


def test_keep_positions_changes_nothing_below_and_refuses_above():
    torch.manual_seed(0)
    model = BertForMLM(BertConfig(vocab_size=20, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_len=32)).eval()
    ids = torch.randint(5, 20, (2, 12))
    before = model(ids)
    assert model.keep_positions(12) is model and model.config.max_len == 12
    assert torch.equal(model(ids), before)
    assert model.embeddings.position.weight.shape == (12, 16)
    with pytest.raises(ValueError, match="longer than max_len=12: cut it into windows"):
        model(torch.randint(5, 20, (1, 13)))
    for bad in (0, 13, 2.5, True):
        with pytest.raises(ValueError, match="length must be a whole number from 1 to max_len=12"):
            model.keep_positions(bad)


@pytest.mark.slow
def test_shipped_model_holds_its_accuracy_at_every_length_it_accepts(split_ids):
    from mlm_lib.course.assets import load_json_results, reference_checkpoint, reference_log
    from mlm_lib.predict import predict_masked
    from mlm_lib.training import evaluate

    checkpoint = reference_checkpoint()
    model, tokenizer = checkpoint.model.eval(), checkpoint.tokenizer
    trained = reference_log()["train_config"]["schedule"]["long"]
    assert model.config.max_len == trained == 128  # trained through 128, and reads no further
    measured = load_json_results("lengths-shakespeare-char")
    by_length = {int(k): v["accuracy"] for k, v in measured["by_length"].items()}
    assert measured["max_len"] == 128 and sorted(by_length) == list(range(16, 129, 16))
    assert min(by_length[n] for n in by_length if n >= 48) > 0.70
    assert by_length[128] >= max(by_length.values()) - 0.01  # best at the longest: no fall past some length
    _, val_ids = split_ids
    for length in (16, 64, 128):  # re-evaluated on other windows, ~4,900 blanks at each length: the figures hold
        here = evaluate(model, tokenizer, val_ids, length=length, windows=256 * 128 // length)
        shipped = measured["by_length"][str(length)]
        p = shipped["accuracy"]  # within 4 binomial standard errors of the difference of the two samples
        tolerance = 4 * math.sqrt(p * (1 - p) * (1 / here["predictions"] + 1 / shipped["predictions"]))
        assert abs(here["accuracy"] - p) < tolerance, (length, here["accuracy"], p, tolerance)
    with pytest.raises(ValueError, match="longer than max_len=128"):
        evaluate(model, tokenizer, val_ids, length=129, windows=8)
    long_text = "To be, or not to be, that is the question: Whether 'tis nobler in the mind to suffer " * 3
    assert len(predict_masked(model, tokenizer, long_text, [200], k=1)) == 1  # read in windows of 128
    # the first shipped model (trained to 64, 128 rows): the measurement that made the course cut and retrain
    before = load_json_results("lengths-shakespeare-char-64")
    assert before["max_len"] == 128 and before["kept_positions"] == 64
    first = {int(k): v["accuracy"] for k, v in before["by_length"].items()}
    assert first[128] < first[64] - 0.15 and reference_checkpoint("shakespeare-char-64").model.config.max_len == 64


@pytest.mark.slow
def test_lengths_command_measures_and_keeps(tmp_path, capsys, monkeypatch):
    from dataclasses import replace

    from mlm_lib.checkpoints import load_checkpoint
    from mlm_lib.curriculum import linear
    from mlm_lib.experiments import lengths, pretrain

    sizes, config = pretrain.CONFIGS["smoke"]
    monkeypatch.setitem(pretrain.CONFIGS, "smoke", (sizes, replace(config, schedule=linear(16, 32, until=0.5))))
    pretrain.main(["--config", "smoke", "--steps", "6", "--out", str(tmp_path / "run"), "--no-progress"])
    saved = load_checkpoint(tmp_path / "run" / "model.pt")
    assert saved.model.config.max_len == 32  # a curriculum that ends at 32: the pretraining command keeps 32 rows
    resume = load_checkpoint(tmp_path / "run" / "resume.pt")
    assert resume.model.config.max_len == 64  # all rows, to go on training
    result = lengths.main([str(tmp_path / "run" / "resume.pt"), "--lengths", "16", "64", "65", "--windows", "8",
                           "--out", str(tmp_path / "l.json"), "--keep", "16"])
    assert set(result["by_length"]["16"]) == {"loss", "accuracy", "predictions"}
    assert result["by_length"]["65"] == {"refused": "longer than max_len=64"}
    assert json.loads((tmp_path / "l.json").read_text())["kept_positions"] == 16
    assert load_checkpoint(tmp_path / "l" / "model.pt").model.config.max_len == 16  # in the folder named after --out
    with pytest.raises(SystemExit):
        lengths.main([str(tmp_path / "run" / "model.pt"), "--keep", "16"])  # --keep writes a model: --out says where
    assert "--keep 16 writes a model: give --out" in capsys.readouterr().err
