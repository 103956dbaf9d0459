"""Masked against left-to-right pretraining, measured downstream: BERT's Figure 5 at the course's scale.

    python -m mlm_lib.experiments.mlm_vs_ltr --out mlm_lib/course/assets/results/mlm_vs_ltr.json
    python -m mlm_lib.experiments.mlm_vs_ltr --seed 1 --out mlm_lib/course/assets/results/mlm_vs_ltr-s1.json
    python -m mlm_lib.experiments.mlm_vs_ltr --preset smoke --out /tmp/ltr.json   # seconds: what the tests run

Two models of the course's size start from the same random weights. One is pretrained as a masked LM (BERT's
15% and 80/10/10), the other, with a causal mask, to predict the next character; both read the same number
of tokens per step, in windows that grow from 16 to 64 characters over the first half (the recipe of
`shakespeare-char-64`, the course's first reference model, which notebook 11 fine-tunes), with the same optimiser and schedule. Each objective's own held-out loss is logged as
it trains; at chosen steps a copy of each model is fine-tuned on notebook 11's verse-or-prose task (mean
pooling for both, since a left-to-right model's [CLS] sees only itself; the causal mask kept in fine-tuning,
as BERT did for its left-to-right model) and tested on the held-out plays.
Results are written after every fine-tuning; notebook 13 plots them.
"""
from __future__ import annotations

import argparse
import sys
import time

import torch

from .. import devices
from ..curriculum import linear
from ..data import prepare_data
from ..finetune import (LABEL_NAMES, LEARNING_RATES, TASK_MAX_LEN, encode_examples, evaluate_classifier, fine_tune,
                        label_budget, task_splits)
from ..ltr import NextToken
from ..model import MODEL_SIZES, BertConfig, BertForMLM, BertForSequenceClassification
from ..pairs import load_documents
from ..training import MaskedLM, TrainConfig, train
from ..checkpoints import load_checkpoint
from ._args import add_device_options, machine, refusals, today, where
from ._run import command, corpus_sha256, open_run, recorded_command, whole_number

OBJECTIVES = ("masked", "left-to-right")

PRESETS = {
    "full": dict(sizes=MODEL_SIZES["course"], steps=1200, tokens_per_batch=4096, short=16, long=64, lr=2e-3,
                 warmup_steps=60, log_every=50, eval_windows=128, checkpoints=(150, 300, 600, 1200), budget=200,
                 finetune_seeds=(0, 1), finetune_steps=300, seed=0),
    "smoke": dict(sizes=MODEL_SIZES["smoke"], steps=8, tokens_per_batch=256, short=16, long=32, lr=3e-3,
                  warmup_steps=2, log_every=4, eval_windows=8, checkpoints=(4, 8), budget=16, finetune_seeds=(0,),
                  finetune_steps=2, seed=0, test_examples=16),
}


def pretrain(objective: str, data: dict, s: dict, on_checkpoint, stop_at=None, device="cpu", precision="auto",
             checkpoint_path=None, resume_from=None) -> dict:
    """Pretrain one model with `objective`; call `on_checkpoint(model, step)` at each of `s["checkpoints"]`.
    Returns the held-out curve: step, tokens, seconds (of pretraining, evaluations and fine-tunings not
    counted), val_loss and val_accuracy at every evaluation; and `stopped_at`, the last step trained, when `stop_at`
    ended it early.
    `checkpoint_path` keeps the training's resume state, from which `resume_from` continues it."""
    tokenizer, train_ids, val_ids = data["tokenizer"], data["train_ids"], data["val_ids"]
    torch.manual_seed(s["seed"])  # the same initial weights for both objectives (the mask has no weights)
    model = BertForMLM(BertConfig(vocab_size=tokenizer.vocab_size, causal=objective == "left-to-right", **s["sizes"])).to(device)
    config = TrainConfig(steps=s["steps"], tokens_per_batch=s["tokens_per_batch"],
                         schedule=linear(s["short"], s["long"], until=0.5), lr=s["lr"], warmup_steps=s["warmup_steps"],
                         eval_every=s["log_every"], eval_windows=s["eval_windows"], seed=s["seed"])
    if any(step % config.eval_every for step in s["checkpoints"]):
        raise ValueError(f"checkpoints {s['checkpoints']} must be evaluation steps (multiples of {config.eval_every})")

    def at_evaluation(history):
        if history["eval_step"][-1] in s["checkpoints"]:
            on_checkpoint(model, history["eval_step"][-1])

    history = train(model, tokenizer, train_ids, val_ids, config, callback=at_evaluation, progress=False,
                    objective=MaskedLM() if objective == "masked" else NextToken(), stop_at=stop_at,
                    precision=precision, checkpoint_path=checkpoint_path, resume_from=resume_from)
    curve = {"step": history["eval_step"], "tokens": history["eval_tokens"], "seconds": history["eval_seconds"],
             "val_loss": history.get("val_loss", []), "val_accuracy": history.get("val_accuracy", [])}
    trained = history["step"][-1] if history["step"] else 0
    return curve | ({"stopped_at": trained} if trained < s["steps"] else {})


