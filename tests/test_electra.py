"""ELECTRA (notebook 15): both halves equal to Hugging Face's classes weight for weight, the shared embeddings,
the replacement rules, the joint loss, training through the course's loop, and bad input refused by name."""
import math

import pytest
import torch

from mlm_lib import TrainConfig, fixed, train
from mlm_lib.checkpoints import load_checkpoint, save_checkpoint
from mlm_lib.electra import (ELECTRA_MASKING, Electra, ElectraDiscriminator, ReplacedTokenDetection,
                             discriminator_loss, electra_forward, evaluate_electra, generator_config, replace_tokens,
                             roc_auc, sample_replacements)
from mlm_lib.masking import IGNORE_INDEX, mask_tokens
from mlm_lib import from_hf, to_hf
from mlm_lib.model import BertConfig, BertForSequenceClassification

# odd sizes: 3 heads of 8 (24 wide), 3 layers, embeddings 20 wide (a projection in both halves), 41 tokens
ODD = BertConfig(vocab_size=41, d_model=24, n_layers=3, n_heads=3, d_ff=40, max_len=36, dropout=0.0,
                 embedding_size=20, type_vocab_size=2)


def randomise(model):
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.3)
    return model


def batch():
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(1, ODD.vocab_size, (3, 30), generator=g)
    mask = torch.ones_like(ids)
    mask[2, 18:] = 0
    types = torch.zeros_like(ids)
    types[:, 15:] = 1
    return ids, mask, types


@pytest.mark.parametrize("half", ["discriminator", "generator"])
def test_each_half_equals_hugging_face_both_ways(half):
    pair = randomise(Electra(ODD, generator_width=1 / 3))
    ours = getattr(pair, half).eval()
    ids, mask, types = batch()
    real = mask.bool()
    hf = to_hf(ours)
    assert type(hf).__name__ == {"discriminator": "ElectraForPreTraining", "generator": "ElectraForMaskedLM"}[half]
    with torch.no_grad():
        expected = hf(input_ids=ids, attention_mask=mask, token_type_ids=types).logits
        torch.testing.assert_close(ours(ids, mask, types)[real], expected[real], atol=1e-5, rtol=1e-5)
        back = from_hf(randomise(hf)).eval()
        expected = hf(input_ids=ids, attention_mask=mask, token_type_ids=types).logits
        torch.testing.assert_close(back(ids, mask, types)[real], expected[real], atol=1e-5, rtol=1e-5)
    assert back.config == ours.config
    assert sum(p.numel() for p in hf.parameters()) == sum(p.numel() for p in ours.parameters())


def test_the_generator_is_narrow_and_shares_the_embeddings():
    pair = Electra(BertConfig(vocab_size=30, d_model=128, n_layers=4, n_heads=8, d_ff=512))
    g = pair.generator.config
    assert (g.d_model, g.n_heads, g.d_ff, g.n_layers, g.embedding_width) == (32, 2, 128, 4, 128)  # a quarter wide
    assert pair.generator.embeddings is pair.discriminator.embeddings  # word, position, type tables and LayerNorm
    assert pair.generator.head.word_embedding is pair.discriminator.embeddings.word  # the tied decoder too
    counted = sum(p.numel() for p in pair.discriminator.parameters()) + sum(
        p.numel() for n, p in pair.generator.named_parameters() if not n.startswith("embeddings."))
    assert pair.num_parameters() == counted  # shared tensors once


def test_replacements_follow_the_rules():
    ids = torch.tensor([[5, 6, 7, 8, 9]])
    labels = torch.tensor([[-100, 6, -100, 8, 9]])
    corrupted, replaced = replace_tokens(ids, labels, torch.tensor([6, 3, 4]))  # position 1 sampled its own token
    assert corrupted.tolist() == [[5, 6, 7, 3, 4]]
    assert replaced.tolist() == [[0, 0, 0, 1, 1]]  # a sample equal to the original counts as original
    logits = torch.tensor([[0.0, 2.0, -1.0]] * 20000)
    counts = torch.bincount(sample_replacements(logits, torch.Generator().manual_seed(0)), minlength=3)
    expected = logits[0].softmax(0) * 20000
    assert ((counts - expected).abs() < 4 * expected.sqrt()).all()  # draws follow the generator's softmax


