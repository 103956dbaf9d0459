"""The pretraining command under torchrun: 2 processes on the CPU (gloo, loopback) train exactly as 1 does,
a process that dies takes the run down with a message, and the last checkpoint resumes it."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from mlm_lib import distributed
from mlm_lib.checkpoints import load_checkpoint

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}


def _pretrain(out: Path, steps: int, processes: int, *extra: str, wait: bool = True):
    command = [sys.executable, "-m", "mlm_lib.experiments.pretrain", "--config", "smoke", "--steps", str(steps),
               "--out", str(out), "--no-progress", *extra]
    if processes > 1:
        command[1:3] = ["-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}", "-m",
                        "mlm_lib.experiments.pretrain"]
    run = subprocess.Popen(command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if wait:
        output = run.communicate(timeout=300)[0]
        assert run.returncode == 0, output
        return json.loads((out / "log.json").read_text())
    return run


def _close(a, b, tolerance):
    return max(abs(x - y) for x, y in zip(a, b)) <= tolerance


@pytest.mark.slow
def test_two_processes_train_as_one(tmp_path):
    one = _pretrain(tmp_path / "one", 8, 1)
    two = _pretrain(tmp_path / "two", 8, 2)
    assert (one["processes"], two["processes"]) == (1, 2)
    assert len(two["history"]["loss"]) == 8 and two["history"]["eval_step"] == one["history"]["eval_step"]
    for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
        assert _close(one["history"][key], two["history"][key], 1e-5), key
    a, b = (load_checkpoint(tmp_path / name / "model.pt").model for name in ("one", "two"))
    assert all(torch.allclose(p, q, atol=1e-5) for p, q in zip(a.parameters(), b.parameters()))
    assert sorted(p.name for p in (tmp_path / "two").iterdir() if p.name != ".lock") == ["log.json", "model.pt", "resume.pt"]


def _worker_of_rank(parent: int, rank: int) -> int | None:
    """The pid of the torchrun worker with RANK=rank among the descendants of `parent` (Linux /proc)."""
    for status in Path("/proc").glob("[0-9]*/environ"):
        try:
            environ = status.read_bytes().split(b"\0")
            ppid = int(next(line for line in (status.parent / "status").read_text().splitlines()
                            if line.startswith("PPid:")).split()[1])
        except (OSError, StopIteration, ValueError):
            continue
        if f"RANK={rank}".encode() in environ and ppid == parent:
            return int(status.parent.name)
    return None


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds the worker through Linux's /proc")
def test_a_dying_process_stops_the_run_and_resume_continues_it(tmp_path):
    whole = _pretrain(tmp_path / "whole", 120, 1)
    out = tmp_path / "two"
    run = _pretrain(out, 120, 2, wait=False)
    deadline = time.time() + 120
    while not (out / "resume.pt").exists():  # the first evaluation's checkpoint (step 60)
        assert run.poll() is None and time.time() < deadline, run.stdout.read()
        time.sleep(0.02)
    worker = _worker_of_rank(run.pid, 1)
    assert worker is not None
    os.kill(worker, signal.SIGKILL)
    output = run.communicate(timeout=120)[0]
    assert run.returncode != 0  # the record, written when the run started (the one output rule), says unfinished
    assert json.loads((out / "log.json").read_text())["status"] == "unfinished"
    assert "Root Cause" in output and "SIGKILL" in output  # torchrun names the process that died
    assert load_checkpoint(out / "resume.pt").train_state["step"] == 60
    resumed = _pretrain(out, 120, 2, "--resume")
    assert resumed["history"]["step"] == whole["history"]["step"]
    assert _close(whole["history"]["val_loss"], resumed["history"]["val_loss"], 1e-3)


def test_a_batch_too_small_to_share_is_refused():
    with pytest.raises(ValueError, match="start fewer processes"):
        distributed.share(torch.zeros(1, 8), distributed.World(rank=1, size=2))
    rows = torch.arange(10)
    parts = [distributed.share(rows, distributed.World(rank=r, size=3)) for r in range(3)]
    assert torch.equal(torch.cat(parts), rows)  # every row in exactly one share, in order


def test_alone_the_world_is_one_process():
    world = distributed.init("cpu")
    assert (world.rank, world.size, world.main) == (0, 1, True) and distributed.is_main()
    model = torch.nn.Linear(2, 2)
    assert distributed.wrap(model, world) is model


def test_shipped_scaling_results_match_readme():
    from mlm_lib.course.assets import load_json_results
    from mlm_lib.course.results import scaling_table
    from mlm_lib.experiments.scaling import layouts, summary

    result = load_json_results("scaling-2core")
    assert result["summary"] == summary(result["runs"])
    assert [(s["processes"], s["threads"]) for s in result["summary"]] == layouts(result["cpus"]) == [(1, 1), (1, 2), (2, 1)]
    assert all(s["rounds"] == 3 for s in result["summary"])
    table = scaling_table(result)
    root = Path(__file__).resolve().parents[1]
    assert table in (root / "docs/results-part1.md").read_text() and table in (root / "mlm_lib/course/assets/results/README.md").read_text()


@pytest.mark.slow
def test_scaling_command_smoke(tmp_path):
    from mlm_lib.experiments import scaling

    result = scaling.main(["--config", "smoke", "--steps", "4", "--repeats", "1", "--cpus", "2",
                            "--out", str(tmp_path / "s.json")])
    assert [(r["processes"], r["threads"]) for r in result["runs"]] == [(1, 1), (1, 2), (2, 1)]
    assert all(r["tokens_per_s"] > 0 and r["steps"] == 4 for r in result["runs"])
    assert len({round(r["final_loss"], 4) for r in result["runs"]}) == 1  # the same training, however laid out
    assert json.loads((tmp_path / "s.json").read_text())["summary"][0]["vs_one_thread"] == 1.0
