"""ELECTRA against the course's masked LM at the same wall-clock budget, judged by what pretraining is for.

    python -m mlm_lib.experiments.electra --seeds 0 1 --minutes 15 --out mlm_lib/course/assets/results/electra.json --save-dir runs/electra
    python -m mlm_lib.experiments.electra --preset smoke --minutes 0.05 --out /tmp/electra.json   # the tests

Notebook 15, §4. For each seed, one after the other, two pretrainings of the same minutes of training on the
clock (evaluations not counted), on the course's model size, with the speedrun's schedule (AdamW 2e-3, 4%
warm-up then linear decay to zero at the bell, windows 16 -> 128 over the first half, 4,096 characters a step):
* `mlm`: the course's recipe, bert-40% (notebook 14): BERT's masked LM, 40% of positions selected;
* `electra`: the course's model as the discriminator, a generator a quarter as wide sharing its embeddings,
  ELECTRA's masking (15% selected, 85% of them [MASK]) and loss (generator + 50 x discriminator).
Each is measured on its own objective on the held-out plays (the MLM: masked accuracy at BERT's 15% on the whole
held-out text at 128; ELECTRA: the discriminator's accuracy and AUC at every position and the generator's masked
accuracy, on 256 windows of 128). Then each pretrained encoder (the MLM's; ELECTRA's discriminator) is fine-tuned
on notebook 11's verse-or-prose task with few labels — 50 and 200 speeches, where pretraining matters — with mean
pooling, the whole network trained ("pretrained, mean") and with the encoder frozen ("frozen, mean"), three
fine-tuning seeds each; each learner's learning rate is chosen on the validation plays (seed 0, 200 labels) from
three, for each pretraining, and the test plays are read once, at the end.
Results are written after every run (`--resume` keeps them); `--save-dir` keeps every pretrained model.
`--no-finetune` pretrains only; `--finetune-saved` then fine-tunes the models kept in --save-dir for the
pretrainings --out holds (so the clock-bound half and the step-bound half can run at different times). The
`laptop` preset fine-tunes with notebook 11's learning rates (no sweep) and two fine-tuning seeds.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time

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
from ._args import add_device_options, machine, output_file, output_folder, today, where, whole_number, write_json
from .speedrun import EVAL_LENGTH, RECIPES, whole_text_windows
from .speedrun import PRESETS as SPEEDRUN_PRESETS

OBJECTIVES = ("mlm", "electra")
LEARNERS = ("pretrained, mean", "frozen, mean")
RATES = {"pretrained, mean": (3e-5, 1e-4, 3e-4), "frozen, mean": (3e-3, 1e-2, 3e-2)}

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


def pretrain(objective: str, seed: int, minutes: float, data, settings: dict, electra_lr: float | None = None,
             device: torch.device | str = "cpu", precision: str = "auto") -> tuple[dict, torch.nn.Module, torch.nn.Module]:
    """One pretraining on the clock, on `device`; returns (its record, the encoder to fine-tune, the whole trained
    model)."""
    tokenizer, train_ids, val_ids = data
    recipe, sizes = RECIPES["bert-40%"], settings["pretrain"]["sizes"]
    config = BertConfig(vocab_size=tokenizer.vocab_size, **sizes)
    budget = minutes * 60
    lr = electra_lr if objective == "electra" and electra_lr is not None else recipe["lr"]
    common = dict(seconds=budget, warmup_seconds=recipe["warmup"] * budget, eval_seconds=60.0, tokens_per_batch=
                  settings["pretrain"]["tokens_per_batch"], schedule=recipe["schedule"], lr=lr, seed=seed)
    torch.manual_seed(seed)
    if objective == "mlm":
        model = BertForMLM(config).to(device)
        train_config = TrainConfig(**common, masking=MaskingConfig(select_prob=recipe["select_prob"]),
                                   eval_windows=settings["pretrain"]["eval_windows"] or whole_text_windows(val_ids))
        history = train(model, tokenizer, train_ids, val_ids, train_config, objective=MaskedLM(), progress=False,
                        precision=precision)
        encoder = model
    else:
        model = Electra(config).to(device)
        train_config = TrainConfig(**common, masking=ELECTRA_MASKING, eval_windows=settings["electra_windows"])
        history = train(model, tokenizer, train_ids, val_ids, train_config, objective=ReplacedTokenDetection(),
                        progress=False, precision=precision)
        encoder = model.discriminator
    curve = {k: v for k, v in history.items() if k.startswith(("eval_", "val_"))}
    final = {k[4:]: v[-1] for k, v in curve.items() if k.startswith("val_")}
    record = {"objective": objective, "seed": seed, "minutes": minutes, "lr": lr, "steps": history["step"][-1],
              "tokens": history["tokens"][-1], "parameters": sum(p.numel() for p in model.parameters()),
              "encoder_parameters": sum(p.numel() for p in encoder.parameters()), "final": final, "curve": curve,
              "config": train_config.to_dict()}
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


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--seeds", nargs="+", type=whole_number(0), default=[0, 1])
    parser.add_argument("--minutes", type=float, default=15.0, help="training time of each pretraining (default 15)")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="full")
    parser.add_argument("--out", required=True, help="JSON file for the results (rewritten after every run)")
    parser.add_argument("--resume", action="store_true", help="keep what --out holds, run the rest")
    parser.add_argument("--save-dir", help="keep every pretrained model here: OBJECTIVE-sSEED.pt (and ELECTRA's "
                        "generator as electra-sSEED-generator.pt)")
    parser.add_argument("--objectives", nargs="+", choices=OBJECTIVES, default=list(OBJECTIVES),
                        help="which pretrainings to run (default both, in turn)")
    parser.add_argument("--electra-lr", type=float, help="ELECTRA's peak learning rate (default the MLM recipe's, "
                        f"{RECIPES['bert-40%']['lr']:g}); the MLM keeps its recipe's")
    parser.add_argument("--no-finetune", action="store_true", help="pretrain and evaluate only (a screen)")
    parser.add_argument("--finetune-saved", action="store_true",
                        help="fine-tune the models in --save-dir for the pretrainings in --out (no pretraining)")
    add_device_options(parser)
    args = parser.parse_args(argv)
    device, precision = where(parser, args)
    out = output_file(parser, "--out", args.out, existing_ok=True)  # checked below
    save_dir = None if args.save_dir is None else output_folder(parser, "--save-dir", args.save_dir)
    if not 0 < args.minutes < math.inf:
        parser.error("--minutes must be a positive, finite number")
    if out.exists() and not args.resume:
        parser.error(f"{out} exists: give --resume to continue it, or another --out")
    settings = PRESETS[args.preset]
    command = "python -m mlm_lib.experiments.electra " + " ".join(sys.argv[1:] if argv is None else argv)
    result = json.loads(out.read_text()) if out.exists() else {"commands": [], "pretrained": [], "finetuned": [],
                                                              "learning_rates": {}}
    if result.get("preset", args.preset) != args.preset:
        parser.error(f"--resume: {out} holds runs of preset {result['preset']!r}, not {args.preset!r}: resume with "
                     f"--preset {result['preset']}, or write to another --out")
    result.update(commands=result["commands"] + [command], date=today(), machine=machine(),
                  **devices.record(device, precision), preset=args.preset,
                  eval_length=EVAL_LENGTH, settings={k: v for k, v in settings.items() if k != "pretrain"})
    tokenizer, train_ids, val_ids = prepare_data()
    splits = task_splits(load_documents())
    if settings.get("test_examples"):
        splits["test"]["examples"] = splits["test"]["examples"][: settings["test_examples"]]
        splits["validation"]["examples"] = splits["validation"]["examples"][: settings["test_examples"]]
    data = {"tokenizer": tokenizer, "splits": splits,
            "encoded": {s: encode_examples(splits[s]["examples"], tokenizer, TASK_MAX_LEN) for s in ("validation", "test")}}

    def save():
        result["summary"] = summary(result)
        write_json(out, result, indent=1)

    def finetune_all(encoder, objective: str, seed: int):
        for learner in LEARNERS:  # the learning rate: the preset's, or chosen on the validation plays once
            key = f"{objective} | {learner}"
            if "rates" in settings:
                result["learning_rates"][key] = settings["rates"][learner]
            elif key not in result["learning_rates"]:
                sweep = [finetune(encoder, learner, settings["sweep_budget"], 0, lr, data, settings)
                         | {"objective": objective, "pretrain_seed": seed, "sweep": True} for lr in RATES[learner]]
                result["finetuned"] += sweep
                result["learning_rates"][key] = max(sweep, key=lambda r: r["validation"]["accuracy"])["lr"]
            for budget in settings["budgets"]:
                for ft_seed in settings["finetune_seeds"]:
                    result["finetuned"].append(
                        finetune(encoder, learner, budget, ft_seed, result["learning_rates"][key], data, settings)
                        | {"objective": objective, "pretrain_seed": seed})

    if args.finetune_saved:
        if save_dir is None or not out.exists():
            parser.error("--finetune-saved fine-tunes the pretrainings of an existing --out from their models in "
                         "--save-dir: give both")
        for record in result["pretrained"]:
            objective, seed = record["objective"], record["seed"]
            if any((r["objective"], r["pretrain_seed"]) == (objective, seed) for r in result["finetuned"]):
                continue
            path = save_dir / f"{objective}-s{seed}.pt"
            if not path.is_file():
                parser.error(f"no saved model {path}: run the pretraining with --save-dir {save_dir} first")
            print(f"electra experiment: fine-tuning {objective}, seed {seed}", file=sys.stderr, flush=True)
            encoder = load_checkpoint(path).model.to(device).eval()
            finetune_all(encoder, objective, seed)
            save()
        return result

    if args.electra_lr is not None and not args.electra_lr > 0:
        parser.error("--electra-lr must be positive")
    for seed in args.seeds:  # seed by seed, the objectives in turn
        for objective in args.objectives:
            if any(r["objective"] == objective and r["seed"] == seed and r["minutes"] == args.minutes and
                   r.get("lr") == (args.electra_lr if objective == "electra" and args.electra_lr else
                                   RECIPES["bert-40%"]["lr"]) for r in result["pretrained"]):
                continue
            print(f"electra experiment: pretraining {objective}, seed {seed}, {args.minutes} min", file=sys.stderr,
                  flush=True)
            record, encoder, whole = pretrain(objective, seed, args.minutes, (tokenizer, train_ids, val_ids), settings,
                                              args.electra_lr, device, precision)
            if save_dir is not None:
                save_checkpoint(save_dir / f"{objective}-s{seed}.pt", encoder, tokenizer)
                if objective == "electra":
                    save_checkpoint(save_dir / f"electra-s{seed}-generator.pt", whole.generator, tokenizer)
            if args.no_finetune:
                result["pretrained"].append(record)
                save()
                continue
            finetune_all(encoder, objective, seed)
            result["pretrained"].append(record)
            save()
            final = record["final"]
            print(f"  {record['steps']:,} steps; held out: " + ", ".join(
                f"{k} {v:.3f}" for k, v in final.items() if isinstance(v, float)), file=sys.stderr, flush=True)
    save()
    return result


if __name__ == "__main__":
    main()
