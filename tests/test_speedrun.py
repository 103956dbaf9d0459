"""The speedrun command: schedules on the clock, evaluations at length 128, times to 70% and 75%."""
import json

import pytest

from mlm_lib.course.results import speedrun_table
from mlm_lib.experiments import speedrun

REFERENCE_RECIPE = "bert-40%"  # the recipe whose seed-0 run is the shipped model


def test_first_reaching_reads_the_first_evaluation_at_or_above():
    history = {"seconds": [30, 60, 90, 120], "accuracy": [0.5, 0.71, 0.69, 0.76]}
    assert speedrun.first_reaching(history, 0.70) == 60
    assert speedrun.first_reaching(history, 0.75) == 120
    assert speedrun.first_reaching(history, 0.80) is None


def test_muon_takes_the_encoder_matrices_and_adamw_the_rest():
    import torch

    from mlm_lib import MODEL_SIZES, BertConfig, BertForMLM, MuonAndAdamW, newton_schulz

    torch.manual_seed(0)
    model = BertForMLM(BertConfig(vocab_size=20, **MODEL_SIZES["smoke"]))
    optimizer = MuonAndAdamW(model, lr=1e-3, muon_lr=0.02)
    muon, adam = optimizer.optimizers
    assert isinstance(muon, torch.optim.Muon) and isinstance(adam, torch.optim.AdamW)
    in_muon = {id(p) for g in muon.param_groups for p in g["params"]}
    in_adam = {id(p) for g in adam.param_groups for p in g["params"]}
    names = {id(p): n for n, p in model.named_parameters()}
    assert in_muon.isdisjoint(in_adam) and in_muon | in_adam == set(names)  # every parameter, once
    assert sorted(names[i] for i in in_muon) == sorted(
        n for n, p in model.named_parameters() if n.startswith("layers.") and p.dim() == 2)
    assert not any("embeddings" in names[i] for i in in_muon)  # looked up, not multiplied: AdamW
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    inputs = torch.randint(5, 20, (4, 16))
    labels = torch.full_like(inputs, -100)
    labels[:, ::4] = inputs[:, ::4]
    from mlm_lib import train_step

    train_step(model, optimizer, inputs, labels)
    moved = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert "layers.0.attention.query.weight" in moved and "embeddings.word.weight" in moved
    weight = model.layers[0].ff_in.weight  # (64, 32): Muon's first step is lr * sqrt(64 / 32) * NS(gradient)
    update = before["layers.0.ff_in.weight"] - weight.detach()
    expected = 0.02 * 2 ** 0.5 * newton_schulz(weight.grad)  # NS ignores the gradient's scale (momentum, clipping)
    cosine = (update * expected).sum() / (update.norm() * expected.norm())
    assert cosine > 0.99 and 0.95 < update.norm() / expected.norm() < 1.05  # the course iterates in float32


@pytest.mark.slow
def test_speedrun_keeps_models_the_notebooks_can_load_in_the_folder_named_after_out(tmp_path):
    """--keep-models (once --save and --save-dir, which could name the results file or an earlier run's model):
    every run's model and its log in the folder named after --out, under fixed names."""
    from mlm_lib.course.assets import load_model, load_model_log

    result = speedrun.main(["--recipes", "muon", "--minutes", "0.05", "--eval-seconds", "1", "--preset", "smoke",
                            "--out", str(tmp_path / "s.json"), "--keep-models", "--threads", "1"])
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == ["muon-s0.json", "muon-s0.pt"]  # no resume state
    checkpoint = load_model(tmp_path / "s" / "muon-s0.pt")
    assert checkpoint.model.config.max_len == speedrun.EVAL_LENGTH  # trained through 128, every row kept
    log = load_model_log(tmp_path / "s" / "muon-s0.pt")
    assert log["train_config"]["schedule"]["long"] == speedrun.EVAL_LENGTH and log["train_config"]["muon_lr"] == 0.02
    assert log["history"] == result["runs"][0]["history"] and log["command"].endswith("--keep-models --threads 1")
    assert {"model", "unigram", "count_model"} <= set(log["evaluation"])
    assert log["evaluation"]["model"]["accuracy"] > log["evaluation"]["unigram"]["accuracy"]
    assert result["status"] == "finished" and result["options"]["--keep-models"] is True


