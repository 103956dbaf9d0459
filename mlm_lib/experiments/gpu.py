"""The course on one NVIDIA GPU, in two commands: a check that everything runs there, and every GPU figure it quotes.

    python -m mlm_lib.experiments.gpu check                      # make gpu-check: under 5 minutes on one GPU
    python -m mlm_lib.experiments.gpu results --out-dir runs/gpu  # make gpu-results: under 10 minutes on one H100
    python -m mlm_lib.experiments.gpu check --list               # what each would run, on any machine (the tests)

Nothing in the course needs a GPU: these are for whoever has one for a quarter of an hour. Run `check` first.

`check`: the device tests (`tests/test_devices.py`), every notebook under papermill with `device="cuda"` from an
unrelated folder (four at a time: at the notebooks' sizes a GPU mostly waits), and a smoke run of every command with
`--device cuda` (a tiny budget each: it shows the command runs there, not how well). One line per item with its time
and whether it passed, then the total; exit status 1 if anything failed. An item that runs past ITEM_SECONDS, or a
notebook cell past CELL_SECONDS, fails with its log named, and the items after it still run.

`results`: every GPU figure the course quotes, as ordinary results files in `--out-dir`, made by the course's own
commands: the speedrun's GPU preset at 1, 3 and 5 minutes of training (three runs side by side on the one GPU, which
at these sizes waits on kernel launches most of each step: the files record the runs that shared it) and ELECTRA
against the masked LM at equal characters on the GPU, three seeds side by side (`electra --jobs 3`). Copy the files
into `mlm_lib/course/assets/results/` with the README's lines for them.

Without CUDA both stop at once, saying so (exit status 2).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ._run import command

PYTHON = sys.executable
REPOSITORY = Path(__file__).resolve().parents[2]


@dataclass
class Job:
    """One item: a command line, run from `cwd`; `group` jobs with the same group number run side by side; a job
    still running after `limit` seconds is stopped and fails, so one stalled item cannot hold up the rest."""
    name: str
    argv: list[str]
    cwd: Path | None = None
    group: int = 0
    env: dict = field(default_factory=dict)
    limit: float = float("inf")


def module(name: str, *args: str) -> list[str]:
    return [PYTHON, "-m", f"mlm_lib.experiments.{name}", *args]


# every command of mlm_lib.experiments with the smallest run that shows it works on the GPU ({tmp}: a scratch folder)
COMMAND_SMOKES = {
    "pretrain": ["--config", "smoke", "--steps", "20", "--out", "{tmp}/pretrain", "--no-progress"],
    "speedrun": ["--recipes", "bert-40%", "--preset", "smoke", "--characters", "40000", "--out", "{tmp}/speedrun.json"],
    "electra": ["--preset", "smoke", "--characters", "16384", "--objectives", "mlm", "electra", "electra, two-stage",
                "scratch", "--out", "{tmp}/electra.json"],
    "electra_grid": ["--preset", "smoke", "--characters", "8192", "--lrs", "1e-3", "--batches", "256", "--evals", "1",
                     "--out", "{tmp}/grid.json"],
    "curriculum": ["--preset", "smoke", "--out", "{tmp}/curriculum.json"],
    "whole_word": ["--preset", "smoke", "--out", "{tmp}/whole_word.json"],
    "roberta": ["nsp", "--preset", "smoke", "--out", "{tmp}/roberta.json"],
    "sentence_head": ["--preset", "smoke", "--out", "{tmp}/sentence_head.json"],
    "mlm_vs_ltr": ["--preset", "smoke", "--out", "{tmp}/mlm_vs_ltr.json"],
    "finetune": ["curve", "--preset", "smoke", "--out", "{tmp}/finetune.json"],
    "lengths": ["{checkpoint}", "--lengths", "16", "64", "--windows", "16", "--out", "{tmp}/lengths.json"],
    "bench": ["--config", "reference", "--steps", "2", "--warmup", "1", "--out", "{tmp}/bench.json"],
}
# commands with nothing to run on a GPU: their smoke runs are the tests'
NOT_ON_A_GPU = {"scaling": "threads and processes of the CPU", "reproduce": "compares two results files",
                "upgrade": "re-saves a checkpoint file", "gpu": "this command"}


NOTEBOOKS_AT_ONCE = 4  # at the notebooks' sizes a GPU mostly waits: four share it
NOTEBOOK_THREADS = 4  # CPU threads each, so that four notebooks do not fight over a 16-core host's threads
# On one H200 (2026-11-28) every notebook ran in 8-46 s, its longest cell in seconds; in one run of the check, 07 stalled
# with no output for over six minutes and held up everything after it, then ran in 31 s when run again. A cell that
# takes longer than this now fails with its cell named (papermill's --execution-timeout), and the check goes on.
CELL_SECONDS = 120
ITEM_SECONDS = 240  # any one item of the check (there: the device tests 18 s, a command's smoke run 8-33 s)


def check_jobs(tmp: Path) -> list[Job]:
    """What `check` runs: the device tests, every notebook with device="cuda", every command with --device cuda."""
    from ..course.assets import reference_checkpoint_path  # (not at the top: without a GPU, `check` stops at once)
    from ..course.diagrams import course_folder, course_notebooks

    jobs = [Job("device tests", [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_devices.py"],
                REPOSITORY, group=0, limit=ITEM_SECONDS)]
    notebooks = course_notebooks(course_folder())
    away = tmp / "elsewhere"
    (tmp / "notebooks").mkdir(parents=True, exist_ok=True)  # papermill writes into a folder that exists
    for i, notebook in enumerate(notebooks):
        jobs.append(Job(f"notebook {notebook.stem}", [PYTHON, "-m", "papermill", str(notebook),
                                                      str(tmp / "notebooks" / notebook.name), "-p", "device", "cuda",
                                                      "-p", "threads", str(NOTEBOOK_THREADS), "--no-progress-bar",
                                                      "--log-output", "--execution-timeout", str(CELL_SECONDS)],
                        away, group=1 + i // NOTEBOOKS_AT_ONCE, limit=ITEM_SECONDS))
    last = jobs[-1].group + 1
    fill = {"tmp": str(tmp / "commands"), "checkpoint": str(reference_checkpoint_path())}
    for name, args in COMMAND_SMOKES.items():
        jobs.append(Job(f"command {name}", module(name, *[a.format(**fill) for a in args], "--device", "cuda"),
                        away, group=last, limit=ITEM_SECONDS))
    return jobs


# The GPU rows the course quotes (notebook 14, docs/results-part4.md; notebook 15, docs/results-part5.md)
SPEEDRUN_MINUTES = (1, 3, 5)
ELECTRA_CHARACTERS = 32_768_000  # 2,000 steps of 16,384 characters for the arms from the shipped model
# notebook 15's comparison (the second stage against the masked LM trained on, a random encoder the floor), and
# ELECTRA trained jointly from random weights, which the CPU's budgets could not get learning (500 of its steps)
ELECTRA_ARMS = ("mlm, continued", "electra, two-stage, 40%", "electra", "scratch")
ELECTRA_SEEDS = ("0", "1", "2")


def results_jobs(out_dir: Path) -> list[Job]:
    """What `results` runs: the speedrun's GPU preset at 1, 3 and 5 minutes side by side, then ELECTRA against the
    masked LM at equal characters, three seeds side by side."""
    jobs = [Job(f"speedrun, gpu preset, {m} min", module("speedrun", "--recipes", "gpu", "--preset", "gpu-large", "--minutes",
                                                          str(m), "--device", "cuda", "--out",
                                                          str(out_dir / f"speedrun-gpu-{m}min.json")), group=0)
            for m in SPEEDRUN_MINUTES]
    jobs.append(Job("electra against the masked LM, gpu preset", module(
        "electra", "--preset", "gpu", "--objectives", *ELECTRA_ARMS, "--seeds", *ELECTRA_SEEDS,
        "--characters", str(ELECTRA_CHARACTERS), "--jobs", str(len(ELECTRA_SEEDS)), "--device", "cuda", "--out",
        str(out_dir / "electra-gpu.json")), group=1))
    return jobs


def run_groups(jobs: list[Job], log_dir: Path) -> bool:
    """Run the jobs group by group, a group's jobs side by side; print one line per job as it ends. True if all
    passed."""
    log_dir.mkdir(parents=True, exist_ok=True)
    started, ok = time.perf_counter(), True
    for group in sorted({j.group for j in jobs}):
        running = []
        for job in (j for j in jobs if j.group == group):
            if job.cwd is not None:
                job.cwd.mkdir(parents=True, exist_ok=True)
            log = open(log_dir / f"{job.name.replace(' ', '_').replace(',', '').replace('/', '_')}.log", "w")
            env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")]))}
            running.append((job, log, time.perf_counter(),
                            subprocess.Popen(job.argv, cwd=job.cwd, stdout=log, stderr=subprocess.STDOUT,
                                             env=env | job.env)))
        while running:  # poll, so that each line gives its own job's time and comes as that job ends
            for item in running:
                if item[3].poll() is None and time.perf_counter() - item[2] > item[0].limit:
                    item[3].kill()  # stalled: stop it, so that the items after it still run
                    item[3].wait()
                    print(f"(stopped after {item[0].limit:.0f} s: {item[0].name})", file=item[1], flush=True)
            for item in [r for r in running if r[3].poll() is not None]:
                job, log, start, process = item
                running.remove(item)
                log.close()
                ok &= process.returncode == 0
                why = (f"stopped after {job.limit:.0f} s" if time.perf_counter() - start > job.limit
                       else f"exit {process.returncode}")
                print(f"{'ok  ' if process.returncode == 0 else 'FAIL'} {time.perf_counter() - start:6.1f} s  "
                      f"{job.name}" + ("" if process.returncode == 0 else f"  ({why}; log: {log.name})"), flush=True)
            if running:
                time.sleep(0.1)
    print(f"{'all passed' if ok else 'FAILED'}: {len(jobs)} items in {(time.perf_counter() - started) / 60:.1f} min",
          flush=True)
    return ok


@command
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("what", choices=("check", "results"))
    parser.add_argument("--out-dir", default="runs/gpu", help="where `results` writes its files and both write logs")
    parser.add_argument("--list", action="store_true", help="print the jobs and stop (works without a GPU)")
    args = parser.parse_args(argv)
    if not (args.list or torch.cuda.is_available()):
        parser.exit(2, f"make gpu-{args.what} needs an NVIDIA GPU, and this machine has none that PyTorch sees "
                 f"(torch {torch.__version__}, CUDA build: {torch.version.cuda or 'no'}). Nothing in the course needs "
                 "one: `make test` checks everything on the CPU.\n")
    out_dir = Path(args.out_dir)
    jobs = check_jobs(Path(tempfile.mkdtemp(prefix="gpu-check-"))) if args.what == "check" else results_jobs(out_dir)
    if args.list:
        for job in jobs:
            print(f"[{job.group}] {job.name}: {' '.join(job.argv)}")
        return 0
    print(f"{args.what} on {torch.cuda.get_device_name(0)}, torch {torch.__version__}", flush=True)
    return 0 if run_groups(jobs, out_dir / f"{args.what}-logs") else 1


if __name__ == "__main__":
    sys.exit(main())