def test_the_joint_loss_is_the_generators_plus_50_times_the_discriminators():
    pair = Electra(ODD)
    ids = torch.randint(5, 41, (4, 20))
    tokenizer = type("T", (), {"vocab_size": 41, "special_ids": [0, 1, 2, 3, 4], "mask_id": 4})()
    inputs, labels = mask_tokens(ids, tokenizer, ELECTRA_MASKING, generator=torch.Generator().manual_seed(1))
    noise = torch.rand(int((labels != IGNORE_INDEX).sum()), 41)
    out = electra_forward(pair, inputs, labels, noise)
    assert out["loss"].item() == pytest.approx(out["generator_loss"].item() + 50 * out["discriminator_loss"].item(),
                                               rel=1e-6)
    assert out["replaced"][labels == IGNORE_INDEX].sum() == 0  # only selected positions can be replaced
    logits, targets = torch.tensor([[3.0, -3.0, 0.0]]), torch.tensor([[1, 0, 1]])
    by_hand = -(math.log(torch.sigmoid(torch.tensor(3.0))) + math.log(1 - torch.sigmoid(torch.tensor(-3.0)))
                + math.log(0.5)) / 3
    assert discriminator_loss(logits, targets).item() == pytest.approx(by_hand, rel=1e-5)
    assert discriminator_loss(logits, targets, torch.tensor([[1, 1, 0]])).item() == pytest.approx(
        -(math.log(torch.sigmoid(torch.tensor(3.0))) + math.log(1 - torch.sigmoid(torch.tensor(-3.0)))) / 2, rel=1e-5)


def test_auc_is_the_chance_a_replacement_scores_above_an_original():
    assert roc_auc(torch.tensor([0.1, 0.4, 0.35, 0.8]), torch.tensor([0, 0, 1, 1])) == pytest.approx(0.75)
    assert roc_auc(torch.tensor([1.0, 1.0]), torch.tensor([0, 1])) == pytest.approx(0.5)  # a tie counts half


def test_electra_trains_through_the_course_loop_and_its_discriminator_fine_tunes(small_tokenizer, tmp_path):
    ids = small_tokenizer.encode("the quick brown fox jumps over the lazy dog. " * 60)
    config = BertConfig(vocab_size=small_tokenizer.vocab_size, d_model=32, n_layers=2, n_heads=2, d_ff=64,
                        max_len=32, dropout=0.0)
    torch.manual_seed(0)
    pair = Electra(config)
    before = evaluate_electra(pair, small_tokenizer, ids, length=32, windows=16)
    train_config = TrainConfig(steps=60, tokens_per_batch=512, schedule=fixed(32), lr=3e-3, warmup_steps=5,
                               eval_every=30, eval_windows=16, masking=ELECTRA_MASKING)
    history = train(pair, small_tokenizer, ids, ids, train_config, objective=ReplacedTokenDetection(), progress=False)
    assert history["step"][-1] == 60 and len(history["val_accuracy"]) == 2
    first, last = (sum(history[k][:10]) / 10 for k in ("loss", "generator_loss")), \
        (sum(history[k][-10:]) / 10 for k in ("loss", "generator_loss"))
    (loss0, gen0), (loss1, gen1) = tuple(first), tuple(last)
    assert loss1 < loss0 and gen1 < gen0  # the joint loss and the generator's both fall
    assert history["val_generator_accuracy"][-1] > before["generator_accuracy"]
    assert all(0 <= history[f"val_{k}"][-1] <= 1 for k in ("accuracy", "auc", "replaced", "generator_accuracy"))
    save_checkpoint(tmp_path / "d.pt", pair.discriminator, small_tokenizer)
    save_checkpoint(tmp_path / "g.pt", pair.generator, small_tokenizer)
    loaded = load_checkpoint(tmp_path / "d.pt").model
    assert type(loaded) is ElectraDiscriminator
    again = Electra.from_parts(loaded, load_checkpoint(tmp_path / "g.pt").model)
    assert again.generator.embeddings is again.discriminator.embeddings
    inputs, labels = mask_tokens(ids[:64].view(2, 32), small_tokenizer, ELECTRA_MASKING,
                                 generator=torch.Generator().manual_seed(3))
    noise = torch.rand(int((labels != IGNORE_INDEX).sum()), small_tokenizer.vocab_size)
    with torch.no_grad():
        torch.testing.assert_close(electra_forward(again.eval(), inputs, labels, noise)["loss"],
                                   electra_forward(pair.eval(), inputs, labels, noise)["loss"])
    with pytest.raises(ValueError, match="not trained together"):
        Electra.from_parts(loaded, Electra(config).generator)
    classifier = BertForSequenceClassification.from_encoder(loaded, 2)  # what fine-tuning starts from
    assert torch.equal(classifier.layers[0].ff_in.weight, pair.discriminator.layers[0].ff_in.weight)


