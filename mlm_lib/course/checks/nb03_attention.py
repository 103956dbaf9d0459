"""Checks for the exercises of notebook 03 (attention)."""
from __future__ import annotations

import re

import torch

from ._common import ExerciseError, _call, _learner_line, _ok, _tensor


def _mismatch_dimension(text: str) -> int | None:
    found = re.search(r"at non-singleton dimension (-?\d+)", text)
    return int(found.group(1)) if found else None


def _transpose_hint(err):
    text = str(err)
    line = _learner_line(err)
    if ".T" in line and ("mat1 and mat2" in text or "must match the size" in text):
        return ("`.T` reverses *all* the dimensions of a 3-D tensor (and PyTorch warns about it): the keys need "
                "only their last two swapped, so that each query meets each key.")
    dimension = _mismatch_dimension(text)
    if "must match the size" in text and (("keep" in line or "masked_fill" in line or "where" in line)
                                          or (not line and dimension in (1, 2))):
        if dimension == 2:
            return ("the mask lines up with the keys on the scores' last axis, and there your scores do not have "
                    "the keys: they should be (batch, n queries, m keys), one row per query. Check the order of "
                    "the product.")
        return ("a broadcasting mistake in the mask: `keep` is (batch, m) and the scores are (batch, n, m). As it "
                "stands, its axes line up with the wrong ones of the scores; which axis of the scores does it lack, "
                "and where must a size-1 axis stand for it to stretch over the n queries?")
    if isinstance(err, IndexError) and "shape of the mask" in text:
        return ("`keep` is (batch, m) and the scores (batch, n, m): a mask used as an index must have the scores' "
                "own shape. Give `keep` the queries' axis (size 1) and let it stretch over them, e.g. in "
                "masked_fill or torch.where, instead of indexing with it.")
    if "mat1 and mat2" in text or "must match the size" in text or "Expected size for first two" in text:
        return ("to multiply each query by each key, the keys need their last two dimensions swapped (a 3-D "
                "tensor's .T would reverse *all* of them).")
    return None


def check_attention_weights(fn) -> None:
    """fn(q, k, keep) -> softmax(q kᵀ / sqrt(d)) over the keys, with zero weight on keys where `keep` is False.

    q: (batch, n, d); k: (batch, m, d); keep: (batch, m) booleans. Returns (batch, n, m).
    """
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 5, 16, generator=g) * 2, torch.randn(2, 7, 16, generator=g) * 2
    keep = torch.ones(2, 7, dtype=torch.bool)
    keep[0, 5:] = False  # the first sequence has two padding keys at its end
    keep[1, 0] = False   # the second may not use its first key
    scores = q @ k.transpose(-2, -1)
    blocked = ~keep[:, None, :]
    expected = (scores / 4.0).masked_fill(blocked, float("-inf")).softmax(-1)
    got = _tensor(_call(fn, q, k, keep, hint=_transpose_hint), "the weights")
    if got.shape != expected.shape:
        raise ExerciseError(f"Expected shape {tuple(expected.shape)} (batch, queries, keys), got {tuple(got.shape)}: "
                            "each query must meet each key, so the keys need their last two dimensions swapped.")
    if got.is_floating_point():  # float64 weights are right weights too: compare in the check's precision
        got = got.to(expected.dtype)
    if torch.allclose(got, expected, atol=1e-5):
        _ok("Each row is a probability distribution over the keys it may use.")
        return
    inverted = (scores / 4.0).masked_fill(~blocked, float("-inf")).softmax(-1)
    if torch.allclose(got, inverted, atol=1e-5, equal_nan=True) or torch.allclose(got, inverted.nan_to_num(), atol=1e-5):
        raise ExerciseError("Inverted: `keep` is True for the keys that may be used; block the others.")
    if torch.allclose(got, (scores / 4.0).masked_fill(blocked, float("-inf")).softmax(1), atol=1e-5, equal_nan=True):
        raise ExerciseError("Your softmax runs over the queries (dimension 1), so each *column* sums to 1. Each "
                            "query's row must sum to 1 over the keys, the last dimension.")
    if torch.isnan(got).any():
        if torch.isnan(got.masked_fill(blocked, 0.0)).any():
            raise ExerciseError("Your weights contain NaN at keys that may be used. Arithmetic with -inf does that: "
                                "0 * -inf and -inf - -inf are NaN. Put -inf into the blocked scores by *replacing* "
                                "them, not by multiplying or adding.")
        raise ExerciseError("Your weights contain NaN at the blocked keys, whose weight must be exactly 0.")
    if torch.allclose(got, scores.masked_fill(blocked, float("-inf")).softmax(-1), atol=1e-5):
        raise ExerciseError("Forgot the scaling: divide the scores by sqrt(d) (here sqrt(16) = 4) before the softmax.")
    if torch.allclose(got, (scores / 16).masked_fill(blocked, float("-inf")).softmax(-1), atol=1e-5):
        raise ExerciseError("Divide by sqrt(d), not d.")
    if torch.allclose(got, (scores / 4.0).softmax(-1), atol=1e-5):
        raise ExerciseError("The padding keys still get weight: `keep` is not used. Before the softmax, the score "
                            "of every key where keep is False must become something the softmax turns into 0.")
    if torch.allclose(got, (scores / 4.0).softmax(-1).masked_fill(blocked, 0.0), atol=1e-5):
        raise ExerciseError("Zeroing the weights after the softmax leaves rows that no longer sum to 1: block the "
                            "scores with -inf *before* the softmax.")
    if torch.allclose(got, (scores / 4.0).masked_fill(blocked, 0.0).softmax(-1), atol=1e-5):
        raise ExerciseError("The blocked keys still get weight: a score of 0 is an ordinary score, and the softmax "
                            "gives it exp(0) like any other. A blocked score must become -inf (or hugely negative).")
    if not torch.allclose(got.sum(-1), torch.ones(2, 5), atol=1e-4):
        finite = got[torch.isfinite(got)]
        if finite.numel() and (finite <= 1e-6).all() and torch.allclose(got.exp().sum(-1), torch.ones(2, 5), atol=1e-4):
            raise ExerciseError("These are log-probabilities (every value <= 0, and their exp sums to 1): "
                                "log_softmax where the weights need softmax itself.")
        raise ExerciseError("Rows do not sum to 1: take the softmax over the last dimension (the keys).")
    raise ExerciseError("Not the expected weights. Work one query out by hand: its scores against every key, "
                        "divided by sqrt(d), the blocked keys set to -inf, then a softmax over the keys.")