@pytest.mark.slow
def test_speedrun_smoke(tmp_path, capsys):
    out = tmp_path / "s.json"
    result = speedrun.main(["--recipes", "bert", "--minutes", "0.05", "--eval-seconds", "1", "--preset", "smoke",
                            "--out", str(out)])
    run = result["runs"][0]
    history = run["history"]
    assert history["seconds"][-1] >= 3 and len(history["seconds"]) >= 3  # evaluated along the way and at the end
    assert history["seconds"] == sorted(history["seconds"]) and history["steps"][-1] > 1
    assert run["final_accuracy"] == history["accuracy"][-1] and 0 <= run["final_accuracy"] <= 1
    assert json.loads(out.read_text())["runs"] == result["runs"]
    assert "| bert | 0 |" in speedrun_table(result)
    with pytest.raises(SystemExit):
        speedrun.main(["--recipes", "bert", "--minutes", "0.05", "--preset", "smoke", "--out", str(out)])
    assert "--resume" in capsys.readouterr().err


def test_the_muon_rate_screen_is_at_equal_work_and_its_table_is_shipped():
    """muon-lr-screen.json: the screen behind muon_lr = 0.02, every recipe on the same characters (no clock), its
    table in the results README, and 0.05 diverged where 0.02 trained (what docs/results-part4.md says)."""
    from pathlib import Path

    from mlm_lib.course.assets import load_json_results
    from mlm_lib.course.results import speedrun_table

    root = Path(__file__).resolve().parents[1]
    screen = load_json_results("muon-lr-screen")
    assert {(r["recipe"], r["seed"]) for r in screen["runs"]} == {("bert", 0), ("muon", 0), ("muon-0.05", 0)}
    assert {r["characters"] for r in screen["runs"]} == {4_000_000} and all(r["minutes"] is None for r in screen["runs"])
    assert "cpu" in screen["machine"]
    assert speedrun_table(screen) in (root / "mlm_lib/course/assets/results/README.md").read_text()
    final = {r["recipe"]: r["final_accuracy"] for r in screen["runs"]}
    assert final["muon-0.05"] < 0.16 < final["bert"] < final["muon"]
    assert f"({final['muon-0.05']:.1%}, against 15.2%); 0.02 trained ({final['muon']:.1%}, `bert` {final['bert']:.1%})" \
        in " ".join((root / "docs/results-part4.md").read_text().split())
    assert not (root / "mlm_lib/course/assets/results/speedrun-3min.json").exists()


def test_shipped_speedrun_results_match_readme():
    from pathlib import Path

    from mlm_lib.course.assets import load_json_results

    root = Path(__file__).resolve().parents[1]
    ablation = {(n, s) for n in ("bert", "pre-ln", "muon", "muon-40%", "bert-40%") for s in (0, 1)}
    for name, minutes, expected in (("speedrun", 15.0, ablation),
                                    ("speedrun-gpu", 3.0, {("bert-40%", 0)}),
                                    ("speedrun-gpu-large", 5.0, {("gpu", 0)})):
        result = load_json_results(name)
        assert {(r["recipe"], r["seed"]) for r in result["runs"]} == expected
        for run in result["runs"]:
            history = run["history"]
            assert run["minutes"] == minutes and history["seconds"][-1] >= minutes * 60
            assert history["seconds"] == sorted(history["seconds"])
            assert run["seconds_to_70"] == speedrun.first_reaching(history, 0.70)
            assert run["seconds_to_75"] == speedrun.first_reaching(history, 0.75)
            assert run["final_accuracy"] == history["accuracy"][-1]
        assert name in (root / "mlm_lib/course/assets/results/README.md").read_text()
        if name == "speedrun":
            assert speedrun_table(result) in (root / "docs/results-part4.md").read_text()
        if name.startswith("speedrun-gpu"):  # the GPU rows name the GPU, from the file
            assert result["device_name"] == "NVIDIA H100 80GB HBM3" and result["precision"] == "bf16"
            run = result["runs"][0]
            row = f"| {minutes:.0f} | {run['history']['steps'][-1]:,} | {run['final_accuracy']:.1%} |"
            assert row in (root / "docs/results-part4.md").read_text(), row


