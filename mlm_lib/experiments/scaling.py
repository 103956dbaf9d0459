"""How the pretraining command's speed scales with threads and processes on this machine.

    python -m mlm_lib.experiments.scaling --out mlm_lib/course/assets/results/scaling-2core.json
    python -m mlm_lib.experiments.scaling --config smoke --steps 6 --repeats 1 --out /tmp/scaling.json  # the test

Each layout (processes x threads per process, never more threads in all than this machine's CPUs) runs
`python -m mlm_lib.experiments.pretrain` -- under `torchrun --standalone` when it has several processes --
for `--steps` steps of the course's recipe, with a single evaluation at the end. The layouts take turns,
`--repeats` rounds, so a slow minute of the machine touches all of them. A run's speed is the median time of
its steps after the first `WARMUP` (the evaluation is not a step), as tokens per second of the global batch.
Results are written after every run. Notebook 05, §7, shows them.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ._args import machine, today
from ._run import command, open_run, recorded_command, whole_number
from .pretrain import CONFIGS

WARMUP = 3


def cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def layouts(cpu_count: int) -> list[tuple[int, int]]:
    """(processes, threads each): one process with 1, 2, 4... threads, and 2, 4... processes of one thread
    and of more, up to `cpu_count` threads in all."""
    out, n = [], 1
    while n <= cpu_count:
        out += [(p, n // p) for p in (1, 2, 4, 8, 16, 32, 64) if p <= n and n % p == 0]
        n *= 2
    return out


def run_once(config: str, steps: int, processes: int, threads: int, folder: Path) -> dict:
    command = [sys.executable, "-m", "mlm_lib.experiments.pretrain", "--config", config, "--steps", str(steps),
               "--eval-every", str(steps), "--out", str(folder), "--no-progress", "--overwrite"]
    if processes > 1:
        command[1:3] = ["-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}", "-m",
                        "mlm_lib.experiments.pretrain"]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    # in a session of its own, so that Ctrl-C reaches it once, from here: it then stops as any command does, and
    # torchrun stops its processes, before this one reports (nothing is left running)
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        stdout, stderr = child.communicate()
    except KeyboardInterrupt as stop:
        child.send_signal(getattr(stop, "signal", signal.SIGINT))
        try:
            child.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
        raise
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{stdout[-2000:]}{stderr[-2000:]}")
    log = json.loads((folder / "log.json").read_text())
    seconds = log["history"]["seconds"]
    steps_seconds = [b - a for a, b in zip(seconds, seconds[1:])][WARMUP - 1:] or [seconds[-1]]
    step = statistics.median(steps_seconds)
    tokens = log["train_config"]["tokens_per_batch"]
    return {"processes": processes, "threads": threads, "median_step_s": step, "tokens_per_s": tokens / step,
            "steps": len(seconds), "final_loss": log["history"]["loss"][-1]}


def summary(runs: list[dict]) -> list[dict]:
    """Per layout: the median tokens/s over rounds, and its ratio to one process of one thread."""
    out = []
    for key in dict.fromkeys((r["processes"], r["threads"]) for r in runs):
        speeds = [r["tokens_per_s"] for r in runs if (r["processes"], r["threads"]) == key]
        out.append({"processes": key[0], "threads": key[1], "rounds": len(speeds),
                    "tokens_per_s": statistics.median(speeds)})
    base = next((s["tokens_per_s"] for s in out if (s["processes"], s["threads"]) == (1, 1)), None)
    for s in out:
        s["vs_one_thread"] = s["tokens_per_s"] / base if base else None
    return out


@command
def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="shakespeare-char", choices=sorted(CONFIGS))
    parser.add_argument("--steps", type=whole_number(WARMUP + 1), default=40, help="steps per run (default 40)")
    parser.add_argument("--repeats", type=whole_number(1), default=3, help="rounds of every layout (default 3)")
    parser.add_argument("--out", required=True, help="the results file (rewritten after every run)")
    parser.add_argument("--resume", action="store_true", help="continue --out with the same settings: keep its runs, "
                        "run the missing rounds")
    parser.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    parser.add_argument("--cpus", type=whole_number(1), default=cpus(),
                        help=f"use at most this many threads in all (default: this process's CPUs, {cpus()})")
    args = parser.parse_args(argv)
    options = {"--config": args.config, "--steps": args.steps, "--cpus": args.cpus}
    out = open_run(parser, "scaling", args.out, options=options, resume=args.resume, overwrite=args.overwrite,
                   argv=argv)
    plan = layouts(args.cpus)
    runs, started = out.record.get("runs", []), time.perf_counter()
    done = {(r["round"], r["processes"], r["threads"]) for r in runs}
    command_line = recorded_command("scaling", argv)

    def save(finished=False):
        out.record = {"command": command_line, "config": args.config, "steps": args.steps, "cpus": args.cpus,
                      "machine": machine(), "date": today(), "seconds": time.perf_counter() - started, "runs": runs,
                      "summary": summary(runs)}
        out.finish(finished)

    save()
    with tempfile.TemporaryDirectory() as scratch:
        for round_ in range(args.repeats):
            for processes, threads in plan:
                if (round_, processes, threads) in done:
                    continue
                record = run_once(args.config, args.steps, processes, threads, Path(scratch) / "run")
                record["round"] = round_
                runs.append(record)
                print(f"{processes} process(es) x {threads} thread(s): {record['tokens_per_s']:,.0f} tokens/s",
                      file=sys.stderr, flush=True)
                save()
    save(finished=True)
    return out.record


if __name__ == "__main__":
    main()
