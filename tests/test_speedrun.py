"""The speedrun command: schedules on the clock, evaluations at length 128, times to 70% and 75%."""
import json

import pytest

from mlm_lib.experiments import speedrun


def test_first_time_to_reads_the_first_evaluation_at_or_above():
    history = {"seconds": [30, 60, 90, 120], "accuracy": [0.5, 0.71, 0.69, 0.76]}
    assert speedrun.first_time_to(history, 0.70) == 60
    assert speedrun.first_time_to(history, 0.75) == 120
    assert speedrun.first_time_to(history, 0.80) is None


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
    assert "| bert | 0 |" in speedrun.results_table(result)
    with pytest.raises(SystemExit):
        speedrun.main(["--recipes", "bert", "--minutes", "0.05", "--preset", "smoke", "--out", str(out)])
    assert "--resume" in capsys.readouterr().err


def test_shipped_speedrun_results_match_readme():
    from pathlib import Path

    from mlm_lib.course.assets import load_json_results

    result = load_json_results("speedrun")
    assert {(r["recipe"], r["seed"]) for r in result["runs"]} == {(n, s) for n in ("bert", "pre-ln") for s in (0, 1)}
    for run in result["runs"]:
        history = run["history"]
        assert run["minutes"] == 15.0 and history["seconds"][-1] >= 900 and history["seconds"] == sorted(history["seconds"])
        assert run["seconds_to_70"] == speedrun.first_time_to(history, 0.70)
        assert run["seconds_to_75"] == speedrun.first_time_to(history, 0.75)
        assert run["final_accuracy"] == history["accuracy"][-1]
    table = speedrun.results_table(result)
    root = Path(__file__).resolve().parents[1]
    assert table in (root / "README.md").read_text() and table in (root / "mlm_lib/course/assets/results/README.md").read_text()