def finetune_at(model, data: dict, s: dict, seed: int) -> dict:
    """Fine-tune a copy of `model` (mean pooling; the causal mask kept) on verse or prose; test accuracy."""
    torch.manual_seed(seed)
    clf = BertForSequenceClassification.from_encoder(model, len(LABEL_NAMES), label_names=LABEL_NAMES, pooling="mean",
                                                     dropout=0.1)
    chosen = label_budget(data["splits"]["train"]["examples"], s["budget"], seed)
    start = time.perf_counter()
    fine_tune(clf, encode_examples(chosen, data["tokenizer"], TASK_MAX_LEN), steps=s["finetune_steps"],
              lr=LEARNING_RATES["pretrained, mean"], warmup_steps=max(1, s["finetune_steps"] // 10), seed=seed)
    return {**evaluate_classifier(clf, data["test"]), "seconds": time.perf_counter() - start}


@command
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="full")
    parser.add_argument("--out", required=True, help="the results file (rewritten after every fine-tuning); the "
                        "pretrainings' resume states go in the folder of the same name without .json")
    parser.add_argument("--resume", action="store_true", help="continue --out with the same settings: finish a "
                        "stopped pretraining from its resume state, with the fine-tunings still to do")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    parser.add_argument("--seed", type=whole_number(0), default=0,
                        help="the pretraining seed: both models' initial weights and batches (default 0); one file "
                             "per seed (the course's: mlm_vs_ltr.json for seed 0, mlm_vs_ltr-s1.json, -s2.json)")
    parser.add_argument("--stop-at", type=whole_number(1), help="end every pretraining at this step, its schedules "
                        "still planned for the whole run: a quick check of a re-run against the shipped file (python "
                        "-m mlm_lib.experiments.reproduce); --resume finishes them")
    add_device_options(parser)
    args = parser.parse_args(argv)
    device, precision = where(parser, args)
    s = dict(PRESETS[args.preset]) | {"seed": args.seed}
    options = {"--preset": args.preset, "--seed": args.seed, "corpus sha256": corpus_sha256(), "--device": device.type,
               "--precision": precision}
    out = open_run(parser, "mlm_vs_ltr", args.out, options=options, resume=args.resume, overwrite=args.overwrite,
                   argv=argv)
    tokenizer, train_ids, val_ids = prepare_data()
    splits = task_splits(load_documents())
    if s.get("test_examples"):
        splits["test"]["examples"] = splits["test"]["examples"][: s["test_examples"]]
    data = {"tokenizer": tokenizer, "train_ids": train_ids, "val_ids": val_ids, "splits": splits,
            "test": encode_examples(splits["test"]["examples"], tokenizer, TASK_MAX_LEN)}
    command = recorded_command("mlm_vs_ltr", argv)
    previous = out.record
    result = {"command": (previous["command"] + " ; then " if previous else "") + command, "date": today(),
              "machine": machine(), **devices.record(device, precision), "preset": args.preset,
              "settings": {k: list(v) if isinstance(v, tuple) else v for k, v in s.items()},
              "objectives": previous.get("objectives", {}), "finetuned": previous.get("finetuned", [])}
    started = time.perf_counter()

    def finished(objective):
        curve = result["objectives"].get(objective)
        return curve is not None and "stopped_at" not in curve

    def save(done=False):
        halted = [c["stopped_at"] for c in result["objectives"].values() if "stopped_at" in c]
        result.pop("stop_at", None)
        if halted:
            result["stop_at"] = max(halted)
        result["seconds"] = previous.get("seconds", 0.0) + time.perf_counter() - started
        out.record = result
        out.finish(done and not halted and all(finished(o) for o in OBJECTIVES))

    save()
    for objective in OBJECTIVES:
        if finished(objective):
            continue
        print(f"pretraining: {objective}", file=sys.stderr, flush=True)

        def on_checkpoint(model, step, objective=objective):
            for seed in s["finetune_seeds"]:
                if any((r["objective"], r["pretraining_steps"], r["seed"]) == (objective, step, seed)
                       for r in result["finetuned"]):
                    continue  # fine-tuned before the run was stopped
                record = {"objective": objective, "pretraining_steps": step, "seed": seed,
                          **finetune_at(model, data, s, seed)}
                result["finetuned"].append(record)
                save()
                print(f"  step {step}, seed {seed}: test accuracy {record['accuracy']:.3f}", file=sys.stderr, flush=True)

        state, resume_from = out.state(objective), out.resume_from(objective)
        if resume_from is not None:  # stopped at a fine-tuning step before its fine-tunings were all recorded?
            with refusals(parser, "--resume"):
                kept = load_checkpoint(resume_from)
            if kept.train_state["step"] in s["checkpoints"]:
                on_checkpoint(kept.model.to(device).eval(), kept.train_state["step"])
        result["objectives"][objective] = pretrain(objective, data, s, on_checkpoint, stop_at=args.stop_at,
                                                   device=device, precision=precision, checkpoint_path=state,
                                                   resume_from=resume_from)
        if finished(objective):
            state.unlink(missing_ok=True)  # the record holds it now
        save()
    save(done=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
