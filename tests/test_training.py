import pickle

import pytest
import torch
import torch.nn.functional as F

from mlm_lib.baselines import unigram_baseline
from mlm_lib.curriculum import LengthSchedule, fixed, linear, step_up
from mlm_lib.model import BertConfig, BertForMLM
from mlm_lib.checkpoints import load_checkpoint, save_checkpoint
from mlm_lib.training import TrainConfig, evaluate, lr_factor, masked_accuracy, mlm_loss, train


def tiny_model(vocab_size, **kw):
    return BertForMLM(BertConfig(vocab_size=vocab_size, d_model=32, n_layers=2, n_heads=4, d_ff=64, max_len=64, **kw))


def test_loss_and_accuracy_only_count_selected_positions():
    logits = torch.randn(2, 5, 10)
    labels = torch.full((2, 5), -100)
    labels[0, 1], labels[1, 3] = 4, 7
    expected = F.cross_entropy(torch.stack([logits[0, 1], logits[1, 3]]), torch.tensor([4, 7]))
    torch.testing.assert_close(mlm_loss(logits, labels), expected)
    logits[0, 1, 4], logits[1, 3, 2] = 100.0, 100.0  # first right, second wrong
    logits[0, 0, 0] = 100.0  # an unselected position cannot change anything
    assert masked_accuracy(logits, labels) == 0.5
    chosen = labels != -100
    with pytest.raises(ValueError, match="logits for every position"):
        mlm_loss(logits[chosen], labels)  # selected-only logits: compare with labels[chosen] directly


def test_learning_rate_warms_up_then_decays():
    factors = [lr_factor(s, 10, 100) for s in range(100)]
    assert factors[0] == pytest.approx(0.1) and factors[9] == pytest.approx(1.0)
    assert all(a >= b for a, b in zip(factors[9:], factors[10:])) and factors[-1] < 0.02


def test_schedules():
    assert [fixed(64).length_at(p) for p in (0, 0.5, 1)] == [64, 64, 64]
    assert [step_up(128, 512, at=0.9).length_at(p) for p in (0, 0.89, 0.9, 1)] == [128, 128, 512, 512]
    lin = linear(16, 128, until=0.5)
    lengths = [lin.length_at(p / 100) for p in range(101)]
    assert lengths[0] == 16 and lengths[50] == 128 and lengths == sorted(lengths)
    assert all(x % 8 == 0 for x in lengths)
    assert lin.batch_size_at(0, 4096) == 256 and lin.batch_size_at(1, 4096) == 32  # constant tokens
    with pytest.raises(ValueError, match="Unknown schedule kind"):
        LengthSchedule("cosine")
    with pytest.raises(ValueError, match="short <= long"):
        linear(64, 16)


def test_checkpoint_round_trip_and_refusals(small_tokenizer, tmp_path):
    model = tiny_model(small_tokenizer.vocab_size).eval()
    path = tmp_path / "m.pt"
    save_checkpoint(path, model, small_tokenizer)
    loaded = load_checkpoint(path)
    assert loaded.tokenizer == small_tokenizer and loaded.model.config == model.config
    ids = torch.randint(5, small_tokenizer.vocab_size, (2, 16))
    with torch.no_grad():
        torch.testing.assert_close(loaded.model.eval()(ids), model(ids))
    assert loaded.model.head.word_embedding.weight is loaded.model.embeddings.word.weight
    other = type(small_tokenizer).from_text("xyz")
    with pytest.raises(ValueError, match="different vocabulary"):
        load_checkpoint(path, tokenizer=other)
    with pytest.raises(ValueError, match="another configuration"):
        load_checkpoint(path, model=BertForMLM(BertConfig(vocab_size=small_tokenizer.vocab_size, d_model=64)))


class Evil:
    def __reduce__(self):
        return (print, ("this should never run",))


def test_checkpoint_with_arbitrary_objects_is_refused(tmp_path, capsys):
    path = tmp_path / "evil.pt"
    torch.save({"format": "mlm_lib-checkpoint-1", "payload": Evil()}, path)
    with pytest.raises(ValueError, match="can load safely"):
        load_checkpoint(path)
    assert "never run" not in capsys.readouterr().out
    (tmp_path / "junk.pt").write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(ValueError):
        load_checkpoint(tmp_path / "junk.pt")
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path / "missing.pt")