def test_with_uniform_replacements_the_discriminator_learns_at_once(small_tokenizer):
    """The paper's fixed-generator ablation: random ordinary characters are easy to spot, so the discriminator
    leaves the majority class quickly; the generator idles (notebook 15's diagnosis uses this)."""
    from mlm_lib.electra import fixed_generator

    ids = small_tokenizer.encode("the quick brown fox jumps over the lazy dog. " * 60)
    config = BertConfig(vocab_size=small_tokenizer.vocab_size, d_model=32, n_layers=2, n_heads=2, d_ff=64,
                        max_len=32, dropout=0.0)
    torch.manual_seed(0)
    pair = Electra(config)
    shared = {p.data_ptr() for p in pair.discriminator.parameters()}  # the embeddings (and the head tied to them)
    generator_before = {k: v.clone() for k, v in pair.generator.state_dict().items() if v.data_ptr() not in shared}
    assert generator_before, "the generator has weights of its own"
    train_config = TrainConfig(steps=150, tokens_per_batch=512, schedule=fixed(32), lr=3e-3, warmup_steps=5,
                               eval_every=150, eval_windows=32, masking=ELECTRA_MASKING)
    history = train(pair, small_tokenizer, ids, ids, train_config, objective=ReplacedTokenDetection(generator="uniform"),
                    progress=False)
    assert history["val_auc"][-1] > 0.6  # chance is 0.5 (measured: 0.68 after these 150 steps)
    assert all(torch.equal(v, pair.generator.state_dict()[k]) for k, v in generator_before.items())
    log_p = fixed_generator("unigram", small_tokenizer, ids)
    assert log_p[small_tokenizer.special_ids].exp().sum() == 0 and abs(log_p.exp().sum().item() - 1) < 1e-5
    assert log_p[small_tokenizer.encode(" ")[0]] > log_p[small_tokenizer.encode("z")[0]]
    with pytest.raises(ValueError, match="generator must be one of"):
        ReplacedTokenDetection(generator="adversarial")


