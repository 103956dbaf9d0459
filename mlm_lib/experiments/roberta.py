"""What RoBERTa changed, measured at the course's scale: three experiments on Shakespeare's characters.

    python -m mlm_lib.experiments.roberta nsp     --out mlm_lib/course/assets/results/roberta_nsp.json
    python -m mlm_lib.experiments.roberta masking --out mlm_lib/course/assets/results/roberta_masking.json
    python -m mlm_lib.experiments.roberta rate    --out mlm_lib/course/assets/results/roberta_rate.json
    python -m mlm_lib.experiments.roberta nsp --preset smoke --out /tmp/nsp.json   # seconds: what the tests run

* nsp (RoBERTa Table 2, BERT Table 5): MLM + NSP on sentence pairs against MLM alone on single windows of
  the same length (like RoBERTa's DOC-SENTENCES, but cut at fixed lengths, not at sentence ends), and MLM + SOP (ALBERT's sentence order); same steps, same batch
  of max_len-long rows. Held-out masked loss on both kinds of input, and NSP / SOP accuracy.
* masking (RoBERTa Table 1): static masks (drawn once per example, in 1 copy or 3 copies, so that each mask is
  seen about 14 or 5 times) against dynamic masks (drawn afresh every time), MLM alone, many passes over one play.
* rate (Wettig et al. 2022): select 15 / 25 / 40 / 60 / 80% of the positions in training (80/10/10 of the
  selected ones), MLM alone; every model evaluated the same way, with 15% selected.

Every run starts from the same initial weights for the same seed; the held-out plays (the last two) are
never trained on, and the WordPiece vocabulary is trained on the training plays only. Results are written
after every run, so an interrupted experiment keeps what it finished (`--resume` continues it).
Notebook 10, §4, plots them.
"""
from __future__ import annotations

import argparse
import sys
import time

import torch

from .. import devices
from ..data import CharTokenizer
from ..masking import BERT_MASKING, MaskingConfig
from ..model import MODEL_SIZES, BertConfig, BertForMLM, BertForPreTraining
from ..pairs import MaskedPairs, PairStream, encode_documents, load_documents, sentence_pairs, split_documents
from ..training import TrainConfig, train
from ..wordpiece import COURSE_RULE, WordPieceTokenizer
from ._args import add_device_options, machine, refusals, today, where
from ._run import command, corpus_sha256, open_run, recorded_command, seed_number, whole_number

# one variant: (name, model kind, stream options)
EXPERIMENTS = {
    "nsp": [("MLM + NSP", "pretraining", dict(nsp=True)),
            ("MLM alone", "mlm", dict(nsp=False)),
            ("MLM + SOP", "pretraining", dict(nsp=False, sop=True))],
    # one play, about 14 passes at the final length: 3 copies show each mask about 5 times, near RoBERTa's
    # static baseline (10 copies over 40 epochs)
    "masking": [("static, 1 copy", "mlm", dict(nsp=False, static_masks=True, passes=1)),
                ("static, 3 copies", "mlm", dict(nsp=False, static_masks=True, passes=3)),
                ("dynamic", "mlm", dict(nsp=False, static_masks=False, passes=3))],
    "rate": [(f"{p:.0%}", "mlm", dict(nsp=False, select_prob=p)) for p in (0.15, 0.25, 0.4, 0.6, 0.8)],
}

# the held-out sets each experiment evaluates on (all of them: the same examples for every run)
EVAL_SETS = {"nsp": ("pairs", "sop_pairs", "segments"), "masking": ("segments",), "rate": ("segments",)}

