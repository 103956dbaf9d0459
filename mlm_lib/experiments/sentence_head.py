"""Can BERT's sentence head learn on the plays? NSP and SOP, trained briefly on top of the course's WordPiece model.

    python -m mlm_lib.experiments.sentence_head --seeds 0 1 --variants "MLM + NSP" "MLM + SOP" \
        --out mlm_lib/course/assets/results/sentence_head.json
    python -m mlm_lib.experiments.sentence_head --seeds 0 --variants "MLM + NSP, lr 1e-3" --resume \
        --out mlm_lib/course/assets/results/sentence_head.json
    python -m mlm_lib.experiments.sentence_head --preset smoke --out /tmp/head.json   # seconds: what the tests run

Every run starts from the shipped `shakespeare-wordpiece` model (notebook 09: MLM with whole words masked, on
windows of up to 64 pieces of the first 95% of the text, so its positions 64-127 were never trained: this is
their first training, as BERT's last 10% of steps at 512 were for its), adds BERT's pooler and a fresh two-way
head, and trains MLM + the sentence objective on pairs of 128 pieces (`sentence_pairs`, batches of 32) for
2,000 steps:

* MLM + NSP: B is A's continuation or comes from another play (BERT's next-sentence prediction);
* MLM + SOP: B always continues A, and half the time the two are swapped (ALBERT's sentence order);
* MLM + NSP at lr 1e-3: nearer the learning rate of the course's other pair experiments (`roberta nsp`, 2e-3,
  600 steps), whose sentence heads stayed at 50%: is the rate what held them back? (Measured: no; every NSP head
  here waits about 1,000 steps at ln 2 before it rises, at 1e-3 as at 3e-4.)

The learning rate is warmed up for 50 steps, then held (this continues a pretraining; it is not a whole
schedule). Every 200 steps each model is evaluated on the same fixed sets of (at most) 512 examples: NSP and SOP
pairs from the two held-out plays (never trained on by this; 437 of their 239,855 characters, the opening lines
of *Romeo and Juliet*, were in the MLM training text of the starting model), NSP and SOP pairs drawn afresh
(another seed) from the training plays — new pairings of segments the model has read — and the held-out SOP
pairs with their halves trimmed to equal length (`equal_halves`), where length says nothing about order.
Results are written after every run.
Notebook 10, section 3, plots them.
"""
from __future__ import annotations

import argparse
import sys
import time

import torch

from .. import devices
from ..course.assets import reference_checkpoint
from ..masking import MaskingConfig
from ..model import BertForPreTraining
from ..pairs import (MaskedPairs, PairStream, encode_documents, equal_halves, load_documents, sentence_pairs,
                     split_documents)
from ..training import TrainConfig, train
from ._args import add_device_options, machine, today, where
from ._run import command, open_run, recorded_command, seed_number, sha256_file, whole_number
from .roberta import final_figures

# one variant: (name, SOP instead of NSP, learning rate; None: the preset's)
VARIANTS = [("MLM + NSP", False, None), ("MLM + SOP", True, None), ("MLM + NSP, lr 1e-3", False, 1e-3)]

PRESETS = {
    "full": dict(start="shakespeare-wordpiece", max_len=128, steps=2000, batch_size=32, lr=3e-4, warmup_steps=50,
                 eval_every=200, val_examples=512, passes=3, seeds=(0, 1), train_documents=None),
    "smoke": dict(start="shakespeare-wordpiece", max_len=32, steps=4, batch_size=4, lr=3e-4, warmup_steps=1,
                  eval_every=2, val_examples=16, passes=1, seeds=(0,), train_documents=3),
}

# the held-out sets: (name, from the training plays?, SOP?); their seeds differ from every training stream's.
# "equal halves": the held-out SOP pairs with the longer half trimmed to the shorter's length (`equal_halves`)
EVAL_SETS = [("held-out NSP", False, False), ("held-out SOP", False, True),
             ("training plays, new NSP", True, False), ("training plays, new SOP", True, True),
             ("held-out SOP, equal halves", False, True)]
