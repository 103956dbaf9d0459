"""Checks for the exercises of notebook 09 (whole-word masking)."""
from __future__ import annotations

import math

import torch

from ._common import ExerciseError, _call, _ok, _tensor


def check_select_whole_words(fn) -> None:
    """fn(word_ids, word_draw, select_prob) -> bool tensor: a piece is selected when its word's draw
    (word_draw[word id]) is below select_prob; specials (word id -1) never."""
    g = torch.Generator().manual_seed(0)
    for length in (12, 40):
        sizes = torch.randint(1, 4, (length,), generator=g)
        word_ids = torch.repeat_interleave(torch.arange(length), sizes)[:length]
        word_ids[0] = word_ids[-1] = -1
        n_words = int(word_ids.max()) + 1
        draw = torch.rand(n_words, generator=g)
        draw[-1] = 0.01  # the last word is selected: indexing with -1 would select the specials with it
        draw[0] = 0.02  # and the first: word 0 is a word like any other
        expected = (word_ids >= 0) & (draw[word_ids.clamp(min=0)] < 0.3)
        got = _tensor(_call(fn, word_ids.clone(), draw.clone(), 0.3), "the selection")
        if got.shape != word_ids.shape:
            raise ExerciseError(f"Return one True/False per piece, shape {tuple(word_ids.shape)}; got {tuple(got.shape)}.")
        if got.dtype != torch.bool:
            raise ExerciseError(f"Return a boolean tensor (True = selected), not {got.dtype}: the masking code uses "
                                "it to pick positions, and a tensor of 0/1 numbers would pick rows 0 and 1 instead.")
        if torch.equal(got, expected):
            continue
        if torch.equal(got, (word_ids >= 0) & (draw[word_ids.clamp(min=0)] > 0.3)):
            raise ExerciseError("The comparison is the wrong way round: a word is selected when its draw is *below* "
                                "select_prob, which happens with probability select_prob.")
        if torch.equal(got, expected & (word_ids != 0)):
            raise ExerciseError("Word 0 is never selected: it is a word like any other. Only the specials, word id "
                                "-1, are left out (word_ids >= 0, not > 0).")
        if got[word_ids < 0].any():
            raise ExerciseError("A special token was selected. Its word id is -1, and draw[-1] is the *last word's* "
                                "draw: exclude word_ids < 0 explicitly.")
        raise ExerciseError("Every piece takes the draw of its word: word_draw[word_ids], compared with select_prob.")
    _ok("One draw per word, read by each of its pieces: a word is masked whole or not at all.")


def check_share_std(fn) -> None:
    """fn(word_sizes, select_prob) -> the standard deviation of the share of selected pieces, when each word
    is selected with probability select_prob: sqrt(p (1 - p) sum(n_w^2)) / sum(n_w)."""
    for sizes, p in (([1, 1, 1, 1], 0.5), ([1, 2, 3, 4, 1], 0.15), ([3] * 100, 0.15)):
        expected = math.sqrt(p * (1 - p) * sum(n * n for n in sizes)) / sum(sizes)
        got = _call(fn, torch.tensor(sizes), p)
        got = float(got)
        if math.isclose(got, expected, rel_tol=1e-6):
            continue
        binomial = math.sqrt(p * (1 - p) / sum(sizes))
        if math.isclose(got, binomial, rel_tol=1e-6):
            raise ExerciseError("That is the binomial error for pieces drawn one by one. Here a word of n pieces "
                                "adds n pieces at once: its variance is p (1 - p) n^2.")
        total, squares = sum(sizes), sum(n * n for n in sizes)
        slips = {p * (1 - p) * squares / total ** 2: "That is the variance: the standard deviation is its square root.",
                 math.sqrt(p * (1 - p) * squares) / len(sizes): "Divided by the number of words; the share is of "
                 "*pieces*, so divide by the number of pieces, sum(n_w).",
                 math.sqrt(p * (1 - p) * total ** 2) / total: "sum(n_w)^2 is not sum(n_w^2): the words are drawn "
                 "independently, so their variances add, one p (1 - p) n_w^2 per word.",
                 math.sqrt(p * squares) / total: "A word's draw is a coin with probability p: its variance has the "
                 "factor p (1 - p), not p."}
        for value, message in slips.items():
            if math.isclose(got, value, rel_tol=1e-6):
                raise ExerciseError(f"For sizes {sizes} and p={p}: {message}")
        raise ExerciseError(f"For sizes {sizes} and p={p} expected {expected:.5f}, got {got:.5f}. What does one word "
                            "of n_w pieces add to the count of selected pieces, and with what variance?")
    _ok("Whole words make the selected share noisier than single pieces would: three-piece words, sqrt(3) times.")
