"""Checks for the exercises of notebook 09 (whole-word masking)."""
from __future__ import annotations

import math

import torch

from ._common import ExerciseError, _call, _ok, _tensor


def _select_hint(err):
    if isinstance(err, IndexError) or "must match the size" in str(err):
        return ("word_draw holds one draw per *word*, not one per piece: a piece finds its word's draw through its "
                "word id.")
    if "ambiguous" in str(err):
        return ("`and`, `or` and `not` ask Python for one True or False, and a tensor of many values has none: "
                "combine tensors of True/False with &, | and ~, with brackets around each comparison.")
    return None


def check_select_whole_words(fn) -> None:
    """fn(word_ids, word_draw, select_prob) -> bool tensor: a piece is selected when its word's draw
    (word_draw[word id]) is below select_prob; specials (word id -1) never."""
    g = torch.Generator().manual_seed(0)
    # the first and last words' draws (ends): both left alone (a selection that adds the specials shows), then one
    # selected and the other not, each way round (a special read through index -1 takes the last word's draw, one
    # clamped to 0 word 0's: these two cases tell the slips apart), then both selected
    for length, ends in ((12, (0.9, 0.95)), (20, (0.02, 0.95)), (20, (0.95, 0.02)), (40, (0.02, 0.01))):
        sizes = torch.randint(1, 4, (length,), generator=g)
        word_ids = torch.repeat_interleave(torch.arange(length), sizes)[:length]
        word_ids[0] = word_ids[-1] = -1
        n_words = int(word_ids.max()) + 1
        draw = torch.rand(n_words, generator=g)
        draw[0], draw[-1] = ends  # word 0 is a word like any other
        draw[1] = 0.3  # a draw exactly at select_prob: not below it, so not selected
        expected = (word_ids >= 0) & (draw[word_ids.clamp(min=0)] < 0.3)
        given = word_ids.clone()
        got = _tensor(_call(fn, given, draw.clone(), 0.3, hint=_select_hint), "the selection")
        if not torch.equal(given, word_ids):
            raise ExerciseError("Your function changed word_ids in place (the specials' -1 became another number): the "
                                "caller's word ids are then wrong for everything that reads them next. Work on a copy, "
                                "or leave the specials out with a mask.")
        if got.shape != word_ids.shape:
            raise ExerciseError(f"Return one True/False per piece, shape {tuple(word_ids.shape)}; got {tuple(got.shape)}.")
        if got.dtype != torch.bool:
            raise ExerciseError(f"Return a boolean tensor (True = selected), not {got.dtype}: the masking code uses "
                                "it to pick positions, and a tensor of 0/1 numbers would pick rows 0 and 1 instead.")
        if torch.equal(got, expected):
            continue
        if torch.equal(got, (word_ids >= 0) & (draw[word_ids.clamp(min=0)] <= 0.3)):
            raise ExerciseError("Word 1's draw is exactly select_prob (0.3), and yours selects it: a word is selected "
                                "when its draw is *below* select_prob (<), which happens with probability select_prob.")
        if torch.equal(got, (word_ids >= 0) & (draw[word_ids.clamp(min=0)] > 0.3)):
            raise ExerciseError("The comparison is the wrong way round: a word is selected when its draw is *below* "
                                "select_prob, which happens with probability select_prob.")
        if torch.equal(got, expected & (word_ids != 0)):
            raise ExerciseError("Word 0 is never selected: it is a word like any other. Only the specials, word id "
                                "-1, are left out (word_ids >= 0, not > 0).")
        if got[word_ids < 0].any():
            clamped = torch.equal(got, draw[word_ids.clamp(min=0)] < 0.3)
            last = torch.equal(got, draw[word_ids] < 0.3)
            how = ("indexing with -1 reads the *last word's* draw, and clamped to 0 it reads word 0's" if clamped and last
                   else "clamped to 0 it reads word 0's draw" if clamped else "indexing with -1 reads the *last word's* draw"
                   if last else None)
            if how is None and torch.equal(got, expected | (word_ids < 0)):
                raise ExerciseError("Your selection adds the special tokens (word id -1) to the selected words: "
                                    "specials are never selected. A piece is selected when it belongs to a word "
                                    "(word_ids >= 0) *and* its word's draw is below select_prob.")
            raise ExerciseError("A special token was selected. Its word id is -1" + (f", and {how}" if how else "")
                                + ": leave the specials out yourself (their word id is what tells them apart).")
        split = [int(w) for w in word_ids[word_ids >= 0].unique() if got[word_ids == w].any() and not got[word_ids == w].all()]
        if split:
            raise ExerciseError(f"Word {split[0]} is selected in part: its pieces got different answers. All the "
                                "pieces of a word must read the same draw, their word's, so that a word is selected "
                                "whole or not at all.")
        for shift in (1, -1):  # each piece reading a neighbouring word's draw: an index off by one
            neighbour = (word_ids + shift).clamp(0, len(draw) - 1)
            if torch.equal(got, (word_ids >= 0) & (draw[neighbour] < 0.3)):
                raise ExerciseError(f"Each piece read the draw of the word {'after' if shift > 0 else 'before'} its "
                                    "own: the index is off by one. A piece's draw is its own word's, "
                                    "word_draw at that piece's word id.")
        wrong = int((got != expected).nonzero()[0])
        w = int(word_ids[wrong])
        raise ExerciseError(f"Piece {wrong} belongs to word {w}, whose draw is {float(draw[w]):.2f} against select_prob "
                            f"0.3: it should be {'selected' if bool(expected[wrong]) else 'left alone'}, and yours is "
                            f"{'selected' if bool(got[wrong]) else 'left alone'}.")
    empty = torch.zeros(0, dtype=torch.long)  # a window with no pieces: nothing to select, and no error
    got = _tensor(_call(fn, empty, torch.rand(0, generator=g), 0.3, hint=lambda err: (
        "the check also tries a window with no pieces at all (empty word_ids): the selection is then empty too, "
        "a boolean tensor of length 0, and your function fails there. Does it assume a first or a last piece, or "
        "stack a list that is empty?")), "the selection")
    if got.shape != (0,):
        raise ExerciseError(f"For empty word_ids the selection is empty too, shape (0,); got shape {tuple(got.shape)}.")
    _ok("One draw per word, read by each of its pieces: a word is masked whole or not at all.")


