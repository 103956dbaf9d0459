"""Part 3: the left-to-right model (the same network with a causal mask) and the MLM-against-LTR command."""
import json

import pytest
import torch

from mlm_lib import BertConfig, BertForMLM, train_step
from mlm_lib.course.results import mlm_vs_ltr_table
from mlm_lib.ltr import evaluate_next_token, next_token_batch
from mlm_lib.training import TrainConfig, make_optimizer


def test_next_token_labels_are_the_inputs_shifted_by_one():
    ids = torch.arange(100)
    inputs, labels = next_token_batch(ids, 4, 10, torch.Generator().manual_seed(0))
    assert inputs.shape == labels.shape == (4, 10)
    assert torch.equal(labels, inputs + 1)  # token i+1 follows token i in this text
    with pytest.raises(ValueError, match="whole number"):
        next_token_batch(ids, 4, 0)


def test_a_causal_model_learns_to_continue_and_a_bidirectional_one_is_refused(small_tokenizer):
    """A text that repeats 'abcd...': the next character is always known from the one before, so a few dozen
    steps of next-character training must get most of them right."""
    text = "abcdefghijklmnopqrstuvwxyz" * 40
    ids = small_tokenizer.encode(text)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=small_tokenizer.vocab_size, d_model=32, n_layers=1, n_heads=2, d_ff=64, max_len=32,
                        dropout=0.0, causal=True)
    model = BertForMLM(config)
    before = evaluate_next_token(model, ids, length=16, windows=16)
    optimizer = make_optimizer(model, TrainConfig(lr=3e-3))
    g = torch.Generator().manual_seed(0)
    for _ in range(60):
        train_step(model, optimizer, *next_token_batch(ids, 16, 16, g))
    after = evaluate_next_token(model, ids, length=16, windows=16)
    assert after["accuracy"] > 0.9 and after["loss"] < before["loss"]
    with pytest.raises(ValueError, match="causal=True"):
        evaluate_next_token(BertForMLM(BertConfig(vocab_size=small_tokenizer.vocab_size, d_model=16, n_heads=2)), ids,
                            length=8)


@pytest.mark.slow
def test_mlm_vs_ltr_command_smoke(tmp_path):
    from mlm_lib.experiments import mlm_vs_ltr

    out = tmp_path / "ltr.json"
    assert mlm_vs_ltr.main(["--preset", "smoke", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert set(result["objectives"]) == {"masked", "left-to-right"}
    steps = result["settings"]["checkpoints"]
    assert [(r["objective"], r["pretraining_steps"]) for r in result["finetuned"]] == [
        (o, s) for o in ("masked", "left-to-right") for s in steps]
    with pytest.raises(SystemExit):
        mlm_vs_ltr.main(["--preset", "smoke", "--out", str(out)])  # exists: refused without --overwrite


def test_shipped_mlm_vs_ltr_results_are_complete_and_in_the_readmes():
    from pathlib import Path

    from mlm_lib.course.assets import load_json_results
    from mlm_lib.experiments import mlm_vs_ltr

    from mlm_lib.course.comparisons import COMPARISONS

    s = mlm_vs_ltr.PRESETS["full"]
    for pretraining_seed, name in enumerate(("mlm_vs_ltr", "mlm_vs_ltr-s1", "mlm_vs_ltr-s2")):  # one file a seed
        result = load_json_results(name)
        assert result["settings"]["checkpoints"] == list(s["checkpoints"])
        assert result["settings"].get("seed", 0) == pretraining_seed and result.get("status", "finished") == "finished"
        assert sorted((r["objective"], r["pretraining_steps"], r["seed"]) for r in result["finetuned"]) == sorted(
            (o, c, seed) for o in mlm_vs_ltr.OBJECTIVES for c in s["checkpoints"] for seed in s["finetune_seeds"])
        for objective, history in result["objectives"].items():
            assert history["step"][-1] == s["steps"] and history["val_loss"][-1] < history["val_loss"][0]
    root = Path(__file__).resolve().parents[1]
    together = COMPARISONS["masked against left-to-right, 150 pretraining steps"].load()  # the three, as 13 reads them
    table = mlm_vs_ltr_table(together)
    assert table in (root / "docs/results-part3.md").read_text()
    assert table in (root / "mlm_lib/course/assets/results/README.md").read_text()
