"""The package's commands run end to end (tiny settings; the real runs are documented in README)."""
import json

import pytest

from mlm_lib.checkpoints import load_checkpoint
from mlm_lib.experiments import bench, pretrain


@pytest.mark.slow
def test_bench_smoke(tmp_path, capsys):
    out = tmp_path / "bench.json"
    bench.main(["--config", "reference", "--steps", "2", "--warmup", "1", "--out", str(out)])
    result = json.loads(out.read_text())
    peers = result["results"][0]["peers"]
    assert set(peers) == {"mlm_lib", "hf", "torch_nn", "textbook"} and peers["hf"]["vs_hf"] == 1.0
    assert [r["dropout"] for r in result["results"]] == [0.0, 0.1]  # the course's own setting first, labelled
    assert all(p["tokens_per_s"] > 0 for p in peers.values()) and result["interaction"]["median_ms"] > 0
    assert "vs HF" in capsys.readouterr().out


def test_bench_muon_times_both_and_names_the_machine(tmp_path, capsys):
    """notebook 14's bfloat16-against-float32 figure comes from this command's file, with the CPU's flags."""
    out = tmp_path / "bench-muon.json"
    bench.main(["--muon", "--steps", "2", "--warmup", "0", "--device", "cpu", "--out", str(out)])
    result = json.loads(out.read_text())
    muon = result["muon"]
    assert muon["matrices"] == 24 and all(ms > 0 for ms in muon["median_ms"].values())
    assert muon["bf16_vs_fp32"] == pytest.approx(muon["median_ms"]["torch.optim.Muon step (bfloat16)"]
                                                 / muon["median_ms"]["course's Muon step (float32)"])
    assert "cpu_flags" in result["machine"] and "bfloat16 / float32" in capsys.readouterr().out


@pytest.mark.slow
def test_pretrain_smoke(tmp_path):
    log = pretrain.main(["--config", "smoke", "--out", str(tmp_path), "--no-progress"])
    saved = json.loads((tmp_path / "log.json").read_text())
    assert saved["evaluation"]["model"]["accuracy"] == log["evaluation"]["model"]["accuracy"]
    assert saved["command"].startswith("python -m mlm_lib.experiments.pretrain --config smoke")
    loaded = load_checkpoint(tmp_path / "model.pt")
    assert loaded.optimizer_state is None and loaded.model.config.n_layers == 1
    assert load_checkpoint(tmp_path / "resume.pt").train_state["step"] == 30


