"""Checks for the exercises of notebook 06 (predictions)."""
from __future__ import annotations

import math
from collections.abc import Iterator

import torch

from ._common import ExerciseError, _call, _none_message, _ok, _tensor


def _top_k_hint(err):
    if "Dimension out of range" in str(err):
        return "logits is one vector, (vocab_size,), the scores of one blank: its only dimension is 0, or -1."
    if "must be int, not list" in str(err):
        return "the check calls top_k(logits, tokens, k), in that order, as the exercise writes it."
    if isinstance(err, IndexError) and "list index out of range" in str(err):
        return ("an index past the end of `tokens`: the check's logits and tokens are 8 long, not the notebook's "
                "84. Does your function read the notebook's own logits or tokens? Use only its arguments.")
    return None


def check_top_k(fn) -> None:
    """fn(logits (V,), tokens: list[str], k) -> [(token, probability)] best first, probabilities from the
    softmax over the whole vocabulary."""
    tokens = list("abcdefgh")
    logits = torch.tensor([0.5, 3.0, -1.0, 2.0, 0.0, 2.5, -2.0, 1.0])
    probs = logits.softmax(-1)
    for k in (3, 1, len(tokens)):
        values, indices = probs.topk(k)
        expected = [(tokens[i], float(v)) for v, i in zip(values.tolist(), indices.tolist())]
        got = _call(fn, logits, tokens, k, hint=_top_k_hint)
        if got is None:
            raise ExerciseError(_none_message("the pairs"))
        if isinstance(got, Iterator):  # a generator: read once, then empty
            raise ExerciseError("Return a list of (token, probability) pairs, not a generator: round brackets around "
                                "a comprehension make a generator, which can be read only once. Use square brackets, "
                                "or list(...).")
        try:
            raw = [t for t, _ in got]
        except (TypeError, ValueError):
            raise ExerciseError("Return a list of (token, probability) pairs.") from None
        if any(isinstance(t, int) or (isinstance(t, torch.Tensor) and not t.is_floating_point()) for t in raw):
            raise ExerciseError(f"You returned ids ({[int(t) for t in raw]}), not tokens: look each one up in "
                                "`tokens` (tokens[i]) so that the pairs read ('e', 0.72), not (9, 0.72).")
        if got and all(isinstance(t, (float, torch.Tensor)) and isinstance(p, str) for t, p in got):
            raise ExerciseError("Your pairs read (probability, token): put the token first, (token, probability), "
                                "e.g. ('e', 0.72).")
        sizes = [p.numel() for _, p in got if isinstance(p, torch.Tensor)]
        if any(size > 1 for size in sizes):
            raise ExerciseError(f"Each pair's second element must be one probability, a number; yours holds "
                                f"{max(sizes)} values (a whole vector of probabilities). Pick the one of its token.")
        try:
            got = [(str(t), float(p)) for t, p in got]
        except (TypeError, ValueError):
            raise ExerciseError("Return a list of (token, probability) pairs, each probability one number.") from None
        names, numbers = [t for t, _ in got], [p for _, p in got]
        if names == [t for t, _ in expected] and all(
                math.isclose(a, b, rel_tol=1e-4) for a, b in zip(numbers, [p for _, p in expected])):
            continue
        if len(got) != k:
            raise ExerciseError(f"Asked for k={k}, got {len(got)} pairs.")
        if len(set(names)) < len(names):
            raise ExerciseError(f"Your pairs name {names}: a token appears more than once. The k best are k different "
                                "tokens, the k highest probabilities of the vocabulary, each once.")
        if all(0 <= p <= 1 for p in numbers) and sum(numbers) > 1 + 1e-4:
            ones = (" (every entry 1.0: a softmax along another dimension, one of size 1, gives that)"
                    if all(math.isclose(p, 1.0) for p in numbers) else "")
            raise ExerciseError(f"Your probabilities add up to {sum(numbers):.2f}, more than 1, so they are not one "
                                f"softmax over the vocabulary, whose probabilities are positive and total 1{ones}: take "
                                "the softmax of the logits over the vocabulary, dim=-1.")
        if names == [t for t, _ in expected]:
            top_logits = logits.topk(k).values
            if all(math.isclose(a, b, rel_tol=1e-4) for a, b in zip(numbers, top_logits.softmax(-1).tolist())):
                raise ExerciseError("Those probabilities come from a softmax over the k best logits only, so they "
                                    "sum to 1 among k tokens. Take the softmax over the whole vocabulary, then "
                                    "the top k.")
            if all(math.isclose(a, b, rel_tol=1e-4) for a, b in zip(numbers, top_logits.tolist())):
                raise ExerciseError("Those are logits, not probabilities: the task asks for probabilities, "
                                    "between 0 and 1, over the whole vocabulary.")
            if all(math.isclose(a, 100 * b, rel_tol=1e-4) for a, (_, b) in zip(numbers, expected)):
                raise ExerciseError("Right tokens, and the numbers are percentages: return probabilities, "
                                    "between 0 and 1, as softmax gives them (a chart or a print can show them as %).")
            want = [p for _, p in expected]
            if all(abs(a - b) <= 0.005 + 1e-9 for a, b in zip(numbers, want)):
                raise ExerciseError("Right tokens, and the probabilities rounded: return them as they are (a print or "
                                    "a chart can round them for show).")
            if all(math.isclose(a, math.log(b), rel_tol=1e-4) for a, b in zip(numbers, want)):
                raise ExerciseError("Right tokens, but those are log-probabilities (log_softmax): return the "
                                    "probabilities themselves, between 0 and 1.")
            raise ExerciseError("Right tokens, wrong numbers: each should be its token's probability, from a softmax "
                                "over the whole vocabulary.")
        strangers = [t for t in names if t not in tokens]
        if strangers:
            raise ExerciseError(f"Your pairs hold {strangers[:3]}, which are not in the `tokens` the check passed "
                                f"({tokens}): look each index up in the function's own `tokens` argument, not in "
                                "the notebook's tokenizer.")
        raise ExerciseError(f"Expected {[(t, round(p, 3)) for t, p in expected]}, got {[(t, round(p, 3)) for t, p in got]}: "
                            "the k tokens with the highest probability, best first, each with its probability.")
    _ok("These are the bars of the explorer's chart.")


