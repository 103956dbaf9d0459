"""Checks for the exercises of notebook 01 (data and tokens)."""
from __future__ import annotations

import math

import torch

from ._common import ExerciseError, _call, _ok, _tensor


def check_unigram_loss(fn) -> None:
    """fn(counts: dict[str, int]) -> float: the loss in nats of always predicting the frequencies."""
    for counts in ({"a": 3, "b": 1}, {"x": 5, "y": 3, "z": 2, " ": 10}):
        total = sum(counts.values())
        expected = -sum(n / total * math.log(n / total) for n in counts.values())
        got = _call(fn, counts)
        try:
            got = float(got)
        except (TypeError, ValueError):
            raise ExerciseError(f"Return a number, not {type(got).__name__}.") from None
        if math.isclose(got, expected, rel_tol=1e-4):
            continue
        if math.isclose(got, -expected, rel_tol=1e-4):
            raise ExerciseError("Right size, wrong sign: a loss is minus the mean log-probability.")
        if math.isclose(got, expected / math.log(2), rel_tol=1e-4):
            raise ExerciseError("That is in bits (log base 2). PyTorch's losses are in nats: use the natural log.")
        if math.isclose(got, math.log(len(counts)), rel_tol=1e-4):
            raise ExerciseError("That is the uniform guess, ln V. Weight each character's -log p by how often it occurs.")
        total = sum(counts.values())
        if math.isclose(got, -sum(n / total * math.log(n) for n in counts.values()), rel_tol=1e-4):
            raise ExerciseError("That takes the log of the counts: the loss needs the log of the *probabilities*, "
                                "each count divided by the total first.")
        if math.isclose(got, -sum(math.log(n / total) for n in counts.values()) / len(counts), rel_tol=1e-4):
            raise ExerciseError("Every character weighs the same there: a plain average over the vocabulary. In "
                                "text a character counts as often as it occurs, so weight its -ln p by its probability.")
        raise ExerciseError(f"For counts {counts} expected {expected:.4f} nats, got {got:.4f}: the average, over the "
                            "text, of -ln of each character's probability.")
    _ok("The unigram loss is the entropy of the character frequencies.")


def _windows_hint(err):
    if "is invalid for input of size" in str(err):
        return ("view can only regroup all the ids, so their number must be a multiple of length, and here it is "
                "not. How many whole windows fit, and what should happen to the ids left over at the end?")
    return None


def check_make_windows(fn) -> None:
    """fn(ids, length) -> (n, length) tensor of consecutive non-overlapping windows, leftover dropped."""
    for n_ids, length in ((23, 5), (40, 8), (7, 7)):
        ids = torch.arange(100, 100 + n_ids)
        expected = ids[: n_ids // length * length].view(-1, length)
        got = _tensor(_call(fn, ids, length, hint=_windows_hint), "the windows")
        if got.shape == expected.shape and torch.equal(got, expected):
            continue
        if got.shape == (n_ids - length + 1, length):
            raise ExerciseError(f"These windows overlap: one starts at every id ({got.shape[0]} of them). "
                                f"Non-overlapping windows start every `length` ids: 0, {length}, {2 * length}, ...")
        if got.shape == expected.shape[::-1] and got.shape != expected.shape:
            raise ExerciseError(f"Rows and columns are swapped (shape {tuple(got.shape)}): each *row* must be one "
                                f"window, so the shape is (n, length) = {tuple(expected.shape)}.")
        if got.dim() == 2 and got.shape[1] == length and got.shape[0] == expected.shape[0] + 1:
            raise ExerciseError(f"For {n_ids} ids and length {length} you kept the incomplete last window: drop the "
                                f"{n_ids % length} leftover ids at the end.")
        if got.shape != expected.shape:
            raise ExerciseError(f"For {n_ids} ids and length {length} expected shape {tuple(expected.shape)}, got "
                                f"{tuple(got.shape)}.")
        raise ExerciseError("Right shape, wrong content: window i must hold ids[i*length:(i+1)*length], in order.")
    _ok("ids[: n * length].view(n, length) cuts the text into windows without copying it.")