EVAL_PAIRS_SEED = 99  # the held-out pairs of `roberta` and notebook 10
EVAL_TRAIN_SEED = 7


def eval_sets(train_docs, val_docs, tokenizer, settings: dict) -> dict:
    out = {}
    for name, from_training, sop in EVAL_SETS:
        if name.endswith(", equal halves"):
            out[name] = equal_halves(out[name.removesuffix(", equal halves")], tokenizer, seed=EVAL_PAIRS_SEED)
            continue
        made = sentence_pairs(train_docs if from_training else val_docs, tokenizer, settings["max_len"],
                              generator=torch.Generator().manual_seed(EVAL_TRAIN_SEED if from_training
                                                                      else EVAL_PAIRS_SEED),
                              nsp=not sop, sop=sop)
        out[name] = {k: v[: settings["val_examples"]] for k, v in made.items()}
    return out


def rows_also_in(pairs: dict, stream: PairStream) -> float:
    """Share of the rows of `pairs` that occur, identical, among the training stream's examples."""
    seen = {tuple(r.tolist()) for r in stream.pairs["input_ids"]}
    return sum(tuple(r.tolist()) in seen for r in pairs["input_ids"]) / max(1, len(pairs["input_ids"]))


def run(variant: tuple, data, *, seed: int, settings: dict, progress: bool = False, stop_at=None, device="cpu",
        precision: str = "auto") -> dict:
    """Warm-start one model from the shipped WordPiece model and train it on one sentence objective."""
    name, sop, lr = variant
    checkpoint, train_docs, val_sets = data
    s = settings
    torch.manual_seed(seed)  # the fresh pooler and head
    model = BertForPreTraining(checkpoint.model.config)
    missing = model.load_state_dict(checkpoint.model.state_dict(), strict=False).missing_keys
    assert all(k.startswith(("pooler.", "nsp_head.")) for k in missing), missing
    model = model.to(device)
    masking = MaskingConfig()
    config = TrainConfig(steps=s["steps"], tokens_per_batch=s["batch_size"] * s["max_len"], lr=lr or s["lr"],
                         warmup_steps=s["warmup_steps"], decay=False, eval_every=s["eval_every"], seed=seed,
                         masking=masking)
    stream = PairStream(train_docs, checkpoint.tokenizer, s["max_len"], passes=s["passes"], masking=masking,
                        generator=torch.Generator().manual_seed(seed), nsp=not sop, sop=sop)
    start = time.perf_counter()
    history = train(model, checkpoint.tokenizer, stream, val_sets, config, objective=MaskedPairs(), progress=progress,
                    stop_at=stop_at, precision=precision)
    return {"variant": name, "seed": seed, "seconds": time.perf_counter() - start, "examples": len(stream),
            "also_in_training": {k: rows_also_in(v, stream) for k, v in val_sets.items()},
            "config": config.to_dict(), "history": history}


def summary(runs: list[dict]) -> dict:
    """Per variant, the final sentence-head accuracy and masked loss on each set, mean over its seeds."""
    out = {}
    for name in dict.fromkeys(r["variant"] for r in runs):
        finals = [final_figures(r) for r in runs if r["variant"] == name]
        out[name] = {"seeds": len(finals)}
        for set_name in finals[0]:
            for key in ("nsp_accuracy", "loss"):
                out[name][f"{set_name}: {key}"] = sum(f[set_name][key] for f in finals) / len(finals)
    return out


def stopped(record: dict, settings: dict) -> int | None:
    """The step a run was stopped at (--stop-at) before the end of its budget, or None for a finished run."""
    steps = record["history"]["step"]
    return steps[-1] if steps and steps[-1] < settings["steps"] else None


