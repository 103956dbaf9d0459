"""ELECTRA against the course's masked LM at the same wall-clock budget, judged by what pretraining is for.

    python -m mlm_lib.experiments.electra --seeds 0 1 --minutes 15 --preset laptop --jobs 2 --out mlm_lib/course/assets/results/electra-recipe.json
    python -m mlm_lib.experiments.electra --preset smoke --minutes 0.05 --out /tmp/electra.json   # the tests

Notebook 15, §6. For each seed, two pretrainings of the same minutes of training on the clock (evaluations not
counted), on the course's model size, with the speedrun's schedule (4% warm-up then linear decay to zero at the
bell, windows 16 -> 128 over the first half):
* `mlm`: the course's recipe, bert-40% (notebook 14): BERT's masked LM, 40% of positions selected, AdamW at 2e-3,
  4,096 characters a step;
* `electra`: the course's model as the discriminator, a generator a quarter as wide sharing its embeddings,
  ELECTRA's masking (15% selected, 85% of them [MASK]) and loss (generator + 50 x discriminator), with ELECTRA's
  own recipe (`ELECTRA_RECIPE`, chosen on notebook 15's grid, `electra_grid`); `--electra-recipe mlm` borrows the
  masked LM's instead, as notebook 15's first runs did (their discriminators collapsed).
Each is measured on its own objective on the held-out plays (the MLM: masked accuracy at BERT's 15% on the whole
held-out text at 128; ELECTRA: the discriminator's accuracy and AUC at every position and the generator's masked
accuracy, on 256 windows of 128). Then each pretrained encoder (the MLM's; ELECTRA's discriminator) is fine-tuned
on notebook 11's verse-or-prose task with few labels — 50 and 200 speeches, where pretraining matters — with mean
pooling, the whole network trained ("pretrained, mean") and with the encoder frozen ("frozen, mean"); and, as the
floor, the same two learners from a randomly initialised encoder (objective `scratch`, notebook 11's scratch
learning rate for the whole network). The
`full` preset chooses each learner's learning rate on the validation plays (seed 0, 200 labels) from three, for
each pretraining, three fine-tuning seeds; the `laptop` preset uses notebook 11's learning rates, two seeds. The
test plays are read once, at the end.
`--jobs 2` runs a seed's two pretrainings at once, each in its own process on one thread (the same minutes on the
same machine for both, side by side). Results are written after every pretraining and every fine-tuning (`--resume`
keeps them; a pretraining stopped half-way starts again). Each pretrained model waits for its fine-tuning in the
folder named after --out (`e.json` -> `e/`); `--keep-models` keeps them there after it. `--no-finetune` pretrains
only (a screen, recorded as unfinished); the same command without it and with `--resume` then fine-tunes the
models kept.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

from .. import devices
from ..checkpoints import load_checkpoint, save_checkpoint
from ..data import prepare_data
from ..electra import ELECTRA_MASKING, Electra, ReplacedTokenDetection
from ..finetune import (LABEL_NAMES, LEARNING_RATES, METHODS, TASK_MAX_LEN, encode_examples, evaluate_classifier,
                        fine_tune, label_budget, task_splits)
from ..masking import MaskingConfig
from ..model import BertConfig, BertForMLM, BertForSequenceClassification
from ..pairs import load_documents
from ..training import MaskedLM, TrainConfig, train
from ._args import add_device_options, machine, refusals, today, where
from ._run import command, corpus_sha256, finite, open_run, run_jobs, seed_number, whole_number
from .speedrun import EVAL_LENGTH, RECIPES, whole_text_windows
from .speedrun import PRESETS as SPEEDRUN_PRESETS

OBJECTIVES = ("mlm", "electra", "scratch")
LEARNERS = ("pretrained, mean", "frozen, mean")
RATES = {"pretrained, mean": (3e-5, 1e-4, 3e-4), "frozen, mean": (3e-3, 1e-2, 3e-2), "scratch": (3e-4, 1e-3, 3e-3)}
# ELECTRA's own peak learning rate and batch, chosen on notebook 15's grid (assets/results/electra-grid.json,
# `python -m mlm_lib.experiments.electra_grid`): its best cell that did not collapse, 5e-4 at four times the masked
# LM's characters a step (16,384), which is also ELECTRA-Small's (Google's configure_pretraining.py: learning_rate
# 5e-4, batches of 128 x 128 tokens) -- the three cells that did not collapse ended within 0.01 AUC of each other.
# "mlm" is the masked LM's recipe, which notebook 15's first runs borrowed.
ELECTRA_RECIPES = {"own": dict(lr=5e-4, batch_times=4), "mlm": dict(lr=2e-3, batch_times=1)}

PRESETS = {
    "full": dict(pretrain=SPEEDRUN_PRESETS["full"], budgets=(50, 200), finetune_seeds=(0, 1, 2), steps=300,
                 batch_size=32, sweep_budget=200, electra_windows=256),
    # the laptop's afternoon: notebook 11's learning rates (no sweep), two fine-tuning seeds
    "laptop": dict(pretrain=SPEEDRUN_PRESETS["full"], budgets=(50, 200), finetune_seeds=(0, 1), steps=300,
                   batch_size=32, rates=LEARNING_RATES, electra_windows=256),
    # one GPU: the speedrun's GPU preset for both pretrainings (not yet run by the course: no GPU was lent)
    "gpu": dict(pretrain=SPEEDRUN_PRESETS["gpu"], budgets=(50, 200), finetune_seeds=(0, 1, 2), steps=300,
                batch_size=32, rates=LEARNING_RATES, electra_windows=512),
    "smoke": dict(pretrain=SPEEDRUN_PRESETS["smoke"], budgets=(16,), finetune_seeds=(0,), steps=3, batch_size=8,
                  sweep_budget=16, electra_windows=16, test_examples=32),
}


def pretrain(objective: str, seed: int, minutes: float, data, settings: dict, electra_recipe: dict | None = None,
             device: torch.device | str = "cpu", precision: str = "auto") -> tuple[dict, torch.nn.Module, torch.nn.Module]:
    """One pretraining on the clock, on `device`; returns (its record, the encoder to fine-tune, the whole trained
    model). ELECTRA trains with `electra_recipe` (a peak `lr` and `tokens_per_batch`; default ELECTRA's own)."""
    tokenizer, train_ids, val_ids = data
    recipe, sizes = RECIPES["bert-40%"], settings["pretrain"]["sizes"]
    config = BertConfig(vocab_size=tokenizer.vocab_size, **sizes)
    budget = minutes * 60
    lr, batch = recipe["lr"], settings["pretrain"]["tokens_per_batch"]
    if objective == "electra":
        own = electra_recipe or ELECTRA_RECIPES["own"]
        lr, batch = own["lr"], batch * own["batch_times"]
    common = dict(seconds=budget, warmup_seconds=recipe["warmup"] * budget, eval_seconds=60.0, tokens_per_batch=batch,
                  schedule=recipe["schedule"], lr=lr, seed=seed)
    torch.manual_seed(seed)
    if objective == "mlm":
        model = BertForMLM(config).to(device)
        train_config = TrainConfig(**common, masking=MaskingConfig(select_prob=recipe["select_prob"]),
                                   eval_windows=settings["pretrain"]["eval_windows"] or whole_text_windows(val_ids))
        history = train(model, tokenizer, train_ids, val_ids, train_config, objective=MaskedLM(), progress=False,
                        precision=precision)
        encoder = model
    elif objective == "electra":
        model = Electra(config).to(device)
        train_config = TrainConfig(**common, masking=ELECTRA_MASKING, eval_windows=settings["electra_windows"])
        history = train(model, tokenizer, train_ids, val_ids, train_config, objective=ReplacedTokenDetection(),
                        progress=False, precision=precision)
        encoder = model.discriminator
    else:  # the floor: an encoder that never saw the plays
        model = encoder = BertForMLM(config).to(device)
        history, train_config = {"step": [0], "tokens": [0]}, None
    curve = {k: v for k, v in history.items() if k.startswith(("eval_", "val_"))}
    final = {k[4:]: v[-1] for k, v in curve.items() if k.startswith("val_")}
    record = {"objective": objective, "seed": seed, "minutes": minutes if train_config else 0,
              "lr": lr if train_config else None, "tokens_per_batch": batch if train_config else None, "steps": history["step"][-1], "tokens": history["tokens"][-1],
              "parameters": sum(p.numel() for p in model.parameters()),
              "encoder_parameters": sum(p.numel() for p in encoder.parameters()), "final": final, "curve": curve,
              "config": train_config.to_dict() if train_config else None, "threads": torch.get_num_threads()}
    return record, encoder.eval(), model.eval()


def finetune(encoder, learner: str, budget: int, seed: int, lr: float, data: dict, settings: dict) -> dict:
    """Fine-tune a copy of `encoder` on `budget` labelled speeches; validation and test accuracy."""
    _, pooling, frozen = METHODS[learner]
    torch.manual_seed(seed)
    model = BertForSequenceClassification.from_encoder(encoder, len(LABEL_NAMES), label_names=LABEL_NAMES,
                                                       pooling=pooling, dropout=0.1)
    chosen = label_budget(data["splits"]["train"]["examples"], budget, seed)
    start = time.perf_counter()
    fine_tune(model, encode_examples(chosen, data["tokenizer"], TASK_MAX_LEN), steps=settings["steps"],
              batch_size=settings["batch_size"], lr=lr, warmup_steps=max(1, settings["steps"] // 10),
              freeze_encoder=frozen, seed=seed)
    return {"learner": learner, "budget": budget, "seed": seed, "lr": lr,
            "validation": evaluate_classifier(model, data["encoded"]["validation"]),
            "test": evaluate_classifier(model, data["encoded"]["test"]), "seconds": time.perf_counter() - start}


def summary(result: dict) -> dict:
    """Per objective, learner and budget: mean test accuracy over every pretraining and fine-tuning seed, the
    spread between pretraining seeds (each seed's mean), and the standard error of the mean over all runs."""
    out = {}
    for objective in OBJECTIVES:
        for learner in LEARNERS:
            for budget in sorted({r["budget"] for r in result["finetuned"]}):
                runs = [r for r in result["finetuned"] if (r["objective"], r["learner"], r["budget"]) ==
                        (objective, learner, budget) and not r.get("sweep")]
                if not runs:
                    continue
                accs = [r["test"]["accuracy"] for r in runs]
                per_seed = {s: statistics.mean(r["test"]["accuracy"] for r in runs if r["pretrain_seed"] == s)
                            for s in sorted({r["pretrain_seed"] for r in runs})}
                out[f"{objective} | {learner} | {budget}"] = {
                    "runs": len(accs), "test_accuracy": statistics.mean(accs),
                    "standard_error": statistics.stdev(accs) / len(accs) ** 0.5 if len(accs) > 1 else None,
                    "by_pretraining_seed": per_seed}
    return out


def load_task(settings: dict, tokenizer) -> dict:
    """Notebook 11's verse-or-prose task: its splits, and the validation and test plays encoded."""
    splits = task_splits(load_documents())
    if settings.get("test_examples"):
        splits["test"]["examples"] = splits["test"]["examples"][: settings["test_examples"]]
        splits["validation"]["examples"] = splits["validation"]["examples"][: settings["test_examples"]]
    return {"tokenizer": tokenizer, "splits": splits,
            "encoded": {s: encode_examples(splits[s]["examples"], tokenizer, TASK_MAX_LEN) for s in ("validation", "test")}}


def finetune_all(encoder, objective: str, seed: int, settings: dict, data: dict, rates: dict) -> tuple[list, dict]:
    """Every learner, budget and fine-tuning seed from one encoder; `rates` (objective | learner -> learning rate)
    is the preset's, or chosen on the validation plays the first time (the sweep's runs are kept, marked)."""
    runs, rates = [], dict(rates)
    for learner in LEARNERS:
        key = f"{objective} | {learner}"
        # a random encoder trained whole takes notebook 11's scratch rate (its own, chosen there), not a pretrained one's
        rate_key = "scratch" if objective == "scratch" and learner == "pretrained, mean" else learner
        if "rates" in settings:
            rates[key] = settings["rates"][rate_key]
        elif key not in rates:
            sweep = [finetune(encoder, learner, settings["sweep_budget"], 0, lr, data, settings)
                     | {"objective": objective, "pretrain_seed": seed, "sweep": True} for lr in RATES[rate_key]]
            runs += sweep
            rates[key] = max(sweep, key=lambda r: r["validation"]["accuracy"])["lr"]
        for budget in settings["budgets"]:
            for ft_seed in settings["finetune_seeds"]:
                runs.append(finetune(encoder, learner, budget, ft_seed, rates[key], data, settings)
                            | {"objective": objective, "pretrain_seed": seed})
    return runs, rates


def one_pretraining(objective: str, seed: int, minutes: float, preset: str, electra_recipe: dict, device: str,
                    precision: str, folder: str, keep_generator: bool = False) -> dict:
    """One pretraining, whose encoder is kept in `folder` as OBJECTIVE-sSEED.pt until it is fine-tuned (and after,
    with --keep-models; ELECTRA's generator too): what `main` runs for each objective and seed, in this process or
    in a worker of its own (`--jobs`). The fine-tunings follow in `main`, from the kept file, so that a pretraining
    of fifteen minutes is recorded before its fine-tunings start, and a screen (`--no-finetune`) can be finished
    later with `--resume`."""
    settings = PRESETS[preset]
    tokenizer, train_ids, val_ids = prepare_data()
    print(f"electra experiment: pretraining {objective}, seed {seed}, {minutes} min", file=sys.stderr, flush=True)
    record, encoder, whole = pretrain(objective, seed, minutes, (tokenizer, train_ids, val_ids), settings,
                                      electra_recipe, device, precision)
    if objective != "scratch":  # the floor is rebuilt from its seed: nothing to keep
        save_checkpoint(Path(folder) / f"{objective}-s{seed}.pt", encoder.cpu(), tokenizer)
        if objective == "electra" and keep_generator:
            save_checkpoint(Path(folder) / f"electra-s{seed}-generator.pt", whole.generator.cpu(), tokenizer)
    print(f"  {objective}, seed {seed}: {record['steps']:,} steps; held out: " + ", ".join(
        f"{k} {v:.3f}" for k, v in record["final"].items() if isinstance(v, float)), file=sys.stderr, flush=True)
    return record


@command
def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--seeds", nargs="+", type=seed_number, default=[0, 1])
    parser.add_argument("--minutes", type=finite(0), default=15.0,
                        help="training time of each pretraining (default 15)")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="full")
    parser.add_argument("--out", required=True, help="the results file (rewritten after every pretraining and every "
                        "fine-tuning); the pretrained models wait for their fine-tuning in the folder of the same name "
                        "without .json")
    parser.add_argument("--resume", action="store_true", help="continue --out with the same settings: keep what it "
                        "holds, fine-tune the pretrainings a screen (--no-finetune) left, run the rest")
    parser.add_argument("--overwrite", action="store_true", help="replace --out and its folder")
    parser.add_argument("--keep-models", action="store_true", help="keep every pretrained model in that folder after "
                        "its fine-tuning: OBJECTIVE-sSEED.pt (and ELECTRA's generator as electra-sSEED-generator.pt)")
    parser.add_argument("--objectives", nargs="+", choices=OBJECTIVES, default=list(OBJECTIVES),
                        help="which pretrainings to run (default all: mlm, electra, and scratch, the fine-tuning's "
                             "floor, which pretrains nothing)")
    parser.add_argument("--electra-recipe", choices=sorted(ELECTRA_RECIPES), default="own",
                        help="ELECTRA's learning rate and batch: its own (default, chosen on notebook 15's grid) or "
                             "the masked LM's (notebook 15's first runs)")
    parser.add_argument("--electra-lr", type=finite(0), help="ELECTRA's peak learning rate, instead of the recipe's")
    parser.add_argument("--jobs", type=whole_number(1), default=1, help="pretrainings of a seed run at once, each in "
                        "its own process (on a CPU only; default 1)")
    parser.add_argument("--no-finetune", action="store_true", help="pretrain and evaluate only (a screen): the record "
                        "stays unfinished, and --resume without this option fine-tunes the models kept")
    add_device_options(parser)
    args = parser.parse_args(argv)
    device, precision = where(parser, args)
    if args.jobs > 1 and device.type != "cpu":
        parser.error(f"--jobs {args.jobs} shares out CPU cores; on {device.type} run one pretraining at a time")
    settings = PRESETS[args.preset]
    electra_recipe = dict(ELECTRA_RECIPES[args.electra_recipe])
    if args.electra_lr is not None:
        electra_recipe["lr"] = args.electra_lr
    options = {"--preset": args.preset, "--minutes": args.minutes, "--electra-recipe": args.electra_recipe,
               "--electra-lr": electra_recipe["lr"], "--keep-models": args.keep_models,
               "corpus sha256": corpus_sha256(), "--device": device.type, "--precision": precision}
    out = open_run(parser, "electra", args.out, options=options, resume=args.resume, overwrite=args.overwrite,
                   argv=argv)
    command_line = "python -m mlm_lib.experiments.electra " + " ".join(sys.argv[1:] if argv is None else argv)
    result = {"commands": [], "pretrained": [], "finetuned": [], "learning_rates": {}} | out.record
    result.update(commands=result["commands"] + [command_line], date=today(), machine=machine(),
                  **devices.record(device, precision), preset=args.preset,
                  eval_length=EVAL_LENGTH, settings={k: v for k, v in settings.items() if k != "pretrain"})
    wanted = [(objective, seed) for seed in args.seeds for objective in args.objectives]

    def pretrained(objective, seed):
        return any((r["objective"], r["seed"]) == (objective, seed) for r in result["pretrained"])

    def finetuned(objective, seed):
        return any((r["objective"], r["pretrain_seed"]) == (objective, seed) for r in result["finetuned"])

    def save():
        result["summary"] = summary(result)
        left = [w for w in wanted if not pretrained(*w) or not finetuned(*w)]
        out.record = result
        out.finish(not left)

    save()
    threads = args.threads or max(1, torch.get_num_threads() // args.jobs)
    tokenizer, data = prepare_data()[0], None
    for seed in args.seeds:  # seed by seed: its pretrainings (one after the other, or --jobs at once), then their
        jobs = [dict(objective=objective, seed=seed, minutes=args.minutes, preset=args.preset,  # fine-tunings
                     electra_recipe=electra_recipe, device=str(device), precision=precision, folder=str(out.folder),
                     keep_generator=args.keep_models) for objective in args.objectives if not pretrained(objective, seed)]
        if jobs:
            out.folder.mkdir(parents=True, exist_ok=True)
        for record in run_jobs(one_pretraining, jobs, min(args.jobs, max(1, len(jobs))), threads):
            result["pretrained"].append(record)
            result["pretrained"].sort(key=lambda r: (r["seed"], OBJECTIVES.index(r["objective"])))
            save()
        if args.no_finetune:
            continue
        for objective in args.objectives:
            if finetuned(objective, seed):
                continue
            print(f"electra experiment: fine-tuning {objective}, seed {seed}", file=sys.stderr, flush=True)
            kept = out.folder / f"{objective}-s{seed}.pt"
            if objective == "scratch":  # the floor: the same random encoder, drawn again from its seed
                encoder = pretrain("scratch", seed, args.minutes, prepare_data(), settings, electra_recipe, device,
                                   precision)[1]
            else:
                if not kept.is_file():
                    parser.error(f"--resume: {kept}, the model pretrained for {objective} (seed {seed}), is gone: it "
                                 "waits there for its fine-tuning. Restore it, or start again with --overwrite")
                with refusals(parser, "--resume"):
                    encoder = load_checkpoint(kept, expect=("BertForMLM", "ElectraDiscriminator"),
                                              map_location=device).model
            data = data or load_task(settings, tokenizer)
            runs, result["learning_rates"] = finetune_all(encoder.eval(), objective, seed, settings, data,
                                                          result["learning_rates"])
            result["finetuned"] += runs
            save()
            if not args.keep_models:
                kept.unlink(missing_ok=True)
    waiting = [w for w in wanted if pretrained(*w) and not finetuned(*w)]
    if waiting:
        print(f"electra experiment: {len(waiting)} pretraining(s) await their fine-tuning (--no-finetune): to do it, "
              f"run {out.command_line.replace(' --no-finetune', '')}", file=sys.stderr)
    return out.record


if __name__ == "__main__":
    main()
