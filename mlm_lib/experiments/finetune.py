"""Fine-tuning's payoff, measured: verse or prose, by label budget, pretrained against from scratch.

    python -m mlm_lib.experiments.finetune curve --out mlm_lib/course/assets/results/finetune_curve.json
    python -m mlm_lib.experiments.finetune lr    --out mlm_lib/course/assets/results/finetune_lr.json
    python -m mlm_lib.experiments.finetune curve --preset smoke --out /tmp/curve.json   # seconds: the tests
    python -m mlm_lib.experiments.finetune curve --seeds 0 --budgets 50 --threads 1 --out runs/repro/curve.json
                                          # some of the runs again: a check with `reproduce` against a shipped file

* curve: for each label budget (50, 200, 1,000 and every training example) and seed, the same training
  examples go to six learners: the course's pretrained model fine-tuned whole, pooling [CLS] ("pretrained") or
  the mean of all positions ("pretrained, mean"); the same with its encoder frozen ("frozen", "frozen, mean":
  only the pooler and classifier learn, BERT's feature-based approach); the same network from random weights
  ("scratch"); and a character n-gram naive Bayes count model. Accuracy on the held-out test plays (and on the
  validation plays).
* lr: the learning rate of each network learner, chosen on the validation plays (never on the test plays):
  four rates each, at 200 examples and at every example, seed 0. The curve uses, for each learner, the rate with
  the best mean validation accuracy over those two budgets (`LEARNING_RATES`).

Every network learner fine-tunes for the same number of steps and examples per step (notebook 11, §3).
Results are written after every run; `--resume` continues a stopped experiment. Notebook 11, §4, plots them.
"""
from __future__ import annotations

import argparse
import sys
import time

import torch

from .. import devices
from ..baselines import NgramNaiveBayes
from ..checkpoints import load_checkpoint
from ..data import check_coverage
from ..finetune import (LABEL_NAMES, LEARNING_RATES, METHODS, TASK_MAX_LEN, encode_examples, evaluate_classifier,
                        fine_tune, label_budget, task_splits)
from ..model import BertForMLM, BertForSequenceClassification
from ..pairs import load_documents
from ._args import add_device_options, machine, refusals, today, where
from ._run import command, open_run, recorded_command, seed_number, sha256_file

# three rates each, then one more where the best was the edge of the first three (the full experiment ran them all)
SWEEP = {"pretrained": (3e-5, 1e-4, 3e-4, 1e-3), "pretrained, mean": (3e-5, 1e-4, 3e-4, 1e-3),
         "frozen": (1e-3, 3e-3, 1e-2, 3e-2), "frozen, mean": (1e-3, 3e-3, 1e-2, 3e-2), "scratch": (1e-4, 3e-4, 1e-3, 3e-3)}

PRESETS = {
    "full": dict(budgets=(50, 200, 1000, "all"), seeds=(0, 1, 2), steps=300, batch_size=32, dropout=0.1,
                 sweep_budgets=(200, "all")),
    "smoke": dict(budgets=(20,), seeds=(0,), steps=3, batch_size=8, dropout=0.1, sweep_budgets=(20,),
                  test_examples=32),
}


def default_model_path():
    """The course's first character model (pretrained through 64, `shakespeare-char-64.pt`): the `pretrained`
    learner's starting point in the shipped results, which were measured with it."""
    from importlib.resources import files

    return files("mlm_lib.course.assets") / "checkpoints" / "shakespeare-char-64.pt"


def label_count(text: str):
    """An argparse type for --budgets: a whole number of labelled examples (at least 2: one of each label) or
    `all`; whether the training plays hold that many is checked once they are read."""
    if text.strip().lower() == "all":
        return "all"
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of examples: give a whole number such as 50, "
                                         "or all") from None
    if value < 2:
        raise argparse.ArgumentTypeError(f"{value}: a budget is at least 2 examples (one of each label)")
    return value


