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
        raise ExerciseError(f"For counts {counts} expected {expected:.4f} nats, got {got:.4f}. "
                            "Loss = sum over characters of p(c) * -ln p(c), with p(c) = count / total.")
    _ok("The unigram loss is the entropy of the character frequencies.")


def check_make_windows(fn) -> None:
    """fn(ids, length) -> (n, length) tensor of consecutive non-overlapping windows, leftover dropped."""
    for n_ids, length in ((23, 5), (40, 8), (7, 7)):
        ids = torch.arange(100, 100 + n_ids)
        expected = ids[: n_ids // length * length].view(-1, length)
        got = _tensor(_call(fn, ids, length), "the windows")
        if got.shape != expected.shape:
            hint = ("you kept the incomplete last window" if got.shape[0] > expected.shape[0] else "too few windows")
            raise ExerciseError(f"For {n_ids} ids and length {length} expected shape {tuple(expected.shape)}, got "
                                f"{tuple(got.shape)}: {hint}. Drop the {n_ids % length} leftover ids at the end.")
        if not torch.equal(got, expected):
            raise ExerciseError("Right shape, wrong content: window i must hold ids[i*length:(i+1)*length], in order.")
    _ok("ids[: n * length].view(n, length) cuts the text into windows without copying it.")
