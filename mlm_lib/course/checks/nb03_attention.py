"""Checks for the exercises of notebook 03 (attention)."""
from __future__ import annotations

import torch

from ._common import ExerciseError, _call, _ok, _tensor


def check_attention_weights(fn) -> None:
    """fn(q, k) -> softmax(q kᵀ / sqrt(d)) over the keys: (..., n_queries, n_keys)."""
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 5, 16, generator=g) * 2, torch.randn(2, 7, 16, generator=g) * 2
    scores = q @ k.transpose(-2, -1)
    expected = (scores / 4.0).softmax(-1)
    got = _tensor(_call(fn, q, k), "the weights")
    if got.shape != expected.shape:
        raise ExerciseError(f"Expected shape {tuple(expected.shape)} (batch, queries, keys), got {tuple(got.shape)}: "
                            "use k.transpose(-2, -1) so each query meets each key.")
    if torch.allclose(got, expected, atol=1e-5):
        _ok("Each row is a probability distribution over the keys.")
        return
    if torch.allclose(got, scores.softmax(-1), atol=1e-5):
        raise ExerciseError("Forgot the scaling: divide the scores by sqrt(d) (here sqrt(16) = 4) before the softmax.")
    if torch.allclose(got, (scores / 16).softmax(-1), atol=1e-5):
        raise ExerciseError("Divide by sqrt(d), not d.")
    if not torch.allclose(got.sum(-1), torch.ones(2, 5), atol=1e-4):
        raise ExerciseError("Rows do not sum to 1: take the softmax over the last dimension (the keys), dim=-1.")
    raise ExerciseError("Not the expected weights: softmax(q @ k.transpose(-2, -1) / sqrt(d), dim=-1).")


def check_causal_mask(fn) -> None:
    """fn(length) -> bool (length, length), True where query i may attend to key j, i.e. j <= i."""
    for n in (1, 4, 9):
        expected = torch.ones(n, n, dtype=torch.bool).tril()
        got = _tensor(_call(fn, n), "the mask")
        if got.dtype != torch.bool:
            raise ExerciseError(f"Return a boolean tensor (True = may attend), not {got.dtype}.")
        if torch.equal(got, expected):
            continue
        if torch.equal(got, expected.T):
            raise ExerciseError("Transposed: row i is the query, column j the key; a query sees keys j <= i (lower triangle).")
        if torch.equal(got, ~expected):
            raise ExerciseError("Inverted: True must mean 'may attend'.")
        raise ExerciseError(f"For length {n} expected torch.ones(n, n, dtype=torch.bool).tril(), got\n{got.int()}")
    _ok("That is GPT's mask. BERT uses none: every position sees the whole window, in both directions.")
