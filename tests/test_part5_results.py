"""Part 5's shipped results (notebooks 15 and 16) against what docs/results-part5.md, the results README and the
notebooks say about them: the tables are the JSON files' own, and the figures quoted in prose are recomputed."""
import json
from pathlib import Path

from mlm_lib.course.assets import load_json_results
from mlm_lib.course.results import electra_finetune_table, electra_pretraining_table, lengths_table, modern_table

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "results-part5.md").read_text()
ASSETS = (ROOT / "mlm_lib" / "course" / "assets" / "results" / "README.md").read_text()
NB16 = (ROOT / "notebooks" / "part5_after_bert" / "16_modern_encoder.ipynb").read_text()


def runs_by_recipe(result):
    return {r["recipe"]: r for r in result["runs"] if r["seed"] == 0}


def test_the_modern_ablation_tables_are_its_results():
    ablation = load_json_results("modern")
    table = modern_table(ablation)
    assert table in DOC and table in ASSETS
    assert ablation["preset"] == "whole" and ablation["eval_length"] == 128
    assert all(r["minutes"] == 15 for r in ablation["runs"])
    assert ablation["commands"][-1].endswith("--resume")


def test_the_figures_quoted_about_the_ablation_are_recomputed():
    runs = runs_by_recipe(load_json_results("modern"))
    first = {name: run["history"]["accuracy"][0] for name, run in runs.items()}
    assert round(runs["bert-40%"]["history"]["seconds"][0] / 60, 1) == 1.5  # "after 1.5 minutes"
    for figure in (f"{first['40%+rope']:.1%}", f"{first['bert-40%']:.1%}",
                   f"{runs['modern']['final_accuracy']:.1%}", f"{runs['40%+rope']['final_accuracy']:.1%}",
                   f"{runs['bert-40%']['history']['steps'][-1]:,}", f"{runs['modern']['history']['steps'][-1]:,}"):
        assert figure in DOC and figure in NB16, figure
    best = max(runs.values(), key=lambda r: r["final_accuracy"])
    assert best["final_accuracy"] < 0.755 and "A new record? No." in DOC  # the bar was not reached


def test_the_electra_tables_are_its_results():
    electra = load_json_results("electra")
    assert electra_pretraining_table(electra) in DOC and electra_pretraining_table(electra) in ASSETS
    assert electra_finetune_table(electra) in DOC and electra_finetune_table(electra) in ASSETS
    pretrained = {(r["objective"], r["seed"]) for r in electra["pretrained"]}
    assert pretrained == {(o, s) for o in ("mlm", "electra") for s in (0, 1)}
    assert all(r["minutes"] == 5 for r in electra["pretrained"])
    finetuned = {(r["objective"], r["pretrain_seed"]) for r in electra["finetuned"]}
    assert finetuned == pretrained, "every pretraining is fine-tuned"


def test_the_lengths_of_the_modern_model_are_its_results():
    modern, bert = load_json_results("lengths-modern"), load_json_results("lengths-bert-40")
    table = lengths_table({"modern (RoPE)": modern, "bert-40% (learned table)": bert})
    assert table in DOC and table in ASSETS
    assert modern["max_len"] == bert["max_len"] == 128
    assert all("refused" in bert["by_length"][k] for k in bert["by_length"] if int(k) > 128)
    assert all("accuracy" in modern["by_length"][k] for k in modern["by_length"])  # no table: measured past 128


def test_the_quiet_pair_is_its_results_and_the_prose_quotes_it():
    """modern-quiet.json: bert-40% and modern again, seed 0, the machine to themselves; the table in the docs is
    the file's, and the figures the docs and notebook 16 quote are recomputed from it."""
    pair = load_json_results("modern-quiet")
    table = modern_table(pair)
    assert table in DOC and table in ASSETS
    assert pair["preset"] == "whole" and pair["eval_length"] == 128 and all(r["minutes"] == 15 for r in pair["runs"])
    runs = runs_by_recipe(pair)
    assert set(runs) == {"bert-40%", "modern"}
    bert, modern = runs["bert-40%"], runs["modern"]
    lead = 100 * (modern["final_accuracy"] - bert["final_accuracy"])
    for figure in (f"{bert['final_accuracy']:.1%}", f"{modern['final_accuracy']:.1%}", f"{lead:.1f} points",
                   f"{bert['history']['steps'][-1]:,}", f"{modern['history']['steps'][-1]:,}"):
        assert figure in DOC and figure in NB16, figure
    for figure in (f"{modern['history']['accuracy'][0]:.1%}", f"{bert['history']['accuracy'][0]:.1%}",
                   f"70% after {modern['seconds_to_70'] / 60:.1f} minutes against {bert['seconds_to_70'] / 60:.1f}"):
        assert figure in DOC, figure
    assert max(r["final_accuracy"] for r in pair["runs"]) < 0.755 and "Not reached." in NB16
