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


def test_the_effects_table_compares_each_seed_with_its_own_days_baseline():
    """Differences are taken inside one file and seed (one day), then averaged: a fast day's higher accuracies
    do not leak into the other seed's difference."""
    from mlm_lib.course.results import modern_effects_table

    def day(seed, accuracies):
        return {"runs": [{"recipe": k, "seed": seed, "final_accuracy": v} for k, v in accuracies.items()]}

    slow = day(0, {"bert-40%": 0.60, "40%+rope": 0.66, "modern": 0.65})
    fast = day(1, {"bert-40%": 0.72, "40%+rope": 0.74, "modern": 0.75})
    table = modern_effects_table({"seed 0 (slow)": slow, "seed 1 (fast)": fast})
    assert table.splitlines()[0] == "| recipe | seed 0 (slow) | seed 1 (fast) | mean vs bert-40% |"
    assert "| 40%+rope | +6.0 | +2.0 | +4.0 points |" in table
    assert "| modern | +5.0 | +3.0 | +4.0 points |" in table
    assert "| bert-40% |" not in table
    import pytest
    with pytest.raises(ValueError, match="--recipes bert-40%"):
        modern_effects_table({"no baseline": day(2, {"modern": 0.7})})


def in_notebook(table: str) -> bool:
    """A table printed by a notebook cell is stored line by line in the .ipynb's JSON."""
    return all(line in NB16 for line in table.splitlines())


def test_the_second_seed_is_its_results_and_each_change_is_read_against_its_own_day():
    """modern-seed1.json: the ablation's seed 1, every recipe, on a quiet machine; its table, the effects table
    (each seed against its own day's bert-40%) and the figures quoted are the files'."""
    from mlm_lib.course.results import modern_effects_table

    seed0, seed1 = load_json_results("modern"), load_json_results("modern-seed1")
    assert {r["recipe"] for r in seed1["runs"]} == {r["recipe"] for r in seed0["runs"]}
    assert {r["seed"] for r in seed1["runs"]} == {1} and {r["seed"] for r in seed0["runs"]} == {0}
    assert seed1["preset"] == "whole" and seed1["eval_length"] == 128 and all(r["minutes"] == 15 for r in seed1["runs"])
    assert "--seeds 1 " in seed1["commands"][0] and seed1["commands"][0] in DOC and seed1["commands"][0] in ASSETS
    table = modern_table(seed1)
    assert table in DOC and table in ASSETS and in_notebook(table)
    effects = modern_effects_table({"seed 0, shared day": seed0, "seed 1, quiet": seed1})
    assert effects in DOC and in_notebook(effects)


def test_the_two_quiet_pairs_decide_the_record_and_the_lead_table_is_theirs():
    """The record's bar (every seed >= 75%, the shipped one >= 75.5%) against the two quiet pairs, and the table of
    where modern's lead is made (docs and notebook 16, section 7) recomputed from them."""
    from mlm_lib.course.results import lead_table
    from mlm_lib.experiments.speedrun import RECIPES

    pairs = {"seed 0": load_json_results("modern-quiet"), "seed 1": load_json_results("modern-seed1")}
    table = lead_table(pairs, RECIPES["bert-40%"]["schedule"])
    assert table in DOC and in_notebook(table)
    finals = {name: {r["recipe"]: r for r in p["runs"]} for name, p in pairs.items()}
    modern = [f["modern"]["final_accuracy"] for f in finals.values()]
    assert not (min(modern) >= 0.75 and max(modern) >= 0.755), "the bar was reached: the docs say it was not"
    assert "A new record? No." in DOC and "Not reached." in NB16
    one = finals["seed 1"]
    lead = 100 * (one["modern"]["final_accuracy"] - one["bert-40%"]["final_accuracy"])
    for figure in (f"{one['bert-40%']['final_accuracy']:.1%}", f"{one['modern']['final_accuracy']:.1%}",
                   f"{lead:.1f} points", f"{one['bert-40%']['history']['steps'][-1]:,}",
                   f"{one['modern']['history']['steps'][-1]:,}"):
        assert figure in DOC and figure in NB16, figure