def check_causal_mask(fn) -> None:
    """fn(length) -> bool (length, length), True where query i may attend to key j, i.e. j <= i."""
    for n in (4, 9, 1, 0, 20):  # the slips are told apart on a real matrix first (at length 1 several look alike);
        # 20: longer than the notebook's windows of 16, so a mask cut from a fixed 16 x 16 one is caught
        expected = torch.ones(n, n, dtype=torch.bool).tril()
        got = _tensor(_call(fn, n), "the mask")
        if got.shape != expected.shape:
            raise ExerciseError(f"For length {n} expected a ({n}, {n}) mask, one row per query and one column per "
                                f"key, got shape {tuple(got.shape)}.")
        if got.dtype != torch.bool:
            if got.is_floating_point() and n > 1 and torch.equal(got == 0, expected) and bool(got[~expected].isinf().all()):
                raise ExerciseError("That is an additive bias, 0 where a key may be seen and -inf where it is blocked "
                                    "(added to the scores, another form of the same mask). The task asks for the "
                                    "mask itself: a boolean tensor, True where query i may attend to key j.")
            raise ExerciseError(f"Return a boolean tensor (True = may attend), not {got.dtype}.")
        if got.shape == expected.shape and torch.equal(got, expected):
            continue
        if got.shape == expected.shape:
            if torch.equal(got, ~expected):
                raise ExerciseError("Inverted: here True must mean 'may attend' (PyTorch's nn.MultiheadAttention "
                                    "uses the opposite convention, True = blocked).")
            if torch.equal(got, expected.tril(-1)):
                raise ExerciseError("The diagonal is missing: a position may also look at itself (j <= i, not "
                                    "j < i).")
            if torch.equal(got, expected.T):
                raise ExerciseError("Transposed: row i is the query, column j the key, and yours lets query i see "
                                    "the keys after it, not those before.")
        if got.shape == expected.shape:
            row = next(i for i in range(n) if not torch.equal(got[i], expected[i]))
            raise ExerciseError(f"For length {n}, row {row} (what query {row} may look at; 1 = may attend) is "
                                f"{got[row].int().tolist()}: which keys j may query {row} see, by the task's rule?")
        raise ExerciseError(f"For length {n} expected a ({n}, {n}) mask, got shape {tuple(got.shape)}.")
    _ok("That is GPT's mask. BERT uses none: every position sees the whole window, in both directions.")


def _merge_hint(err):
    text = str(err)
    if "view size is not compatible" in text:
        return ("after transpose the numbers are no longer laid out in order in memory, so `view` cannot regroup "
                "them: use `reshape` (or make them contiguous first).")
    if "is invalid for input of size" in text:
        return ("the check calls your function with its own sizes, not this notebook's (first t of shape batch 2, "
                "heads 3, length 5, d_head 4): read every size from t.shape, not from the notebook's variables "
                "(d_model, n_heads, d_head).")
    return None


def check_merge_heads(fn) -> None:
    """fn(t (batch, heads, length, d_head)) -> (batch, length, heads * d_head), each position's heads side by side."""
    g = torch.Generator().manual_seed(0)
    for batch, heads, length, d_head in ((2, 3, 5, 4), (1, 4, 1, 2)):
        t = torch.randn(batch, heads, length, d_head, generator=g)
        expected = t.transpose(1, 2).reshape(batch, length, heads * d_head)
        got = _tensor(_call(fn, t.clone(), hint=_merge_hint), "the merged tensor")
        if got.shape != expected.shape:
            raise ExerciseError(f"For t of shape (batch {batch}, heads {heads}, length {length}, d_head {d_head}) "
                                f"expected {tuple(expected.shape)}, got {tuple(got.shape)}: the heads go side by side "
                                "along the last axis.")
        if torch.equal(got, expected):
            continue
        if torch.equal(got, t.reshape(batch, length, heads * d_head)):
            raise ExerciseError("The shape is right but the numbers are mixed up: reshaping (batch, heads, length, "
                                "d_head) directly cuts across heads and positions. Which axes must stand next to each "
                                "other, and in which order, before the last two can be joined?")
        if torch.equal(got, t.permute(0, 2, 3, 1).reshape(batch, length, heads * d_head)):
            raise ExerciseError("The heads are interleaved number by number: keep each head's d_head numbers "
                                "together, head 0's first.")
        raise ExerciseError("Not the merged heads: position i of the result should hold head 0's vector at i, then "
                            "head 1's, and so on.")
    _ok("Each position gets its heads' outputs side by side: the inverse of the split in section 5.")
