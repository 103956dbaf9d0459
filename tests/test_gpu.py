"""make gpu-check and make gpu-results (mlm_lib.experiments.gpu): their job lists, checked here without a GPU, and
the one helper that compares a model's weights wherever they are (notebook 05 on a GPU)."""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from mlm_lib import BertConfig, BertForMLM, MODEL_SIZES
from mlm_lib.course.diagrams import course_folder, course_notebooks
from mlm_lib.devices import same_weights
from mlm_lib.experiments import gpu
from notebook_params import at_once

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = sorted(p.stem for p in (ROOT / "mlm_lib" / "experiments").glob("*.py") if not p.stem.startswith("_"))


def test_gpu_check_covers_every_notebook_and_every_command(tmp_path):
    jobs = gpu.check_jobs(tmp_path)
    names = [j.name for j in jobs]
    assert names[0] == "device tests" and "tests/test_devices.py" in jobs[0].argv
    for notebook in course_notebooks(course_folder()):
        (job,) = [j for j in jobs if j.name == f"notebook {notebook.stem}"]
        assert job.argv[job.argv.index("-p") + 1:job.argv.index("-p") + 3] == ["device", "cuda"]
        assert job.cwd is not None and ROOT not in job.cwd.resolve().parents  # from an unrelated folder
    assert set(gpu.COMMAND_SMOKES) | set(gpu.NOT_ON_A_GPU) == set(COMMANDS)  # a new command must be added to one
    for name in gpu.COMMAND_SMOKES:
        (job,) = [j for j in jobs if j.name == f"command {name}"]
        assert job.argv[-2:] == ["--device", "cuda"] and f"mlm_lib.experiments.{name}" in job.argv
    # at most four notebooks at once, and the commands after them
    assert max(sum(j.group == g for j in jobs if j.name.startswith("notebook")) for g in {j.group for j in jobs}) <= 4