def test_resume_continues_exactly(small_tokenizer, tmp_path):
    text = "the quick brown fox jumps over the lazy dog. " * 40
    ids = small_tokenizer.encode(text)
    config = TrainConfig(steps=12, tokens_per_batch=256, schedule=linear(8, 32, until=0.5), lr=3e-3,
                         warmup_steps=3, eval_every=4, eval_windows=16)

    def run(**kw):
        torch.manual_seed(0)
        return train(tiny_model(small_tokenizer.vocab_size), small_tokenizer, ids, ids, config, progress=False, **kw)

    whole = run()
    path = tmp_path / "run.pt"
    first = run(checkpoint_path=path, stop_at=6)
    assert first["step"][-1] == 6
    torch.manual_seed(123)  # a different global RNG state must not matter: it is restored from the file
    model = tiny_model(small_tokenizer.vocab_size)
    resumed = train(model, small_tokenizer, ids, ids, config, resume_from=path, progress=False)
    assert resumed["step"] == whole["step"]
    assert resumed["loss"] == whole["loss"]  # bit-identical on one CPU
    assert resumed["val_loss"] == whole["val_loss"]
    with pytest.raises(ValueError, match="trained with other settings"):
        train(model, small_tokenizer, ids, ids, TrainConfig(steps=99), resume_from=path, progress=False)


def test_short_real_training_beats_the_unigram_baseline(tokenizer, split_ids):
    train_ids, val_ids = split_ids
    baseline = unigram_baseline(train_ids, val_ids, tokenizer.vocab_size)
    assert 3.0 < baseline["loss"] < 3.6 and 0.1 < baseline["accuracy"] < 0.2  # ~3.3 nats, ~15% (space)
    torch.manual_seed(0)
    model = BertForMLM(BertConfig(vocab_size=tokenizer.vocab_size, d_model=64, n_layers=2, n_heads=4, d_ff=256,
                                  max_len=64, dropout=0.0))
    before = evaluate(model, tokenizer, val_ids, length=32, windows=128)
    config = TrainConfig(steps=120, tokens_per_batch=2048, schedule=fixed(32), lr=3e-3, warmup_steps=10,
                         eval_every=120, eval_windows=128)
    history = train(model, tokenizer, train_ids, val_ids, config, progress=False)
    assert before["loss"] > baseline["loss"]
    assert history["val_loss"][-1] < baseline["loss"] - 0.1, (history["val_loss"], baseline)


def test_count_model_baseline(tokenizer, split_ids):
    from mlm_lib.baselines import NeighbourCountModel, count_model_baseline

    toy = CharTokenizer_from("abcabcabd")
    model = NeighbourCountModel(toy.encode("abcabcabcabd"), toy.vocab_size)
    x = toy.encode("abcab")
    assert model.predict(x)[2] == toy.encode("c")[0]              # 'ab?ab' -> 'c' from the wide context
    x[1] = toy.mask_id
    assert model.predict(x)[2] != toy.mask_id                     # backs off, never predicts [MASK]
    train_ids, val_ids = split_ids
    result = count_model_baseline(train_ids, val_ids, tokenizer)
    # the reference figures: ~73% with clean neighbours, ~56% when they are masked like the MLM's input
    assert 0.65 < result["clean_accuracy"] < 0.80 and 0.50 < result["masked_accuracy"] < 0.62, result


def CharTokenizer_from(text):
    from mlm_lib.data import CharTokenizer

    return CharTokenizer.from_text(text)


def test_shown_token_baseline_is_the_plateau(tokenizer, split_ids):
    from mlm_lib.baselines import shown_token_baseline
    from mlm_lib.course.assets import load_results
    from mlm_lib.masking import MaskingConfig

    train_ids, val_ids = split_ids
    shown = shown_token_baseline(train_ids, val_ids, tokenizer)
    unigram = unigram_baseline(train_ids, val_ids, tokenizer.vocab_size)
    assert shown["loss"] == pytest.approx(3.040, abs=0.002) and shown["accuracy"] == pytest.approx(0.228, abs=0.002)
    assert shown["loss"] < unigram["loss"] - 0.2
    # the limits: shown nothing but [MASK] -> the frequencies alone; shown the true token -> certain
    only_mask = shown_token_baseline(train_ids, val_ids, tokenizer, MaskingConfig(mask_prob=1.0, random_prob=0.0))
    assert only_mask["loss"] == pytest.approx(unigram["loss"], abs=0.02)
    copy = shown_token_baseline(train_ids, val_ids, tokenizer, MaskingConfig(mask_prob=0.0, random_prob=0.0))
    assert copy["loss"] < 1e-9 and copy["accuracy"] == 1.0
    # the full curriculum experiment's fixed-128 runs ended on this plateau (README and notebook 07 say so)
    fixed = load_results("curriculum-full")["summary"]["schedules"]["fixed 128"]
    assert all(abs(loss - shown["loss"]) < 0.01 for loss in fixed["final_loss_per_seed"])


