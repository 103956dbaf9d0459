"""One rule for every comparison the course draws from its own runs: two arms, several seeds, one word.

Taught in notebook 14, §2, where the course's comparisons move from the clock to a budget of characters,
and used wherever a notebook compares two recipes, objectives or learners (09-11, 13-16). Every comparative sentence in the notebooks, the docs
and the README says no more than the word this module prints from the shipped results, and a test holds them
together (`tests/test_verdicts.py`).

Why a rule at all: two runs of one recipe that differ only in their seed (the initial weights, the order of the
batches, the masks) can end a point or two apart, so a difference of that size between two
recipes can be the seeds talking. Looking at the numbers and choosing a word afterwards is how a course ends up
saying "pays" of +1.6.

The rule. Each arm is run with the same seeds, so the runs pair up: seed s of arm A against seed s of arm B (the
same initial weights and batches where the arms allow it). For each seed take the difference d_s = A_s - B_s
(turned round where lower is better, as for a loss, so that a positive difference always favours A). Then

* `mean_difference` is the mean of the d_s, `spread` their standard deviation over the seeds, and `interval` the
  90% confidence interval of the mean difference, mean +- t x spread / sqrt(seeds), t being Student's 95% quantile
  for seeds - 1 degrees of freedom (2.92 for three seeds);
* **ahead** (or **behind**): every seed agrees on the direction *and* the interval leaves out zero. If the two
  arms were in truth equal, a paired t-test says this happens by chance in at most 1 comparison in 20 in each
  direction (for noise that is roughly normal); "every seed agrees" adds the condition a reader can check by eye
  in the per-seed table;
* **within noise**: three seeds or more, and not ahead or behind. This is a finding too: at this budget the
  difference, if any, is smaller than the seeds can show (the interval says how small);
* **too few seeds**: two seeds that are not ahead or behind (with two seeds, t is 6.31: only a difference much
  larger than the seeds' disagreement passes), or that are, but by under three points of accuracy: two seeds of a
  difference that small can agree by chance more often than the interval says (their spread is itself guessed from
  two numbers), so the course waits for a third; and **one seed**: one run each, no verdict at all.

Three seeds is the course's minimum wherever a difference is under three points: the rule above says so in its
words (`SMALL`, for differences printed in points), and a test checks every stated conclusion for it. A verdict says what the runs measured at their budget, not what holds at another.
"""
from __future__ import annotations

import math
from functools import lru_cache
from dataclasses import dataclass

WORDS = ("ahead", "behind", "within noise", "too few seeds", "one seed")
CONFIDENCE = 0.95  # one-sided: the 90% two-sided interval of the mean difference
SMALL = 3.0  # points: a difference of accuracy smaller than this needs three seeds to be called ahead or behind


@lru_cache(maxsize=None)
def student_t_quantile(p: float, df: int) -> float:
    """The p quantile of Student's t distribution with `df` degrees of freedom (p > 0.5), by integrating its
    density (Simpson's rule) and bisecting: no statistics library needed for the course's few numbers."""
    if not 0.5 < p < 1 or df < 1:
        raise ValueError(f"student_t_quantile takes 0.5 < p < 1 and df >= 1, got p={p}, df={df}.")
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def density(x: float) -> float:
        return math.exp(log_norm - (df + 1) / 2 * math.log1p(x * x / df))

    def cdf(t: float, pieces: int = 2000) -> float:  # 0.5 + the integral of the density from 0 to t
        h = t / pieces
        total = density(0.0) + density(t) + sum((4 if i % 2 else 2) * density(i * h) for i in range(1, pieces))
        return 0.5 + total * h / 3

    low, high = 0.0, 1.0
    while cdf(high) < p:
        low, high = high, high * 2
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if cdf(middle) < p else (low, middle)
    return (low + high) / 2


@dataclass(frozen=True)
class Verdict:
    """What `verdict` found: the word, and the numbers behind it (differences favour arm A when positive)."""
    word: str
    mean_difference: float
    spread: float
    seeds: int
    interval: tuple[float, float]
    differences: tuple[float, ...]
    scale: float = 100.0
    unit: str = "points"

    def __str__(self) -> str:
        s, u = self.scale, self.unit
        if self.seeds == 1:
            return f"{self.word}: {self.mean_difference * s:+.2f} {u} (one run each)"
        low, high = self.interval
        return (f"{self.word}: {self.mean_difference * s:+.2f} {u}, spread {self.spread * s:.2f} over {self.seeds} "
                f"seeds (90% interval {low * s:+.2f} to {high * s:+.2f})")


def verdict(a, b, *, higher_is_better: bool = True, scale: float = 100.0, unit: str = "points") -> Verdict:
    """The course's one rule (this module's docstring): arm `a` against arm `b`, paired by seed.

    `a` and `b` are each a dict {seed: result} (paired on the seeds both have) or two lists in the same seed
    order. `higher_is_better` is False for losses. `scale` and `unit` only say how to print a difference
    (accuracies are stored as shares: 100 x a share is a percentage point)."""
    if isinstance(a, dict) and isinstance(b, dict):
        seeds = sorted(set(a) & set(b))
        pairs = [(a[s], b[s]) for s in seeds]
    elif isinstance(a, dict) or isinstance(b, dict):
        raise ValueError("Give both arms as {seed: result} dicts, or both as lists in the same seed order.")
    else:
        if len(a) != len(b):
            raise ValueError(f"The arms have {len(a)} and {len(b)} results: pair them by seed (give dicts).")
        pairs = list(zip(a, b))
    if not pairs:
        raise ValueError("The two arms share no seed: there is nothing to pair.")
    for x, y in pairs:
        if not (isinstance(x, (int, float)) and isinstance(y, (int, float)) and math.isfinite(x) and math.isfinite(y)):
            raise ValueError(f"Every result must be a finite number, got {x!r} and {y!r}.")
    sign = 1.0 if higher_is_better else -1.0
    d = tuple(sign * (x - y) for x, y in pairs)
    n = len(d)
    mean = sum(d) / n
    if n == 1:
        return Verdict("one seed", mean, float("nan"), 1, (float("nan"), float("nan")), d, scale, unit)
    spread = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    half = student_t_quantile(CONFIDENCE, n - 1) * spread / math.sqrt(n)
    interval = (mean - half, mean + half)
    if all(x > 0 for x in d) and interval[0] > 0:
        word = "ahead"
    elif all(x < 0 for x in d) and interval[1] < 0:
        word = "behind"
    else:
        word = "within noise" if n >= 3 else "too few seeds"
    if word in ("ahead", "behind") and n < 3 and unit == "points" and abs(mean * scale) < SMALL:
        word = "too few seeds"
    return Verdict(word, mean, spread, n, interval, d, scale, unit)


__all__ = ["CONFIDENCE", "SMALL", "WORDS", "Verdict", "student_t_quantile", "verdict"]