@pytest.mark.slow
def test_shipped_checkpoint_fills_in_blanks(tokenizer, split_ids):
    from mlm_lib.predict import predict_masked
    from mlm_lib.course.assets import reference_checkpoint, reference_log
    from mlm_lib.training import evaluate

    checkpoint, log = reference_checkpoint("shakespeare-char-64"), reference_log("shakespeare-char-64")
    assert checkpoint.tokenizer == tokenizer  # built from the same corpus
    assert log["command"] == "python -m mlm_lib.pretrain --config shakespeare-char --out runs/shakespeare-char --no-progress"
    _, val_ids = split_ids
    result = evaluate(checkpoint.model, tokenizer, val_ids, length=64, windows=len(val_ids) // 64, seed=1234)
    assert result["accuracy"] >= 0.70
    assert abs(result["accuracy"] - log["evaluation"]["model"]["accuracy"]) < 0.005  # the logged figure holds
    assert result["accuracy"] > log["evaluation"]["count_model"]["masked_accuracy"] + 0.15
    text = "To be, or not to be, that is the question:"
    guess = predict_masked(checkpoint.model, tokenizer, text, [text.index("question") + 1], k=3)[0]
    assert guess.candidates[0][0] == "u"


@pytest.mark.slow
def test_whole_word_experiment_smoke(tmp_path, capsys):
    from mlm_lib.experiments import whole_word

    result = whole_word.main(["--preset", "smoke", "--out", str(tmp_path / "ww.json"), "--keep-best"])
    saved = json.loads((tmp_path / "ww.json").read_text())
    assert [r["objective"] for r in saved["runs"]] == ["pieces", "whole words"]
    assert saved["summary"] == whole_word.summary(saved["runs"]) == result["summary"]
    assert saved["runs"][1]["config"]["whole_word"] and not saved["runs"][0]["config"]["whole_word"]
    best = load_checkpoint(tmp_path / "ww" / "best.pt")
    assert best.tokenizer.vocab_size == best.model.config.vocab_size
    assert "mates visible" in capsys.readouterr().out
    # a re-run on that file's vocabulary (--vocabulary-of) trains on the same pieces at the same ids: the same numbers
    again = whole_word.main(["--preset", "smoke", "--out", str(tmp_path / "again.json"), "--vocabulary-of",
                             str(tmp_path / "ww.json")])
    assert again["tokenizer"] == saved["tokenizer"]
    def computed(runs):  # all but the clock
        return [{k: v for k, v in r["history"].items() if "seconds" not in k} for r in runs]
    assert computed(again["runs"]) == computed(saved["runs"])
    for argv, said in ((["--preset", "full"], "holds 300 pieces and --preset full trains with 4000"),
                       (["--preset", "smoke", "--vocabulary-of", str(tmp_path / "none.json")], "no such file")):
        if "--vocabulary-of" not in argv:
            argv = [*argv, "--vocabulary-of", str(tmp_path / "ww.json")]
        with pytest.raises(SystemExit):
            whole_word.main([*argv, "--out", str(tmp_path / "refused.json")])
        assert said in capsys.readouterr().err
    assert not (tmp_path / "refused.json").exists()
    # or on a WordPiece checkpoint's vocabulary (the model's log, checkpoints/shakespeare-wordpiece.json, records none: its seed 1 made the
    # shipped checkpoint); a character checkpoint is refused by name
    from_checkpoint = whole_word.main(["--preset", "smoke", "--out", str(tmp_path / "from_pt.json"), "--vocabulary-of",
                                       str(tmp_path / "ww" / "best.pt")])
    assert from_checkpoint["tokenizer"] == saved["tokenizer"]
    assert computed(from_checkpoint["runs"]) == computed(saved["runs"])
    from mlm_lib.course.assets import reference_checkpoint_path
    with pytest.raises(SystemExit):
        whole_word.main(["--preset", "smoke", "--out", str(tmp_path / "refused.json"), "--vocabulary-of",
                         str(reference_checkpoint_path("shakespeare-char"))])
    assert "not a WordPiece vocabulary" in capsys.readouterr().err


@pytest.mark.slow
def test_shipped_wordpiece_model_and_results():
    """The shipped whole-word results hold: re-evaluating the shipped model gives its logged figures."""
    from mlm_lib.course.assets import load_json_results, reference_checkpoint, reference_log
    from mlm_lib.experiments import whole_word
    from mlm_lib.data import load_corpus, train_val_split
    from mlm_lib.wordpiece import prepare_wordpiece_data

    from mlm_lib.course.comparisons import TOGETHER, shipped

    for name in TOGETHER["whole_word"]:  # each file: the command's, its summary over its own runs
        made = load_json_results(name)
        assert made["command"].startswith("python -m mlm_lib.experiments.whole_word --preset full")
        assert made["summary"] == whole_word.summary(made["runs"])
    # the file whose runs the shipped model was chosen from (2026-11-23), kept beside the model as its log
    results = reference_log("shakespeare-wordpiece")
    assert {(r["objective"], r["seed"]) for r in results["runs"]} == {(o, s) for o in whole_word.OBJECTIVES for s in (0, 1)}
    every = shipped("whole_word")
    assert {(r["objective"], r["seed"]) for r in every["runs"]} == {(o, s) for o in whole_word.OBJECTIVES for s in (0, 1, 2)}
    checkpoint = reference_checkpoint("shakespeare-wordpiece")
    # seeds 0 and 1 were re-run on the model's own vocabulary (--vocabulary-of the checkpoint); seed 2 trained its own
    for name in ("whole_word-s0", "whole_word-s1"):
        assert load_json_results(name)["tokenizer"]["tokens"] == checkpoint.tokenizer.tokens, name
    rebuilt = prepare_wordpiece_data(None, results["settings"]["vocab_size"])[0]
    # Hugging Face's trainer breaks ties differently from run to run: the same vocabulary up to a few pieces
    assert len(set(checkpoint.tokenizer.tokens) & set(rebuilt.tokens)) >= 0.99 * rebuilt.vocab_size
    tokenizer = checkpoint.tokenizer
    val = tokenizer.encode(train_val_split(load_corpus())[1], return_word_ids=True)
    state = checkpoint.train_state
    final = whole_word.final_evaluation(checkpoint.model, tokenizer, val, length=results["settings"]["length"],
                                        windows=results["settings"]["final_windows"])
    assert abs(final["words_masked"]["word_accuracy"] - state["final"]["words_masked"]["word_accuracy"]) < 1e-3
    logged = next(r for r in results["runs"] if (r["objective"], r["seed"]) == (state["objective"], state["seed"]))
    assert logged["final"]["words_masked"]["word_accuracy"] == state["final"]["words_masked"]["word_accuracy"]
    best = max(results["runs"], key=lambda r: r["final"]["words_masked"]["word_accuracy"])
    assert (best["objective"], best["seed"]) == (state["objective"], state["seed"])
    assert abs(final["word_mates"]["mates_masked"] - state["final"]["word_mates"]["mates_masked"]) < 1e-3
    # what notebook 09 says: the piece-trained models lean on visible word-mates, the whole-word ones do not
    for run in every["runs"]:
        mates = run["final"]["word_mates"]
        assert (mates["mates_visible"] > mates["mates_masked"]) == (run["objective"] == "pieces")


def test_whole_word_readme_table_is_the_shipped_results():
    """Every figure of the table in results/README.md comes from the whole_word files (rounded as printed)."""
    import re
    from pathlib import Path

    from mlm_lib.course.assets import load_json_results

    from mlm_lib.course.comparisons import shipped

    results = shipped("whole_word")  # every seed's file
    readme = (Path(__file__).resolve().parents[1] / "mlm_lib/course/assets/results/README.md").read_text()
    rows = re.findall(r"^\| (pieces|whole words) \| (\d) \| (.+) \|$", readme, flags=re.M)
    assert len(rows) == len(results["runs"]) == 6
    for objective, seed, rest in rows:
        f = next(r["final"] for r in results["runs"] if (r["objective"], r["seed"]) == (objective, int(seed)))
        expected = [f"{f['pieces_masked']['accuracy']:.1%} ({f['pieces_masked']['loss']:.2f})",
                    f"{f['words_masked']['accuracy']:.1%}", f"{f['words_masked']['word_accuracy']:.1%}",
                    f"{f['word_mates']['mates_visible']:.1%}", f"{f['word_mates']['mates_masked']:.1%}"]
        assert [c.strip() for c in rest.split("|")] == expected, (objective, seed)


def test_the_shipped_muon_bench_holds_what_notebook_14_says():
    """'On a CPU that has bfloat16 instructions the two cost about the same': the file was made on such a CPU, by
    the command, and its two medians are within a fifth of each other."""
    from mlm_lib.course.assets import load_json_results
    made = load_json_results("bench-muon")
    assert made["options"]["--muon"] and made["options"]["--device"] == "cpu"  # written by bench --muon
    assert {"avx512_bf16", "amx_bf16"} & set(made["machine"]["cpu_flags"])
    assert 0.8 < made["muon"]["bf16_vs_fp32"] < 1.25