def test_gpu_results_makes_the_speedrun_rows_and_the_electra_comparison(tmp_path):
    jobs = gpu.results_jobs(tmp_path)
    outs = [Path(j.argv[j.argv.index("--out") + 1]) for j in jobs]
    assert {o.name for o in outs} == {"speedrun-gpu-1min.json", "speedrun-gpu-3min.json", "speedrun-gpu-5min.json",
                                      "electra-gpu.json"}
    assert all(o.parent == tmp_path for o in outs) and all("cuda" in j.argv for j in jobs)
    electra = next(j for j in jobs if "electra" in j.name)
    assert electra.argv[electra.argv.index("--characters") + 1] == str(gpu.ELECTRA_CHARACTERS)  # equal work
    assert len({j.group for j in jobs if "speedrun" in j.name}) == 1  # the three speedruns side by side


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
@pytest.mark.parametrize("what", ["check", "results"])
def test_without_a_gpu_both_stop_at_once_saying_so(what, tmp_path):
    done = subprocess.run([sys.executable, "-m", "mlm_lib.experiments.gpu", what, "--out-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "needs an NVIDIA GPU" in done.stderr and "Traceback" not in done.stderr
    assert not any(tmp_path.iterdir())  # nothing started, nothing written


@pytest.mark.slow
def test_every_command_line_of_gpu_check_runs_here_on_the_cpu(tmp_path):
    """The same command lines with --device cpu: proof that each option gpu-check passes exists (a GPU machine is
    lent for minutes; a typo must not spend them)."""
    from concurrent.futures import ThreadPoolExecutor

    def run(job):
        argv = job.argv[:-2] + ["--device", "cpu", "--threads", "1"]
        job.cwd.mkdir(parents=True, exist_ok=True)
        return job.name, subprocess.run(argv, cwd=job.cwd, capture_output=True, text=True, timeout=600)

    commands = [job for job in gpu.check_jobs(tmp_path) if job.name.startswith("command")]
    with ThreadPoolExecutor(max_workers=at_once()) as pool:  # one per core this test may use, one thread each
        for name, done in pool.map(run, commands):
            assert done.returncode == 0, (name, done.stderr[-2000:])


def test_same_weights_compares_bit_for_bit_wherever_the_models_are(tmp_path):
    """Notebook 05's checkpoint cell on a GPU compared a model on cuda:0 with its copy loaded on the CPU and failed
    (torch.equal refuses two devices); it now loads onto the model's device and compares through this helper."""
    torch.manual_seed(0)
    model = BertForMLM(BertConfig(vocab_size=12, **MODEL_SIZES["smoke"]))
    copy = BertForMLM(BertConfig(vocab_size=12, **MODEL_SIZES["smoke"]))
    assert not same_weights(model, copy)
    copy.load_state_dict(model.state_dict())
    assert same_weights(model, copy)
    with torch.no_grad():
        copy.layers[0].ff_in.weight[0, 0] += 1e-6
    assert not same_weights(model, copy)
    other = BertForMLM(BertConfig(vocab_size=12, **(MODEL_SIZES["smoke"] | {"n_layers": 2})))
    assert not same_weights(model, other)
    notebook = json.loads((ROOT / "notebooks" / "part1_mlm_from_scratch" / "05_training.ipynb").read_text())
    cell = next("".join(c["source"]) for c in notebook["cells"] if "save_checkpoint(folder" in "".join(c["source"]))
    assert "map_location=device" in cell and "same_weights(model, loaded.model)" in cell and "torch.equal" not in cell


@pytest.mark.parametrize("name", sorted(set(gpu.COMMAND_SMOKES) | set(gpu.NOT_ON_A_GPU)))
def test_every_command_prints_its_help(name, capsys):
    """`--help` of every command: argparse formats help texts with %, so an arm named "electra, 40%" once crashed
    it (the fix: %% in the text)."""
    import importlib

    main = importlib.import_module(f"mlm_lib.experiments.{name}").main
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0 and "usage:" in capsys.readouterr().out


def test_each_line_gives_its_own_jobs_time_and_comes_as_it_ends(tmp_path, capsys):
    """Side by side, a quick job is reported first with its own short time, not the slow one's; a failure names
    its log and makes the result False."""
    slow = gpu.Job("slow", [sys.executable, "-c", "import time; time.sleep(1.5)"])
    quick = gpu.Job("quick", [sys.executable, "-c", "raise SystemExit(3)"])
    assert gpu.run_groups([slow, quick], tmp_path) is False
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("FAIL") and "quick  (exit 3; log: " in lines[0]
    assert float(lines[0].split()[1]) < 1.0
    assert lines[1].startswith("ok") and lines[1].endswith("slow") and float(lines[1].split()[1]) >= 1.5
    assert lines[2].startswith("FAILED: 2 items")


def test_a_stalled_job_is_stopped_at_its_limit_and_the_rest_still_run(tmp_path, capsys):
    """On an H200 (2026-11-28) one notebook stalled for six minutes and held up the whole check: an item now stops at
    its limit, fails with the reason and its log, and the next group still runs."""
    stalled = gpu.Job("stalled", [sys.executable, "-c", "import time; time.sleep(60)"], limit=1.0)
    after = gpu.Job("after", [sys.executable, "-c", "pass"], group=1)
    started = time.perf_counter()
    assert gpu.run_groups([stalled, after], tmp_path) is False
    assert time.perf_counter() - started < 30
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("FAIL") and "stalled  (stopped after 1 s; log: " in lines[0]
    assert lines[1].startswith("ok") and lines[1].endswith("after")
    assert "(stopped after 1 s: stalled)" in (tmp_path / "stalled.log").read_text()


def test_every_check_item_has_a_limit_and_every_notebook_a_cell_timeout(tmp_path):
    jobs = gpu.check_jobs(tmp_path)
    assert all(job.limit == gpu.ITEM_SECONDS for job in jobs)
    for job in (j for j in jobs if j.name.startswith("notebook")):
        assert job.argv[job.argv.index("--execution-timeout") + 1] == str(gpu.CELL_SECONDS)
    assert all(job.limit == float("inf") for job in gpu.results_jobs(tmp_path))  # the 5-minute speedrun must finish
