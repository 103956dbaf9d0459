"""Held-out accuracy of a checkpoint at several window lengths, and a copy that keeps only the positions it
was trained on.

    python -m mlm_lib.experiments.lengths CHECKPOINT --lengths 16 32 64 96 128 --out lengths.json
    python -m mlm_lib.experiments.lengths CHECKPOINT --keep 64 --out kept.json       # the copy: kept/model.pt

A model whose training ended at windows of 64 has position rows 64-127 that no step ever trained: at those
lengths it answers, but worse (measured here), instead of refusing. `--keep N` writes a copy with only the
first N position rows (`BertEncoder.keep_positions`), which refuses longer input with a clear error; every
other weight is unchanged, so its answers at lengths up to N are the same to the last bit.
A model with rotary positions (notebook 16) has no table: it is measured at every length asked for, past its
max_len too, and `--keep N` then sets the longest length it accepts to N, the length measured to hold.
The held-out text is the course's: the last 5% of the corpus, encoded with the checkpoint's own tokenizer.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
from dataclasses import replace
from pathlib import Path

from .. import devices
from ..checkpoints import MASKED_LM, load_checkpoint, save_checkpoint
from ..data import check_coverage, load_corpus, train_val_split
from ..masking import EVAL_SEED
from ..training import evaluate
from ._args import add_device_options, machine, refusals, today, where
from ._run import command, fits_in_memory, open_run, recorded_command, sha256_file, whole_number


def accuracy_by_length(model, tokenizer, val_ids, lengths, windows: int) -> dict:
    """{length: held-out masked loss and accuracy}, `windows` windows spread over the text at each length;
    lengths the model refuses are reported as refused, with its reason. A model without a position table (RoPE)
    is measured past its max_len too: what it would answer there is what this measures."""
    out = {}
    accepted = model.config
    for length in lengths:
        if length > accepted.max_len and hasattr(model.embeddings, "position"):
            out[str(length)] = {"refused": f"longer than max_len={accepted.max_len}"}
            continue
        model.config = replace(accepted, max_len=max(length, accepted.max_len))
        try:
            result = evaluate(model, tokenizer, val_ids, length=length, windows=windows, seed=EVAL_SEED)
        finally:
            model.config = accepted
        out[str(length)] = {"loss": result["loss"], "accuracy": result["accuracy"], "predictions": result["predictions"]}
    return out


@command
def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", help="a masked LM's model.pt written by mlm_lib (e.g. the shipped "
                        "shakespeare-char.pt)")
    parser.add_argument("--lengths", type=whole_number(1), nargs="+", default=[16, 32, 64, 96, 128])
    parser.add_argument("--windows", type=whole_number(1), default=1024, help="held-out windows per length")
    parser.add_argument("--corpus", help="the UTF-8 text the checkpoint was trained on (default: Shakespeare)")
    parser.add_argument("--out", help="the results file for the accuracies; the copy --keep writes goes in the "
                        "folder of the same name without .json, as model.pt")
    parser.add_argument("--keep", type=whole_number(1), help="write a copy of the model that accepts at most this many "
                        "tokens (needs --out): a learned position table keeps only its first N rows; a model with "
                        "rotary positions, which has none, gets N as its longest length")
    parser.add_argument("--overwrite", action="store_true", help="replace --out (and its model.pt) if it exists")
    add_device_options(parser)
    args = parser.parse_args(argv)
    device, precision = where(parser, args)
    if args.keep is not None and args.out is None:
        parser.error(f"--keep {args.keep} writes a model: give --out (e.g. --out lengths.json keeps it in lengths/model.pt)")
    fits_in_memory(parser, "--windows" if max(args.lengths) <= 4096 else "--lengths",
                   args.windows * max(args.lengths) * 40,
                   f"{args.windows:,} held-out windows of up to {max(args.lengths):,} tokens")
    with refusals(parser):
        checkpoint = load_checkpoint(args.checkpoint, expect=MASKED_LM, map_location=device)
    model, tokenizer = checkpoint.model.eval(), checkpoint.tokenizer  # evaluated where it is (fp32)
    if args.keep is not None and args.keep > model.config.max_len and hasattr(model.embeddings, "position"):
        parser.error(f"--keep {args.keep}: the model has only {model.config.max_len} position rows")
    with refusals(parser, "--corpus" if args.corpus else None):
        text = load_corpus(args.corpus)
        held_out = train_val_split(text)[1]
    try:
        check_coverage(tokenizer, held_out, "the held-out text", "give the corpus the model was trained on with "
                       "--corpus (default: Shakespeare's plays).")
    except ValueError as err:
        parser.error(str(err))
    options = {"checkpoint sha256": sha256_file(args.checkpoint), "--lengths": args.lengths, "--windows": args.windows,
               "--corpus sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "--keep": args.keep,
               "--device": device.type}
    measured = Path(os.path.realpath(args.checkpoint))
    if args.out is not None and measured.parent == Path(os.path.realpath(args.out)).with_suffix(""):
        parser.error(f"--out {args.out} keeps its files in the folder that holds {args.checkpoint}, the checkpoint "
                     "measured: give another --out (nothing was written)")
    out = open_run(parser, "lengths", args.out, options=options, overwrite=args.overwrite, resumable=False, argv=argv)
    val_ids = tokenizer.encode(held_out)
    result = {"command": recorded_command("lengths", argv),
              "checkpoint": Path(args.checkpoint).name, "machine": machine(), **devices.record(device, "fp32"),
              "date": today(),
              "windows": args.windows, "max_len": model.config.max_len,
              "by_length": accuracy_by_length(model, tokenizer, val_ids, args.lengths, args.windows)}
    for length, figures in result["by_length"].items():
        print(f"length {length:>4}: " + (f"accuracy {figures['accuracy']:.1%}, loss {figures['loss']:.3f}"
                                         if "accuracy" in figures else figures["refused"]))
    if args.keep is not None:
        if args.keep > model.config.max_len:  # RoPE: no rows to keep; accept up to the length measured to hold
            model.config = replace(model.config, max_len=args.keep)
        model.cpu().keep_positions(args.keep)
        kept = out.path("model.pt")
        save_checkpoint(kept, model, tokenizer, optimizer=None, train_state=checkpoint.train_state)
        result["kept_positions"] = args.keep
        result["kept_model"] = str(kept)
        print((f"kept the first {args.keep} position rows" if hasattr(model.embeddings, "position") else
               f"rotary positions, no rows to keep: the copy accepts up to {args.keep} tokens") + f": {kept}")
    if out is not None:
        out.record = result
        out.finish()
    return result


if __name__ == "__main__":
    main()
