"""Sequence-length curricula: which window length to train on at each point of training, and how to
compare training runs that used different ones.

Taught in notebook 07 (curriculum): schedules in §1-§2, one run of each (`run_schedule`) and the comparison
("tokens to reach the same loss") in §3-§4.

Attention costs grow with the square of the length and, early on, a masked character is best guessed
from its near neighbours anyway; long windows mostly add distraction until the model can use them
(the credit-assignment argument of the reference page). BERT itself trained on 128 tokens for 90% of
the steps and 512 for the last 10%, to save compute. A schedule here maps training progress (0 to 1)
to a length; `batch_size_at` keeps the tokens per batch about constant, so every schedule spends the
same token budget and comparisons between them are fair.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import torch

KINDS = ("fixed", "step", "linear")


@dataclass(frozen=True)
class LengthSchedule:
    """`kind`: "fixed" (always `long`), "step" (`short` until progress `until`, then `long`), or
    "linear" (from `short` growing to `long` by progress `until`, then `long`), in steps of `multiple`.
    """

    kind: str = "fixed"
    short: int = 16
    long: int = 128
    until: float = 0.5
    multiple: int = 8

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Unknown schedule kind {self.kind!r}: choose one of {KINDS}.")
        for name in ("short", "long", "multiple"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"LengthSchedule.{name} must be a whole number >= 1, got {value!r}.")
        if not 1 <= self.short <= self.long:
            raise ValueError(f"Need 1 <= short <= long, got short={self.short}, long={self.long}.")
        if not 0.0 <= self.until <= 1.0:
            raise ValueError(f"`until` is a fraction of training, between 0 and 1; got {self.until}.")

    def length_at(self, progress: float) -> int:
        """Window length at `progress` (0 = first step, 1 = end of training)."""
        if self.kind == "fixed" or progress >= self.until:
            return self.long
        if self.kind == "step":
            return self.short
        grown = self.short + (self.long - self.short) * progress / self.until
        return max(self.short, min(self.long, int(grown) // self.multiple * self.multiple))

    def batch_size_at(self, progress: float, tokens_per_batch: int) -> int:
        """Batch size that keeps about `tokens_per_batch` tokens per step at this length."""
        return max(1, tokens_per_batch // self.length_at(progress))

    def to_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        if self.kind == "fixed":
            return f"fixed {self.long}"
        if self.kind == "step":
            return f"step {self.short}->{self.long} at {self.until:.0%}"
        return f"linear {self.short}->{self.long} by {self.until:.0%}"


def fixed(length: int) -> LengthSchedule:
    return LengthSchedule("fixed", short=length, long=length)


def step_up(short: int, long: int, at: float = 0.9) -> LengthSchedule:
    """`short` windows, then `long` ones from share `at` of training on. BERT's schedule with its own numbers:
    step_up(128, 512, at=0.9)."""
    return LengthSchedule("step", short=short, long=long, until=at)


def linear(short: int, long: int, until: float = 0.5, multiple: int = 8) -> LengthSchedule:
    return LengthSchedule("linear", short=short, long=long, until=until, multiple=multiple)


# ---- one run of the experiment (notebook 07, §3) --------------------------------------------------------

def run_schedule(schedule: LengthSchedule, tokenizer, train_ids, val_ids, *, seed: int = 0, sizes: dict | None = None,
                 steps: int, tokens_per_batch: int, lr: float, warmup_steps: int, eval_every: int,
                 eval_windows: int, callback=None, progress: bool = False, stop_at: int | None = None) -> dict:
    """Train a fresh model (the course's sizes unless `sizes`) with `schedule`; return the run: its label, schedule,
    seed and history. The same seed gives the same initial weights, whatever the schedule, so runs compare.
    `stop_at` ends the run early at that step, the schedules still planned for `steps` (`train`'s option)."""
    from .model import MODEL_SIZES, BertConfig, BertForMLM  # imported here: training imports this module
    from .training import TrainConfig, train

    torch.manual_seed(seed)
    model = BertForMLM(BertConfig(vocab_size=tokenizer.vocab_size, **(MODEL_SIZES["course"] if sizes is None else sizes)))
    config = TrainConfig(steps=steps, tokens_per_batch=tokens_per_batch, schedule=schedule, lr=lr,
                         warmup_steps=warmup_steps, eval_every=eval_every, eval_windows=eval_windows, seed=seed)
    history = train(model, tokenizer, train_ids, val_ids, config, callback=callback, progress=progress,
                    stop_at=stop_at)
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
