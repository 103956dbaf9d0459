"""Schedules: functions of the share of the training budget spent, from 0 (the first step) to 1 (the end).

Two things change as a run goes on, and both are read from this one number, whatever the budget is counted in
(steps, or seconds on the clock): the learning rate's multiplier (`lr_factor`: BERT's linear warm-up, then a
linear decay; taught in notebook 05, §3) and the window length (`LengthSchedule`: a sequence-length
curriculum; taught in notebook 07, §1-§2). `training.TrainConfig` holds one of each, so they sit below the
training loop; running and comparing curricula (`curriculum.run_schedule`, `summarize`) sits above it.

Why a length curriculum: attention's cost grows with the square of the length and, early on, a masked character
is best guessed from its near neighbours anyway; long windows mostly add distraction until the model can use
them (the credit-assignment argument of the reference page). BERT itself trained on 128 tokens for 90% of the
steps and 512 for the last 10%, to save compute. `batch_size_at` keeps the tokens per batch about constant, so
every schedule spends the same token budget and comparisons between them are fair.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

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


def lr_factor(step: int, warmup_steps: int, total_steps: int) -> float:
    """Multiplier of the base learning rate at step `step` (counted from 0) of `total_steps`: a linear warm-up
    to 1 over `warmup_steps` (the step under way counts, so the first one does not go at zero), then a linear
    decay to 0 at the end of the budget."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))


__all__ = ["KINDS", "LengthSchedule", "fixed", "linear", "lr_factor", "step_up"]
