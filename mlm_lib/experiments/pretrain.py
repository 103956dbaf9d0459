"""Pretrain the course's reference model on the installed Shakespeare corpus, and record how it went.

    python -m mlm_lib.experiments.pretrain --config shakespeare-char --out runs/shakespeare-char
    python -m mlm_lib.experiments.pretrain --config smoke --out /tmp/smoke     # seconds; what the tests run

(The shipped model was made when this command was `python -m mlm_lib.pretrain`; the code is the same.)

Writes into --out:
  model.pt       weights, model config and tokenizer (no optimiser state): what notebooks load
  resume.pt      everything needed to continue the run (`--resume`), kept out of the package
  log.json       the command, machine, wall time, training history, final held-out evaluation, baselines
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch

from ..baselines import count_model_baseline, unigram_baseline
from ..checkpoints import save_checkpoint
from ..curriculum import linear
from ..data import prepare_data
from ..masking import EVAL_SEED
from ..model import MODEL_SIZES, BertConfig, BertForMLM
from ..training import TrainConfig, evaluate, train

CONFIGS = {
    "shakespeare-char": (
        MODEL_SIZES["course"],
        TrainConfig(steps=12_000, tokens_per_batch=4096, schedule=linear(16, 64, until=0.5), lr=2e-3,
                    warmup_steps=500, eval_every=500, eval_windows=512),
    ),
    "smoke": (
        MODEL_SIZES["smoke"],
        TrainConfig(steps=30, tokens_per_batch=1024, schedule=linear(16, 32, until=0.5), lr=3e-3,
                    warmup_steps=5, eval_every=15, eval_windows=64),
    ),
}


def final_evaluation(model, tokenizer, train_ids, val_ids, length: int) -> dict:
    """Held-out masked loss/accuracy over the whole validation text, next to the two baselines."""
    windows = max(64, len(val_ids) // length)
    result = evaluate(model, tokenizer, val_ids, length=length, windows=windows, seed=EVAL_SEED)
    return {"model": result, "unigram": unigram_baseline(train_ids, val_ids, tokenizer.vocab_size),
            "count_model": count_model_baseline(train_ids, val_ids, tokenizer)}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="shakespeare-char", choices=sorted(CONFIGS))
    parser.add_argument("--out", default=None, help="output folder (default: runs/CONFIG)")
    parser.add_argument("--steps", type=int, help="override the configuration's number of steps")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--corpus", help="a UTF-8 text file instead of Shakespeare")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--resume", action="store_true", help="continue from OUT/resume.pt")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    sizes, train_config = CONFIGS[args.config]
    train_config = replace(train_config, seed=args.seed, **({"steps": args.steps} if args.steps else {}))
    out = Path(args.out or f"runs/{args.config}")
    out.mkdir(parents=True, exist_ok=True)
    tokenizer, train_ids, val_ids = prepare_data(args.corpus)
    torch.manual_seed(args.seed)
    model = BertForMLM(BertConfig(vocab_size=tokenizer.vocab_size, **sizes)).to(args.device)

    start = time.perf_counter()
    history = train(model, tokenizer, train_ids, val_ids, train_config, checkpoint_path=out / "resume.pt",
                    resume_from=out / "resume.pt" if args.resume else None, progress=not args.no_progress)
    wall = history["seconds"][-1] if history["seconds"] else time.perf_counter() - start
    model = model.cpu().eval()
    save_checkpoint(out / "model.pt", model, tokenizer)
    evaluation = final_evaluation(model, tokenizer, train_ids, val_ids, train_config.schedule.length_at(1.0))
    log = {
        "command": "python -m mlm_lib.experiments.pretrain " + " ".join(argv if argv is not None else sys.argv[1:]),
        "config": args.config, "model_config": model.config.to_dict(), "train_config": train_config.to_dict(),
        "parameters": model.num_parameters(), "wall_seconds": wall, "device": args.device,
        "machine": f"{platform.machine()}, {torch.get_num_threads()} threads, torch {torch.__version__}",
        "date": time.strftime("%Y-%m-%d"), "evaluation": evaluation, "history": history,
    }
    (out / "log.json").write_text(json.dumps(log, indent=1))
    m, c = evaluation["model"], evaluation["count_model"]
    print(f"{args.config}: {wall / 60:.1f} min, held-out masked loss {m['loss']:.3f}, accuracy {m['accuracy']:.1%} "
          f"(count model {c['masked_accuracy']:.1%}, unigram {evaluation['unigram']['accuracy']:.1%})")
    return log


if __name__ == "__main__":
    main()