def check_share_std(fn) -> None:
    """fn(word_sizes, select_prob) -> the standard deviation of the share of selected pieces, when each word
    is selected with probability select_prob: sqrt(p (1 - p) sum(n_w^2)) / sum(n_w)."""
    # unequal sizes first: with words of one piece each, sum(n_w), sum(n_w^2) and the number of words are equal,
    # and several slips would give the same number there
    for sizes, p in (([1, 2, 3, 4, 1], 0.15), ([3] * 100, 0.15), ([5], 0.3), ([1, 1, 1, 1], 0.5)):
        expected = math.sqrt(p * (1 - p) * sum(n * n for n in sizes)) / sum(sizes)
        got = _call(fn, torch.tensor(sizes), p)
        try:
            got = float(got)
        except (TypeError, ValueError, RuntimeError):
            what = f"a tensor of shape {tuple(got.shape)}" if isinstance(got, torch.Tensor) else \
                f"{type(got).__name__} {str(got)[:60]}"
            raise ExerciseError(f"Return one number (a float, or a tensor holding one value); for sizes {sizes} you "
                                f"returned {what}.") from None
        if math.isclose(got, expected, rel_tol=1e-6):
            continue
        total, squares, words = sum(sizes), sum(n * n for n in sizes), len(sizes)
        if math.isclose(got, math.sqrt(p * (1 - p) / total), rel_tol=1e-6):
            raise ExerciseError("That is the binomial error for pieces drawn one by one (or the same number, reached "
                                "another way: check what your sum adds up, word by word). Here whole words are drawn: "
                                "when a word of n pieces is in or out, by how much does the count of selected pieces "
                                "move, and what does that do to the variance?")
        slips = {p * (1 - p) * squares / total ** 2: "That is the variance: the standard deviation is its square root.",
                 math.sqrt(p * (1 - p) * squares): "That is the standard deviation of the *number* of selected "
                 "pieces; the share is that number divided by the number of pieces, sum(n_w).",
                 math.sqrt(p * (1 - p) * squares) / words: "Divided by the number of words; the share is of "
                 "*pieces*, so divide by the number of pieces, sum(n_w).",
                 math.sqrt(p * (1 - p) * total ** 2) / total: "You squared the total number of pieces. The words are "
                 "drawn independently, so the variances add word by word: one term per word, the variance of that "
                 "word's own count of selected pieces.",
                 math.sqrt(p * squares) / total: "A word's draw is a coin with probability p: its variance has the "
                 "factor p (1 - p), not p.",
                 p * (1 - p) * math.sqrt(squares) / total: "p (1 - p) stands outside the square root: it is part "
                 "of the variance, so the square root covers it too.",
                 math.sqrt(p * (1 - p) / words): "That is the binomial error of the share of selected *words* (or "
                 "the same number, reached another way: check what your sum adds up, word by word); the share asked "
                 "for is of pieces, and a word of n pieces adds n of them at once.",
                 math.sqrt(p * (1 - p) * squares) / total ** 2: "Divided by sum(n_w)^2: the share is the count "
                 "divided by sum(n_w), so its standard deviation is the count's divided by sum(n_w), once (the "
                 "square belongs to the variance).",
                 math.sqrt(p * (1 - p) * squares / total): "The square root covers the division by sum(n_w) there: "
                 "divide the count's standard deviation by sum(n_w) (or its variance by sum(n_w)^2, then take the "
                 "square root)."}
        for value, message in slips.items():
            if math.isclose(got, value, rel_tol=1e-6):
                raise ExerciseError(f"For sizes {sizes} and p={p}: {message}")
        raise ExerciseError(f"For sizes {sizes} and p={p} expected {expected:.5f}, got {got:.5f}. Check in turn: the "
                            "variance one word adds, the sum over the words, the square root, and what you divide by.")
    _ok("Whole words make the selected share noisier than single pieces would: three-piece words, sqrt(3) times.")


def word_level_std(share_std, word_sizes, select_prob) -> float:
    """Notebook 09, section 3: your `share_std` on the training text's words, as a float, once it gives the
    word-level standard deviation there; otherwise a one-line ExerciseError that sends you to Exercise 2's check
    (the cells after it would print a misleading number of standard deviations, or fail on a non-number)."""
    sd = _call(share_std, word_sizes, select_prob)
    sizes = word_sizes.double()
    right = math.sqrt(select_prob * (1 - select_prob) * float((sizes ** 2).sum())) / float(sizes.sum())
    try:
        value = float(sd)
    except (TypeError, ValueError, RuntimeError):
        value = None
    if value is None or not math.isclose(value, right, rel_tol=1e-6):
        said = (f"share_std gave {value:.3g} here, which is not the word-level standard deviation of these words"
                if value is not None else f"share_std gave a {type(sd).__name__} here, where one number belongs (the "
                "word-level standard deviation of these words)")
        raise ExerciseError(f"{said}. Run Exercise 2's check above, which says what to fix, then this cell again.")
    return value

