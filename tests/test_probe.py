"""The newcomer probe of 2026-11-25 (../shared/reviews/newcomer-probe-2026-11-25.md): each case that answered
silently wrong, lost data or ended in a raw traceback, by its id in the probe's table, so it cannot come back.
(The device cases B18c, B18d and A21 are in test_devices.py, the output cases B34d and B35 in test_outputs.py,
TrainConfig's A16, A17 and A18 and SIGTERM in test_robustness.py.)"""
import json
from pathlib import Path

import pytest
import torch

from mlm_lib import BertConfig, BertForMLM, CharTokenizer, predict_masked, save_checkpoint
from mlm_lib.course.assets import reference_checkpoint
from mlm_lib.experiments import electra, finetune, lengths, pretrain, reproduce, speedrun

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


@pytest.mark.parametrize("command", [speedrun, electra], ids=["speedrun", "electra"])
def test_B31_speedrun_and_electra_resume_only_with_their_own_preset(command, tmp_path, capsys, monkeypatch):
    from mlm_lib.experiments import _run

    def stopped(*args, **kwargs):
        raise _run.Interrupted()
    monkeypatch.setattr(command, "run_jobs", stopped)
    out = tmp_path / "s.json"
    with pytest.raises(SystemExit):  # a run of preset smoke, stopped at once: its record says so
        command.main(["--preset", "smoke", "--minutes", "0.01", "--out", str(out), "--threads", "1"])
    err = usage_error(capsys, command.main, ["--preset", "full", "--minutes", "0.01", "--out", str(out), "--resume"])
    assert "--preset smoke, now full" in err


@pytest.mark.parametrize("text, positions, kwargs, message", [
    ("To be, or [MASK] to be", None, {}, "literal '\\[MASK\\]'"),                     # A10
    ("To be, or n\U0001F642t to be", [11], {}, "cannot read '\U0001F642'"),           # A11
    ("To be, or not to be", None, {"select_prob": 2}, "select_prob is the chance"),  # A12
])
def test_A10_A11_A12_predict_masked_refuses_what_it_would_answer_wrongly(text, positions, kwargs, message):
    checkpoint = reference_checkpoint()
    with pytest.raises(ValueError, match=message):
        predict_masked(checkpoint.model, checkpoint.tokenizer, text, positions, **kwargs)


# ---- errors that used to arrive as a raw traceback, late, or without the fix -------------------------------

def test_B11_a_corpus_too_short_for_one_held_out_window_is_refused_before_training(tmp_path, capsys):
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("To be, or not to be, that is the question. " * 3)
    err = usage_error(capsys, pretrain.main, ["--config", "smoke", "--corpus", str(corpus), "--out", str(tmp_path / "r")])
    assert "held-out text has" in err and "give a longer text" in err
    assert not any((tmp_path / "r").glob("*.pt"))


def test_B17_an_output_where_no_file_can_be_made_is_refused_up_front(capsys):
    if not Path("/proc").is_dir():
        pytest.skip("no /proc here")
    err = usage_error(capsys, pretrain.main, ["--config", "smoke", "--out", "/proc/mlm-course-run"])
    assert "cannot write there" in err


@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "r"
    pretrain.main(["--config", "smoke", "--out", str(out), "--no-progress", "--steps", "10"])
    return out


def test_B23_a_resume_with_other_settings_names_the_setting(stopped_run, capsys):
    err = usage_error(capsys, pretrain.main, ["--config", "smoke", "--out", str(stopped_run), "--resume", "--steps", "12",
                                              "--no-progress"])
    assert "--resume" in err and "--steps 10, now 12" in err


def test_B23b_a_resume_on_another_corpus_names_the_option(stopped_run, tmp_path, capsys):
    other = tmp_path / "korean.txt"
    other.write_text(KOREAN * 5, encoding="utf-8")  # long enough for a held-out window
    err = usage_error(capsys, pretrain.main, ["--config", "smoke", "--out", str(stopped_run), "--resume", "--steps", "10",
                                              "--corpus", str(other), "--no-progress"])
    assert "--corpus sha256" in err


def test_B27_A19_a_run_folder_where_a_model_file_is_expected_names_the_file(stopped_run, capsys):
    from mlm_lib import load_checkpoint

    err = usage_error(capsys, lengths.main, [str(stopped_run)])
    assert "is a folder" in err and "model.pt" in err
    with pytest.raises(FileNotFoundError, match="is a folder .*model.pt.*e.g. .*model.pt"):
        load_checkpoint(stopped_run)


