"""Sequence-length curricula as an experiment: train one model per schedule, and compare runs that used
different ones.

Taught in notebook 07 (curriculum): the schedules themselves (`LengthSchedule`, `fixed`, `step_up`, `linear`)
are built in §1-§2 and live in `mlm_lib.schedules`, below the training loop that reads them (re-exported
here, where notebook 07 imports them); one run of each (`run_schedule`) and the comparison ("tokens to reach
the same loss") in §3-§4 are this module's.
"""
from __future__ import annotations

import torch

from .model import MODEL_SIZES, BertConfig, BertForMLM
from .schedules import KINDS, LengthSchedule, fixed, linear, step_up  # noqa: F401  (the schedules, re-exported)
from .training import TrainConfig, train


# ---- one run of the experiment (notebook 07, §3) --------------------------------------------------------

def run_schedule(schedule: LengthSchedule, tokenizer, train_ids, val_ids, *, seed: int = 0, sizes: dict | None = None,
                 steps: int, tokens_per_batch: int, lr: float, warmup_steps: int, eval_every: int,
                 eval_windows: int, callback=None, progress: bool = False, stop_at: int | None = None,
                 device=None, precision: str = "auto", checkpoint_path=None, resume_from=None) -> dict:
    """Train a fresh model (the course's sizes unless `sizes`) with `schedule`; return the run: its label, schedule,
    seed and history. The same seed gives the same initial weights, whatever the schedule, so runs compare.
    `stop_at` ends the run early at that step, the schedules still planned for `steps` (`train`'s option);
    `checkpoint_path` keeps its resume state, from which `resume_from` continues it (`train`'s options too).
    `device` (default: the CPU) and `precision`: where and how it trains (`mlm_lib.devices`)."""
    torch.manual_seed(seed)
    model = BertForMLM(BertConfig(vocab_size=tokenizer.vocab_size, **(MODEL_SIZES["course"] if sizes is None else sizes)))
    model = model.to(device or "cpu")
    config = TrainConfig(steps=steps, tokens_per_batch=tokens_per_batch, schedule=schedule, lr=lr,
                         warmup_steps=warmup_steps, eval_every=eval_every, eval_windows=eval_windows, seed=seed)
    history = train(model, tokenizer, train_ids, val_ids, config, callback=callback, progress=progress,
                    stop_at=stop_at, precision=precision, checkpoint_path=checkpoint_path, resume_from=resume_from)
    return {"label": schedule.describe(), "schedule": schedule.to_dict(), "seed": seed, "history": history}


# ---- comparing runs ---------------------------------------------------------------------------------

def tokens_to_reach(history: dict, loss: float) -> float | None:
    """Training tokens after which the held-out loss first reaches `loss` (linear between evaluations);
    None if it never does."""
    previous = (0, float("inf"))
    for tokens, value in zip(history["eval_tokens"], history["val_loss"]):
        if value <= loss:
            t0, v0 = previous
            if v0 == float("inf"):
                return float(tokens)
            return t0 + (tokens - t0) * (v0 - loss) / (v0 - value)
        previous = (tokens, value)
    return None


def _mean(values):
    return sum(values) / len(values)


def summarize(runs: list[dict]) -> dict:
    """Per schedule (averaged over seeds): final and mid-point held-out loss and accuracy, wall time (median), and
    the tokens needed to reach the loss that the *worse* of it and the baseline (the first label) reached
    at the end, with their ratio. A ratio below 1 means the schedule needed fewer tokens than the baseline."""
    labels = list(dict.fromkeys(r["label"] for r in runs))
    by_label = {label: [r for r in runs if r["label"] == label] for label in labels}
    baseline = labels[0]
    out = {"baseline": baseline, "schedules": {}}
    for label, group in by_label.items():
        hist = [r["history"] for r in group]
        mid = [h["val_loss"][len(h["val_loss"]) // 2 - 1] for h in hist]
        entry = {"seeds": [r["seed"] for r in group],
                 "final_loss": _mean([h["val_loss"][-1] for h in hist]),
                 "final_accuracy": _mean([h["val_accuracy"][-1] for h in hist]),
                 "final_loss_per_seed": [h["val_loss"][-1] for h in hist],
                 "mid_loss": _mean(mid), "mid_tokens": hist[0]["eval_tokens"][len(hist[0]["eval_tokens"]) // 2 - 1],
                 "tokens": _mean([h["tokens"][-1] for h in hist]),
                 # median: one run slowed by other work on the machine must not move the figure
                 "seconds": sorted(h["seconds"][-1] for h in hist)[(len(hist) - 1) // 2]}
        out["schedules"][label] = entry
    base = out["schedules"][baseline]
    for label, entry in out["schedules"].items():
        target = max(entry["final_loss"], base["final_loss"])
        pairs = []
        for run in by_label[label]:
            same_seed = [r for r in by_label[baseline] if r["seed"] == run["seed"]] or by_label[baseline]
            pairs.append((tokens_to_reach(run["history"], target), tokens_to_reach(same_seed[0]["history"], target)))
        mine, theirs = [p[0] for p in pairs], [p[1] for p in pairs]
        entry["target_loss"] = target
        entry["tokens_to_target"] = None if None in mine else _mean(mine)
        entry["baseline_tokens_to_target"] = None if None in theirs else _mean(theirs)
        entry["token_ratio"] = (entry["tokens_to_target"] / entry["baseline_tokens_to_target"]
                                if entry["tokens_to_target"] and entry["baseline_tokens_to_target"] else None)
    return out