PRESETS = {
    # Characters, because at this budget the course's 4,000-piece WordPiece model stayed on the unigram plateau
    # (6.6 nats) for 300-400 steps whatever was tried (post-LN or pre-LN, lr 2e-3 or 3e-3, lengths 32 then 128:
    # measured), while the character model is well past it by step 400. curriculum: (until, max_len) phases,
    # the course's lever from notebook 07. small_documents: the plays of the masking experiment's small corpus.
    "full": dict(sizes=MODEL_SIZES["course"], tokenizer="characters", vocab_size=None, max_len=64, steps=600,
                 curriculum=((0.25, 16), (0.5, 32), (1.0, 64)), tokens_per_batch=4096, lr=2e-3, warmup_steps=50,
                 eval_every=100, val_examples=256, seeds=(0, 1), small_documents=1),
    "smoke": dict(sizes=MODEL_SIZES["smoke"], tokenizer="characters", vocab_size=None, max_len=32, steps=6, tokens_per_batch=256, lr=3e-3,
                  curriculum=((0.5, 16), (1.0, 32)),
                  warmup_steps=1, eval_every=3, val_examples=16, seeds=(0,), small_documents=1, train_documents=3),
}


def prepare(settings: dict, corpus=None):
    """The training and held-out documents, the WordPiece tokenizer trained on the training ones, encoded."""
    train_docs, val_docs = split_documents(load_documents(corpus))
    texts = [s for d in train_docs.values() for s in d]
    if settings["tokenizer"] == "characters":
        tokenizer = CharTokenizer.from_text("\n".join(texts))
    else:
        tokenizer = WordPieceTokenizer.train(texts, settings["vocab_size"], rule=COURSE_RULE)
    return tokenizer, encode_documents(train_docs, tokenizer), encode_documents(val_docs, tokenizer), list(train_docs)


def held_out_sets(tokenizer, val_docs, settings: dict) -> dict:
    """The same held-out examples for every run: pairs (NSP), swapped pairs (SOP) and single windows."""
    out = {}
    for name, options in (("pairs", dict(nsp=True)), ("sop_pairs", dict(nsp=False, sop=True)),
                          ("segments", dict(nsp=False))):
        made = sentence_pairs(val_docs, tokenizer, settings["max_len"], generator=torch.Generator().manual_seed(99),
                              **options)
        out[name] = {k: v[: settings["val_examples"]] for k, v in made.items()}
    return out