def test_a_clock_budget_ends_on_time_with_the_rate_decayed(small_tokenizer):
    """The speedrun's budget: seconds of training (evaluations not counted), every schedule by the share spent."""
    ids = small_tokenizer.encode("the quick brown fox jumps over the lazy dog. " * 40)
    config = TrainConfig(seconds=1.5, warmup_seconds=0.3, eval_seconds=0.5, tokens_per_batch=256,
                         schedule=linear(8, 32, until=0.5), lr=3e-3, eval_windows=16)
    torch.manual_seed(0)
    history = train(tiny_model(small_tokenizer.vocab_size), small_tokenizer, ids, ids, config, progress=False)
    # Read against the run's own clock, so that a busy machine (slower steps) cannot fail it (issue 44):
    spent = history["seconds"]
    before = [0.0] + spent[:-1]  # the training seconds at the start of each step
    assert before[-1] < 1.5 <= spent[-1]  # stops at the first step past the budget
    assert history["eval_seconds"][-1] == spent[-1]  # and evaluates there
    crossed = {i + 1 for i, (a, b) in enumerate(zip(before, spent)) if int(b / 0.5) > int(a / 0.5)}
    assert set(history["eval_step"]) == crossed | {len(spent)}  # every 0.5 s of training, and at the end
    warm = [lr for lr, s in zip(history["lr"], before) if s < 0.3]
    assert warm == sorted(warm) and max(history["lr"]) <= 3e-3
    assert history["lr"] == pytest.approx([3e-3 * config.lr_factor_at(i, s) for i, s in enumerate(before)])
    assert history["length"] == [config.schedule.length_at(s / 1.5) for s in before]  # the curriculum follows the clock
    assert history["length"][0] == 8 and history["lr"][-1] <= history["lr"][min(len(warm), len(spent) - 1)]  # decays
    # (on a busy machine a step can take most of the budget: then the rate has had no time to fall, hence <=)
    with pytest.raises(ValueError, match="one budget"):
        TrainConfig(steps=10, seconds=1.0)
    with pytest.raises(ValueError, match="seconds"):
        TrainConfig(seconds=-1)


def test_held_out_evaluation_is_always_berts_15_percent(small_tokenizer):
    """One yardstick: a run that selects 40% in training is measured as one that selects 15%."""
    from mlm_lib import EVAL_SEED, MaskingConfig

    ids = small_tokenizer.encode("the quick brown fox jumps over the lazy dog. " * 40)
    histories = []
    for rate in (0.15, 0.4):
        config = TrainConfig(steps=2, tokens_per_batch=256, schedule=fixed(32), eval_every=2, eval_windows=16,
                             masking=MaskingConfig(select_prob=rate))
        torch.manual_seed(0)
        histories.append(train(tiny_model(small_tokenizer.vocab_size), small_tokenizer, ids, ids, config,
                               progress=False))
    counted = evaluate(tiny_model(small_tokenizer.vocab_size), small_tokenizer, ids, length=32, windows=16,
                       seed=EVAL_SEED)["predictions"]
    assert histories[0]["val_predictions"] == histories[1]["val_predictions"] == [counted]
    assert sum(histories[1]["predictions"]) > 2 * sum(histories[0]["predictions"])  # training did select 40%


def test_the_learning_rate_recorded_is_the_one_the_step_used(small_tokenizer):
    ids = small_tokenizer.encode("the quick brown fox jumps over the lazy dog. " * 40)
    config = TrainConfig(steps=6, tokens_per_batch=256, schedule=fixed(32), lr=1e-3, warmup_steps=2, eval_every=6,
                         eval_windows=8)
    history = train(tiny_model(small_tokenizer.vocab_size), small_tokenizer, ids, ids, config, progress=False)
    assert history["lr"] == pytest.approx([1e-3 * lr_factor(s, 2, 6) for s in range(6)])
    assert history["lr"][0] == 5e-4 and history["lr"][1] == 1e-3