@command
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="full")
    parser.add_argument("--out", required=True, help="the results file (rewritten after every run)")
    parser.add_argument("--seeds", type=seed_number, nargs="+", help="seeds to run (default: the preset's)")
    parser.add_argument("--variants", nargs="+", choices=[v[0] for v in VARIANTS], metavar="VARIANT",
                        help="variants to run (default: all): " + ", ".join(repr(v[0]) for v in VARIANTS))
    parser.add_argument("--steps", type=whole_number(1), help="training steps per run (default: the preset's)")
    parser.add_argument("--resume", action="store_true", help="continue --out with the same settings: keep its "
                        "finished runs, run the others (a run stopped half-way, or by --stop-at, runs again from its "
                        "start: its pair stream is not in a resume state)")
    parser.add_argument("--stop-at", type=whole_number(1), help="end every pretraining at this step, its schedules "
                        "still planned for the whole run: a quick check of a re-run against the shipped file (python "
                        "-m mlm_lib.experiments.reproduce); --resume finishes them")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    add_device_options(parser)
    args = parser.parse_args(argv)
    device, precision = where(parser, args)
    settings = dict(PRESETS[args.preset])
    if args.steps:
        settings.update(steps=args.steps, eval_every=max(1, min(settings["eval_every"], args.steps // 2)),
                        warmup_steps=min(settings["warmup_steps"], max(1, args.steps // 10)))
    if args.stop_at is not None and args.stop_at < settings["eval_every"]:
        parser.error(f"--stop-at {args.stop_at} ends before the first evaluation (step {settings['eval_every']}), "
                     "which the summary reads: give at least that")
    seeds = tuple(args.seeds) if args.seeds is not None else settings["seeds"]
    variants = [v for v in VARIANTS if args.variants is None or v[0] in args.variants]
    start_path = reference_checkpoint_path(settings["start"])
    options = {"--preset": args.preset, "--steps": settings["steps"], "start model sha256": sha256_file(start_path),
               "--device": device.type, "--precision": precision}
    out = open_run(parser, "sentence_head", args.out, options=options, resume=args.resume, overwrite=args.overwrite,
                   argv=argv)
    runs = [r for r in out.record.get("runs", []) if stopped(r, settings) is None]  # stopped ones run again
    commands = out.record.get("commands", [])
    started = time.perf_counter()
    checkpoint = reference_checkpoint(settings["start"])
    train_docs, val_docs = split_documents(load_documents(None))
    names = list(train_docs)[: settings["train_documents"]]
    train_ids = encode_documents({n: train_docs[n] for n in names}, checkpoint.tokenizer)
    val_ids = encode_documents(val_docs, checkpoint.tokenizer)
    data = (checkpoint, train_ids, eval_sets(train_ids, val_ids, checkpoint.tokenizer, settings))
    done = {(r["variant"], r["seed"]) for r in runs}
    command = recorded_command("sentence_head", argv)

    def save(finished=False):
        halted = [stopped(r, settings) for r in runs if stopped(r, settings)]
        finals = [r for r in runs if stopped(r, settings) is None]
        out.record = {"experiment": "sentence_head", "commands": commands + [command], "date": today(),
                      "machine": machine(), **devices.record(device, precision), "preset": args.preset,
                      "settings": {k: list(v) if isinstance(v, tuple) else v for k, v in settings.items()},
                      "training_documents": names, "held_out_documents": list(val_docs),
                      "seconds": time.perf_counter() - started, "runs": runs,
                      "summary": summary(runs if halted else finals), **({"stop_at": max(halted)} if halted else {})}
        out.finish(finished and not halted)

    save()
    for seed in seeds:  # seed by seed, so a stopped experiment still compares every variant
        for variant in variants:
            if (variant[0], seed) in done:
                continue
            print(f"sentence head: {variant[0]}, seed {seed}", file=sys.stderr, flush=True)
            runs.append(run(variant, data, seed=seed, settings=settings, stop_at=args.stop_at, device=device,
                            precision=precision))
            save()
            figures = out.record["summary"][variant[0]]
            print("  " + ", ".join(f"{k} {v:.3f}" for k, v in figures.items() if k != "seeds"), file=sys.stderr)
    save(finished=True)
    return 0


def reference_checkpoint_path(name: str):
    """The file of a shipped checkpoint (its sha256 goes in the record: a resumed run starts from the same model)."""
    from importlib.resources import files

    return files("mlm_lib.course.assets") / "checkpoints" / f"{name}.pt"


if __name__ == "__main__":
    sys.exit(main())
