"""Bad input gets a clear error that names the fix; nothing is lost; nothing passes silently wrong.

One test per class of failure a new user met (issue 18): commands that would overwrite or lose work,
arguments that would run something other than what was asked, and values that used to end in a raw
traceback from deep inside torch.
"""
import json
import os
import signal

import numpy as np
import pytest
import torch

from mlm_lib import (BertConfig, BertForMLM, LengthSchedule, MaskingConfig, TrainConfig, load_checkpoint,
                     mask_tokens, predict_masked, random_windows, train, train_val_split)
from mlm_lib.course import student
from mlm_lib.data import load_corpus
from mlm_lib.experiments import bench, pretrain
from mlm_lib.experiments import curriculum as curriculum_command
from mlm_lib.training import evaluate


def tiny(vocab):
    return BertForMLM(BertConfig(vocab_size=vocab, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_len=32))


def usage_error(capsys, main, argv) -> str:
    """Run a command that must refuse its arguments: exit code 2 and a message on stderr (argparse's way)."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    return capsys.readouterr().err


# ---- values that used to raise deep inside torch ---------------------------------------------------------

@pytest.mark.parametrize("make, message", [
    (lambda: BertConfig(vocab_size=0), "vocab_size must be a whole number >= 1"),
    (lambda: BertConfig(vocab_size=10, d_model=30, n_heads=4), "divisible by n_heads"),
    (lambda: TrainConfig(steps=0), "steps must be a whole number >= 1"),
    (lambda: TrainConfig(steps=-5), "steps"),
    (lambda: TrainConfig(eval_every=0), "eval_every"),
    (lambda: TrainConfig(eval_windows=0), "eval_windows"),
    (lambda: TrainConfig(tokens_per_batch=32), "tokens_per_batch=32 does not hold one window"),
    (lambda: TrainConfig(masking=MaskingConfig(select_prob=0)), "nothing can be learnt"),
    (lambda: TrainConfig(lr=0), "lr must be a positive, finite number"),
    (lambda: TrainConfig(lr=float("inf")), "lr must be a positive, finite number"),  # trained to the end on NaN
    (lambda: TrainConfig(lr=float("nan")), "lr must be a positive, finite number"),
    (lambda: TrainConfig(weight_decay=-0.01), "weight_decay must be a finite number >= 0"),
    (lambda: TrainConfig(weight_decay=float("inf")), "weight_decay must be a finite number >= 0"),
    (lambda: TrainConfig(seconds=float("inf")), "seconds must be a finite number"),  # OverflowError in lr_factor_at
    (lambda: TrainConfig(grad_clip=float("nan")), "grad_clip must be a positive, finite number"),
    # A18: the learning rate would never reach its peak
    (lambda: TrainConfig(steps=10, warmup_steps=5000), r"warmup_steps=5000 is longer than the whole run \(steps=10\)"),
    (lambda: TrainConfig(seconds=10, warmup_seconds=20), r"warmup_seconds=20 is longer than the whole run"),
    (lambda: LengthSchedule("linear", 16, 64, multiple=0), "multiple must be a whole number"),
    (lambda: LengthSchedule("fixed", 16.5, 64), "short must be a whole number"),
    (lambda: MaskingConfig(select_prob="0.15"), "select_prob must be a probability"),
    (lambda: MaskingConfig(random_from="specials"), "random_from"),
    (lambda: train_val_split("abcdefghij", "0.1"), "val_fraction must be a number"),
])
def test_bad_settings_are_refused_by_name(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_the_default_warm_up_never_outlasts_the_budget():
    assert TrainConfig(steps=10).warmup_steps == 10  # reaches the peak at the last step, not a tenth of it
    assert TrainConfig(steps=500).warmup_steps == TrainConfig().warmup_steps == 100  # longer runs: unchanged
    assert TrainConfig(steps=10, warmup_steps=10).lr_factor_at(9, 0.0) == 1.0


def test_numpy_and_tensor_probabilities_are_numbers():
    config = MaskingConfig(select_prob=np.float32(0.25), mask_prob=torch.tensor(0.5), random_prob=np.float64(0.25))
    assert (config.select_prob, config.mask_prob, config.random_prob) == (0.25, 0.5, 0.25)


def test_windows_need_whole_positive_sizes():
    ids = torch.arange(100)
    with pytest.raises(ValueError, match="whole numbers"):
        random_windows(ids, 2, 8.0)
    with pytest.raises(ValueError, match="whole numbers"):
        random_windows(ids, 0, 8)


def test_ids_outside_the_vocabulary_are_refused(small_tokenizer):
    with pytest.raises(ValueError, match="outside the vocabulary"):
        mask_tokens(torch.tensor([5, 6, small_tokenizer.vocab_size]), small_tokenizer)


def test_prediction_arguments(small_tokenizer):
    model = tiny(small_tokenizer.vocab_size)
    for kwargs, message in (({"positions": []}, "no position"), ({"k": 0}, "k must be"),
                            ({"window": 0}, "window must be")):
        with pytest.raises(ValueError, match=message):
            predict_masked(model, small_tokenizer, "abc def", **kwargs)


def test_evaluation_that_selects_nothing_says_so(small_tokenizer):
    ids = small_tokenizer.encode("abcdefghij" * 10)
    with pytest.raises(ValueError, match="No held-out position was selected"):
        evaluate(tiny(small_tokenizer.vocab_size), small_tokenizer, ids, length=8, windows=4,
                 masking=MaskingConfig(select_prob=0.0))


def test_a_byte_order_mark_is_not_a_token(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffhello world\n".encode("utf-8"))
    assert load_corpus(path) == "hello world\n"


# ---- nothing is lost --------------------------------------------------------------------------------------

def test_a_diverging_run_stops_with_a_message_and_keeps_its_last_good_state(small_tokenizer, tmp_path):
    ids = small_tokenizer.encode("the quick brown fox jumps over the lazy dog. " * 40)
    config = TrainConfig(steps=12, tokens_per_batch=128, schedule=LengthSchedule("fixed", 16, 16), lr=3e-3,
                         warmup_steps=2, eval_every=3, eval_windows=8)
    torch.manual_seed(0)
    model = tiny(small_tokenizer.vocab_size)

    def poison(history):  # after the evaluation at step 6, the weights go bad
        if history["eval_step"][-1] == 6:
            with torch.no_grad():
                model.layers[0].attention.query.weight.fill_(float("nan"))

    with pytest.raises(FloatingPointError, match=r"loss became nan at step 7.*Lower the learning rate.*step 6"):
        train(model, small_tokenizer, ids, ids, config, callback=poison, checkpoint_path=tmp_path / "resume.pt",
              progress=False)
    kept = load_checkpoint(tmp_path / "resume.pt")
    assert kept.train_state["step"] == 6
    assert all(torch.isfinite(t).all() for t in kept.model.state_dict().values())


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupted_run_saves_and_resumes_exactly(small_tokenizer, tmp_path, stop):
    ids = small_tokenizer.encode("the quick brown fox jumps over the lazy dog. " * 40)
    config = TrainConfig(steps=12, tokens_per_batch=128, schedule=LengthSchedule("fixed", 16, 16), lr=3e-3,
                         warmup_steps=2, eval_every=6, eval_windows=8)
    torch.manual_seed(0)
    straight = train(tiny(small_tokenizer.vocab_size), small_tokenizer, ids, ids, config, progress=False)

    def press_ctrl_c(history):  # after the first evaluation (step 6), as a learner (or a job scheduler) would
        os.kill(os.getpid(), stop)

    torch.manual_seed(0)
    with pytest.raises(KeyboardInterrupt, match="stopped after step 6"):
        train(tiny(small_tokenizer.vocab_size), small_tokenizer, ids, ids, config, callback=press_ctrl_c,
              checkpoint_path=tmp_path / "resume.pt", progress=False)
    assert load_checkpoint(tmp_path / "resume.pt").train_state["step"] == 6
    resumed = train(tiny(small_tokenizer.vocab_size), small_tokenizer, ids, ids, config,
                    resume_from=tmp_path / "resume.pt", progress=False)
    assert resumed["loss"] == straight["loss"]


def test_pretrain_never_overwrites_a_finished_run(tmp_path, capsys):
    (tmp_path / "log.json").write_text("{}")
    err = usage_error(capsys, pretrain.main, ["--config", "smoke", "--out", str(tmp_path)])
    assert "already holds a run" in err and "--overwrite" in err
    assert (tmp_path / "log.json").read_text() == "{}"


def test_student_copies_never_replace_the_teaching_notebooks(tmp_path, capsys):
    err = usage_error(capsys, student.main, ["notebooks", "notebooks"])
    assert "apart from the teaching notebooks" in err
    err = usage_error(capsys, student.main, [str(tmp_path / "missing"), str(tmp_path / "out")])
    assert "No folder" in err


@pytest.mark.parametrize("main, argv", [
    (bench.main, ["--out", "{dir}", "--steps", "1"]),
    (curriculum_command.main, ["--preset", "smoke", "--out", "{dir}"]),
])
def test_output_paths_are_checked_before_the_work(main, argv, tmp_path, capsys):
    err = usage_error(capsys, main, [a.format(dir=tmp_path) for a in argv])
    assert "is a folder" in err


# ---- commands do what was asked, or refuse -------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["--steps", "0"], "must be a whole number >= 1"),
    (["--steps", "-5"], "must be a whole number >= 1"),
    (["--device", "no-such-device"], "--device"),
])
def test_pretrain_refuses_what_it_cannot_do(argv, message, tmp_path, capsys):
    err = usage_error(capsys, pretrain.main, ["--config", "smoke", "--out", str(tmp_path / "run"), *argv])
    assert message in err


def test_pretrain_refuses_cuda_without_a_gpu(tmp_path, capsys):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    err = usage_error(capsys, pretrain.main, ["--config", "smoke", "--out", str(tmp_path / "run"), "--device", "cuda"])
    assert "CUDA is not available" in err


def test_pretrain_refuses_a_file_as_its_folder(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    err = usage_error(capsys, pretrain.main, ["--config", "smoke", "--out", str(tmp_path / "afile")])
    assert "is a file" in err


def test_bench_and_curriculum_refuse_impossible_counts(capsys):
    assert "must be a whole number >= 1" in usage_error(capsys, bench.main, ["--steps", "0"])
    err = usage_error(capsys, curriculum_command.main, ["--preset", "smoke", "--seeds", "99"])
    assert "seeds" in err and "0" in err


@pytest.mark.slow
def test_pretrain_scales_warmup_and_evaluation_with_steps_and_logs_the_corpus(tmp_path):
    corpus = tmp_path / "text.txt"
    corpus.write_text("To be, or not to be, that is the question.\n" * 400)
    log = pretrain.main(["--config", "smoke", "--out", str(tmp_path / "run"), "--steps", "12", "--corpus",
                         str(corpus), "--no-progress"])
    config = log["train_config"]
    assert config["steps"] == 12 and config["warmup_steps"] == 2 and config["eval_every"] == 6  # 30 -> 12: x 0.4
    assert log["corpus"] == str(corpus) and json.loads((tmp_path / "run" / "log.json").read_text())["corpus"] == str(corpus)
    assert log["history"]["eval_step"] == [6, 12]


def test_charts_find_a_font_for_other_scripts_or_say_which_to_install():
    import warnings

    from matplotlib import font_manager

    from mlm_lib.course import viz

    assert viz.fonts_for(["a", "␣", "⏎", "é"]) == {}  # matplotlib's own font has these
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        viz._fallback_font.cache_clear()
        fonts = viz.fonts_for(["한국어"])
    if fonts:  # an installed font covers Hangul: it comes second, after matplotlib's default
        family = fonts["fontfamily"][1]
        path = font_manager.findfont(family)
        assert all(ord(c) in viz._charmap(path) for c in "한국어")
    else:
        assert any("fonts-noto-cjk" in str(w.message) for w in caught)