def run(experiment: str, variant: tuple, data, *, seed: int, settings: dict, progress: bool = False,
        device="cpu", precision: str = "auto") -> dict:
    """Train one fresh model for one variant; return its record."""
    name, kind, options = variant
    tokenizer, train_docs, val_sets = data
    s, options = settings, dict(options)
    masking = MaskingConfig(select_prob=options.pop("select_prob", BERT_MASKING.select_prob))
    if experiment == "masking":  # a corpus small enough to pass over many times
        train_docs = train_docs[: s["small_documents"]]
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tokenizer.vocab_size, **s["sizes"])
    model = (BertForPreTraining if kind == "pretraining" else BertForMLM)(config).to(device)
    train_config = TrainConfig(steps=s["steps"], tokens_per_batch=s["tokens_per_batch"], lr=s["lr"],
                               warmup_steps=s["warmup_steps"], eval_every=s["eval_every"], seed=seed, masking=masking)
    generator = torch.Generator().manual_seed(seed)
    fixed_passes = options.pop("passes", None)
    start = time.perf_counter()
    phases, previous = [], 0.0
    for until, max_len in s["curriculum"]:
        passes = fixed_passes
        if passes is None:  # enough passes of fresh pairs for this phase
            rows = len(sentence_pairs(train_docs, tokenizer, max_len, generator=torch.Generator().manual_seed(seed),
                                      nsp=options.get("nsp", True), sop=options.get("sop", False))["input_ids"])
            passes = -(-int((until - previous) * s["steps"]) * (s["tokens_per_batch"] // max_len) // rows)
        phases.append((until, PairStream(train_docs, tokenizer, max_len, passes=passes, masking=masking,
                                         generator=generator, **options)))
        previous = until
    history = train(model, tokenizer, phases, val_sets, train_config, objective=MaskedPairs(), progress=progress,
                    precision=precision)
    return {"variant": name, "seed": seed, "seconds": time.perf_counter() - start,
            "examples": [len(st) for _, st in phases], "passes": [st.passes for _, st in phases],
            "documents": len(train_docs), "config": train_config.to_dict(), "history": history}


def final_figures(record: dict) -> dict:
    """The last evaluation of a run, flattened: {set: {loss, accuracy, ...}}."""
    return {k[4:]: v[-1] for k, v in record["history"].items() if k.startswith("val_")}


def summary(runs: list[dict]) -> dict:
    """Mean final held-out figures per variant, over its seeds."""
    out = {}
    for name in dict.fromkeys(r["variant"] for r in runs):
        finals = [final_figures(r) for r in runs if r["variant"] == name]
        out[name] = {"seeds": len(finals)}
        for set_name in finals[0]:
            for key in ("loss", "accuracy", "nsp_accuracy"):
                values = [f[set_name][key] for f in finals if key in f[set_name]]
                if values:
                    out[name][f"{set_name}_{key}"] = sum(values) / len(values)
    return out




@command
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("experiment", choices=sorted(EXPERIMENTS))
    parser.add_argument("--preset", choices=sorted(PRESETS), default="full")
    parser.add_argument("--out", required=True, help="the results file (rewritten after every run)")
    parser.add_argument("--seeds", type=seed_number, nargs="+", help="seeds to run (default: the preset's)")
    parser.add_argument("--steps", type=whole_number(1), help="training steps per run (default: the preset's)")
    parser.add_argument("--corpus", help="a UTF-8 text file (documents separated by two blank lines); "
                                         "default: Shakespeare's plays")
    parser.add_argument("--resume", action="store_true", help="continue --out with the same settings: keep its runs, "
                        "run the others (a run stopped half-way starts again: its pair stream is not in a resume state)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    add_device_options(parser)
    args = parser.parse_args(argv)
    device, precision = where(parser, args)
    settings = dict(PRESETS[args.preset])
    if args.steps:
        settings.update(steps=args.steps, eval_every=max(1, min(settings["eval_every"], args.steps // 2)),
                        warmup_steps=min(settings["warmup_steps"], max(1, args.steps // 10)))
    seeds = tuple(args.seeds) if args.seeds else settings["seeds"]
    started = time.perf_counter()
    with refusals(parser, "--corpus" if args.corpus else None):
        tokenizer, train_docs, val_docs, names = prepare(settings, args.corpus)
        corpus = corpus_sha256(args.corpus)
    options = {"experiment": args.experiment, "--preset": args.preset, "--steps": settings["steps"],
               "--corpus sha256": corpus, "--device": device.type, "--precision": precision}
    out = open_run(parser, "roberta", args.out, options=options, resume=args.resume, overwrite=args.overwrite,
                   argv=argv)
    runs, commands = out.record.get("runs", []), out.record.get("commands", [])
    if settings.get("train_documents"):  # the smoke preset: a few plays, so a test takes seconds
        train_docs, names = train_docs[: settings["train_documents"]], names[: settings["train_documents"]]
    val_sets = held_out_sets(tokenizer, val_docs, settings)
    data = (tokenizer, train_docs, {k: val_sets[k] for k in EVAL_SETS[args.experiment]})
    done = {(r["variant"], r["seed"]) for r in runs}
    command_line = recorded_command("roberta", argv)

    def save(finished=False):
        out.record = {"experiment": args.experiment, "commands": commands + [command_line], "date": today(),
                      "machine": machine(), **devices.record(device, precision),
                      "preset": args.preset, "settings": {k: list(v) if isinstance(v, tuple) else v
                                                          for k, v in settings.items()},
                      "training_documents": names, "vocab_size": tokenizer.vocab_size,
                      "seconds": time.perf_counter() - started,
                      "runs": runs, "summary": summary(runs) if runs else {}}
        out.finish(finished)

    save()
    for seed in seeds:  # seed by seed, so a stopped experiment still compares every variant
        for variant in EXPERIMENTS[args.experiment]:
            if (variant[0], seed) in done:
                continue
            print(f"{args.experiment}: {variant[0]}, seed {seed}", file=sys.stderr, flush=True)
            runs.append(run(args.experiment, variant, data, seed=seed, settings=settings, device=device,
                            precision=precision))
            save()
            figures = out.record["summary"][variant[0]]
            print("  " + ", ".join(f"{k} {v:.4f}" for k, v in figures.items() if k != "seeds"), file=sys.stderr)
    save(finished=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
