"""Checks for the exercises of notebook 07 (curriculum)."""
from __future__ import annotations

import numbers

from ...curriculum import linear
from ._common import ExerciseError, _call, _ok


def check_linear_length(fn) -> None:
    """fn(progress, short, long, until, multiple) -> the linear schedule's window length (an int)."""
    for short, long, until, multiple in ((16, 128, 0.5, 8), (8, 64, 0.25, 4), (10, 50, 0.5, 4)):
        schedule = linear(short, long, until=until, multiple=multiple)
        for progress in (0.0, 0.1, until / 2, until * 0.99, until, 0.9, 1.0):
            expected = schedule.length_at(progress)
            got = _call(fn, progress, short, long, until, multiple)
            if isinstance(got, bool) or not isinstance(got, numbers.Integral):
                raise ExerciseError(f"Return a whole number (int), not {type(got).__name__} {got!r}: a length counts "
                                    "characters. int(x) // multiple * multiple gives one.")
            if got == expected:
                continue
            if progress >= until:
                if got == long // multiple * multiple:
                    raise ExerciseError(f"From progress {until} on the length is `long` itself ({long}), not "
                                        "rounded: rounding applies only while the length grows.")
                raise ExerciseError(f"After progress {until} the length stays at `long` ({long}); got {got} at "
                                    f"{progress}.")
            if got < short:
                raise ExerciseError(f"Never below `short`: with short={short} and multiple={multiple}, rounding down "
                                    f"gives {got}; take max(short, ...).")
            if got % multiple:
                raise ExerciseError(f"Round down to a multiple of {multiple} (got {got}): int(x) // multiple * multiple.")
            raise ExerciseError(f"At progress {progress} ({short}->{long} by {until}) expected {expected}, got {got!r}. "
                                "short + (long - short) * progress / until, rounded down to a multiple.")
    _ok("The same lengths as mlm_lib.curriculum.linear.")


def check_first_reaching(fn) -> None:
    """fn(tokens: list, losses: list, target) -> tokens at the first evaluation with loss <= target, or None."""
    tokens = [100, 200, 300, 400, 500]
    losses = [3.2, 3.0, 2.6, 2.7, 2.4]
    for target, expected in ((3.0, 200), (2.65, 300), (2.45, 500), (2.0, None), (5.0, 100)):
        got = _call(fn, tokens, losses, target)
        if got == expected:
            continue
        if expected is None:
            raise ExerciseError("When the loss never gets that low, return None (not 0, not the last value).")
        if got == 400 and target == 2.65:
            raise ExerciseError("The first evaluation at or below the target counts, even if the loss goes up again.")
        raise ExerciseError(f"For target {target} expected {expected}, got {got!r}: walk through the evaluations "
                            "in order and return the tokens of the first whose loss <= target.")
    _ok("A lower number means fewer training tokens to the same quality.")