@pytest.mark.parametrize("make, match", [
    (lambda: generator_config(ODD, 1.5), "wider than the discriminator"),
    (lambda: ReplacedTokenDetection(disc_weight=0), "positive"),
    (lambda: ReplacedTokenDetection(disc_weight=-50), "positive"),
    (lambda: ElectraDiscriminator(BertConfig(vocab_size=30, pre_ln=True)), "BERT encoder"),
])
def test_bad_input_is_refused_by_name(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_a_tokenizer_without_a_mask_token_is_refused(small_tokenizer):
    no_mask = type("NoMask", (), {"vocab_size": small_tokenizer.vocab_size, "mask_id": None})()
    ids = small_tokenizer.encode("some text to train on " * 20)
    with pytest.raises(ValueError, match="mask token"):
        train(Electra(BertConfig(vocab_size=small_tokenizer.vocab_size, d_model=16, n_layers=1, n_heads=2, d_ff=32,
                                 max_len=16)), no_mask, ids, ids, TrainConfig(steps=1, schedule=fixed(16)),
              objective=ReplacedTokenDetection(), progress=False)


@pytest.mark.slow
def test_the_electra_command_pretrains_then_fine_tunes_the_kept_models(tmp_path):
    """The pretrainings as a screen (--no-finetune: the record stays unfinished, the models wait in the folder
    named after --out), then the fine-tunings with --resume (N38: it did nothing; N43: --no-finetune with --resume
    fine-tuned all the same). Every arm reads the same budget of characters, at its own characters a step."""
    from mlm_lib.experiments import electra as command

    out = tmp_path / "e.json"
    common = ["--seeds", "0", "--characters", "12288", "--evals", "2", "--preset", "smoke", "--out", str(out),
              "--keep-models", "--threads", "1"]
    first = command.main([*common, "--no-finetune"])
    assert [r["objective"] for r in first["pretrained"]] == ["mlm", "electra", "scratch"] and not first["finetuned"]
    assert first["status"] == "unfinished"
    runs = {r["objective"]: r for r in first["pretrained"]}
    own = command.ARMS["electra"]
    assert (runs["electra"]["lr"], runs["electra"]["tokens_per_batch"]) == (
        own["lr"], own["batch_times"] * runs["mlm"]["tokens_per_batch"])  # ELECTRA's recipe, not the MLM's
    for arm in ("mlm", "electra"):  # equal work: the same budget of characters (a step of windows of length L reads
        assert runs[arm]["steps"] * runs[arm]["tokens_per_batch"] == 12288  # (batch // L) x L, a little less)
        assert 0.95 * 12288 <= runs[arm]["tokens"] <= 12288
    assert runs["mlm"]["steps"] == 4 * runs["electra"]["steps"]
    kept = {p.name for p in (tmp_path / "e").iterdir()}
    assert kept >= {"mlm-s0.pt", "electra-s0.pt", "electra-s0-generator.pt"}
    screen = command.main([*common, "--no-finetune", "--resume"])  # still a screen: nothing fine-tuned
    assert not screen["finetuned"] and screen["status"] == "unfinished"
    second = command.main([*common, "--resume"])
    assert {(r["objective"], r["pretrain_seed"]) for r in second["finetuned"]} == {("mlm", 0), ("electra", 0),
                                                                                  ("scratch", 0)}
    assert set(second["summary"]) == {f"{o} | {learner} | 16" for o in ("mlm", "electra", "scratch")
                                      for learner in command.LEARNERS}
    assert second["status"] == "finished" and len(second["commands"]) == 3
    assert [r["steps"] for r in second["pretrained"]] == [r["steps"] for r in first["pretrained"]]  # not pretrained again
    again = command.main([*common, "--resume"])  # nothing left to do
    assert len(again["finetuned"]) == len(second["finetuned"])


@pytest.mark.slow
def test_the_arms_from_the_shipped_model_start_from_it_and_the_two_stage_generator_stays_frozen(tmp_path):
    """`electra, two-stage` (the paper's second stage) and `mlm, continued` both start from the shipped masked LM,
    read the same characters at the same learning rate and batch; the two-stage generator does not move."""
    from mlm_lib.course.assets import reference_checkpoint
    from mlm_lib.experiments import electra as command

    result = command.main(["--seeds", "0", "--characters", "4096", "--evals", "1", "--preset", "smoke",
                           "--objectives", "electra, two-stage", "mlm, continued", "--no-finetune", "--keep-models",
                           "--threads", "1", "--out", str(tmp_path / "e.json")])
    runs = {r["objective"]: r for r in result["pretrained"]}
    assert {r["start"] for r in runs.values()} == {"two-stage", "shipped"}
    assert runs["electra, two-stage"]["tokens"] == runs["mlm, continued"]["tokens"] == 4096
    assert runs["electra, two-stage"]["lr"] == runs["mlm, continued"]["lr"]
    shipped = reference_checkpoint().model.state_dict()
    generator = load_checkpoint(tmp_path / "e" / "electra,-two-stage-s0-generator.pt").model.state_dict()
    assert all(torch.equal(generator[k], v) for k, v in shipped.items())  # frozen
    assert runs["electra, two-stage"]["trained_parameters"] < runs["electra, two-stage"]["parameters"]
    assert 0.5 < runs["electra, two-stage"]["final"]["auc"] <= 1.0


def test_hidden_spread_is_zero_for_a_collapsed_encoder_only():
    from mlm_lib.electra import hidden_spread

    same = torch.randn(3, 1, 8).expand(3, 10, 8)  # one vector at every position of a window
    assert hidden_spread(same) == pytest.approx(0.0, abs=1e-7)
    assert hidden_spread(torch.randn(3, 10, 8)) > 0.5


@pytest.mark.slow
def test_the_electra_command_runs_jobs_side_by_side(tmp_path):
    from mlm_lib.experiments import electra as command

    result = command.main(["--seeds", "0", "--characters", "8192", "--evals", "1", "--preset", "smoke", "--jobs", "2",
                           "--no-finetune", "--objectives", "mlm", "electra", "--out", str(tmp_path / "e.json")])
    runs = {r["objective"]: r for r in result["pretrained"]}
    assert all(r["threads"] == 1 for r in runs.values())  # two cores shared out, one thread each
    assert "spread" in runs["electra"]["final"] and "replaced_recall_at_share" in runs["electra"]["final"]


@pytest.mark.slow
def test_the_grid_command_records_every_cell_and_resumes_only_with_its_settings(tmp_path, capsys):
    from mlm_lib.experiments import electra_grid as grid

    out = tmp_path / "grid.json"
    common = ["--preset", "smoke", "--characters", "4096", "--evals", "2", "--batches", "256", "--out", str(out)]
    first = grid.main([*common, "--lrs", "1e-3"])
    (run,) = first["runs"]
    assert (run["lr"], run["batch"], run["steps"]) == (1e-3, 256, 16)
    assert len(run["curve"]["val_auc"]) == len(run["curve"]["val_spread"]) == 2
    assert run["final"]["spread"] > 0 and grid.collapsed(run) == (run["final"]["spread"] < 0.01)
    both = grid.main([*common, "--lrs", "1e-3", "3e-3", "--resume"])  # only the missing cell runs
    assert [r["lr"] for r in both["runs"]] == [3e-3, 1e-3] and both["runs"][1] == run
    with pytest.raises(SystemExit):
        grid.main([*common[:-2], "--characters", "8192", "--out", str(out), "--resume"])
    assert "--characters 4096, now 8192" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        grid.main([*common, "--lrs", "1e-3"])  # an existing file is not replaced by accident
    assert "already exists" in capsys.readouterr().err