def test_the_equal_work_ablation_is_one_budget_of_characters():
    """ablation.json: every run read the same budget, was evaluated on the whole held-out text, and records its
    machine; the recipes the notebooks compare have the seeds their verdicts count."""
    from mlm_lib.course.assets import load_json_results

    ablation = load_json_results("ablation")
    assert ablation["settings"]["characters"] == 4_000_000 and ablation["settings"]["preset"] == "whole"
    assert ablation["machine"]["cores"] == 2 and "avx2" in ablation["machine"]["cpu_flags"]
    steps = speedrun.budget_steps(4_000_000, 4096)
    for run in ablation["runs"]:
        assert run["characters"] == 4_000_000 and run["history"]["steps"][-1] == steps and run["threads"] == 1
        assert run["final_accuracy"] == run["history"]["accuracy"][-1] and run["minutes"] is None
    seeds = {}
    for run in ablation["runs"]:
        seeds.setdefault(run["recipe"], set()).add(run["seed"])
    assert {0, 1} <= seeds["bert"] and {0, 1} <= seeds["bert-40%"] and {0, 1} <= seeds["muon-40%"]


@pytest.mark.slow
def test_reference_model_is_the_saved_speedrun_run():
    """The shipped model is the bert-40% recipe's seed-0 run: its log is that run's record, evaluated."""
    from mlm_lib.course.assets import load_json_results, reference_checkpoint, reference_log

    log, checkpoint = reference_log(), reference_checkpoint()
    run = next(r for r in load_json_results("speedrun")["runs"] if (r["recipe"], r["seed"]) == (REFERENCE_RECIPE, 0))
    assert log["history"] == run["history"] and log["config"] == f"speedrun recipe {REFERENCE_RECIPE!r}"
    assert "--save mlm_lib/course/assets/checkpoints/shakespeare-char.pt" in log["command"]
    assert checkpoint.model.config.max_len == log["train_config"]["schedule"]["long"] == speedrun.EVAL_LENGTH
    assert checkpoint.model.num_parameters() == log["parameters"]


def test_the_course_muon_is_pytorchs_step_for_step_with_the_iteration_in_bfloat16():
    """`mlm_lib.muon.Muon` is torch.optim.Muon with the Newton-Schulz iteration's precision as a choice: in
    bfloat16 (PyTorch's) every weight is equal after five steps; in float32 (the course's) close to it."""
    import copy

    import torch

    from mlm_lib.muon import Muon

    torch.manual_seed(0)
    for shape in ((64, 32), (32, 64)):
        theirs = torch.nn.Parameter(torch.randn(*shape))
        same, ours = copy.deepcopy(theirs), copy.deepcopy(theirs)
        optimizers = [torch.optim.Muon([theirs], lr=0.02, weight_decay=0.01, adjust_lr_fn="original"),
                      Muon([same], lr=0.02, weight_decay=0.01, ns_dtype=torch.bfloat16),
                      Muon([ours], lr=0.02, weight_decay=0.01)]
        for _ in range(5):
            gradient = torch.randn(*shape)
            for weight, optimizer in zip((theirs, same, ours), optimizers):
                weight.grad = gradient.clone()
                optimizer.step()
        assert torch.equal(theirs, same)
        assert not torch.equal(theirs, ours) and torch.allclose(theirs, ours, atol=2e-3)


def test_a_run_with_muon_stops_and_resumes_bit_for_bit(small_tokenizer, tmp_path):
    """MuonAndAdamW saves and loads its two optimisers' states, so a Muon run resumes like any other (speedrun's
    --resume continues a stopped run from the state kept in its folder)."""
    import torch

    from mlm_lib import BertConfig, BertForMLM, MuonAndAdamW, TrainConfig, fixed, train

    ids = small_tokenizer.encode("the quick brown fox jumps over the lazy dog. " * 40)
    config = TrainConfig(steps=8, tokens_per_batch=128, schedule=fixed(16), lr=3e-3, warmup_steps=2, eval_every=4,
                         eval_windows=4)

    def fresh():
        torch.manual_seed(0)
        model = BertForMLM(BertConfig(vocab_size=small_tokenizer.vocab_size, d_model=16, n_layers=1, n_heads=2,
                                      d_ff=32, max_len=16))
        return model, MuonAndAdamW(model, lr=3e-3, muon_lr=0.02)

    model, optimizer = fresh()
    straight = train(model, small_tokenizer, ids, ids, config, optimizer=optimizer, progress=False)
    model, optimizer = fresh()
    train(model, small_tokenizer, ids, ids, config, optimizer=optimizer, progress=False, stop_at=4,
          checkpoint_path=tmp_path / "resume.pt")
    model, optimizer = fresh()
    resumed = train(model, small_tokenizer, ids, ids, config, optimizer=optimizer, progress=False,
                    resume_from=tmp_path / "resume.pt")
    assert resumed["loss"] == straight["loss"] and resumed["lr"] == straight["lr"]
