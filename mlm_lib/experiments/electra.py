"""ELECTRA against the course's masked LM at equal work, judged by what pretraining is for (notebook 15).

    python -m mlm_lib.experiments.electra --objectives electra "electra, 40%" "electra, generator 1/2" "electra, warm generator" "electra, two-stage" "electra, two-stage, 40%" --seeds 0 --characters 2000000 --no-finetune --preset laptop --jobs 2 --out mlm_lib/course/assets/results/electra-options.json
    python -m mlm_lib.experiments.electra --objectives "mlm, continued" "electra, two-stage, 40%" shipped scratch --seeds 0 1 2 --characters 2000000 --preset laptop --jobs 2 --out electra-stage2.json
    python -m mlm_lib.experiments.electra --preset smoke --characters 20000 --out /tmp/electra.json   # the tests

Every pretraining reads the same budget of training characters (`--characters`: steps = characters / characters a
step, the schedules functions of the share spent), so a run does the same work on any machine (its numbers
bit for bit on the CPU and thread count its file names, within float rounding on another); an arm's own recipe
says its learning rate and characters a step (`ARMS`). The arms:
* `mlm`: the course's masked LM from random weights, bert-40% (notebook 14): 40% of positions selected, AdamW at
  2e-3, 4,096 characters a step, windows 16 -> 128 over the first half, 4% warm-up then linear decay;
* `electra`: ELECTRA from random weights, jointly (the paper's way): the course's model as the discriminator, a
  generator a quarter as wide sharing its embeddings, ELECTRA's masking (15% selected, 85% of them [MASK]) and loss
  (generator + 50 x discriminator), at ELECTRA's own learning rate and batch (5e-4, 16,384 characters a step:
  notebook 15's grid, `electra_grid`, and ELECTRA-Small's); `electra, 40%` selects 40%; `electra, generator 1/2`
  has a generator half as wide;
* `electra, warm generator`: the generator starts as the course's shipped masked LM (`shakespeare-char`, the same
  size as the discriminator), the discriminator from random weights but the embeddings they share
  (`Electra.from_generator`), trained jointly at 5e-4, 4,096 characters a step;
* `electra, two-stage`: the paper's second stage (`Electra.two_stage`): the discriminator starts from the shipped
  masked LM's encoder, and that masked LM, frozen, is the generator; 5e-4, 4,096 characters a step, windows of 128
  (the model already reads them); `electra, two-stage, 40%` selects 40%;
* `mlm, continued`: the shipped masked LM trained on as a masked LM with the same characters, learning rate, batch
  and windows as the two-stage arm (the other way to spend them);
* `shipped` (the shipped masked LM as it is) and `scratch` (random weights): no pretraining, the fine-tuning's
  reference and floor.
Each is measured on its own objective on the held-out plays (a masked LM: masked accuracy at BERT's 15% on the
whole held-out text at 128; ELECTRA: the discriminator's AUC, its recall of replaced tokens, and the generator's
masked accuracy, on 256 windows of 128), `--evals` times along the run. Then each encoder (a masked LM's; ELECTRA's
discriminator) is fine-tuned on notebook 11's verse-or-prose task with few labels — 50 and 200 speeches, where
pretraining matters — mean pooling, the whole network trained ("pretrained, mean") and the encoder frozen ("frozen,
mean"). The `full` preset chooses each learner's learning rate on the validation plays (seed 0, 200 labels) from
three, for each pretraining, three fine-tuning seeds; the `laptop` preset uses notebook 11's learning rates, two
seeds. The test plays are read once, at the end.
`--jobs N` runs N pretrainings at once, each in its own process on one thread. Results are written after every
pretraining and every fine-tuning (`--resume` keeps them; a pretraining stopped half-way starts again). Each
pretrained model waits for its fine-tuning in the folder named after --out (`e.json` -> `e/`); `--keep-models`
keeps them there after it. `--no-finetune` pretrains only (a screen, recorded as unfinished); the same command
without it and with `--resume` then fine-tunes the models kept.
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
from ..curriculum import fixed
from ..data import prepare_data
from ..electra import ELECTRA_MASKING, Electra, ReplacedTokenDetection
from ..finetune import (LABEL_NAMES, LEARNING_RATES, METHODS, TASK_MAX_LEN, encode_examples, evaluate_classifier,
                        fine_tune, label_budget, task_splits)
from ..masking import MaskingConfig
from ..model import BertConfig, BertForMLM, BertForSequenceClassification
from ..pairs import load_documents
from ..training import MaskedLM, TrainConfig, train
from ._args import add_device_options, machine, refusals, today, where
from ._run import command, corpus_sha256, open_run, recorded_command, run_jobs, seed_number, slug, whole_number
from .speedrun import EVAL_LENGTH, RECIPES, budget_steps, whole_text_windows
from .speedrun import PRESETS as SPEEDRUN_PRESETS

LEARNERS = ("pretrained, mean", "frozen, mean")
RATES = {"pretrained, mean": (3e-5, 1e-4, 3e-4), "frozen, mean": (3e-3, 1e-2, 3e-2), "scratch": (3e-4, 1e-3, 3e-3)}
_SCRATCH = dict(start="scratch", schedule=RECIPES["bert-40%"]["schedule"])
_SHIPPED = dict(lr=5e-4, batch_times=1, schedule=fixed(EVAL_LENGTH))  # from the shipped masked LM: windows of 128
# Each arm: what it trains (`kind`), where it starts, its peak learning rate, characters a step (times the preset's),
# the share of positions selected, the generator's width (of the discriminator's), the windows' schedule. The
# warm-up is 4% of the steps for all, as in the speedrun. ELECTRA's own learning rate and batch (5e-4, four times the
# masked LM's characters a step) are notebook 15's grid's best cell that did not collapse, and ELECTRA-Small's.
ARMS = {
    "mlm": dict(kind="mlm", lr=RECIPES["bert-40%"]["lr"], batch_times=1, select=0.4, **_SCRATCH),
    "electra": dict(kind="electra", lr=5e-4, batch_times=4, select=0.15, width=0.25, **_SCRATCH),
    "electra, 40%": dict(kind="electra", lr=5e-4, batch_times=4, select=0.4, width=0.25, **_SCRATCH),
    "electra, generator 1/2": dict(kind="electra", lr=5e-4, batch_times=4, select=0.15, width=0.5, **_SCRATCH),
    "electra, warm generator": dict(kind="electra", start="generator", select=0.15, **_SHIPPED),
    "electra, two-stage": dict(kind="electra", start="two-stage", select=0.15, **_SHIPPED),
    "electra, two-stage, 40%": dict(kind="electra", start="two-stage", select=0.4, **_SHIPPED),
    "mlm, continued": dict(kind="mlm", start="shipped", select=0.4, **_SHIPPED),
    "shipped": dict(kind="none", start="shipped"),
    "scratch": dict(kind="none", start="scratch"),
}
OBJECTIVES = tuple(ARMS)

PRESETS = {
    "full": dict(pretrain=SPEEDRUN_PRESETS["full"], budgets=(50, 200), finetune_seeds=(0, 1, 2), steps=300,
                 batch_size=32, sweep_budget=200, electra_windows=256),
    # the laptop's afternoon: notebook 11's learning rates (no sweep), two fine-tuning seeds
    "laptop": dict(pretrain=SPEEDRUN_PRESETS["full"], budgets=(50, 200), finetune_seeds=(0, 1), steps=300,
                   batch_size=32, rates=LEARNING_RATES, electra_windows=256),
    # one GPU: the speedrun's GPU preset's model and batch for the arms from random weights
    "gpu": dict(pretrain=SPEEDRUN_PRESETS["gpu"], budgets=(50, 200), finetune_seeds=(0, 1, 2), steps=300,
                batch_size=32, rates=LEARNING_RATES, electra_windows=512),
    "smoke": dict(pretrain=SPEEDRUN_PRESETS["smoke"], budgets=(16,), finetune_seeds=(0,), steps=3, batch_size=8,
                  sweep_budget=16, electra_windows=16, test_examples=32),
}


def shipped_model(tokenizer, device) -> BertForMLM:
    """The course's shipped masked LM (`shakespeare-char`, notebook 14), where the arms that start from it start."""
    from ..course.assets import reference_checkpoint

    checkpoint = reference_checkpoint()
    if checkpoint.tokenizer != tokenizer:
        raise ValueError("The shipped model reads Shakespeare's characters: the arms that start from it need the "
                         "installed corpus.")
    return checkpoint.model.to(device)


