"""The curriculum experiment's arithmetic, its command, and its shipped results."""
import json

import pytest

from mlm_lib.course.assets import load_results
from mlm_lib.course.results import curriculum_report
from mlm_lib.curriculum import fixed, linear, summarize, tokens_to_reach
from mlm_lib.experiments import curriculum as ce


def test_tokens_to_reach_interpolates_between_evaluations():
    history = {"eval_tokens": [100, 200, 300], "val_loss": [3.0, 2.0, 1.5]}
    assert tokens_to_reach(history, 3.0) == 100
    assert tokens_to_reach(history, 2.5) == pytest.approx(150)
    assert tokens_to_reach(history, 1.75) == pytest.approx(250)
    assert tokens_to_reach(history, 1.0) is None


def test_summarize_compares_with_the_first_schedule(make_run):
    runs = [make_run("fixed", fixed(64), [3.0, 2.8, 2.6, 2.4]), make_run("linear", linear(16, 64), [2.9, 2.4, 2.2, 2.0])]
    summary = summarize(runs)
    assert summary["baseline"] == "fixed"
    lin = summary["schedules"]["linear"]
    assert lin["target_loss"] == 2.4 and lin["tokens_to_target"] == 200 and lin["baseline_tokens_to_target"] == 400
    assert lin["token_ratio"] == 0.5 and summary["schedules"]["fixed"]["token_ratio"] == 1.0
    assert lin["mid_loss"] == 2.4 and "0.50x of fixed" in curriculum_report({"summary": summary})
    # training time in whole seconds, not tenths of a minute (which made 15.2 s and 14.9 s read 0.3 and 0.2)
    header, _, row = curriculum_report({"summary": summary}).splitlines()
    assert "train s" in header and row.endswith(f"{lin['seconds']:>7.0f} {'0.50x of fixed':>16}")


@pytest.mark.slow
def test_experiment_command_smoke(tmp_path, capsys):
    out = tmp_path / "r.json"
    ce.main(["--preset", "smoke", "--out", str(out)])
    saved = json.loads(out.read_text())
    assert [r["label"] for r in saved["runs"]] == ["fixed 32", "linear 8->32 by 50%"]
    budgets = [r["history"]["tokens"][-1] for r in saved["runs"]]
    assert abs(budgets[0] - budgets[1]) / budgets[0] < 0.01  # the same token budget, up to rounding
    assert saved["command"] == f"python -m mlm_lib.experiments.curriculum --preset smoke --out {out}"
    assert "tokens to reach" in capsys.readouterr().out
    with pytest.raises(ValueError, match="Unknown preset"):
        ce.run_experiment("huge")


def test_shipped_full_results_say_what_the_course_says():
    full = load_results("curriculum-full")
    assert full["command"] == "python -m mlm_lib.experiments.curriculum --preset full --threads 2 --out runs/curriculum-full.json"
    assert full["machine"]["cpu"] and full["machine"]["threads"] == 2  # the machine, named by the file
    assert len(full["runs"]) == 13 and full["settings"]["steps"] == 600
    s = full["summary"]["schedules"]
    assert all(loss > 3.0 for loss in s["fixed 128"]["final_loss_per_seed"])  # never left the plateau
    assert s["linear 16->128 by 50%"]["token_ratio"] == pytest.approx(0.50, abs=0.01)
    assert s["step 16->128 at 50%"]["token_ratio"] == pytest.approx(0.63, abs=0.01)
    assert s["linear 32->128 by 50%"]["final_loss"] > 3.0 and s["linear 16->128 by 25%"]["token_ratio"] > 1
    assert [round(x, 2) for x in s["linear 16->128 by 50%"]["final_loss_per_seed"]] == [2.35, 2.98, 2.47]
    budgets = {r["history"]["tokens"][-1] for r in full["runs"]}
    assert max(budgets) - min(budgets) < 0.01 * max(budgets)  # every run saw the same number of characters


def test_the_results_readme_table_is_the_shipped_files():
    """assets/results/README.md's table of the full experiment, row by row, from the file's summary."""
    from pathlib import Path

    full = load_results("curriculum-full")
    readme = (Path(__file__).resolve().parents[1] / "mlm_lib/course/assets/results/README.md").read_text()
    for label, s in full["summary"]["schedules"].items():
        row = (f"| {label.replace('->', '→')} | {len(s['seeds'])} | {s['mid_loss']:.3f} | {s['final_loss']:.3f} | "
               f"{s['final_accuracy']:.1%} | {s['token_ratio']:.2f}× |")
        assert row in readme, row
    minutes = f"**{full['wall_seconds'] / 60:.1f} minutes**"
    seconds = [r["history"]["seconds"][-1] for r in full["runs"]]
    assert minutes in readme and f"({min(seconds):.0f}–{max(seconds):.0f} s of training each)" in readme
    assert f"Measured on {full['date']}" in readme
