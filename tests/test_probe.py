"""The newcomer probe of 2026-11-25 (../shared/reviews/newcomer-probe-2026-11-25.md): each case that answered
silently wrong, lost data or ended in a raw traceback, by its id in the probe's table, so it cannot come back.
(The device cases B18c, B18d and A21 are in test_devices.py, the output cases B34d and B35 in test_outputs.py,
TrainConfig's A16, A17 and A18 and SIGTERM in test_robustness.py.)"""
import json

import pytest
import torch

from mlm_lib import BertConfig, BertForMLM, CharTokenizer, predict_masked, save_checkpoint
from mlm_lib.course.assets import reference_checkpoint
from mlm_lib.experiments import electra, finetune, lengths, reproduce, speedrun

KOREAN = "언어 모델은 문장 속의 빈칸을 채우면서 배운다. 가려진 글자를 맞히려면 앞뒤의 글자를 함께 보아야 한다. " * 20


def usage_error(capsys, main, argv) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


@pytest.fixture(scope="module")
def korean_model(tmp_path_factory):
    """A model whose vocabulary is a Korean text's characters (untrained: only its vocabulary matters here)."""
    tokenizer = CharTokenizer.from_text(KOREAN)
    torch.manual_seed(0)
    model = BertForMLM(BertConfig(vocab_size=tokenizer.vocab_size, d_model=16, n_layers=1, n_heads=2, d_ff=32,
                                  max_len=128))
    path = tmp_path_factory.mktemp("korean") / "model.pt"
    save_checkpoint(path, model, tokenizer)
    return path


def test_B28b_lengths_refuses_a_text_the_model_cannot_read(korean_model, capsys):
    err = usage_error(capsys, lengths.main, [str(korean_model), "--lengths", "16"])
    assert "of the held-out text is unknown to this model's vocabulary" in err and "--corpus" in err


def test_B33b_finetune_refuses_a_model_that_cannot_read_the_task(korean_model, tmp_path, capsys):
    err = usage_error(capsys, finetune.main, ["curve", "--preset", "smoke", "--model", str(korean_model), "--out",
                                              str(tmp_path / "f.json")])
    assert "of the task's speeches is unknown to this model's vocabulary" in err
    assert not (tmp_path / "f.json").exists()


def test_B33c_finetune_names_the_file_inside_a_run_folder(korean_model, tmp_path, capsys):
    err = usage_error(capsys, finetune.main, ["curve", "--preset", "smoke", "--model", str(korean_model.parent),
                                              "--out", str(tmp_path / "f.json")])
    assert "is a folder" in err and "model.pt" in err


def test_B37c_reproduce_refuses_two_unrelated_files(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"runs": [{"recipe": "bert", "seed": 0, "history": {"loss": [1.0]}}]}))
    b.write_text(json.dumps({"pretrained": [{"objective": "electra"}]}))
    err = usage_error(capsys, reproduce.main, [str(a), str(b)])
    assert "holds nothing that matches" in err


@pytest.mark.parametrize("preset_first, preset_then", [("smoke", "full")])
def test_B31_speedrun_and_electra_resume_only_with_their_own_preset(tmp_path, capsys, preset_first, preset_then):
    out = tmp_path / "s.json"
    out.write_text(json.dumps({"commands": [], "runs": [], "preset": preset_first, "pretrained": [], "finetuned": [],
                               "learning_rates": {}}))
    for main in (speedrun.main, electra.main):
        err = usage_error(capsys, main, ["--preset", preset_then, "--out", str(out), "--resume"])
        assert f"preset '{preset_first}'" in err or f"preset {preset_first!r}" in err


@pytest.mark.parametrize("text, positions, kwargs, message", [
    ("To be, or [MASK] to be", None, {}, "literal '\\[MASK\\]'"),                     # A10
    ("To be, or n\U0001F642t to be", [11], {}, "cannot read '\U0001F642'"),           # A11
    ("To be, or not to be", None, {"select_prob": 2}, "select_prob is the chance"),  # A12
])
def test_A10_A11_A12_predict_masked_refuses_what_it_would_answer_wrongly(text, positions, kwargs, message):
    checkpoint = reference_checkpoint()
    with pytest.raises(ValueError, match=message):
        predict_masked(checkpoint.model, checkpoint.tokenizer, text, positions, **kwargs)
