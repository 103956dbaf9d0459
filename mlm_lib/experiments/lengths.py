"""Held-out accuracy of a checkpoint at several window lengths, and a copy that keeps only the positions it
was trained on.

    python -m mlm_lib.experiments.lengths CHECKPOINT --lengths 16 32 64 96 128 --out lengths.json
    python -m mlm_lib.experiments.lengths CHECKPOINT --keep 64 --save OUT.pt

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
import sys
from dataclasses import replace
from pathlib import Path

from .. import devices
from ..checkpoints import load_checkpoint, save_checkpoint
from ..data import check_coverage, load_corpus, train_val_split
from ..masking import EVAL_SEED
from ..training import evaluate
from ._args import add_device_options, machine, output_file, refusals, today, where, whole_number, write_json


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


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", help="a model.pt written by mlm_lib (e.g. the shipped shakespeare-char.pt)")
    parser.add_argument("--lengths", type=whole_number(1), nargs="+", default=[16, 32, 64, 96, 128])
    parser.add_argument("--windows", type=whole_number(1), default=1024, help="held-out windows per length")
    parser.add_argument("--corpus", help="the UTF-8 text the checkpoint was trained on (default: Shakespeare)")
    parser.add_argument("--out", help="JSON file for the accuracies")
    parser.add_argument("--keep", type=whole_number(1), help="keep only this many position rows ...")
    parser.add_argument("--save", help="... and write that copy here (may be the checkpoint itself)")
    parser.add_argument("--overwrite", action="store_true", help="replace --out or --save if it exists (--save may "
                        "then be the checkpoint itself)")
    add_device_options(parser)
    args = parser.parse_args(argv)
    device, precision = where(parser, args)
    out = output_file(parser, "--out", args.out, existing_ok=args.overwrite)
    save = output_file(parser, "--save", args.save, existing_ok=args.overwrite)
    if (args.keep is None) != (save is None):
        parser.error("--keep and --save go together: --keep 64 --save OUT.pt")
    if Path(args.checkpoint).is_dir():
        parser.error(f"{args.checkpoint} is a folder: give the model file in it, e.g. {Path(args.checkpoint) / 'model.pt'}")
    if not Path(args.checkpoint).is_file():
        parser.error(f"{args.checkpoint}: no such file")
    checkpoint = load_checkpoint(args.checkpoint)
    model, tokenizer = checkpoint.model.to(device).eval(), checkpoint.tokenizer  # evaluated where it is (fp32)
    if args.keep is not None and args.keep > model.config.max_len and hasattr(model.embeddings, "position"):
        parser.error(f"--keep {args.keep}: the model has only {model.config.max_len} position rows")
    with refusals(parser, "--corpus" if args.corpus else None):
        held_out = train_val_split(load_corpus(args.corpus))[1]
    try:
        check_coverage(tokenizer, held_out, "the held-out text", "give the corpus the model was trained on with "
                       "--corpus (default: Shakespeare's plays).")
    except ValueError as err:
        parser.error(str(err))
    val_ids = tokenizer.encode(held_out)
    result = {"command": "python -m mlm_lib.experiments.lengths " + " ".join(sys.argv[1:] if argv is None else argv),
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
        save_checkpoint(save, model, tokenizer, optimizer=None, train_state=checkpoint.train_state)
        result["kept_positions"] = args.keep
        print(f"kept the first {args.keep} position rows: {save}")
    if out is not None:
        write_json(out, result, indent=1)
    return result


if __name__ == "__main__":
    main()
