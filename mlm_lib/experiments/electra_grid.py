"""Which learning rate and batch let ELECTRA's discriminator learn: a grid at one budget of training characters.

    python -m mlm_lib.experiments.electra_grid --jobs 2 --out mlm_lib/course/assets/results/electra-grid.json
    python -m mlm_lib.experiments.electra_grid --preset smoke --characters 30000 --out /tmp/grid.json   # the tests

Notebook 15, §5. Notebook 15's first ELECTRA runs borrowed the masked LM's recipe (AdamW at 2e-3, 4,096 characters
a step) and their discriminators collapsed: the same answer, "original", at every position. For every peak learning
rate x characters a step of the grid, one ELECTRA pretraining (the course's model as the discriminator, the
electra command's pair and masking, the speedrun's schedule: 4% warm-up then linear decay to zero, windows 16 -> 128
over the first half of the budget), seed 0 for every cell, each of the same number of training characters (so a
step of 16,384 characters makes a quarter of the steps of one of 4,096). `--evals` times along each run the pair is
evaluated on 256 held-out windows of 128: the discriminator's accuracy (88% is the majority answer), AUC, recall on
the replaced positions, and the spread of its hidden states across positions (near 0: collapsed; `hidden_spread`).
Cells run `--jobs` at a time, each in its own process on `--threads` threads (default: the CPUs shared out);
the results file is rewritten after every cell and `--resume` runs only the cells it lacks (with the same
settings; a cell stopped half-way starts again).
"""
from __future__ import annotations

import argparse
import sys
import time

import torch

from .. import devices
from ..schedules import linear
from ..data import prepare_data
from ..electra import COLLAPSED_SPREAD, ELECTRA_MASKING, Electra, ReplacedTokenDetection
from ..model import BertConfig
from ..training import TrainConfig, train
from ._args import add_device_options, machine, today, where
from ._run import (command, corpus_sha256, finite, fits_in_memory, open_run, recorded_command, run_jobs, seed_number,
                   training_bytes, whole_number)
from .speedrun import EVAL_LENGTH
from .speedrun import PRESETS as SPEEDRUN_PRESETS

LEARNING_RATES = (2e-3, 1e-3, 5e-4)
BATCHES = (4096, 16384)  # characters a step
WARMUP = 0.04  # of the budget, as the speedrun's recipes
PRESETS = {"full": dict(sizes=SPEEDRUN_PRESETS["full"]["sizes"], characters=6_000_000, eval_windows=256),
           "smoke": dict(sizes=SPEEDRUN_PRESETS["smoke"]["sizes"], characters=30_000, eval_windows=16)}


def cell(lr: float, batch: int, characters: int, evals: int, sizes: dict, eval_windows: int, seed: int = 0,
         device: str = "cpu", precision: str = "fp32") -> dict:
    """One ELECTRA pretraining of `characters` training characters at peak learning rate `lr` and `batch`
    characters a step; its record, with the held-out curve."""
    tokenizer, train_ids, val_ids = prepare_data()
    steps = max(evals, characters // batch)
    torch.manual_seed(seed)
    model = Electra(BertConfig(vocab_size=tokenizer.vocab_size, **sizes)).to(device)
    config = TrainConfig(steps=steps, warmup_steps=round(WARMUP * steps), eval_every=max(1, steps // evals),
                         tokens_per_batch=batch, schedule=linear(16, EVAL_LENGTH, until=0.5), lr=lr, seed=seed,
                         masking=ELECTRA_MASKING, eval_windows=eval_windows)
    start = time.perf_counter()
    history = train(model, tokenizer, train_ids, val_ids, config, objective=ReplacedTokenDetection(), progress=False,
                    precision=precision)
    curve = {k: v for k, v in history.items() if k.startswith(("eval_", "val_"))}
    print(f"electra grid: lr {lr:g}, {batch:,} characters a step: AUC {curve['val_auc'][-1]:.3f}, spread "
          f"{curve['val_spread'][-1]:.2g} after {steps:,} steps", file=sys.stderr, flush=True)
    return {"lr": lr, "batch": batch, "seed": seed, "steps": steps, "tokens": history["tokens"][-1],
            "seconds": time.perf_counter() - start, "threads": torch.get_num_threads(), "curve": curve,
            "final": {k[4:]: v[-1] for k, v in curve.items() if k.startswith("val_")}, "config": config.to_dict()}


def collapsed(record: dict) -> bool:
    """Whether a cell's discriminator ended collapsed: its hidden states (nearly) the same at every position."""
    return record["final"]["spread"] < COLLAPSED_SPREAD


@command
def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--lrs", nargs="+", type=finite(0), default=list(LEARNING_RATES), help="peak learning rates")
    parser.add_argument("--batches", nargs="+", type=whole_number(EVAL_LENGTH), default=list(BATCHES),
                        help=f"characters a step (at least {EVAL_LENGTH}: one window of the schedule's longest length)")
    parser.add_argument("--characters", type=whole_number(1), help="training characters of every cell (default: "
                        "the preset's, 6,000,000 for full)")
    parser.add_argument("--evals", type=whole_number(1), default=8, help="held-out evaluations along each run")
    parser.add_argument("--seed", type=seed_number, default=0)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="full")
    parser.add_argument("--jobs", type=whole_number(1), default=1, help="cells run at once, each in its own process "
                        "(on a CPU only)")
    parser.add_argument("--out", required=True, help="the results file (rewritten after every cell)")
    parser.add_argument("--resume", action="store_true", help="continue --out with the same settings: keep its cells, "
                        "run the others (a cell stopped half-way starts again)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    add_device_options(parser)
    args = parser.parse_args(argv)
    device, precision = where(parser, args)
    if args.jobs > 1 and device.type != "cpu":
        parser.error(f"--jobs {args.jobs} shares out CPU cores; on {device.type} run one cell at a time (--jobs 1)")
    preset = PRESETS[args.preset]
    fits_in_memory(parser, "--batches", training_bytes(max(args.batches), preset["sizes"]) * 1.5,
                   f"a step of {max(args.batches):,} characters (a discriminator and its generator)")
    characters = args.characters or preset["characters"]
    settings = {"preset": args.preset, "characters": characters, "evals": args.evals, "seed": args.seed,
                "sizes": preset["sizes"], "eval_windows": preset["eval_windows"], "eval_length": EVAL_LENGTH}
    options = {"--preset": args.preset, "--characters": characters, "--evals": args.evals, "--seed": args.seed,
               "corpus sha256": corpus_sha256(), "--device": device.type, "--precision": precision}
    out = open_run(parser, "electra_grid", args.out, options=options, resume=args.resume, overwrite=args.overwrite,
                   argv=argv)
    result = {"runs": []} | out.record
    command_line = recorded_command("electra_grid", argv)
    result.update(commands=result.get("commands", []) + [command_line], date=today(), machine=machine(),
                  **devices.record(device, precision), settings=settings)
    out.record = result
    out.save()
    done = {(r["lr"], r["batch"]) for r in result["runs"]}
    threads = args.threads or max(1, torch.get_num_threads() // args.jobs)
    jobs = [dict(lr=lr, batch=batch, characters=characters, evals=args.evals, sizes=preset["sizes"],
                 eval_windows=preset["eval_windows"], seed=args.seed, device=str(device), precision=precision)
            for lr in args.lrs for batch in args.batches if (lr, batch) not in done]
    for record in run_jobs(cell, jobs, args.jobs, threads):
        result["runs"].append(record)
        result["runs"].sort(key=lambda r: (-r["lr"], r["batch"]))
        out.save()
    out.finish()
    return out.record


if __name__ == "__main__":
    main()
