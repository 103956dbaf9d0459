"""What every exercise check shares: the error a learner sees, and calling their function safely."""
from __future__ import annotations

import torch


class ExerciseError(AssertionError):
    """The answer is not right yet; the message says what to look at."""


def _call(fn, *args):
    if not callable(fn):
        raise ExerciseError(f"Pass your function itself (e.g. check(my_function)), not {type(fn).__name__}.")
    try:
        return fn(*args)
    except NotImplementedError:
        raise ExerciseError("Not written yet: replace `raise NotImplementedError` with your code, run that cell, "
                            "then this one.") from None


def _ok(message: str) -> None:
    print("✓ Correct. " + message)


def _tensor(x, what: str) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise ExerciseError(f"Return a torch tensor for {what}, not {type(x).__name__}.")
    return x