def check_mask_positions(fn) -> None:
    """fn(ids (L,), positions, mask_id) -> a copy of ids with [MASK] at positions (the input left alone)."""
    # the first, the last, out of order, none at all; then another mask id than the course tokenizer's 4; then
    # text in which a character repeats (as in any real text): a position is masked, not every copy of its character
    for positions, mask_id, ids in (([1, 4], 4, None), ([0], 4, None), ([5], 4, None), ([3, 0, 5], 4, None),
                                    ([], 4, None), ([2], 13, None), ([1, 3], 4, torch.tensor([7, 8, 9, 8, 7, 8]))):
        ids = torch.tensor([7, 8, 9, 10, 11, 12]) if ids is None else ids

        def hint(err, positions=positions):
            if "can't assign a list" in str(err) or "must be Tensor, not list" in str(err):
                return "the check calls mask_positions(ids, positions, mask_id), in that order, as the exercise writes it."
            if not positions:
                return ("the check also tries an empty list of positions, no blank at all: the answer is then an "
                        "unchanged copy of ids. (torch.tensor([]) is a tensor of floats, which cannot index.)")
            return None

        original = ids.clone()
        expected = ids.clone()
        expected[positions] = mask_id
        got = _tensor(_call(fn, ids, list(positions), mask_id, hint=hint), "the masked ids")
        if not torch.equal(ids, original):
            ids.copy_(original)
            raise ExerciseError("Your function overwrote its input: the original characters are lost. Write into a "
                                "copy of the ids, and leave ids itself as it was. (Unlike a list's, a tensor's "
                                "slice ids[:], ids.detach() and copy.copy(ids) share its memory: writing into them "
                                "writes into ids; a copy has memory of its own.)")
        if got.dtype != ids.dtype:
            raise ExerciseError(f"Return ids of the ids' own type ({ids.dtype}), not {got.dtype}: the model looks "
                                "each id up in a table and the tokenizer decodes it, and both need whole numbers.")
        if got is ids or (got.numel() and got.data_ptr() == ids.data_ptr()):
            raise ExerciseError("Your function handed back ids itself (or a view of it), not a copy: the caller's "
                                "ids and your result are one tensor, so a blank written into the result later would "
                                "overwrite the text. Return a copy even when there is nothing to mask.")
        if got.shape == expected.shape and torch.equal(got, expected):
            continue
        if not positions:
            raise ExerciseError(f"With no positions at all (an empty list) expected the ids unchanged, "
                                f"{expected.tolist()}, got {got.tolist()}.")
        if mask_id != 4 and torch.equal(got, torch.where(expected == mask_id, 4, expected)):
            raise ExerciseError(f"With mask_id={mask_id} your function still wrote 4, the course tokenizer's [MASK]: "
                                "use the mask_id it is given, not the notebook's tokenizer.")
        if torch.equal(got, torch.where(torch.isin(ids, ids[positions]), mask_id, ids)):
            raise ExerciseError(f"For ids {ids.tolist()} and positions {positions} expected {expected.tolist()}, got "
                                f"{got.tolist()}: every copy of those characters was masked. A blank is a *position*: "
                                "mask ids at those places, whatever characters stand elsewhere.")
        for shift in (-1, 1):  # the blanks one place off: an index counted from 1, or p - 1 / p + 1 written
            moved = [p + shift for p in positions]
            if all(0 <= p < len(ids) for p in moved):
                shifted = ids.clone()
                shifted[moved] = mask_id
                if torch.equal(got, shifted):
                    raise ExerciseError(f"For positions {positions} your blanks landed at {moved}, one place "
                                        f"{'early' if shift < 0 else 'late'}: positions count from 0, as tensor "
                                        "indices do, so position p is ids[p] itself.")
        raise ExerciseError(f"For positions {positions} (mask_id {mask_id}) expected {expected.tolist()}, got "
                            f"{got.tolist()}.")
    _ok("The original stays intact, so predictions can be compared with it.")