def test_A21_a_model_on_a_device_the_course_does_not_train_on_is_refused_by_name():
    from mlm_lib import TrainConfig, fixed, train

    tokenizer = CharTokenizer.from_text(KOREAN)
    model = BertForMLM(BertConfig(vocab_size=tokenizer.vocab_size, d_model=16, n_layers=1, n_heads=2, d_ff=32,
                                  max_len=32)).to("meta")
    ids = tokenizer.encode(KOREAN)
    with pytest.raises(ValueError, match="The model is on meta: the course trains on cpu, cuda or mps"):
        train(model, tokenizer, ids, ids, TrainConfig(steps=2, tokens_per_batch=64, schedule=fixed(16)), progress=False)


@pytest.mark.parametrize("main", [speedrun.main, electra.main], ids=["speedrun", "electra"])
def test_B29d_an_infinite_budget_is_a_usage_error(main, tmp_path, capsys):
    err = usage_error(capsys, main, ["--preset", "smoke", "--minutes", "inf", "--out", str(tmp_path / "x.json")])
    assert "--minutes: must be a finite number > 0, got inf" in err


def test_W04_W06_the_widgets_refuse_what_would_stall_or_mislead_them():
    from mlm_lib.course.widgets import MAX_EXPLORED, fill_blanks_view, prediction_view

    checkpoint = reference_checkpoint()
    with pytest.raises(ValueError, match="at most 3,000 characters"):
        prediction_view(checkpoint.model, checkpoint.tokenizer, "to be or not to be " * (MAX_EXPLORED // 10))
    for blank in ("", "ab"):
        with pytest.raises(ValueError, match="blank is the one character"):
            fill_blanks_view(checkpoint.model, checkpoint.tokenizer, "To be, or n_t", blank=blank)


def test_K02_K03_K04_the_book_names_a_broken_notebook_and_leaves_copies_out(tmp_path):
    import importlib.util

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("build_book", root / "docs" / "build_book.py")
    book = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(book)
    broken = tmp_path / "01_data_and_tokens.ipynb"
    broken.write_text('{\n "cells": [')
    with pytest.raises(SystemExit, match="01_data_and_tokens.ipynb is not a readable notebook"):
        book.readable([broken])
    assert book.NOTEBOOK_NAME.fullmatch("05_training.ipynb") and not book.NOTEBOOK_NAME.fullmatch("05_training-Copy1.ipynb")
    from mlm_lib.course.student import NOTEBOOK_NAME

    assert NOTEBOOK_NAME.pattern == book.NOTEBOOK_NAME.pattern  # one rule for the tests, the course map and the book


def test_B19_a_busy_machine_is_named_with_the_fix_and_threads_can_be_set(monkeypatch, capsys):
    import argparse

    import torch

    from mlm_lib.experiments import _args

    parser = argparse.ArgumentParser()
    _args.add_device_options(parser)
    monkeypatch.setattr(_args, "busy_cpus", lambda: 2.0)
    monkeypatch.setattr(_args, "usable_cpus", lambda: 2)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        _args.where(parser, parser.parse_args(["--device", "cpu"]))
        warning = capsys.readouterr().err
        assert "this machine is busy" in warning and "pass --threads 1" in warning
        _args.where(parser, parser.parse_args(["--device", "cpu", "--threads", "1"]))
        assert torch.get_num_threads() == 1 and "busy" not in capsys.readouterr().err
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("content, message", [
    (b"", "is empty"),                                   # B06
    (b"   \n\n  ", "is empty"),                          # B07
    (b"a", "too short to split"),                        # B08, B34c
    (bytes(range(256)) * 16, "is not UTF-8 text"),       # B09, B10
])
@pytest.mark.parametrize("command", ["pretrain", "curriculum", "whole_word", "lengths"])
def test_B06_B10_B34c_a_corpus_the_library_refuses_is_a_usage_error(command, content, message, tmp_path, capsys):
    from mlm_lib.experiments import curriculum, whole_word

    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(content)
    argv = {"pretrain": (pretrain.main, ["--config", "smoke", "--out", str(tmp_path / "r")]),
            "curriculum": (curriculum.main, ["--preset", "smoke"]),
            "whole_word": (whole_word.main, ["--preset", "smoke"]),
            "lengths": (lengths.main, [str(reference_checkpoint_path())])}[command]
    err = usage_error(capsys, argv[0], argv[1] + ["--corpus", str(corpus)])
    assert "--corpus: " in err and message in err


def reference_checkpoint_path():
    from importlib.resources import files

    return files("mlm_lib.course.assets") / "checkpoints" / "shakespeare-char.pt"


def test_B29e_R01_the_last_fields_are_usage_errors_too(tmp_path, capsys):
    from mlm_lib.course import release

    err = usage_error(capsys, speedrun.main, ["--preset", "smoke", "--eval-seconds", "0.0001", "--out",
                                              str(tmp_path / "s.json")])
    assert "--eval-seconds" in err
    err = usage_error(capsys, release.main, [str(tmp_path / "nowhere")])
    assert "No folder" in err
