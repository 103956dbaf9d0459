"""Checks for the exercises of notebook 01 (data and tokens)."""
from __future__ import annotations

import math
import re
from collections import Counter

import torch

from ._common import ExerciseError, _call, _none_message, _ok, _tensor


def _unigram_slips(counts: dict) -> list[tuple[float, str]]:
    """(what a usual slip returns on `counts`, what the slip is)."""
    total, V = sum(counts.values()), len(counts)
    p = {c: n / total for c, n in counts.items()}
    entropy = -sum(q * math.log(q) for q in p.values())
    smoothed = total + V
    return [
        (-entropy, "Right size, wrong sign: a loss is minus the mean log-probability."),
        (math.exp(entropy), "That is e to the loss, the perplexity: return the loss itself, in nats."),
        (entropy / math.log(2), "That is in bits (log base 2). PyTorch's losses are in nats: use the natural log."),
        (entropy / math.log(10), "That is in log base 10. PyTorch's losses are in nats: use the natural log."),
        (math.log(V), "That is the uniform guess, ln V. Weight each character's -log p by how often it occurs."),
        (-sum(q * math.log(n) for q, n in zip(p.values(), counts.values())),
         "That takes the log of the counts: the loss needs the log of the *probabilities*, each count divided by "
         "the total first."),
        (-sum(math.log(q) for q in p.values()) / V,
         "Every character weighs the same there: a plain average over the vocabulary. In text a character counts "
         "as often as it occurs, so weight its -ln p by its probability."),
        (-sum(math.log(q) for q in p.values()),
         "That adds up -ln p once per distinct character, unweighted: in text a character counts as often as it "
         "occurs, so weight its -ln p by its probability."),
        (-sum(q * math.log((n + 1) / smoothed) for q, n in zip(p.values(), counts.values())),
         "That adds one to every count, as section 6's cell does for held-out text. Here the text is scored with "
         "its own counts, so no character can have probability 0: use the counts as they are."),
        (-sum(n * math.log(q) for q, n in zip(p.values(), counts.values())),
         "Each -ln p is weighted by its count there, which adds it up once per character of the text: weight it by "
         "its probability, count / total (or divide that sum by the total), for the average over the text."),
        (-sum(n / V * math.log(n / V) for n in counts.values()),
         "Each probability is a count divided by the total number of characters (the sum of the counts), not by "
         "the number of distinct characters."),
    ]


def check_unigram_loss(fn) -> None:
    """fn(counts: dict[str, int]) -> float: the loss in nats of always predicting the frequencies."""
    for counts in ({"a": 3, "b": 1}, {"x": 5, "y": 3, "z": 2, " ": 10}, {"e": 7}):
        total = sum(counts.values())
        expected = -sum(n / total * math.log(n / total) for n in counts.values())
        given = Counter(counts)  # the notebook's own `counts` is a Counter (a dict that also has .total())
        got = _call(fn, given)
        if dict(given) != counts:
            raise ExerciseError(f"Your function changed the counts it was given (it turned {counts} into {given}): "
                                "the caller's counts are theirs, and later cells read them again. Compute the "
                                "probabilities into a new dict or a new variable instead.")
        if got is None:
            raise ExerciseError(_none_message("the loss"))
        try:
            got = float(got)
        except (TypeError, ValueError):
            raise ExerciseError(f"Return a number, not {type(got).__name__}.") from None
        if math.isclose(got, expected, rel_tol=1e-4, abs_tol=1e-9):
            continue
        if got == 0 and expected > 0:
            raise ExerciseError(f"For counts {counts} expected {expected:.4f} nats, got 0: every term came out 0. Is "
                                "a probability computed with // ? Floor division gives count // total = 0 for every "
                                "character that is not the whole text: divide with / .")
        for value, message in _unigram_slips(counts):
            if math.isclose(got, value, rel_tol=1e-4, abs_tol=1e-9):
                raise ExerciseError(message)
        other = _call(fn, Counter({"q": 4}))  # a Counter, as promised; one character: 0 nats; a function that ignores its counts answers as before
        try:
            same = math.isclose(float(other), got, rel_tol=1e-9)
        except (TypeError, ValueError):
            same = False
        if same:
            raise ExerciseError(f"Your function gives {got:.4f} for counts {counts} and the same for other counts: "
                                "compute the loss from its argument, counts, not from the notebook's own text or "
                                "probabilities.")
        if len(counts) == 1:
            raise ExerciseError(f"For counts {counts}, a text of one character repeated, expected 0 nats (the guess "
                                f"is always right, with probability 1), got {got:.4f}.")
        if got > math.log(len(counts)) + 1e-6:
            raise ExerciseError(f"For counts {counts} expected {expected:.4f} nats, got {got:.4f}: more than ln V "
                                f"({math.log(len(counts)):.4f}), the uniform guess, which no guess by the text's own "
                                "frequencies can be. Are your probabilities count / total, and do they add up to 1?")
        raise ExerciseError(f"For counts {counts} expected {expected:.4f} nats, got {got:.4f}: the average, over the "
                            "text, of -ln of each character's probability.")
    _ok("The unigram loss is the entropy of the character frequencies.")


