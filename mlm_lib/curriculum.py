"""Sequence-length curricula: which window length to train on at each point of training.

Attention costs grow with the square of the length and, early on, a masked character is best guessed
from its near neighbours anyway; long windows mostly add distraction until the model can use them
(the credit-assignment argument of the reference page). BERT itself trained on 128 tokens for 90% of
the steps and 512 for the last 10%, to save compute. A schedule here maps training progress (0 to 1)
to a length; `batch_size_at` keeps the tokens per batch about constant, so every schedule spends the
same token budget and comparisons between them are fair.
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


def step(short: int, long: int, at: float = 0.9) -> LengthSchedule:
    """BERT's schedule with its own numbers: step(128, 512, at=0.9)."""
    return LengthSchedule("step", short=short, long=long, until=at)


def linear(short: int, long: int, until: float = 0.5, multiple: int = 8) -> LengthSchedule:
    return LengthSchedule("linear", short=short, long=long, until=until, multiple=multiple)