def run(method: str, budget, seed: int, lr: float | None, data: dict, settings: dict) -> dict:
    """One learner on one budget and seed: its record, with validation and test accuracy."""
    checkpoint, splits, encoded = data["checkpoint"], data["splits"], data["encoded"]
    examples = splits["train"]["examples"]
    n = len(examples) // 2 * 2 if budget == "all" else budget
    chosen = label_budget(examples, n, seed)
    start = time.perf_counter()
    record = {"method": method, "budget": budget, "examples": n, "seed": seed}
    if method == "naive Bayes":
        model = NgramNaiveBayes().fit([t[: TASK_MAX_LEN - 2] for t, _ in chosen], [y for _, y in chosen])
        for split in ("validation", "test"):
            ex = splits[split]["examples"]
            record[split] = {"accuracy": model.accuracy([t[: TASK_MAX_LEN - 2] for t, _ in ex], [y for _, y in ex])}
    else:
        start_from, pooling, frozen = METHODS[method]
        torch.manual_seed(seed)  # the classifier's random weights (and the scratch encoder's)
        base = (checkpoint.model if start_from == "pretrained"  # (on the device the command chose)
                else BertForMLM(checkpoint.model.config).to(devices.model_device(checkpoint.model)))
        model = BertForSequenceClassification.from_encoder(base, len(LABEL_NAMES), label_names=LABEL_NAMES,
                                                           pooling=pooling, dropout=settings["dropout"])
        history = fine_tune(model, encode_examples(chosen, checkpoint.tokenizer, TASK_MAX_LEN),
                            steps=settings["steps"], batch_size=settings["batch_size"], lr=lr,
                            warmup_steps=max(1, settings["steps"] // 10), freeze_encoder=frozen, seed=seed)
        record.update(lr=lr, final_train_loss=sum(history["loss"][-20:]) / len(history["loss"][-20:]))
        for split in ("validation", "test"):
            record[split] = evaluate_classifier(model, encoded[split])
    record["seconds"] = time.perf_counter() - start
    return record


def plan(experiment: str, settings: dict) -> list[tuple]:
    """(method, budget, seed, lr) of every run, in the order they run: seed by seed, so a stopped experiment
    still compares every learner."""
    if experiment == "lr":
        return [(m, b, 0, lr) for b in settings["sweep_budgets"] for m in METHODS for lr in SWEEP[m]]
    return [(m, b, s, LEARNING_RATES.get(m)) for s in settings["seeds"] for b in settings["budgets"]
            for m in (*METHODS, "naive Bayes")]


def summary(runs: list[dict]) -> dict:
    """Mean test (and validation) accuracy per (method, budget[, lr]), over seeds: keys like 'pretrained @ 200'."""
    out = {}
    for r in runs:
        key = f"{r['method']} @ {r['budget']}" + (f" lr {r['lr']:g}" if "lr" in r and r.get("sweep") else "")
        out.setdefault(key, []).append(r)
    return {k: {"seeds": len(v), "test_accuracy": sum(r["test"]["accuracy"] for r in v) / len(v),
                "validation_accuracy": sum(r["validation"]["accuracy"] for r in v) / len(v)} for k, v in out.items()}


@command
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("experiment", choices=("curve", "lr"))
    parser.add_argument("--preset", choices=sorted(PRESETS), default="full")
    parser.add_argument("--out", required=True, help="the results file (rewritten after every run)")
    parser.add_argument("--model", help="the pretrained model.pt to fine-tune (default: the shipped character model)")
    parser.add_argument("--seeds", type=seed_number, nargs="+", help="seeds to run (default: the preset's)")
    parser.add_argument("--budgets", nargs="+", type=label_count, help="curve: only these label budgets (a number "
                        "of examples, or all; default: the preset's), e.g. to re-run a few runs of a shipped file and "
                        "compare them (python -m mlm_lib.experiments.reproduce)")
    parser.add_argument("--resume", action="store_true", help="continue --out with the same settings (the same "
                        "--model, by its sha256): keep its runs, run the others")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    add_device_options(parser)
    args = parser.parse_args(argv)
    device, precision = where(parser, args)
    settings = dict(PRESETS[args.preset])
    if args.seeds:
        settings["seeds"] = tuple(args.seeds)
    if args.budgets:
        if args.experiment != "curve":
            parser.error("--budgets chooses the curve's label budgets; the lr experiment's are fixed "
                         f"({', '.join(map(str, settings['sweep_budgets']))}): leave --budgets out")
        settings["budgets"] = tuple(dict.fromkeys(args.budgets))
    model_path = args.model or default_model_path()
    with refusals(parser, "--model"):
        checkpoint = load_checkpoint(model_path, map_location=device)  # fine-tuning runs where the model is (fp32)
    splits = task_splits(load_documents())
    if settings.get("test_examples"):  # the smoke preset: small held-out sets, so a test takes seconds
        for split in ("validation", "test"):
            splits[split]["examples"] = splits[split]["examples"][: settings["test_examples"]]
    try:  # the task is Shakespeare's speeches: a model that cannot read them would fine-tune on [UNK]s
        check_coverage(checkpoint.tokenizer, "".join(t for t, _ in splits["train"]["examples"][:2000]),
                       "the task's speeches", "fine-tune a model pretrained on Shakespeare's plays (the default).")
    except ValueError as err:
        parser.error(str(err))
    most = len(splits["train"]["examples"])
    if any(b != "all" and b > most for b in settings["budgets"]):
        parser.error(f"--budgets {' '.join(map(str, settings['budgets']))}: the training plays hold {most:,} "
                     "labelled speeches; give budgets up to that, or all")
    options = {"experiment": args.experiment, "--preset": args.preset, "--model sha256": sha256_file(model_path),
               "--device": device.type}
    out = open_run(parser, "finetune", args.out, options=options, resume=args.resume, overwrite=args.overwrite,
                   argv=argv)
    previous = out.record
    runs, commands, base_seconds = previous.get("runs", []), previous.get("commands", []), previous.get("seconds", 0.0)
    encoded = {s: encode_examples(splits[s]["examples"], checkpoint.tokenizer, TASK_MAX_LEN) for s in ("validation", "test")}
    data = {"checkpoint": checkpoint, "splits": splits, "encoded": encoded}
    done = {(r["method"], r["budget"], r["seed"], r.get("lr")) for r in runs}
    started = time.perf_counter()
    command = recorded_command("finetune", argv)

    def save(finished=False):
        out.record = {"experiment": args.experiment, "commands": commands + ([command] if command not in commands else []),
                      "date": today(), "machine": machine(), **devices.record(device, "fp32"),
                      "preset": args.preset,
                      "settings": {k: list(v) if isinstance(v, tuple) else v for k, v in settings.items()},
                      "learning_rates": LEARNING_RATES if args.experiment == "curve" else {k: list(v) for k, v in SWEEP.items()},
                      "model": str(args.model or "shipped: mlm_lib/course/assets/checkpoints/shakespeare-char-64.pt"),
                      "max_len": TASK_MAX_LEN,
                      "splits": {s: {"plays": v["plays"], "examples": len(v["examples"])} for s, v in splits.items()},
                      "seconds": base_seconds + time.perf_counter() - started,
                      "runs": runs, "summary": summary(runs)}
        out.finish(finished)

    save()
    for method, budget, seed, lr in plan(args.experiment, settings):
        if (method, budget, seed, lr) in done:
            continue
        print(f"{args.experiment}: {method}, budget {budget}, seed {seed}" + (f", lr {lr:g}" if lr else ""),
              file=sys.stderr, flush=True)
        record = run(method, budget, seed, lr, data, settings)
        record["sweep"] = args.experiment == "lr"
        runs.append(record)
        save()
        print(f"  test {record['test']['accuracy']:.3f}, validation {record['validation']['accuracy']:.3f}, "
              f"{record['seconds']:.0f} s", file=sys.stderr, flush=True)
    save(finished=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