def _windows_hint(err):
    if "received an invalid combination of arguments - got (float" in str(err):
        return ("a size computed with / is a float, even when it divides evenly: count whole windows with //.")
    if "stack expects each tensor to be equal size" in str(err):
        return ("the last slice is shorter than `length` (the ids left over at the end), and torch.stack needs "
                "tensors of one size: keep whole windows only.")
    sizes = re.search(r"shape '\[(\d+), (\d+)\]' is invalid for input of size (\d+)", str(err))
    if sizes and int(sizes[3]) == int(sizes[1]):  # the slice kept n ids where n windows of length ids were needed
        return (f"the tensor you regrouped holds {sizes[3]} ids, one per window: {sizes[1]} windows of {sizes[2]} "
                "need that many times more. How many ids does the slice before view keep?")
    if "is invalid for input of size" in str(err):
        return ("view (or reshape) can only regroup all the ids, so their number must be a multiple of length, and "
                "here it is not. How many whole windows fit, and what should happen to the ids left over at the end?")
    return None


def check_make_windows(fn) -> None:
    """fn(ids, length) -> (n, length) tensor of consecutive non-overlapping windows, leftover dropped."""
    copies = False
    for n_ids, length in ((23, 5), (40, 8), (7, 7), (5, 8)):
        ids = torch.arange(100, 100 + n_ids)
        expected = ids[: n_ids // length * length].view(-1, length)

        def hint(err, n_ids=n_ids, length=length):
            if n_ids < length:
                return (f"the check also tries {n_ids} ids with windows of {length}: no whole window fits, so the "
                        f"answer is an empty tensor of shape (0, {length}).")
            return _windows_hint(err)

        answer = _call(fn, ids, length, hint=hint)
        if answer is None and n_ids < length:
            raise ExerciseError(f"For {n_ids} ids and windows of {length} your function returned None. No whole "
                                f"window fits, and the answer is still windows: none of them, an empty tensor of "
                                f"shape (0, {length}), which a caller can loop over or count (len 0) like any other.")
        got = _tensor(answer, "the windows")
        if got.is_floating_point() or got.is_complex():
            raise ExerciseError(f"For {n_ids} ids and windows of {length} your windows hold {got.dtype}: windows of "
                                f"ids must hold whole numbers, as the ids do ({ids.dtype}), since an id indexes the "
                                "vocabulary and a table of vectors. (torch.tensor([]) and torch.zeros(...) are "
                                "float unless given dtype=ids.dtype.)")
        if got.shape == expected.shape and torch.equal(got, expected):
            copies = copies or (got.numel() > 0 and got.untyped_storage().data_ptr() != ids.untyped_storage().data_ptr())
            continue
        if n_ids < length:
            raise ExerciseError(f"For {n_ids} ids and windows of {length} no whole window fits: expected an empty "
                                f"tensor of shape (0, {length}), got shape {tuple(got.shape)}.")
        if got.shape == (n_ids - length + 1, length):
            raise ExerciseError(f"These windows overlap: one starts at every id ({got.shape[0]} of them). "
                                f"Non-overlapping windows start every `length` ids: 0, {length}, {2 * length}, ...")
        if got.shape == expected.shape[::-1] and got.shape != expected.shape:
            raise ExerciseError(f"Rows and columns are swapped (shape {tuple(got.shape)}): each *row* must be one "
                                f"window, so the shape is (n, length) = {tuple(expected.shape)}.")
        if got.dim() == 2 and got.shape[1] == length and got.shape[0] == expected.shape[0] + 1:
            raise ExerciseError(f"For {n_ids} ids and length {length} you kept the incomplete last window: drop the "
                                f"{n_ids % length} leftover ids at the end.")
        if (got.dim() == 2 and got.shape[1] == length and got.shape[0] == expected.shape[0] - 1
                and torch.equal(got, expected[:-1])):
            raise ExerciseError(f"For {n_ids} ids and length {length} expected shape {tuple(expected.shape)}, got "
                                f"{tuple(got.shape)}: your windows are right, but the last whole window is missing "
                                f"(ids {length * (n_ids // length - 1)} to {length * (n_ids // length) - 1}). Check "
                                "where your windows stop: the last one may end on the last id that fits.")
        if got.shape != expected.shape:
            raise ExerciseError(f"For {n_ids} ids and length {length} expected shape {tuple(expected.shape)}, got "
                                f"{tuple(got.shape)}.")
        raise ExerciseError("Right shape, wrong content: window i must hold ids[i*length:(i+1)*length], in order.")
    if copies:
        _ok("These windows are a copy of the ids; slicing and .view give the same windows without copying them.")
    else:
        _ok("These windows share the ids' memory: a view, no copy.")