def pretrain(objective: str, seed: int, characters: int, data, settings: dict, evals: int = 8,
             device: torch.device | str = "cpu", precision: str = "auto") -> tuple[dict, torch.nn.Module, torch.nn.Module]:
    """One pretraining of `characters` training characters, on `device`; returns (its record, the encoder to
    fine-tune, the whole trained model)."""
    tokenizer, train_ids, val_ids = data
    arm = ARMS[objective]
    config = BertConfig(vocab_size=tokenizer.vocab_size, **settings["pretrain"]["sizes"])
    torch.manual_seed(seed)  # the random weights of an arm from scratch (and of ELECTRA's new head)
    start = shipped_model(tokenizer, device) if arm["start"] != "scratch" else None  # the course's size, any preset
    if arm["kind"] == "none":  # the start itself, or the floor: an encoder that never saw the plays
        model = encoder = start if start is not None else BertForMLM(config).to(device)
        history, train_config = {"step": [0], "tokens": [0]}, None
    else:
        batch = settings["pretrain"]["tokens_per_batch"] * arm["batch_times"]
        steps = budget_steps(characters, batch)
        train_config = TrainConfig(steps=steps, warmup_steps=max(1, round(0.04 * steps)), eval_every=-(-steps // evals),
                                   tokens_per_batch=batch, schedule=arm["schedule"], lr=arm["lr"], seed=seed,
                                   masking=(MaskingConfig(select_prob=arm["select"]) if arm["kind"] == "mlm" else
                                            MaskingConfig(select_prob=arm["select"], mask_prob=ELECTRA_MASKING.mask_prob,
                                                          random_prob=ELECTRA_MASKING.random_prob)),
                                   eval_windows=(settings["pretrain"]["eval_windows"] or whole_text_windows(val_ids))
                                   if arm["kind"] == "mlm" else settings["electra_windows"])
        if arm["kind"] == "mlm":
            model = encoder = start if start is not None else BertForMLM(config).to(device)
            objective_ = MaskedLM()
        else:
            model = (Electra(config, generator_width=arm["width"]) if start is None else
                     Electra.from_generator(start) if arm["start"] == "generator" else Electra.two_stage(start))
            model, encoder, objective_ = model.to(device), model.discriminator, ReplacedTokenDetection()
        history = train(model, tokenizer, train_ids, val_ids, train_config, objective=objective_, progress=False,
                        precision=precision)
    curve = {k: v for k, v in history.items() if k.startswith(("eval_", "val_"))}
    final = {k[4:]: v[-1] for k, v in curve.items() if k.startswith("val_")}
    trains = [p for p in model.parameters() if p.requires_grad]
    record = {"objective": objective, "seed": seed, "characters": characters if train_config else 0,
              "start": arm["start"], "lr": arm.get("lr") if train_config else None,
              "tokens_per_batch": train_config.tokens_per_batch if train_config else None,
              "steps": history["step"][-1], "tokens": history["tokens"][-1],
              "parameters": sum(p.numel() for p in model.parameters()),
              "trained_parameters": sum(p.numel() for p in trains) if train_config else 0,
              "encoder_parameters": sum(p.numel() for p in encoder.parameters()), "final": final, "curve": curve,
              "train_seconds": history["seconds"][-1] if history.get("seconds") else 0.0,
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


def one_pretraining(objective: str, seed: int, characters: int, preset: str, evals: int, device: str,
                    precision: str, folder: str, keep_generator: bool = False) -> dict:
    """One pretraining, whose encoder is kept in `folder` until it is fine-tuned (and after, with --keep-models;
    ELECTRA's generator too): what `main` runs for each objective and seed, in this process or in a worker of its
    own (`--jobs`). The fine-tunings follow in `main`, from the kept file, so that a pretraining is recorded before
    its fine-tunings start, and a screen (`--no-finetune`) can be finished later with `--resume`."""
    settings = PRESETS[preset]
    tokenizer, train_ids, val_ids = prepare_data()
    print(f"electra experiment: pretraining {objective}, seed {seed}, {characters:,} characters", file=sys.stderr,
          flush=True)
    record, encoder, whole = pretrain(objective, seed, characters, (tokenizer, train_ids, val_ids), settings, evals,
                                      device, precision)
    if ARMS[objective]["kind"] != "none":  # the floor and the shipped model are rebuilt for their fine-tuning
        save_checkpoint(Path(folder) / kept_name(objective, seed), encoder.cpu(), tokenizer)
        if ARMS[objective]["kind"] == "electra" and keep_generator:
            save_checkpoint(Path(folder) / kept_name(objective, seed, "-generator"), whole.generator.cpu(), tokenizer)
    print(f"  {objective}, seed {seed}: {record['steps']:,} steps; held out: " + ", ".join(
        f"{k} {v:.3f}" for k, v in record["final"].items() if isinstance(v, float)), file=sys.stderr, flush=True)
    return record


def kept_name(objective: str, seed: int, part: str = "") -> str:
    """The file a pretrained model waits in for its fine-tuning: "electra, two-stage", seed 0 -> electra,-two-stage-s0.pt."""
    return f"{slug(objective)}-s{seed}{part}.pt"


@command
def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--seeds", nargs="+", type=seed_number, default=[0, 1])
    parser.add_argument("--characters", type=whole_number(1), required=True,
                        help="training characters of each pretraining: equal work for every arm")
    parser.add_argument("--evals", type=whole_number(1), default=8, help="held-out evaluations along each pretraining")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="full")
    parser.add_argument("--out", required=True, help="the results file (rewritten after every pretraining and every "
                        "fine-tuning); the pretrained models wait for their fine-tuning in the folder of the same name "
                        "without .json")
    parser.add_argument("--resume", action="store_true", help="continue --out with the same settings: keep what it "
                        "holds, fine-tune the pretrainings a screen (--no-finetune) left, run the rest")
    parser.add_argument("--overwrite", action="store_true", help="replace --out and its folder")
    parser.add_argument("--keep-models", action="store_true", help="keep every pretrained model in that folder after "
                        "its fine-tuning: OBJECTIVE-sSEED.pt (and ELECTRA's generator as OBJECTIVE-sSEED-generator.pt)")
    parser.add_argument("--objectives", nargs="+", choices=OBJECTIVES, default=["mlm", "electra", "scratch"],
                        metavar="ARM", help="which arms to run (default: mlm, electra and scratch); one of "
                        + ", ".join(repr(o) for o in OBJECTIVES).replace("%", "%%"))  # argparse formats help with %
    parser.add_argument("--jobs", type=whole_number(1), default=1, help="pretrainings run at once, each in its own "
                        "process: with one thread each on a CPU, or sharing one NVIDIA GPU, which at these sizes waits "
                        "on kernel launches most of each step (default 1)")
    parser.add_argument("--no-finetune", action="store_true", help="pretrain and evaluate only (a screen): the record "
                        "stays unfinished, and --resume without this option fine-tunes the models kept")
    add_device_options(parser)
    args = parser.parse_args(argv)
    device, precision = where(parser, args)
    if args.jobs > 1 and device.type == "mps":
        parser.error(f"--jobs {args.jobs}: on Apple's GPU run one pretraining at a time")
    settings = PRESETS[args.preset]
    options = {"--preset": args.preset, "--characters": args.characters, "--evals": args.evals,
               "--keep-models": args.keep_models, "corpus sha256": corpus_sha256(), "--device": device.type,
               "--precision": precision}
    out = open_run(parser, "electra", args.out, options=options, resume=args.resume, overwrite=args.overwrite,
                   argv=argv)
    command_line = recorded_command("electra", argv)
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
        jobs = [dict(objective=objective, seed=seed, characters=args.characters, preset=args.preset,  # fine-tunings
                     evals=args.evals, device=str(device), precision=precision, folder=str(out.folder),
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
            kept = out.folder / kept_name(objective, seed)
            if ARMS[objective]["kind"] == "none":  # the floor (drawn again from its seed) or the shipped model itself
                encoder = pretrain(objective, seed, args.characters, prepare_data(), settings, args.evals, device,
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
