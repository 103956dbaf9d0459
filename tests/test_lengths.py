"""A model answers only at the lengths it was trained for: the shipped model keeps only its trained position
rows, holds its accuracy at every length it accepts, and refuses longer input with a clear error."""
import json

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
    assert model.config.max_len == trained == 64  # the rows it was trained on, no more
    _, val_ids = split_ids
    for length in (16, 32, 48, 64):
        accuracy = evaluate(model, tokenizer, val_ids, length=length, windows=256)["accuracy"]
        assert accuracy > (0.6 if length < 32 else 0.68), (length, accuracy)
    with pytest.raises(ValueError, match="longer than max_len=64"):
        evaluate(model, tokenizer, val_ids, length=65, windows=8)
    long_text = "To be, or not to be, that is the question: Whether 'tis nobler in the mind to suffer " * 2
    assert len(predict_masked(model, tokenizer, long_text, [150], k=1)) == 1  # read in windows of 64
    # the measurement that made the change: before it, the rows past 64 answered, badly
    before = load_json_results("lengths-shakespeare-char")
    assert before["max_len"] == 128 and before["kept_positions"] == 64
    by_length = {int(k): v["accuracy"] for k, v in before["by_length"].items()}
    assert by_length[128] < by_length[64] - 0.15


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
                           "--out", str(tmp_path / "l.json"), "--keep", "16", "--save", str(tmp_path / "kept.pt")])
    assert set(result["by_length"]["16"]) == {"loss", "accuracy", "predictions"}
    assert result["by_length"]["65"] == {"refused": "longer than max_len=64"}
    assert json.loads((tmp_path / "l.json").read_text())["kept_positions"] == 16
    assert load_checkpoint(tmp_path / "kept.pt").model.config.max_len == 16
    with pytest.raises(SystemExit):
        lengths.main([str(tmp_path / "run" / "model.pt"), "--keep", "16"])  # --keep without --save
    assert "--keep and --save go together" in capsys.readouterr().err