def test_the_lead_table_reads_both_runs_at_the_same_evaluations():
    from mlm_lib.course.results import lead_table
    from mlm_lib.curriculum import linear

    def run(recipe, seconds, accuracies):
        return {"recipe": recipe, "seed": 0, "minutes": 1.0, "history": {"seconds": seconds, "accuracy": accuracies}}

    pair = {"runs": [run("bert-40%", [30.0, 60.0], [0.20, 0.60]), run("modern", [30.0, 60.0], [0.50, 0.62])]}
    table = lead_table({"seed 0": pair}, linear(16, 128, until=0.5))
    assert "| 0.5 | 128 | 20.0% → 50.0% (+30.0) |" in table  # half the budget: the windows have reached 128
    assert "| 1.0 | 128 | 60.0% → 62.0% (+2.0) |" in table
    early = lead_table({"seed 0": pair}, linear(16, 128, until=1.0))
    assert "| 0.5 | 72 |" in early  # 16 + 112 * 0.5, in steps of 8
    skewed = {"runs": [pair["runs"][0], run("modern", [31.5, 60.0], [0.5, 0.62])]}
    import pytest
    with pytest.raises(ValueError, match="--eval-seconds"):
        lead_table({"seed 0": skewed}, linear(16, 128))


NB15 = (ROOT / "notebooks" / "part5_after_bert" / "15_electra.ipynb").read_text()


def test_the_grid_is_its_results_and_the_collapse_is_the_learning_rates():
    """Notebook 15, section 5: the grid's table everywhere it is quoted; the cells that collapsed are exactly the
    borrowed learning rate's, which is the explanation the notebook gives."""
    from mlm_lib.course.results import electra_grid_table
    from mlm_lib.experiments.electra_grid import BATCHES, LEARNING_RATES, collapsed

    grid = load_json_results("electra-grid")
    table = electra_grid_table(grid)
    assert table in DOC and table in ASSETS and table.splitlines()[2] in NB15
    assert {(r["lr"], r["batch"]) for r in grid["runs"]} == {(lr, b) for lr in LEARNING_RATES for b in BATCHES}
    assert grid["settings"]["characters"] == 6_000_000 and grid["settings"]["preset"] == "full"
    assert {r["lr"] for r in grid["runs"] if collapsed(r)} == {2e-3}
    assert all(r["final"]["generator_accuracy"] < 0.30 for r in grid["runs"])  # "the generator stays at 28%"


def test_electras_own_recipe_is_chosen_on_the_grid_and_its_runs_are_not_collapsed():
    """Notebook 15, section 6: the recipe is the grid's best cell that did not collapse; the comparison's
    ELECTRA runs use it, did not collapse, and trained as long as the masked LM, 15 minutes, two seeds."""
    from mlm_lib.electra import COLLAPSED_SPREAD
    from mlm_lib.experiments.electra import ELECTRA_RECIPES
    from mlm_lib.experiments.electra_grid import collapsed

    grid = load_json_results("electra-grid")
    best = max((r for r in grid["runs"] if not collapsed(r)), key=lambda r: r["final"]["auc"])
    own = ELECTRA_RECIPES["own"]
    assert (own["lr"], 4096 * own["batch_times"]) == (best["lr"], best["batch"])
    result = load_json_results("electra-recipe")
    electra_runs = [r for r in result["pretrained"] if r["objective"] == "electra"]
    assert {r["seed"] for r in electra_runs} == {0, 1} and all(r["minutes"] == 15 for r in result["pretrained"]
                                                               if r["objective"] != "scratch")
    assert all((r["lr"], r["tokens_per_batch"]) == (best["lr"], best["batch"]) for r in electra_runs)
    assert all(r["final"]["spread"] >= COLLAPSED_SPREAD for r in electra_runs)
    for table in (electra_pretraining_table(result), electra_finetune_table(result)):
        assert table in DOC and table in ASSETS and table.splitlines()[2] in NB15
    assert any(r["objective"] == "scratch" for r in result["finetuned"])  # the floor
